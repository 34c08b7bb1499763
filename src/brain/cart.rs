//! Cart rules: which requested lines reach the store, how store refusals become messages,
//! and the shapes of cart responses. The upstream cart stays the source of truth.

use std::collections::HashMap;

use crate::protocol::answer::Answer;
use serde_json::Value;
use time::format_description::well_known::Rfc3339;

use super::filters::buyer_context;
use super::selection::option_axes;
use super::untrusted;
use super::{Brain, BrainError};
use crate::model::{CartDraft, CartLineInput, CartState, LineProblemKind, Resolution};
use crate::platform::{CartExt, CatalogExt, LineJudge};
use crate::protocol::cart::{CartResponse, ItemOut, LineItemOut, TotalOut};
use crate::protocol::envelope::Status;
use crate::protocol::request::{CartIn, LineItemIn, QuantityUnitIn};
use crate::protocol::{Capability, Message, MessageCode, Release, Severity};

/// The lines that may go to the store, what was refused before asking it, and where each
/// variant came from in the request (for message paths).
pub(super) struct PreparedLines {
    pub(super) lines: Vec<CartLineInput>,
    pub(super) messages: Vec<Message>,
    refused_out_of_stock: usize,
    origin: HashMap<String, usize>,
}

fn line_path(index: usize) -> String {
    format!("$.line_items[{index}]")
}

/// Each distinct requested item with its merged quantity and the index of the first request
/// line that named it: repeated items merge into that line.
fn merge_repeated(cart: &CartIn) -> Vec<(usize, String, u64)> {
    let mut requested: Vec<(usize, String, u64)> = Vec::new();
    for (index, line) in cart.line_items.iter().enumerate() {
        if unit_mismatch(line).is_some() {
            continue;
        }
        match requested.iter_mut().find(|(_, id, _)| *id == line.item.id) {
            Some((_, _, quantity)) => *quantity = quantity.saturating_add(line.quantity),
            None => requested.push((index, line.item.id.clone(), line.quantity)),
        }
    }
    requested
}

/// A line asks for more than one line may hold: it is revised down to the bound, visibly
/// (checkout.md "Quantity and sale basis": a revision is returned as the revised quantity with
/// a message, never silently; the bound is the business's, not the schema's).
fn adjusted(index: usize, item_id: &str, asked: u64, most: u32) -> Message {
    Message::warning(
        MessageCode::QuantityAdjusted,
        format!(
            "Quantity adjusted: {asked} units of {} were requested, one line holds at most {most}",
            untrusted::line(item_id, 100)
        ),
    )
    .at(format!("{}.quantity", line_path(index)))
}

/// `quantity`, at most `most`.
fn capped(quantity: u64, most: u32) -> u32 {
    u32::try_from(quantity).map_or(most, |quantity| quantity.min(most))
}

/// A line whose asserted sale basis is not the store's (`each`) is refused, recoverably, rather
/// than read as pieces (CART-036: no silent reinterpretation).
fn unit_mismatch(line: &LineItemIn) -> Option<&QuantityUnitIn> {
    line.item
        .quantity_unit
        .as_ref()
        .filter(|unit| !unit.is_each())
}

fn unit_mismatch_messages(cart: &CartIn) -> Vec<Message> {
    cart.line_items
        .iter()
        .enumerate()
        .filter_map(|(index, line)| {
            unit_mismatch(line).map(|unit| {
                Message::error(
                    MessageCode::QuantityUnitMismatch,
                    format!(
                        "{} is sold by the piece (unit C62, scale 0), not in {} at scale {}: send the quantity in pieces, or leave quantity_unit out",
                        untrusted::line(&line.item.id, 100),
                        untrusted::line(&unit.unit, 20),
                        unit.scale
                    ),
                    Severity::Recoverable,
                )
                .at(format!("{}.item.quantity_unit", line_path(index)))
            })
        })
        .collect()
}

/// The message an agent reads for a line the store (or the catalog) refused.
pub(super) fn problem_message(kind: &LineProblemKind, text: String) -> Message {
    match kind {
        LineProblemKind::OutOfStock => {
            Message::error(MessageCode::OutOfStock, text, Severity::Recoverable)
        }
        LineProblemKind::InsufficientStock { .. } => {
            Message::warning(MessageCode::QuantityAdjusted, text)
        }
        LineProblemKind::NotFound => {
            Message::error(MessageCode::NotFound, text, Severity::Recoverable)
        }
        LineProblemKind::Ambiguous => {
            Message::error(MessageCode::ItemUnavailable, text, Severity::Recoverable)
        }
        LineProblemKind::Invalid => {
            Message::error(MessageCode::Invalid, text, Severity::Recoverable)
        }
    }
}

impl Brain {
    /// The lines to write. When the brain judges lines, every requested item id is resolved
    /// through the catalog first, so unknown, ambiguous and sold-out items are caught the
    /// same way on every platform before the store is touched; when the store judges them,
    /// its write answer reports the same problems and the catalog round trip is saved.
    pub(super) async fn prepare_lines(&self, cart: &CartIn) -> Result<PreparedLines, BrainError> {
        let requested = merge_repeated(cart);
        let unit_messages = unit_mismatch_messages(cart);
        if self.store().cart_lines == LineJudge::Store {
            let mut prepared = PreparedLines {
                lines: Vec::with_capacity(requested.len()),
                messages: unit_messages,
                refused_out_of_stock: 0,
                origin: HashMap::new(),
            };
            for (index, id, quantity) in requested {
                let most = self.limits.max_line_quantity;
                if quantity > u64::from(most) {
                    prepared.messages.push(adjusted(index, &id, quantity, most));
                }
                prepared.origin.insert(id.clone(), index);
                prepared.lines.push(CartLineInput {
                    item_id: id,
                    quantity: capped(quantity, most),
                });
            }
            return Ok(prepared);
        }
        let ids: Vec<String> = requested.iter().map(|(_, id, _)| id.clone()).collect();
        let context = buyer_context(&cart.context);
        let resolved = self.catalog().resolve_any(&ids, &context).await?;
        let mut prepared = PreparedLines {
            lines: Vec::new(),
            messages: unit_messages,
            refused_out_of_stock: 0,
            origin: HashMap::new(),
        };
        for (index, id, asked) in requested {
            let most = self.limits.max_line_quantity;
            let quantity = capped(asked, most);
            let hit = resolved.iter().find(|hit| hit.input == id);
            let variant = hit.and_then(|hit| match &hit.resolution {
                Resolution::Variant(variant_id) => hit.product.variant(variant_id),
                Resolution::Product => {
                    let single = hit.product.variants.len() == 1
                        && option_axes(&hit.product)
                            .iter()
                            .all(|axis| axis.values.len() <= 1);
                    if single {
                        hit.product.variants.first()
                    } else {
                        None
                    }
                }
            });
            let message = match (hit, variant) {
                (None, _) => Some(problem_message(
                    &LineProblemKind::NotFound,
                    format!("Item not found: {id}"),
                )),
                (Some(hit), None) => Some(problem_message(
                    &LineProblemKind::Ambiguous,
                    format!(
                        "{id} is the product \"{}\", which has several variants: add one of its variant ids",
                        untrusted::title(&hit.product.title)
                    ),
                )),
                (Some(hit), Some(variant)) if !variant.available => {
                    prepared.refused_out_of_stock += 1;
                    Some(problem_message(
                        &LineProblemKind::OutOfStock,
                        format!(
                            "{} is out of stock",
                            untrusted::title(&item_title(&hit.product, variant))
                        ),
                    ))
                }
                (Some(_), Some(variant)) => {
                    prepared.origin.insert(variant.id.clone(), index);
                    match prepared
                        .lines
                        .iter_mut()
                        .find(|line| line.item_id == variant.id)
                    {
                        // Two spellings (id and SKU) of one variant are one line.
                        Some(line) => {
                            let merged = u64::from(line.quantity).saturating_add(asked);
                            line.quantity = capped(merged, most);
                            (merged > u64::from(most)).then(|| adjusted(index, &id, merged, most))
                        }
                        None => {
                            prepared.lines.push(CartLineInput {
                                item_id: variant.id.clone(),
                                quantity,
                            });
                            (asked > u64::from(most)).then(|| adjusted(index, &id, asked, most))
                        }
                    }
                }
            };
            if let Some(message) = message {
                let message = match message.path {
                    Some(_) => message,
                    None => message.at(line_path(index)),
                };
                prepared.messages.push(message);
            }
        }
        Ok(prepared)
    }

    fn draft(&self, cart: &CartIn, lines: Vec<CartLineInput>) -> CartDraft {
        CartDraft {
            lines,
            context: buyer_context(&cart.context),
            buyer: cart.buyer.clone(),
            attribution: cart.attribution.clone(),
            line_cap: Some(self.limits.max_line_quantity),
        }
    }

    fn problem_messages(
        problems: &[crate::model::LineProblem],
        origin: &HashMap<String, usize>,
    ) -> Vec<Message> {
        problems
            .iter()
            .map(|problem| {
                // Stores word these themselves and quote the merchant's product names.
                let message = problem_message(
                    &problem.kind,
                    untrusted::line(&problem.message, untrusted::MESSAGE_MAX).into_owned(),
                );
                match origin.get(&problem.item_id) {
                    Some(index) => message.at(line_path(*index)),
                    None => message,
                }
            })
            .collect()
    }

    fn cart_not_found(&self, release: Release) -> Result<Answer, BrainError> {
        self.business_error(
            release,
            Capability::Cart,
            vec![Message::error(
                MessageCode::NotFound,
                "Cart not found or has expired",
                Severity::Unrecoverable,
            )],
            self.storefront_url(),
        )
    }

    /// `attribution` is the call's own (create/update): it goes on the `continue_url`.
    fn cart_response(
        &self,
        cart: &CartState,
        messages: Vec<Message>,
        attribution: Option<&Value>,
        release: Release,
    ) -> Result<Answer, BrainError> {
        let line_items = cart
            .lines
            .iter()
            .map(|line| {
                let mut totals = vec![TotalOut {
                    kind: "subtotal",
                    amount: line.subtotal,
                }];
                if line.total < line.subtotal {
                    totals.push(TotalOut {
                        kind: "discount",
                        amount: line.total - line.subtotal,
                    });
                }
                totals.push(TotalOut {
                    kind: "total",
                    amount: line.total,
                });
                LineItemOut {
                    id: line.id.clone(),
                    item: ItemOut {
                        id: line.variant_id.clone(),
                        title: untrusted::title(&line.title).into_owned(),
                        price: line.unit_price,
                        image_url: line.image_url.clone(),
                    },
                    quantity: line.quantity,
                    totals,
                }
            })
            .collect();
        let mut totals = vec![TotalOut {
            kind: "subtotal",
            amount: cart.subtotal,
        }];
        if cart.discount < 0 {
            totals.push(TotalOut {
                kind: "discount",
                amount: cart.discount,
            });
        }
        if let Some(tax) = cart.tax {
            totals.push(TotalOut {
                kind: "tax",
                amount: tax,
            });
        }
        totals.push(TotalOut {
            kind: "total",
            amount: cart.total,
        });
        Self::to_json(&CartResponse {
            ucp: self
                .namespace
                .envelope(release, Capability::Cart, Status::Success),
            id: cart.id.clone(),
            line_items,
            currency: cart.currency.code(),
            totals,
            messages,
            continue_url: cart
                .checkout_url
                .as_deref()
                .and_then(|url| self.continue_urls.rewrite_with(url, attribution)),
            expires_at: cart
                .expires_at
                .and_then(|expiry| expiry.format(&Rfc3339).ok()),
        })
    }

    pub async fn create_cart(&self, cart: CartIn, release: Release) -> Result<Answer, BrainError> {
        let prepared = self.prepare_lines(&cart).await?;
        if prepared.lines.is_empty() {
            let mut messages = Vec::new();
            if prepared.refused_out_of_stock > 0
                && prepared.refused_out_of_stock == prepared.messages.len()
            {
                messages.push(Message::error(
                    MessageCode::OutOfStock,
                    "All requested items are currently out of stock",
                    Severity::Unrecoverable,
                ));
            }
            messages.extend(prepared.messages);
            return self.business_error(release, Capability::Cart, messages, self.storefront_url());
        }
        let outcome = self
            .carts()
            .create(&self.draft(&cart, prepared.lines))
            .await?;
        let mut messages = prepared.messages;
        messages.extend(Self::problem_messages(&outcome.problems, &prepared.origin));
        if outcome.cart.lines.is_empty() {
            // The store refused every line (its own verdict, or stock changed since the
            // catalog said otherwise): do not hand out an empty cart, nor leave it behind.
            self.carts().discard(&outcome.cart.id).await;
            let all_sold_out = messages
                .iter()
                .all(|message| message.code == MessageCode::OutOfStock);
            if all_sold_out {
                messages.insert(
                    0,
                    Message::error(
                        MessageCode::OutOfStock,
                        "All requested items are currently out of stock",
                        Severity::Unrecoverable,
                    ),
                );
            }
            return self.business_error(release, Capability::Cart, messages, self.storefront_url());
        }
        self.cart_response(&outcome.cart, messages, cart.attribution.as_ref(), release)
    }

    pub async fn get_cart(&self, id: &str, release: Release) -> Result<Answer, BrainError> {
        match self.carts().get(id).await? {
            Some(cart) => self.cart_response(&cart, Vec::new(), None, release),
            None => self.cart_not_found(release),
        }
    }

    pub async fn update_cart(
        &self,
        id: &str,
        cart: CartIn,
        release: Release,
    ) -> Result<Answer, BrainError> {
        let prepared = self.prepare_lines(&cart).await?;
        let Some(outcome) = self
            .carts()
            .replace(id, &self.draft(&cart, prepared.lines))
            .await?
        else {
            return self.cart_not_found(release);
        };
        let mut messages = prepared.messages;
        messages.extend(Self::problem_messages(&outcome.problems, &prepared.origin));
        self.cart_response(&outcome.cart, messages, cart.attribution.as_ref(), release)
    }

    pub async fn cancel_cart(&self, id: &str, release: Release) -> Result<Answer, BrainError> {
        match self.carts().cancel(id).await? {
            Some(before) => self.cart_response(&before, Vec::new(), None, release),
            None => self.cart_not_found(release),
        }
    }
}

/// "Camiseta — M": the product names the item, the variant which one; a variant titled like
/// its product (or Shopify's "Default Title") adds nothing.
fn item_title(product: &crate::model::Product, variant: &crate::model::Variant) -> String {
    if variant.title.is_empty()
        || variant.title == product.title
        || variant.title == "Default Title"
    {
        product.title.clone()
    } else {
        format!("{} — {}", product.title, variant.title)
    }
}
