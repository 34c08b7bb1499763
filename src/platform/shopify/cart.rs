//! Carts live in Shopify; this module only translates. Shopify judges the lines
//! (`LineJudge::Store`): the agent's item ids arrive as sent, variant gids go straight into the
//! write, and its userErrors and warnings come back as problems under the agent's ids. Round
//! trips:
//! - create: one `cartCreate` (a second one when Shopify refused the whole cart because of a
//!   line, without the lines it named);
//! - get: one `cart`;
//! - replace: one `cart` read, then ONE write: `cartLinesUpdate` (quantity changes and, with
//!   quantity 0, removals) and `cartLinesAdd` as one document when both are needed (one more
//!   `cartLinesAdd` when Shopify refuses a line, as above);
//! - cancel: one `cart` read, then one document that marks the cart cancelled
//!   (`cartAttributesUpdate`) and then empties it (`cartLinesRemove`).
//!
//! Only when asked for do lines cost more: an id that is not a variant gid (product gid,
//! number, handle, SKU) one catalog read before the write (beside the replace's cart read),
//! and a line Shopify left out as sold out one `nodes` read of its title afterwards.
//!
//! Shopify cannot delete a cart, so a cancelled cart is marked with the attribute
//! `_bcp_cancelled`: the mark lives in the cart itself, so every replica and a restarted
//! bridge treat it as gone. It is written before the lines are removed, so a failure half way
//! still leaves the cart cancelled.

use std::collections::{HashMap, HashSet};

use iso_currency::Currency;
use time::format_description::well_known::Rfc3339;
use time::{Duration as TimeDuration, OffsetDateTime};

use super::catalog::Catalog;
use super::client::Storefront;
use super::ids::{CatalogId, is_cart_id, parse_catalog_id, variant_gid};
use super::mapping::{RawMoney, enum_name};
use super::market::{self, Market};
use super::wire::{
    self, CartAttributesUpdate, CartCancel, CartCreate, CartGet, CartLinesAdd, CartLinesUpdate,
    CartReplace, VariantTitles,
};
use crate::model::{
    CartDraft, CartLine, CartLineInput, CartOutcome, CartState, LineProblem, LineProblemKind,
    Resolution, Resolved,
};
use crate::money::{Money, parse_currency};
use crate::platform::port::PlatformError;
use crate::platform::upstream::CallKind;
use std::sync::Arc;

use crate::model::lines;
use crate::platform::cart::CartPort;
use crate::platform::catalog::CatalogPort;
use async_trait::async_trait;

pub const CANCELLED_ATTRIBUTE: &str = "_bcp_cancelled";
const ATTRIBUTION_ATTRIBUTE: &str = "_bcp_attribution";
/// Shopify keeps an untouched cart for ten days; the expiry is counted from its last update.
pub(super) const CART_LIFETIME_DAYS: i64 = 10;

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
        display_title(&self.product_title, &self.variant_title)
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
        super::mapping::lift_money!($m);

        impl From<wire::$m::CartFields> for RawCart {
            fn from(cart: wire::$m::CartFields) -> Self {
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
                            let wire::$m::CartFieldsLinesNodesMerchandise::ProductVariant(variant) =
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

        impl From<wire::$m::UserError> for RawUserError {
            fn from(error: wire::$m::UserError) -> Self {
                Self {
                    code: error.code.as_ref().map(enum_name).unwrap_or_default(),
                    field: error.field.unwrap_or_default(),
                    message: error.message,
                }
            }
        }

        impl From<wire::$m::Warning> for RawWarning {
            fn from(warning: wire::$m::Warning) -> Self {
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

        impl From<wire::$m::ResponseData> for Option<Payload> {
            fn from(data: wire::$m::ResponseData) -> Self {
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

pub struct Carts {
    pub client: Arc<Storefront>,
    /// Looks up the lines that are not variant gids.
    pub catalog: Arc<Catalog>,
    pub currency: Currency,
    pub default_country: Option<String>,
}

fn bad(error: impl std::fmt::Display) -> PlatformError {
    PlatformError::BadResponse(error.to_string())
}

pub(super) fn money(raw: &RawMoney, currency: Currency) -> Result<i64, PlatformError> {
    let currency = if raw.currency.is_empty() {
        currency
    } else {
        parse_currency(&raw.currency).map_err(bad)?
    };
    Ok(Money::from_major_str(&raw.amount, currency)
        .map_err(bad)?
        .amount)
}

/// A line as sent to Shopify: the variant it writes and the agent's id it is reported under.
#[derive(Debug, Clone)]
struct Sent {
    item_id: String,
    variant_id: String,
    quantity: u32,
}

/// A line Shopify (or the lookup before it) refused, before it is worded for the agent.
struct Refused {
    item_id: String,
    /// The variant it is about, when known: its title replaces Shopify's variant-only text.
    variant_id: Option<String>,
    kind: LineProblemKind,
    message: String,
}

/// "Camiseta — M" by variant gid, from every cart answer and lookup seen during one call.
type Titles = HashMap<String, String>;

/// "Camiseta — M"; a variant titled like its product (or Shopify's "Default Title") adds
/// nothing.
pub(super) fn display_title(product: &str, variant: &str) -> String {
    if variant.is_empty() || variant == "Default Title" || variant == product {
        product.to_owned()
    } else {
        format!("{product} — {variant}")
    }
}

fn learn(titles: &mut Titles, cart: &RawCart) {
    for line in &cart.lines {
        if let Some(variant) = &line.variant_id {
            titles
                .entry(variant.clone())
                .or_insert_with(|| line.title());
        }
    }
}

/// The draft's lines as Shopify will get them, and what was refused before asking it.
#[derive(Default)]
struct Wanted {
    sent: Vec<Sent>,
    /// What a merged line may hold (the draft's `line_cap`).
    cap: Option<u32>,
    refused: Vec<Refused>,
    titles: Titles,
}

impl Wanted {
    fn not_found(&mut self, item_id: &str) {
        self.refused.push(Refused {
            item_id: item_id.to_owned(),
            variant_id: None,
            kind: LineProblemKind::NotFound,
            message: format!("Item not found: {item_id}"),
        });
    }

    /// Two spellings (a gid and a SKU) of one variant are one line.
    fn send(&mut self, line: &CartLineInput, variant_id: String) {
        match self
            .sent
            .iter_mut()
            .find(|sent| sent.variant_id == variant_id)
        {
            Some(sent) => {
                let merged = sent.quantity.saturating_add(line.quantity);
                sent.quantity = self.cap.map_or(merged, |cap| merged.min(cap));
            }
            None => self.sent.push(Sent {
                item_id: line.item_id.clone(),
                variant_id,
                quantity: line.quantity,
            }),
        }
    }

    /// The variant a looked-up id names: the variant itself, or a product's only variant.
    fn pick(&mut self, line: &CartLineInput, resolved: &[Resolved]) {
        let Some(hit) = resolved.iter().find(|hit| hit.input == line.item_id) else {
            self.not_found(&line.item_id);
            return;
        };
        let variant = match &hit.resolution {
            Resolution::Variant(id) => hit.product.variant(id),
            Resolution::Product => match hit.product.variants.as_slice() {
                [only] => Some(only),
                _ => None,
            },
        };
        let Some(variant) = variant else {
            self.refused.push(Refused {
                item_id: line.item_id.clone(),
                variant_id: None,
                kind: LineProblemKind::Ambiguous,
                message: format!(
                    "{} is the product \"{}\", which has several variants: add one of its variant ids",
                    line.item_id, hit.product.title
                ),
            });
            return;
        };
        self.titles.insert(
            variant.id.clone(),
            display_title(&hit.product.title, &variant.title),
        );
        self.send(line, variant.id.clone());
    }
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

/// What Shopify refused in one payload: userErrors point at `sent[i]`; warnings at a cart
/// line or the merchandise, reported under the agent's id for that variant in `wanted`.
fn refusals(
    payload: &Payload,
    sent: &[Sent],
    wanted: &[Sent],
    cart: Option<&RawCart>,
    out: &mut Vec<Refused>,
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
        out.push(Refused {
            item_id: line.item_id.clone(),
            variant_id: Some(line.variant_id.clone()),
            kind: if not_found {
                LineProblemKind::NotFound
            } else {
                LineProblemKind::Invalid
            },
            message: error.message.clone(),
        });
    }
    for warning in &payload.warnings {
        let line = cart.and_then(|cart| cart.lines.iter().find(|line| line.id == warning.target));
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
        let item_id = wanted
            .iter()
            .chain(sent)
            .find(|sent| sent.variant_id == variant_id)
            .map_or_else(|| variant_id.clone(), |sent| sent.item_id.clone());
        out.push(Refused {
            item_id,
            variant_id: Some(variant_id),
            kind,
            message: warning.message.clone(),
        });
    }
}

impl Carts {
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

    /// The buyer's market, checked before anything is sent: Shopify refuses a whole
    /// mutation over a country outside its enum.
    fn market(&self, draft: &CartDraft) -> Result<Market, PlatformError> {
        market::market(
            "$.cart",
            draft.context.country.as_deref(),
            draft.context.language.as_deref(),
            self.default_country.as_deref(),
            None,
        )
    }

    async fn load(&self, id: &str) -> Result<Option<RawCart>, PlatformError> {
        if !is_cart_id(id) {
            return Ok(None);
        }
        let data = self
            .client
            .run::<CartGet>(
                wire::cart_get::Variables { id: id.to_owned() },
                CallKind::Read,
            )
            .await?;
        Ok(data
            .cart
            .map(RawCart::from)
            .filter(|cart| !cart.cancelled()))
    }

    /// The draft's lines, which carry the agent's item ids as sent. A variant gid goes to
    /// Shopify as it is, and Shopify's answer judges it; any other id the catalog may know (a
    /// product gid, a number, a handle or a SKU) is looked up first in ONE read (`nodes` and
    /// `search` together), only when the draft has one. Ids that can name nothing are not
    /// found without asking.
    async fn wanted(&self, draft: &CartDraft) -> Result<Wanted, PlatformError> {
        let lookup: Vec<String> = draft
            .lines
            .iter()
            .filter(|line| {
                parse_catalog_id(&line.item_id)
                    .is_some_and(|id| !matches!(id, CatalogId::Variant(_)))
            })
            .map(|line| line.item_id.clone())
            .collect();
        let resolved = if lookup.is_empty() {
            Vec::new()
        } else {
            self.catalog.resolve(&lookup, &draft.context).await?
        };
        let mut wanted = Wanted {
            cap: draft.line_cap,
            ..Wanted::default()
        };
        for line in &draft.lines {
            match parse_catalog_id(&line.item_id) {
                // One spelling per variant, so Shopify's answer matches what was sent.
                Some(CatalogId::Variant(number)) => wanted.send(line, variant_gid(number)),
                Some(_) => wanted.pick(line, &resolved),
                None => wanted.not_found(&line.item_id),
            }
        }
        Ok(wanted)
    }

    /// The refusals worded for the agent. Shopify's stock warnings name only the variant
    /// ("M is out of stock"): the title comes from the cart or the lookup, and for a sold-out
    /// line neither holds, from one `nodes` read of just those titles, made only then. That
    /// read is best effort: the write is done, and Shopify's own text is still true.
    async fn worded(
        &self,
        refused: Vec<Refused>,
        mut titles: Titles,
        market: &Market,
    ) -> Vec<LineProblem> {
        let mut missing: Vec<String> = Vec::new();
        for refusal in &refused {
            let stock = matches!(
                refusal.kind,
                LineProblemKind::OutOfStock | LineProblemKind::InsufficientStock { .. }
            );
            if let Some(variant) = refusal.variant_id.as_ref().filter(|_| stock)
                && !titles.contains_key(variant)
                && !missing.contains(variant)
            {
                missing.push(variant.clone());
            }
        }
        if !missing.is_empty() {
            let answer = self
                .client
                .run::<VariantTitles>(
                    wire::variant_titles::Variables {
                        ids: missing,
                        country: market
                            .country
                            .clone()
                            .map(wire::variant_titles::CountryCode::Other),
                        language: market
                            .language
                            .clone()
                            .map(wire::variant_titles::LanguageCode::Other),
                    },
                    CallKind::Read,
                )
                .await;
            match answer {
                Ok(data) => {
                    for node in data.nodes.into_iter().flatten() {
                        if let wire::variant_titles::VariantTitlesNodes::ProductVariant(variant) =
                            node
                        {
                            titles.insert(
                                variant.id,
                                display_title(&variant.product.title, &variant.title),
                            );
                        }
                    }
                }
                Err(error) => tracing::warn!(%error, "could not read sold-out lines' titles"),
            }
        }
        refused
            .into_iter()
            .map(|refusal| {
                let title = refusal
                    .variant_id
                    .as_ref()
                    .and_then(|variant| titles.get(variant));
                let message = match (&refusal.kind, title) {
                    (LineProblemKind::OutOfStock, Some(title)) => {
                        format!("{title} is out of stock")
                    }
                    (LineProblemKind::InsufficientStock { available }, Some(title)) => {
                        format!("Only {available} of {title} could be added due to availability")
                    }
                    _ => refusal.message,
                };
                LineProblem {
                    item_id: refusal.item_id,
                    kind: refusal.kind,
                    message,
                }
            })
            .collect()
    }

    /// The answer for a cart that was never opened: no id, no lines.
    fn empty(&self) -> CartState {
        CartState {
            id: String::new(),
            lines: Vec::new(),
            currency: self.currency,
            subtotal: 0,
            discount: 0,
            tax: None,
            total: 0,
            checkout_url: None,
            expires_at: None,
        }
    }
}

#[async_trait]
impl CartPort for Carts {
    async fn create(&self, draft: &CartDraft) -> Result<CartOutcome, PlatformError> {
        let market = self.market(draft)?;
        let Wanted {
            sent: wanted,
            mut refused,
            mut titles,
            ..
        } = self.wanted(draft).await?;
        if wanted.is_empty() {
            // No line can reach Shopify: no cart is opened, and the empty id of this empty
            // answer names none (so discarding it asks nothing either).
            return Ok(CartOutcome {
                cart: self.empty(),
                problems: self.worded(refused, titles, &market).await,
            });
        }
        let mut sent = wanted.clone();
        let attributes = || {
            draft.attribution.as_ref().map(|attribution| {
                vec![wire::cart_create::AttributeInput {
                    key: ATTRIBUTION_ATTRIBUTE.to_owned(),
                    value: attribution.to_string().chars().take(1000).collect(),
                }]
            })
        };
        for attempt in 0..2 {
            let data = self
                .client
                .run::<CartCreate>(
                    wire::cart_create::Variables {
                        input: wire::cart_create::CartInput {
                            attributes: attributes(),
                            buyer_identity: market.country.clone().map(|country| {
                                wire::cart_create::CartBuyerIdentityInput {
                                    country_code: Some(wire::cart_create::CountryCode::Other(
                                        country,
                                    )),
                                    email: None,
                                    phone: None,
                                }
                            }),
                            lines: Some(
                                sent.iter()
                                    .map(|line| wire::cart_create::CartLineInput {
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
            refusals(
                &payload,
                &sent,
                &wanted,
                payload.cart.as_ref(),
                &mut refused,
            );
            if let Some(cart) = &payload.cart {
                learn(&mut titles, cart);
                let mut state = self.state(cart)?;
                if state.lines.is_empty() {
                    // Shopify left every line out: nobody will hold this cart's id, so it is
                    // not handed on (nor is a discard of it sent back to Shopify).
                    state = self.empty();
                }
                return Ok(CartOutcome {
                    cart: state,
                    problems: self.worded(refused, titles, &market).await,
                });
            }
            // Shopify refuses the whole cart when one line is bad: drop the lines it named and
            // try once more, so the good lines still make a cart.
            match without_refused(&sent, &payload.errors) {
                Some(rest) if attempt == 0 && !rest.is_empty() => sent = rest,
                Some(_) if attempt == 0 => {
                    return Ok(CartOutcome {
                        cart: self.empty(),
                        problems: self.worded(refused, titles, &market).await,
                    });
                }
                _ => {
                    tracing::warn!(errors = payload.errors.len(), "cartCreate refused the cart");
                    return Err(bad("cartCreate refused the cart"));
                }
            }
        }
        Err(bad("cartCreate refused the cart"))
    }

    async fn get(&self, id: &str) -> Result<Option<CartState>, PlatformError> {
        self.load(id)
            .await?
            .map(|cart| self.state(&cart))
            .transpose()
    }

    /// The cart read and the lookup of any non-gid line (only then) go out together; then
    /// one write, as the module header says.
    async fn replace(
        &self,
        id: &str,
        draft: &CartDraft,
    ) -> Result<Option<CartOutcome>, PlatformError> {
        let market = self.market(draft)?;
        if !is_cart_id(id) {
            return Ok(None);
        }
        let (cart, wanted) = tokio::try_join!(self.load(id), self.wanted(draft))?;
        let Some(mut cart) = cart else {
            return Ok(None);
        };
        let Wanted {
            sent: wanted,
            mut refused,
            mut titles,
            ..
        } = wanted;
        learn(&mut titles, &cart);
        let diff = lines::diff(
            cart.lines.iter().map(|line| {
                (
                    line.variant_id.as_deref().unwrap_or_default(),
                    line.quantity,
                )
            }),
            &wanted,
            |want| (want.variant_id.as_str(), want.quantity),
        );
        let mut updates: Vec<Sent> = Vec::new();
        let mut update_ids: Vec<String> = Vec::new();
        for change in &diff.changes {
            let line = &cart.lines[change.index];
            let variant = line.variant_id.as_deref().unwrap_or_default();
            updates.push(match change.to {
                Some(want) => want.clone(),
                // Not wanted any more, or a second line of a variant already kept.
                None => Sent {
                    item_id: variant.to_owned(),
                    variant_id: variant.to_owned(),
                    quantity: 0,
                },
            });
            update_ids.push(line.id.clone());
        }
        let mut adds: Vec<Sent> = diff.additions.into_iter().cloned().collect();

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
                    wire::cart_replace::Variables {
                        cart_id: cart.id.clone(),
                        updates: update_inputs()
                            .into_iter()
                            .map(|(id, quantity)| wire::cart_replace::CartLineUpdateInput {
                                id,
                                merchandise_id: None,
                                quantity: Some(quantity),
                            })
                            .collect(),
                        adds: adds
                            .iter()
                            .map(|line| wire::cart_replace::CartLineInput {
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
            refusals(
                &update,
                &updates,
                &wanted,
                update.cart.as_ref(),
                &mut refused,
            );
            match update.cart {
                Some(updated) => cart = updated,
                None if update.errors.is_empty() => return Ok(None),
                None => return Err(bad("cartLinesUpdate refused the change")),
            }
            learn(&mut titles, &cart);
            let add: Payload =
                payload!(data.add).ok_or_else(|| bad("cartLinesAdd answered without a payload"))?;
            refusals(&add, &adds, &wanted, add.cart.as_ref(), &mut refused);
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
                    wire::cart_lines_update::Variables {
                        cart_id: cart.id.clone(),
                        lines: update_inputs()
                            .into_iter()
                            .map(
                                |(id, quantity)| wire::cart_lines_update::CartLineUpdateInput {
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
            refusals(
                &payload,
                &updates,
                &wanted,
                payload.cart.as_ref(),
                &mut refused,
            );
            match payload.cart {
                Some(updated) => cart = updated,
                None if payload.errors.is_empty() => return Ok(None),
                None => return Err(bad("cartLinesUpdate refused the change")),
            }
        }
        learn(&mut titles, &cart);
        for attempt in 0..add_attempts {
            if adds.is_empty() {
                break;
            }
            let data = self
                .client
                .run::<CartLinesAdd>(
                    wire::cart_lines_add::Variables {
                        cart_id: cart.id.clone(),
                        lines: adds
                            .iter()
                            .map(|line| wire::cart_lines_add::CartLineInput {
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
            refusals(
                &payload,
                &adds,
                &wanted,
                payload.cart.as_ref(),
                &mut refused,
            );
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
        learn(&mut titles, &cart);
        Ok(Some(CartOutcome {
            cart: self.state(&cart)?,
            problems: self.worded(refused, titles, &market).await,
        }))
    }

    async fn cancel(&self, id: &str) -> Result<Option<CartState>, PlatformError> {
        let Some(cart) = self.load(id).await? else {
            return Ok(None);
        };
        let before = self.state(&cart)?;
        let mut attributes: Vec<wire::cart_attributes_update::AttributeInput> = cart
            .attributes
            .iter()
            .filter_map(|(key, value)| {
                value
                    .as_ref()
                    .map(|value| wire::cart_attributes_update::AttributeInput {
                        key: key.clone(),
                        value: value.clone(),
                    })
            })
            .collect();
        attributes.push(wire::cart_attributes_update::AttributeInput {
            key: CANCELLED_ATTRIBUTE.to_owned(),
            value: OffsetDateTime::now_utc()
                .format(&Rfc3339)
                .unwrap_or_else(|_| "true".to_owned()),
        });
        if cart.lines.is_empty() {
            let data = self
                .client
                .run::<CartAttributesUpdate>(
                    wire::cart_attributes_update::Variables {
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
                wire::cart_cancel::Variables {
                    cart_id: cart.id.clone(),
                    attributes: attributes
                        .into_iter()
                        .map(|attribute| wire::cart_cancel::AttributeInput {
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
