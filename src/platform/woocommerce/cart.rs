//! Carts are Store API carts. The BCP cart id wraps the `Cart-Token`; every write first reads
//! the cart (for the diff, and for a fresh `Nonce`), then sends only the changes.
//!
//! A Store API cart cannot be deleted, so a cancelled cart is an emptied one, and an empty
//! upstream cart reads as not found. That holds across restarts and replicas without any
//! bridge-side state; the price is that `update_cart` to zero lines also ends the cart.

use std::sync::Arc;

use iso_currency::Currency;
use reqwest::Method;
use serde_json::json;
use time::OffsetDateTime;
use url::Url;

use super::api::{Session, StoreApi, Written};
use super::ids::{WooId, cart_id, cart_token, claims};
use super::mapping;
use super::settings::CheckoutMode;
use super::text::decode_entities;
use super::wire::{ErrorBody, StoreCart};
use crate::model::{
    CartDraft, CartLineInput, CartOutcome, CartState, LineProblem, LineProblemKind,
};
use crate::platform::port::PlatformError;

pub struct Carts {
    api: Arc<StoreApi>,
    currency: Currency,
    base_url: Url,
    checkout: CheckoutMode,
    checkout_path: String,
}

/// How the store refused one line.
enum Refusal {
    /// It would take this many instead.
    Limit(u32),
    Problem(LineProblemKind),
}

/// The quantity WooCommerce says it could take, from messages such as "The maximum quantity
/// that can be added to the cart is 7" or "… not enough stock (3 remaining)".
fn stated_quantity(message: &str) -> Option<u32> {
    message
        .split(|c: char| !c.is_ascii_digit())
        .filter(|part| !part.is_empty() && part.len() <= 9)
        .filter_map(|part| part.parse().ok())
        .next_back()
}

fn classify(error: &ErrorBody, wanted: u32) -> Refusal {
    match error.code.as_str() {
        "woocommerce_rest_product_out_of_stock" => Refusal::Problem(LineProblemKind::OutOfStock),
        "invalid_quantity"
        | "woocommerce_rest_invalid_stock_level"
        | "woocommerce_rest_product_partially_out_of_stock"
        | "woocommerce_rest_cart_invalid_quantity" => match stated_quantity(&error.message) {
            Some(0) => Refusal::Problem(LineProblemKind::OutOfStock),
            Some(available) if available < wanted => Refusal::Limit(available),
            _ => Refusal::Problem(LineProblemKind::Invalid),
        },
        "woocommerce_rest_cart_invalid_product"
        | "woocommerce_rest_product_invalid_id"
        | "woocommerce_rest_cart_invalid_key" => Refusal::Problem(LineProblemKind::NotFound),
        _ => Refusal::Problem(LineProblemKind::Invalid),
    }
}

fn problem(variant_id: &str, kind: LineProblemKind, error: &ErrorBody) -> LineProblem {
    let text = decode_entities(&error.message);
    LineProblem {
        variant_id: variant_id.to_owned(),
        message: if text.trim().is_empty() {
            format!("The store refused item {variant_id}")
        } else {
            text
        },
        kind,
    }
}

/// A write that touches one line: `add-item` or `update-item`.
enum LineWrite<'a> {
    Add(WooId),
    Update(&'a str),
}

impl Carts {
    pub fn new(
        api: Arc<StoreApi>,
        currency: Currency,
        base_url: Url,
        checkout: CheckoutMode,
        checkout_path: String,
    ) -> Self {
        Self {
            api,
            currency,
            base_url,
            checkout,
            checkout_path,
        }
    }

    fn checkout_url(&self, token: &str, cart: &StoreCart) -> Option<String> {
        match self.checkout {
            CheckoutMode::Session => {
                let mut url = self
                    .base_url
                    .join(self.checkout_path.trim_start_matches('/'))
                    .ok()?;
                url.query_pairs_mut().append_pair("session", token);
                Some(url.into())
            }
            CheckoutMode::Link => {
                let mut url = self.base_url.join("checkout-link/").ok()?;
                let products = cart
                    .items
                    .iter()
                    .map(|item| format!("{}:{}", item.id, item.quantity))
                    .collect::<Vec<_>>()
                    .join(",");
                url.query_pairs_mut().append_pair("products", &products);
                Some(url.into())
            }
        }
    }

    /// `token` is the one the BCP id wraps: it stays the id for the cart's whole life, even
    /// though the store hands out a refreshed token with every answer.
    fn state(&self, token: &str, cart: &StoreCart) -> Result<CartState, PlatformError> {
        mapping::cart(
            cart_id(token),
            cart,
            self.currency,
            self.checkout_url(token, cart),
            claims(token).expires_at,
        )
    }

    /// The live, non-empty cart behind a BCP id, with a session ready for writes.
    async fn open(&self, id: &str) -> Result<Option<(String, Session, StoreCart)>, PlatformError> {
        let Some(token) = cart_token(id) else {
            return Ok(None);
        };
        let sent = claims(&token);
        if sent
            .expires_at
            .is_some_and(|expiry| expiry <= OffsetDateTime::now_utc())
        {
            return Ok(None);
        }
        let (cart, session) = self.api.cart(Some(&token)).await?;
        // A token the store does not accept (forged, or for a purged session) gets a brand
        // new session back: that cart is not the one the agent named.
        if claims(&session.token).session != sent.session || sent.session.is_none() {
            return Ok(None);
        }
        if cart.items.is_empty() {
            return Ok(None);
        }
        Ok(Some((token, session, cart)))
    }

    async fn send_line(
        &self,
        session: &mut Session,
        write: &LineWrite<'_>,
        quantity: u32,
    ) -> Result<Written, PlatformError> {
        let (segments, body) = match write {
            LineWrite::Add(id) => (
                ["cart", "add-item"],
                json!({"id": id.0, "quantity": quantity}),
            ),
            LineWrite::Update(key) => (
                ["cart", "update-item"],
                json!({"key": key, "quantity": quantity}),
            ),
        };
        self.api
            .write(session, Method::POST, &segments, Some(body))
            .await
    }

    /// Adds each line in turn, keeping the latest cart the store returned and collecting what
    /// it refused.
    async fn add_lines<'l>(
        &self,
        session: &mut Session,
        cart: &mut StoreCart,
        lines: impl Iterator<Item = &'l CartLineInput>,
        problems: &mut Vec<LineProblem>,
    ) -> Result<(), PlatformError> {
        for line in lines {
            let Some(id) = WooId::parse(&line.variant_id) else {
                problems.push(LineProblem {
                    variant_id: line.variant_id.clone(),
                    kind: LineProblemKind::NotFound,
                    message: format!("Item not found: {}", line.variant_id),
                });
                continue;
            };
            let (written, problem) = self
                .write_line(session, LineWrite::Add(id), &line.variant_id, line.quantity)
                .await?;
            if let Some(written) = written {
                *cart = written;
            }
            problems.extend(problem);
        }
        Ok(())
    }

    /// One line write; a quantity refusal is retried once with what the store can take.
    async fn write_line(
        &self,
        session: &mut Session,
        write: LineWrite<'_>,
        variant_id: &str,
        quantity: u32,
    ) -> Result<(Option<StoreCart>, Option<LineProblem>), PlatformError> {
        let written = self.send_line(session, &write, quantity).await?;
        let error = match written {
            Written::Cart(cart) => return Ok((Some(cart), None)),
            Written::Refused { error, .. } => error,
        };
        match classify(&error, quantity) {
            Refusal::Problem(kind) => Ok((None, Some(problem(variant_id, kind, &error)))),
            Refusal::Limit(available) => match self.send_line(session, &write, available).await? {
                Written::Cart(cart) => {
                    let mut adjusted = problem(
                        variant_id,
                        LineProblemKind::InsufficientStock { available },
                        &error,
                    );
                    adjusted.message = format!(
                        "{}. Quantity set to {available}.",
                        adjusted.message.trim_end_matches('.')
                    );
                    Ok((Some(cart), Some(adjusted)))
                }
                Written::Refused { error, .. } => Ok((
                    None,
                    Some(problem(variant_id, LineProblemKind::Invalid, &error)),
                )),
            },
        }
    }

    pub async fn create(&self, draft: &CartDraft) -> Result<CartOutcome, PlatformError> {
        // A cart read without a token opens a new session and hands out its token and nonce.
        let (mut cart, mut session) = self.api.cart(None).await?;
        let mut problems = Vec::new();
        self.add_lines(&mut session, &mut cart, draft.lines.iter(), &mut problems)
            .await?;
        Ok(CartOutcome {
            cart: self.state(&session.token, &cart)?,
            problems,
        })
    }

    pub async fn get(&self, id: &str) -> Result<Option<CartState>, PlatformError> {
        match self.open(id).await? {
            Some((token, _, cart)) => self.state(&token, &cart).map(Some),
            None => Ok(None),
        }
    }

    /// Removes first (frees stock held by nothing), then updates, then adds.
    pub async fn replace(
        &self,
        id: &str,
        draft: &CartDraft,
    ) -> Result<Option<CartOutcome>, PlatformError> {
        let Some((token, mut session, mut cart)) = self.open(id).await? else {
            return Ok(None);
        };
        let mut problems = Vec::new();
        let mut kept: Vec<String> = Vec::new();
        let mut removals = Vec::new();
        let mut updates = Vec::new();
        for item in &cart.items {
            let wanted = draft
                .lines
                .iter()
                .find(|line| line.variant_id == item.id.to_string());
            match wanted {
                Some(line) if !kept.contains(&line.variant_id) => {
                    kept.push(line.variant_id.clone());
                    if line.quantity != item.quantity {
                        updates.push((item.key.clone(), line.variant_id.clone(), line.quantity));
                    }
                }
                _ => removals.push(item.key.clone()),
            }
        }
        for key in removals {
            match self
                .api
                .write(
                    &mut session,
                    Method::POST,
                    &["cart", "remove-item"],
                    Some(json!({ "key": key })),
                )
                .await?
            {
                Written::Cart(written) => cart = written,
                // Already gone (another writer): the goal is reached.
                Written::Refused { error, .. } => {
                    tracing::debug!(code = %error.code, "remove-item refused")
                }
            }
        }
        for (key, variant_id, quantity) in updates {
            let (written, problem) = self
                .write_line(&mut session, LineWrite::Update(&key), &variant_id, quantity)
                .await?;
            if let Some(written) = written {
                cart = written;
            }
            problems.extend(problem);
        }
        let added = draft
            .lines
            .iter()
            .filter(|line| !kept.contains(&line.variant_id));
        self.add_lines(&mut session, &mut cart, added, &mut problems)
            .await?;
        Ok(Some(CartOutcome {
            cart: self.state(&token, &cart)?,
            problems,
        }))
    }

    pub async fn cancel(&self, id: &str) -> Result<Option<CartState>, PlatformError> {
        let Some((token, mut session, cart)) = self.open(id).await? else {
            return Ok(None);
        };
        let before = self.state(&token, &cart)?;
        self.api.empty(&mut session).await?;
        Ok(Some(before))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(code: &str, message: &str) -> ErrorBody {
        ErrorBody {
            code: code.to_owned(),
            message: message.to_owned(),
        }
    }

    #[test]
    fn quantity_refusals_name_what_the_store_can_take() {
        let max = error(
            "invalid_quantity",
            "The maximum quantity that can be added to the cart is 7",
        );
        assert!(matches!(classify(&max, 9), Refusal::Limit(7)));
        assert!(matches!(
            classify(&max, 7),
            Refusal::Problem(LineProblemKind::Invalid)
        ));
        let stock = error(
            "woocommerce_rest_invalid_stock_level",
            "You cannot add that amount of &quot;Mug 2&quot; to the cart because there is not enough stock (3 remaining).",
        );
        assert!(matches!(classify(&stock, 5), Refusal::Limit(3)));
        let oos = error("woocommerce_rest_product_out_of_stock", "x");
        assert!(matches!(
            classify(&oos, 1),
            Refusal::Problem(LineProblemKind::OutOfStock)
        ));
        let gone = error("woocommerce_rest_cart_invalid_product", "x");
        assert!(matches!(
            classify(&gone, 1),
            Refusal::Problem(LineProblemKind::NotFound)
        ));
    }
}
