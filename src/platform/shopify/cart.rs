//! Carts live in Shopify; this module only translates. Round trips:
//! - create: one `cartCreate` (a second one when Shopify refused the whole cart because of a
//!   line, without the lines it named);
//! - get: one `cart`;
//! - replace: one `cart` read, then ONE write: `cartLinesUpdate` (quantity changes and, with
//!   quantity 0, removals) and `cartLinesAdd` as one document when both are needed (one more
//!   `cartLinesAdd` when Shopify refuses a line, as above);
//! - cancel: one `cart` read, then one document that marks the cart cancelled
//!   (`cartAttributesUpdate`) and then empties it (`cartLinesRemove`).
//!
//! Shopify cannot delete a cart, so a cancelled cart is marked with the attribute
//! `_bcp_cancelled`: the mark lives in the cart itself, so every replica and a restarted
//! bridge treat it as gone. It is written before the lines are removed, so a failure half way
//! still leaves the cart cancelled.

use std::collections::HashSet;

use iso_currency::Currency;
use time::format_description::well_known::Rfc3339;
use time::{Duration as TimeDuration, OffsetDateTime};

use super::client::Storefront;
use super::gid::{CatalogId, is_cart_id, parse_catalog_id};
use super::market;
use super::normalize::{RawMoney, enum_name};
use super::ops::{
    self, CartAttributesUpdate, CartCancel, CartCreate, CartGet, CartLinesAdd, CartLinesUpdate,
    CartReplace,
};
use crate::model::{CartDraft, CartLine, CartOutcome, CartState, LineProblem, LineProblemKind};
use crate::money::{Money, parse_currency};
use crate::platform::port::PlatformError;
use crate::platform::upstream::CallKind;

pub const CANCELLED_ATTRIBUTE: &str = "_bcp_cancelled";
const ATTRIBUTION_ATTRIBUTE: &str = "_bcp_attribution";
/// Shopify keeps an untouched cart for ten days; the expiry is counted from its last update.
const CART_LIFETIME_DAYS: i64 = 10;

#[derive(Debug, Clone)]
pub struct RawLine {
    id: String,
    quantity: i64,
    variant_id: Option<String>,
    variant_title: String,
    product_title: String,
    image: Option<String>,
    unit: RawMoney,
    subtotal: RawMoney,
    total: RawMoney,
}

impl RawLine {
    /// "Camiseta — M"; a single-variant product is just "Camiseta".
    fn title(&self) -> String {
        if self.variant_title == "Default Title" || self.variant_title.is_empty() {
            self.product_title.clone()
        } else {
            format!("{} — {}", self.product_title, self.variant_title)
        }
    }
}

#[derive(Debug, Clone)]
pub struct RawCart {
    id: String,
    checkout_url: String,
    updated_at: String,
    attributes: Vec<(String, Option<String>)>,
    total: RawMoney,
    lines: Vec<RawLine>,
}

impl RawCart {
    fn cancelled(&self) -> bool {
        self.attributes
            .iter()
            .any(|(key, _)| key == CANCELLED_ATTRIBUTE)
    }
}

#[derive(Debug, Clone)]
pub struct RawUserError {
    code: String,
    field: Vec<String>,
    message: String,
}

#[derive(Debug, Clone)]
pub struct RawWarning {
    code: String,
    message: String,
    target: String,
}

struct Payload {
    cart: Option<RawCart>,
    errors: Vec<RawUserError>,
    warnings: Vec<RawWarning>,
}

macro_rules! lift_cart {
    ($m:ident) => {
        super::normalize::lift_money!($m);

        impl From<ops::$m::CartFields> for RawCart {
            fn from(cart: ops::$m::CartFields) -> Self {
                Self {
                    id: cart.id,
                    checkout_url: cart.checkout_url,
                    updated_at: cart.updated_at,
                    attributes: cart
                        .attributes
                        .into_iter()
                        .map(|attribute| (attribute.key, attribute.value))
                        .collect(),
                    total: cart.cost.total_amount.into(),
                    lines: cart
                        .lines
                        .nodes
                        .into_iter()
                        .map(|line| {
                            let ops::$m::CartFieldsLinesNodesMerchandise::ProductVariant(variant) =
                                line.merchandise;
                            RawLine {
                                id: line.id,
                                quantity: line.quantity,
                                variant_id: Some(variant.id),
                                variant_title: variant.title,
                                product_title: variant.product.title,
                                image: variant.image.map(|image| image.url),
                                unit: line.cost.amount_per_quantity.into(),
                                subtotal: line.cost.subtotal_amount.into(),
                                total: line.cost.total_amount.into(),
                            }
                        })
                        .collect(),
                }
            }
        }
    };
    ($m:ident, fragments) => {
        lift_cart!($m);

        impl From<ops::$m::UserError> for RawUserError {
            fn from(error: ops::$m::UserError) -> Self {
                Self {
                    code: error.code.as_ref().map(enum_name).unwrap_or_default(),
                    field: error.field.unwrap_or_default(),
                    message: error.message,
                }
            }
        }

        impl From<ops::$m::Warning> for RawWarning {
            fn from(warning: ops::$m::Warning) -> Self {
                Self {
                    code: enum_name(&warning.code),
                    message: warning.message,
                    target: warning.target,
                }
            }
        }
    };
    ($m:ident, $payload:ident) => {
        lift_cart!($m, fragments);

        impl From<ops::$m::ResponseData> for Option<Payload> {
            fn from(data: ops::$m::ResponseData) -> Self {
                payload!(data.$payload)
            }
        }
    };
}

/// One mutation payload (`cart`, `userErrors`, `warnings`) of any generated operation.
macro_rules! payload {
    ($payload:expr) => {
        $payload.map(|payload| Payload {
            cart: payload.cart.map(Into::into),
            errors: payload.user_errors.into_iter().map(Into::into).collect(),
            warnings: payload.warnings.into_iter().map(Into::into).collect(),
        })
    };
}

lift_cart!(cart_get);
lift_cart!(cart_create, cart_create);
lift_cart!(cart_lines_add, cart_lines_add);
lift_cart!(cart_lines_update, cart_lines_update);
lift_cart!(cart_attributes_update, cart_attributes_update);
lift_cart!(cart_replace, fragments);
lift_cart!(cart_cancel, fragments);

pub struct Carts<'a> {
    pub client: &'a Storefront,
    pub currency: Currency,
    pub default_country: Option<&'a str>,
}

fn bad(error: impl std::fmt::Display) -> PlatformError {
    PlatformError::BadResponse(error.to_string())
}

fn money(raw: &RawMoney, currency: Currency) -> Result<i64, PlatformError> {
    let currency = if raw.currency.is_empty() {
        currency
    } else {
        parse_currency(&raw.currency).map_err(bad)?
    };
    Ok(Money::from_major_str(&raw.amount, currency)
        .map_err(bad)?
        .amount)
}

/// A requested line as sent to Shopify, so errors that point at `lines[i]` find their variant.
#[derive(Debug, Clone)]
struct Sent {
    variant_id: String,
    quantity: u32,
}

/// The line a userError is about, from its `field` path: `["lines", "0", "merchandiseId"]`
/// for the line mutations, `["input", "lines", "0", "merchandiseId"]` for `cartCreate`.
fn error_line(error: &RawUserError) -> Option<usize> {
    let position = error.field.iter().position(|part| part == "lines")?;
    error.field.get(position + 1)?.parse().ok()
}

/// The lines Shopify accepted when it refused a whole call because of some of them; `None`
/// when the refusal names no line (then retrying cannot help).
fn without_refused(sent: &[Sent], errors: &[RawUserError]) -> Option<Vec<Sent>> {
    let refused: HashSet<usize> = errors.iter().filter_map(error_line).collect();
    (!refused.is_empty()).then(|| {
        sent.iter()
            .enumerate()
            .filter(|(index, _)| !refused.contains(index))
            .map(|(_, line)| line.clone())
            .collect()
    })
}

impl Carts<'_> {
    fn state(&self, raw: &RawCart) -> Result<CartState, PlatformError> {
        let currency = if raw.total.currency.is_empty() {
            self.currency
        } else {
            parse_currency(&raw.total.currency).map_err(bad)?
        };
        let mut lines = Vec::with_capacity(raw.lines.len());
        for line in &raw.lines {
            let Some(variant_id) = line.variant_id.clone() else {
                continue;
            };
            let title = line.title();
            lines.push(CartLine {
                id: line.id.clone(),
                variant_id,
                title,
                unit_price: money(&line.unit, currency)?,
                quantity: u32::try_from(line.quantity).unwrap_or(0),
                subtotal: money(&line.subtotal, currency)?,
                total: money(&line.total, currency)?,
                image_url: line.image.clone(),
            });
        }
        // Line subtotals are before discounts; the cart total is after all of them.
        let subtotal: i64 = lines.iter().map(|line| line.subtotal).sum();
        let total = money(&raw.total, currency)?;
        let expires_at = OffsetDateTime::parse(&raw.updated_at, &Rfc3339)
            .ok()
            .map(|updated| updated + TimeDuration::days(CART_LIFETIME_DAYS));
        Ok(CartState {
            id: raw.id.clone(),
            lines,
            currency,
            subtotal,
            discount: (total - subtotal).min(0),
            tax: None,
            total,
            checkout_url: Some(raw.checkout_url.clone()).filter(|url| !url.is_empty()),
            expires_at,
        })
    }

    fn problems(
        &self,
        payload: &Payload,
        sent: &[Sent],
        cart: Option<&RawCart>,
        out: &mut Vec<LineProblem>,
    ) {
        for error in &payload.errors {
            let Some(line) = error_line(error).and_then(|index| sent.get(index)) else {
                tracing::warn!(code = %error.code, "Shopify cart error not tied to a line");
                continue;
            };
            let not_found = error
                .field
                .last()
                .is_some_and(|field| field == "merchandiseId")
                || error.message.contains("does not exist");
            out.push(LineProblem {
                variant_id: line.variant_id.clone(),
                kind: if not_found {
                    LineProblemKind::NotFound
                } else {
                    LineProblemKind::Invalid
                },
                message: error.message.clone(),
            });
        }
        for warning in &payload.warnings {
            // The target is a cart line or the merchandise itself.
            let line =
                cart.and_then(|cart| cart.lines.iter().find(|line| line.id == warning.target));
            let variant_id = match line {
                Some(line) => line.variant_id.clone(),
                None => matches!(
                    parse_catalog_id(&warning.target),
                    Some(CatalogId::Variant(_))
                )
                .then(|| warning.target.clone()),
            };
            let Some(variant_id) = variant_id else {
                tracing::info!(code = %warning.code, "Shopify cart warning without a line");
                continue;
            };
            let kind = match warning.code.as_str() {
                "MERCHANDISE_OUT_OF_STOCK" => LineProblemKind::OutOfStock,
                "MERCHANDISE_NOT_ENOUGH_STOCK" => LineProblemKind::InsufficientStock {
                    available: line
                        .map(|line| u32::try_from(line.quantity).unwrap_or(0))
                        .unwrap_or(0),
                },
                _ => continue,
            };
            // Shopify's own text names only the variant ("M is out of stock"); the line, when
            // the cart still holds it, gives the product too.
            let message = match (&kind, line) {
                (LineProblemKind::OutOfStock, Some(line)) => {
                    format!("{} is out of stock", line.title())
                }
                (LineProblemKind::InsufficientStock { available }, Some(line)) => format!(
                    "Only {available} of {} could be added due to availability",
                    line.title()
                ),
                _ => warning.message.clone(),
            };
            out.push(LineProblem {
                variant_id,
                kind,
                message,
            });
        }
    }

    /// The buyer's country for `buyerIdentity`, checked before the write: Shopify refuses the
    /// whole mutation over a value outside its enum.
    fn country(&self, draft: &CartDraft) -> Result<Option<String>, PlatformError> {
        market::market(
            "$.cart",
            draft.context.country.as_deref(),
            draft.context.language.as_deref(),
            self.default_country,
            None,
        )
        .map(|market| market.country)
    }

    async fn load(&self, id: &str) -> Result<Option<RawCart>, PlatformError> {
        if !is_cart_id(id) {
            return Ok(None);
        }
        let data = self
            .client
            .run::<CartGet>(
                ops::cart_get::Variables { id: id.to_owned() },
                CallKind::Read,
            )
            .await?;
        Ok(data
            .cart
            .map(RawCart::from)
            .filter(|cart| !cart.cancelled()))
    }

    pub async fn get(&self, id: &str) -> Result<Option<CartState>, PlatformError> {
        self.load(id)
            .await?
            .map(|cart| self.state(&cart))
            .transpose()
    }

    /// Variant ids the brain confirmed; anything else is refused before Shopify sees it.
    fn sendable(
        draft_lines: &[crate::model::CartLineInput],
        problems: &mut Vec<LineProblem>,
    ) -> Vec<Sent> {
        let mut sent = Vec::new();
        for line in draft_lines {
            if matches!(
                parse_catalog_id(&line.variant_id),
                Some(CatalogId::Variant(_))
            ) {
                sent.push(Sent {
                    variant_id: line.variant_id.clone(),
                    quantity: line.quantity,
                });
            } else {
                problems.push(LineProblem {
                    variant_id: line.variant_id.clone(),
                    kind: LineProblemKind::NotFound,
                    message: format!("Item not found: {}", line.variant_id),
                });
            }
        }
        sent
    }

    pub async fn create(&self, draft: &CartDraft) -> Result<CartOutcome, PlatformError> {
        let country = self.country(draft)?;
        let mut problems = Vec::new();
        let mut sent = Self::sendable(&draft.lines, &mut problems);
        let attributes = || {
            draft.attribution.as_ref().map(|attribution| {
                vec![ops::cart_create::AttributeInput {
                    key: ATTRIBUTION_ATTRIBUTE.to_owned(),
                    value: attribution.to_string().chars().take(1000).collect(),
                }]
            })
        };
        for attempt in 0..2 {
            let data = self
                .client
                .run::<CartCreate>(
                    ops::cart_create::Variables {
                        input: ops::cart_create::CartInput {
                            attributes: attributes(),
                            buyer_identity: country.clone().map(|country| {
                                ops::cart_create::CartBuyerIdentityInput {
                                    country_code: Some(ops::cart_create::CountryCode::Other(
                                        country,
                                    )),
                                }
                            }),
                            lines: Some(
                                sent.iter()
                                    .map(|line| ops::cart_create::CartLineInput {
                                        merchandise_id: line.variant_id.clone(),
                                        quantity: Some(i64::from(line.quantity)),
                                    })
                                    .collect(),
                            ),
                        },
                    },
                    CallKind::Write,
                )
                .await?;
            let payload = Option::<Payload>::from(data)
                .ok_or_else(|| bad("cartCreate answered without a payload"))?;
            let mut found = Vec::new();
            self.problems(&payload, &sent, payload.cart.as_ref(), &mut found);
            if let Some(cart) = &payload.cart {
                problems.extend(found);
                return Ok(CartOutcome {
                    cart: self.state(cart)?,
                    problems,
                });
            }
            // Shopify refuses the whole cart when one line is bad: drop the lines it named and
            // try once more, so the good lines still make a cart.
            match without_refused(&sent, &payload.errors) {
                Some(rest) if attempt == 0 => {
                    problems.extend(found);
                    sent = rest;
                }
                _ => {
                    tracing::warn!(errors = payload.errors.len(), "cartCreate refused the cart");
                    return Err(bad("cartCreate refused the cart"));
                }
            }
        }
        Err(bad("cartCreate refused the cart"))
    }

    pub async fn replace(
        &self,
        id: &str,
        draft: &CartDraft,
    ) -> Result<Option<CartOutcome>, PlatformError> {
        self.country(draft)?;
        let Some(mut cart) = self.load(id).await? else {
            return Ok(None);
        };
        let mut problems = Vec::new();
        let wanted = Self::sendable(&draft.lines, &mut problems);
        let mut kept: HashSet<&str> = HashSet::new();
        let mut updates: Vec<Sent> = Vec::new();
        let mut update_ids: Vec<String> = Vec::new();
        for line in &cart.lines {
            let variant = line.variant_id.as_deref().unwrap_or_default();
            let target = wanted
                .iter()
                .find(|want| want.variant_id == variant && !kept.contains(variant));
            let quantity = match target {
                Some(want) => {
                    kept.insert(&want.variant_id);
                    want.quantity
                }
                // Not wanted any more, or a second line of a variant already kept.
                None => 0,
            };
            if i64::from(quantity) != line.quantity {
                updates.push(Sent {
                    variant_id: variant.to_owned(),
                    quantity,
                });
                update_ids.push(line.id.clone());
            }
        }
        let adds: Vec<Sent> = wanted
            .iter()
            .filter(|want| !kept.contains(want.variant_id.as_str()))
            .cloned()
            .collect();

        let mut adds = adds;
        let mut add_attempts = 2;
        let update_inputs = || {
            updates
                .iter()
                .zip(&update_ids)
                .map(|(line, line_id)| (line_id.clone(), i64::from(line.quantity)))
                .collect::<Vec<_>>()
        };
        if !updates.is_empty() && !adds.is_empty() {
            // Changes and additions in one document: one round trip instead of two.
            let data = self
                .client
                .run::<CartReplace>(
                    ops::cart_replace::Variables {
                        cart_id: cart.id.clone(),
                        updates: update_inputs()
                            .into_iter()
                            .map(|(id, quantity)| ops::cart_replace::CartLineUpdateInput {
                                id,
                                merchandise_id: None,
                                quantity: Some(quantity),
                            })
                            .collect(),
                        adds: adds
                            .iter()
                            .map(|line| ops::cart_replace::CartLineInput {
                                merchandise_id: line.variant_id.clone(),
                                quantity: Some(i64::from(line.quantity)),
                            })
                            .collect(),
                    },
                    CallKind::Write,
                )
                .await?;
            let update: Payload = payload!(data.update)
                .ok_or_else(|| bad("cartLinesUpdate answered without a payload"))?;
            self.problems(&update, &updates, update.cart.as_ref(), &mut problems);
            match update.cart {
                Some(updated) => cart = updated,
                None if update.errors.is_empty() => return Ok(None),
                None => return Err(bad("cartLinesUpdate refused the change")),
            }
            let add: Payload =
                payload!(data.add).ok_or_else(|| bad("cartLinesAdd answered without a payload"))?;
            self.problems(&add, &adds, add.cart.as_ref(), &mut problems);
            match add.cart {
                Some(updated) => {
                    cart = updated;
                    adds.clear();
                }
                // As in `create`: one more try without the lines Shopify named.
                None => match without_refused(&adds, &add.errors) {
                    Some(rest) => {
                        adds = rest;
                        add_attempts = 1;
                    }
                    None => return Err(bad("cartLinesAdd refused the lines")),
                },
            }
        } else if !updates.is_empty() {
            let data = self
                .client
                .run::<CartLinesUpdate>(
                    ops::cart_lines_update::Variables {
                        cart_id: cart.id.clone(),
                        lines: update_inputs()
                            .into_iter()
                            .map(
                                |(id, quantity)| ops::cart_lines_update::CartLineUpdateInput {
                                    id,
                                    merchandise_id: None,
                                    quantity: Some(quantity),
                                },
                            )
                            .collect(),
                    },
                    CallKind::Write,
                )
                .await?;
            let Some(payload) = Option::<Payload>::from(data) else {
                return Err(bad("cartLinesUpdate answered without a payload"));
            };
            self.problems(&payload, &updates, payload.cart.as_ref(), &mut problems);
            match payload.cart {
                Some(updated) => cart = updated,
                None if payload.errors.is_empty() => return Ok(None),
                None => return Err(bad("cartLinesUpdate refused the change")),
            }
        }
        for attempt in 0..add_attempts {
            if adds.is_empty() {
                break;
            }
            let data = self
                .client
                .run::<CartLinesAdd>(
                    ops::cart_lines_add::Variables {
                        cart_id: cart.id.clone(),
                        lines: adds
                            .iter()
                            .map(|line| ops::cart_lines_add::CartLineInput {
                                merchandise_id: line.variant_id.clone(),
                                quantity: Some(i64::from(line.quantity)),
                            })
                            .collect(),
                    },
                    CallKind::Write,
                )
                .await?;
            let Some(payload) = Option::<Payload>::from(data) else {
                return Err(bad("cartLinesAdd answered without a payload"));
            };
            self.problems(&payload, &adds, payload.cart.as_ref(), &mut problems);
            if let Some(updated) = payload.cart {
                cart = updated;
                break;
            }
            // As in `create`: one more try without the lines Shopify named.
            match without_refused(&adds, &payload.errors) {
                Some(rest) if attempt + 1 < add_attempts => adds = rest,
                _ => return Err(bad("cartLinesAdd refused the lines")),
            }
        }
        Ok(Some(CartOutcome {
            cart: self.state(&cart)?,
            problems,
        }))
    }

    pub async fn cancel(&self, id: &str) -> Result<Option<CartState>, PlatformError> {
        let Some(cart) = self.load(id).await? else {
            return Ok(None);
        };
        let before = self.state(&cart)?;
        let mut attributes: Vec<ops::cart_attributes_update::AttributeInput> = cart
            .attributes
            .iter()
            .filter_map(|(key, value)| {
                value
                    .as_ref()
                    .map(|value| ops::cart_attributes_update::AttributeInput {
                        key: key.clone(),
                        value: value.clone(),
                    })
            })
            .collect();
        attributes.push(ops::cart_attributes_update::AttributeInput {
            key: CANCELLED_ATTRIBUTE.to_owned(),
            value: OffsetDateTime::now_utc()
                .format(&Rfc3339)
                .unwrap_or_else(|_| "true".to_owned()),
        });
        if cart.lines.is_empty() {
            let data = self
                .client
                .run::<CartAttributesUpdate>(
                    ops::cart_attributes_update::Variables {
                        cart_id: cart.id.clone(),
                        attributes,
                    },
                    CallKind::Write,
                )
                .await?;
            let marked = Option::<Payload>::from(data)
                .and_then(|payload| payload.cart)
                .is_some_and(|cart| cart.cancelled());
            if !marked {
                return Err(bad("cartAttributesUpdate did not mark the cart"));
            }
            return Ok(Some(before));
        }
        // Mark and empty in one document; the mark runs first.
        let data = self
            .client
            .run::<CartCancel>(
                ops::cart_cancel::Variables {
                    cart_id: cart.id.clone(),
                    attributes: attributes
                        .into_iter()
                        .map(|attribute| ops::cart_cancel::AttributeInput {
                            key: attribute.key,
                            value: attribute.value,
                        })
                        .collect(),
                    line_ids: cart.lines.iter().map(|line| line.id.clone()).collect(),
                },
                CallKind::Write,
            )
            .await?;
        let marked = data
            .mark
            .and_then(|payload| payload.cart)
            .is_some_and(|cart| RawCart::from(cart).cancelled());
        if !marked {
            return Err(bad("cartAttributesUpdate did not mark the cart"));
        }
        // The mark already makes the cart unreachable; an un-emptied cart only costs
        // Shopify storage until it expires.
        let emptied = data
            .empty
            .is_some_and(|payload| payload.user_errors.is_empty() && payload.cart.is_some());
        if !emptied {
            tracing::warn!("could not empty a cancelled cart");
        }
        Ok(Some(before))
    }
}
