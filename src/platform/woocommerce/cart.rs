//! Carts are Store API carts. The BCP cart id wraps the `Cart-Token`. Every write is one
//! `POST /batch` (25 sub-requests each): create adds the lines to a new cart (with the guest
//! Nonce any earlier answer carried; cold, one `GET /cart` first), update reads the cart,
//! empties it and adds the new lines, cancel reads and empties it. Each sub-request answers
//! for itself, so every refused line is judged from the store's own answer, and the last
//! successful answer is the cart the store holds.
//!
//! A Store API cart cannot be deleted, so a cancelled cart is an emptied one, and an empty
//! upstream cart reads as not found. That holds across restarts and replicas without any
//! bridge-side state; the price is that `update_cart` to zero lines also ends the cart.

use std::collections::HashMap;
use std::sync::Arc;

use iso_currency::Currency;
use time::OffsetDateTime;
use url::Url;

use super::client::{CartCall, MAX_BATCH, MAX_PER_PAGE, StoreApi, SubAnswer};
use super::ids::{WooId, cart_id, cart_token, claims, is_sku, is_slug};
use super::mapping;
use super::settings::CheckoutMode;
use super::text::decode_entities;
use super::wire::{ErrorBody, StoreCart, StoreProduct};
use crate::model::{
    CartDraft, CartLineInput, CartOutcome, CartState, LineProblem, LineProblemKind,
};
use crate::platform::cart::CartPort;
use crate::platform::port::PlatformError;
use async_trait::async_trait;

pub struct Carts {
    api: Arc<StoreApi>,
    currency: Currency,
    base_url: Url,
    checkout: CheckoutMode,
    checkout_path: String,
}

/// How the store refused one line (a business refusal: the answer reports it on the line).
enum LineRefusal {
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

fn classify(error: &ErrorBody, wanted: u32) -> LineRefusal {
    match error.code.as_str() {
        "woocommerce_rest_product_out_of_stock" => {
            LineRefusal::Problem(LineProblemKind::OutOfStock)
        }
        "invalid_quantity"
        | "woocommerce_rest_invalid_stock_level"
        | "woocommerce_rest_product_partially_out_of_stock"
        | "woocommerce_rest_cart_invalid_quantity" => match stated_quantity(&error.message) {
            Some(0) => LineRefusal::Problem(LineProblemKind::OutOfStock),
            Some(available) if available < wanted => LineRefusal::Limit(available),
            _ => LineRefusal::Problem(LineProblemKind::Invalid),
        },
        "woocommerce_rest_missing_attributes" | "woocommerce_rest_invalid_variation_data" => {
            LineRefusal::Problem(LineProblemKind::Ambiguous)
        }
        "woocommerce_rest_cart_invalid_product"
        | "woocommerce_rest_product_invalid_id"
        | "woocommerce_rest_cart_invalid_key" => LineRefusal::Problem(LineProblemKind::NotFound),
        _ => LineRefusal::Problem(LineProblemKind::Invalid),
    }
}

fn problem(item_id: &str, kind: LineProblemKind, error: &ErrorBody) -> LineProblem {
    let text = decode_entities(&error.message);
    LineProblem {
        item_id: item_id.to_owned(),
        // The store only says "Missing attributes for variable product.": tell the agent
        // what to do instead, as the brain does for the same case.
        message: if kind == LineProblemKind::Ambiguous {
            format!("{item_id} is a product with several variants: add one of its variant ids")
        } else if text.trim().is_empty() {
            format!("The store refused item {item_id}")
        } else {
            text
        },
        kind,
    }
}

/// One sub-request and, for an add-item, the agent's line it carries.
struct Step {
    call: CartCall,
    line: Option<(String, u32)>,
}

impl Step {
    fn add(id: u64, item_id: &str, quantity: u32) -> Self {
        Self {
            call: CartCall::Add { id, quantity },
            line: Some((item_id.to_owned(), quantity)),
        }
    }

    fn plain(call: CartCall) -> Self {
        Self { call, line: None }
    }
}

/// What a run of batches did to one cart.
#[derive(Default)]
struct Applied {
    /// The latest Cart-Token the store answered with.
    token: Option<String>,
    /// The cart as the last successful sub-request left it.
    cart: Option<StoreCart>,
    /// The cart as a `CartCall::Read` found it, before the writes after it.
    before: Option<StoreCart>,
    /// The store did not accept the session (an unknown or tampered token).
    refused_session: bool,
    problems: Vec<LineProblem>,
    /// Lines the store would take fewer of: `(id, item id, available, its refusal)`.
    clamps: Vec<(u64, String, u32, ErrorBody)>,
}

impl Applied {
    fn read(&mut self, step: &Step, answer: SubAnswer) -> Result<(), PlatformError> {
        if let Some(token) = &answer.token {
            self.token = Some(token.clone());
        }
        if answer.status == 401 || answer.status == 403 {
            let error = answer.error();
            tracing::warn!(code = %error.code, "the store refused the cart session");
            self.refused_session = true;
            return Ok(());
        }
        match (&step.call, answer.ok()) {
            (CartCall::Add { .. }, true) => self.cart = Some(answer.cart()?),
            (CartCall::Clear, true) => self.cart = Some(StoreCart::default()),
            (CartCall::Read, false) => match answer.conflict_cart() {
                Some(cart) => {
                    self.before = Some(cart.clone());
                    self.cart = Some(cart);
                }
                None => return Err(refused("reading the cart", &answer)),
            },
            (CartCall::Clear, false) => return Err(refused("emptying the cart", &answer)),
            (CartCall::Read, true) => {
                return Err(PlatformError::BadResponse(
                    "batch: the cart read changed the cart".to_owned(),
                ));
            }
            (CartCall::Add { id, .. }, false) => {
                let error = answer.error();
                let (item_id, quantity) = step.line.clone().unwrap_or_default();
                match classify(&error, quantity) {
                    LineRefusal::Problem(kind) => {
                        self.problems.push(problem(&item_id, kind, &error));
                    }
                    LineRefusal::Limit(available) => {
                        self.clamps.push((*id, item_id, available, error));
                    }
                }
            }
        }
        Ok(())
    }
}

/// A sub-request the adapter cannot do without was refused: the store's code and status
/// go up as the error, never dropped.
fn refused(what: &str, answer: &SubAnswer) -> PlatformError {
    let error = answer.error();
    PlatformError::BadResponse(format!(
        "{what}: HTTP {} {}",
        answer.status,
        if error.code.is_empty() {
            "(no code)"
        } else {
            error.code.as_str()
        }
    ))
}

/// Whether `token` names the same store session as the one the agent's id wraps.
pub(super) fn same_session(sent: &str, answered: Option<&str>) -> bool {
    let sent = claims(sent).session;
    sent.is_some() && answered.is_none_or(|answered| claims(answered).session == sent)
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

    /// The token a BCP id wraps, unless it cannot name a live cart (never asks the store).
    fn token_of(id: &str) -> Option<String> {
        let token = cart_token(id)?;
        let expired = claims(&token)
            .expires_at
            .is_some_and(|expiry| expiry <= OffsetDateTime::now_utc());
        (!expired).then_some(token)
    }

    /// Add-item steps for the draft's lines, which carry the agent's item ids as sent: a
    /// numeric id goes to the store as it is (a variation or simple product is added, a
    /// variable product is refused as needing a variant, an unknown id as not found); SKUs
    /// and slugs first become ids in one round (`sku=` and `slug=` together). Ids that can
    /// be neither are not found without asking.
    async fn add_steps(
        &self,
        draft: &CartDraft,
        problems: &mut Vec<LineProblem>,
    ) -> Result<Vec<Step>, PlatformError> {
        let words: Vec<String> = draft
            .lines
            .iter()
            .map(|line| line.item_id.clone())
            .filter(|id| WooId::parse(id).is_none() && (is_sku(id) || is_slug(id)))
            .collect();
        let named = self.ids_of(&words).await?;
        let mut steps: Vec<Step> = Vec::new();
        let mut added: HashMap<u64, usize> = HashMap::new();
        for line in &draft.lines {
            let id = WooId::parse(&line.item_id)
                .map(|id| id.0)
                .or_else(|| named.get(&line.item_id).copied());
            let Some(id) = id else {
                problems.push(not_found(line));
                continue;
            };
            // Two spellings (an id and its SKU) of one product: the store would add them up
            // into one cart item, past the cap; one add-item, capped, instead.
            if let Some(&at) = added.get(&id)
                && let Some((item_id, quantity)) = steps[at].line.clone()
            {
                let merged = quantity.saturating_add(line.quantity);
                let merged = draft.line_cap.map_or(merged, |cap| merged.min(cap));
                steps[at] = Step::add(id, &item_id, merged);
                continue;
            }
            added.insert(id, steps.len());
            steps.push(Step::add(id, &line.item_id, line.quantity));
        }
        Ok(steps)
    }

    /// The store ids SKUs (ignoring case, as the store does) and slugs name: a variation's
    /// own id, or the product's.
    async fn ids_of(&self, words: &[String]) -> Result<HashMap<String, u64>, PlatformError> {
        let mut out = HashMap::new();
        if words.is_empty() {
            return Ok(out);
        }
        let skus: Vec<&String> = words.iter().filter(|word| is_sku(word)).collect();
        let slugs: Vec<&String> = words.iter().filter(|word| is_slug(word)).collect();
        let (by_sku, by_slug) =
            tokio::join!(self.list_by("sku", &skus), self.list_by("slug", &slugs));
        let (by_sku, by_slug) = (by_sku?, by_slug?);
        for word in words {
            let hit = by_sku
                .iter()
                .find(|item| !item.sku.is_empty() && item.sku.eq_ignore_ascii_case(word))
                .or_else(|| by_slug.iter().find(|item| item.slug == *word));
            if let Some(item) = hit {
                out.insert(word.clone(), item.id);
            }
        }
        Ok(out)
    }

    async fn list_by(
        &self,
        key: &'static str,
        values: &[&String],
    ) -> Result<Vec<StoreProduct>, PlatformError> {
        let mut out = Vec::new();
        for chunk in values.chunks(MAX_PER_PAGE as usize) {
            let joined = chunk
                .iter()
                .map(|value| value.as_str())
                .collect::<Vec<_>>()
                .join(",");
            let query = [(key, joined), ("per_page", MAX_PER_PAGE.to_string())];
            out.extend(self.api.products(&query).await?.items);
        }
        Ok(out)
    }

    /// A numeric item id the store knows no product by may be a SKU of digits only (a
    /// barcode), which lookups find (catalog.rs asks numeric inputs as SKUs too): such lines
    /// are asked as SKUs once the store has said so (so carts of real ids cost no extra
    /// round), and those it names are added in one more batch.
    async fn add_numeric_skus(
        &self,
        steps: &[Step],
        applied: &mut Applied,
    ) -> Result<(), PlatformError> {
        let unknown: Vec<String> = applied
            .problems
            .iter()
            .filter(|problem| {
                problem.kind == LineProblemKind::NotFound
                    && WooId::parse(&problem.item_id).is_some()
                    && is_sku(&problem.item_id)
            })
            .map(|problem| problem.item_id.clone())
            .collect();
        if unknown.is_empty() {
            return Ok(());
        }
        let named = self.ids_of(&unknown).await?;
        let retries: Vec<Step> = steps
            .iter()
            .filter_map(|step| {
                let (item_id, quantity) = step.line.as_ref()?;
                let id = *named.get(item_id)?;
                let sent = WooId::parse(item_id).map(|sent| sent.0);
                (sent != Some(id)).then(|| Step::add(id, item_id, *quantity))
            })
            .collect();
        if retries.is_empty() {
            return Ok(());
        }
        applied.problems.retain(|problem| {
            !(problem.kind == LineProblemKind::NotFound
                && retries.iter().any(|step| {
                    step.line
                        .as_ref()
                        .is_some_and(|(id, _)| *id == problem.item_id)
                }))
        });
        for chunk in retries.chunks(MAX_BATCH) {
            let calls: Vec<CartCall> = chunk.iter().map(|step| step.call.clone()).collect();
            let answers = self.api.batch(applied.token.as_deref(), &calls).await?;
            for (step, answer) in chunk.iter().zip(answers) {
                applied.read(step, answer)?;
            }
        }
        Ok(())
    }

    /// Sends `steps` in order, 25 to a batch, the first batch on `token` (or on a new cart),
    /// the later ones on whatever token the store answered with; then, in one more batch,
    /// the lines the store would take fewer of, at the quantity it named.
    async fn run(&self, token: Option<String>, steps: Vec<Step>) -> Result<Applied, PlatformError> {
        let mut applied = Applied {
            token,
            ..Applied::default()
        };
        for chunk in steps.chunks(MAX_BATCH) {
            let calls: Vec<CartCall> = chunk.iter().map(|step| step.call.clone()).collect();
            let answers = self.api.batch(applied.token.as_deref(), &calls).await?;
            for (step, answer) in chunk.iter().zip(answers) {
                applied.read(step, answer)?;
            }
            if applied.refused_session {
                return Ok(applied);
            }
        }
        self.add_numeric_skus(&steps, &mut applied).await?;
        let clamps = std::mem::take(&mut applied.clamps);
        for chunk in clamps.chunks(MAX_BATCH) {
            let steps: Vec<Step> = chunk
                .iter()
                .map(|(id, item_id, available, _)| Step::add(*id, item_id, *available))
                .collect();
            let calls: Vec<CartCall> = steps.iter().map(|step| step.call.clone()).collect();
            let answers = self.api.batch(applied.token.as_deref(), &calls).await?;
            for ((_, item_id, available, first), answer) in chunk.iter().zip(answers) {
                if let Some(token) = &answer.token {
                    applied.token = Some(token.clone());
                }
                if answer.ok() {
                    applied.cart = Some(answer.cart()?);
                    let mut adjusted = problem(
                        item_id,
                        LineProblemKind::InsufficientStock {
                            available: *available,
                        },
                        first,
                    );
                    adjusted.message = format!(
                        "{}. Quantity set to {available}.",
                        adjusted.message.trim_end_matches('.')
                    );
                    applied.problems.push(adjusted);
                } else {
                    let error = answer.error();
                    applied
                        .problems
                        .push(problem(item_id, LineProblemKind::Invalid, &error));
                }
            }
        }
        Ok(applied)
    }
}

#[async_trait]
impl CartPort for Carts {
    async fn create(&self, draft: &CartDraft) -> Result<CartOutcome, PlatformError> {
        let mut problems = Vec::new();
        let steps = self.add_steps(draft, &mut problems).await?;
        if steps.is_empty() {
            // No line can reach the store: no upstream cart is opened, and the empty id of
            // this empty answer names none (so discarding it asks nothing either).
            return Ok(CartOutcome {
                cart: mapping::cart(
                    String::new(),
                    &StoreCart::default(),
                    self.currency,
                    None,
                    None,
                )?,
                problems,
            });
        }
        // Cold (no guest Nonce seen yet): a cart read opens the session and hands out both.
        let token = match self.api.known_nonce() {
            Some(_) => None,
            None => Some(self.api.cart(None).await?.1),
        };
        let mut applied = self.run(token.clone(), steps).await?;
        if applied.refused_session && token.is_none() {
            // The Nonce went stale (it rotates every 12–24 h): nothing was applied, and the
            // refusals carried a fresh one and a new session's token. Once more on that.
            let steps = self.add_steps(draft, &mut Vec::new()).await?;
            applied = self.run(applied.token.take(), steps).await?;
        }
        if applied.refused_session {
            return Err(PlatformError::Unavailable {
                reason: "the store refused the cart session".to_owned(),
                retry_after: None,
            });
        }
        let token = applied.token.clone().ok_or_else(|| {
            PlatformError::BadResponse("cart: the store sent no Cart-Token".to_owned())
        })?;
        problems.append(&mut applied.problems);
        let cart = applied.cart.unwrap_or_default();
        Ok(CartOutcome {
            cart: self.state(&token, &cart)?,
            problems,
        })
    }

    /// The live, non-empty cart behind a BCP id.
    async fn get(&self, id: &str) -> Result<Option<CartState>, PlatformError> {
        let Some(token) = Self::token_of(id) else {
            return Ok(None);
        };
        let (cart, answered) = self.api.cart(Some(&token)).await?;
        // A token the store does not accept (forged, or for a purged session) gets a brand
        // new session back: that cart is not the one the agent named.
        if !same_session(&token, Some(&answered)) || cart.items.is_empty() {
            return Ok(None);
        }
        self.state(&token, &cart).map(Some)
    }

    /// One batch: read the cart, empty it, add the new lines (more batches past 23 lines).
    /// An emptied (cancelled) cart is not found; if it turns out to have been one, the lines
    /// just added are taken out again (one more request, only then).
    async fn replace(
        &self,
        id: &str,
        draft: &CartDraft,
    ) -> Result<Option<CartOutcome>, PlatformError> {
        let Some(token) = Self::token_of(id) else {
            return Ok(None);
        };
        let mut problems = Vec::new();
        let mut steps = vec![Step::plain(CartCall::Read), Step::plain(CartCall::Clear)];
        steps.extend(self.add_steps(draft, &mut problems).await?);
        let mut applied = self.run(Some(token.clone()), steps).await?;
        if applied.refused_session || !same_session(&token, applied.token.as_deref()) {
            return Ok(None);
        }
        if applied
            .before
            .as_ref()
            .is_none_or(|cart| cart.items.is_empty())
        {
            if applied
                .cart
                .as_ref()
                .is_some_and(|cart| !cart.items.is_empty())
            {
                self.run(Some(token), vec![Step::plain(CartCall::Clear)])
                    .await?;
            }
            return Ok(None);
        }
        problems.append(&mut applied.problems);
        let cart = applied.cart.unwrap_or_default();
        Ok(Some(CartOutcome {
            cart: self.state(&token, &cart)?,
            problems,
        }))
    }

    /// One batch: read the cart (the answer is the cart as it was), then empty it.
    async fn cancel(&self, id: &str) -> Result<Option<CartState>, PlatformError> {
        let Some(token) = Self::token_of(id) else {
            return Ok(None);
        };
        let steps = vec![Step::plain(CartCall::Read), Step::plain(CartCall::Clear)];
        let applied = self.run(Some(token.clone()), steps).await?;
        if applied.refused_session || !same_session(&token, applied.token.as_deref()) {
            return Ok(None);
        }
        match applied.before {
            Some(before) if !before.items.is_empty() => self.state(&token, &before).map(Some),
            _ => Ok(None),
        }
    }
}

fn not_found(line: &CartLineInput) -> LineProblem {
    LineProblem {
        item_id: line.item_id.clone(),
        kind: LineProblemKind::NotFound,
        message: format!("Item not found: {}", line.item_id),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn error(code: &str, message: &str) -> ErrorBody {
        ErrorBody {
            code: code.to_owned(),
            message: message.to_owned(),
        }
    }

    fn answer(status: u16, body: serde_json::Value) -> SubAnswer {
        SubAnswer {
            status,
            body,
            token: None,
            nonce: None,
        }
    }

    #[test]
    fn refused_sub_requests_are_never_dropped() {
        let conflict = serde_json::json!({"code": "woocommerce_rest_cart_invalid_key", "message": "Cart item no longer exists or is invalid.", "data": {"status": 409}});
        // The read's 409 must carry the cart; without it the write cannot be judged.
        let mut applied = Applied::default();
        let read = Step::plain(CartCall::Read);
        assert!(applied.read(&read, answer(409, conflict.clone())).is_err());
        // A 409 anywhere else (emptying the cart) surfaces as an error with its code.
        let clear = Step::plain(CartCall::Clear);
        let error = applied.read(&clear, answer(409, conflict)).unwrap_err();
        assert!(
            error
                .to_string()
                .contains("woocommerce_rest_cart_invalid_key"),
            "{error}"
        );
        // A refused add-item becomes that line's problem, keyed by the agent's id.
        let add = Step::add(24, "TEE-LOGO", 1);
        let missing = serde_json::json!({"code": "woocommerce_rest_missing_attributes", "message": "Missing attributes for variable product.", "data": {"status": 400}});
        applied.read(&add, answer(400, missing)).unwrap();
        assert_eq!(applied.problems[0].item_id, "TEE-LOGO");
        assert_eq!(applied.problems[0].kind, LineProblemKind::Ambiguous);
        // A refused session (401/403) is noted, not taken for a cart.
        let nonce = serde_json::json!({"code": "woocommerce_rest_missing_nonce", "message": "", "data": {"status": 401}});
        applied.read(&add, answer(401, nonce)).unwrap();
        assert!(applied.refused_session);
        assert!(applied.cart.is_none());
    }

    #[test]
    fn quantity_refusals_name_what_the_store_can_take() {
        let max = error(
            "invalid_quantity",
            "The maximum quantity that can be added to the cart is 7",
        );
        assert!(matches!(classify(&max, 9), LineRefusal::Limit(7)));
        assert!(matches!(
            classify(&max, 7),
            LineRefusal::Problem(LineProblemKind::Invalid)
        ));
        let stock = error(
            "woocommerce_rest_invalid_stock_level",
            "You cannot add that amount of &quot;Mug 2&quot; to the cart because there is not enough stock (3 remaining).",
        );
        assert!(matches!(classify(&stock, 5), LineRefusal::Limit(3)));
        let oos = error("woocommerce_rest_product_out_of_stock", "x");
        assert!(matches!(
            classify(&oos, 1),
            LineRefusal::Problem(LineProblemKind::OutOfStock)
        ));
        let partial = error(
            "woocommerce_rest_product_partially_out_of_stock",
            "You cannot add that amount of &quot;Meia Limitada&quot; to the cart because there is not enough stock (2 remaining).",
        );
        assert!(matches!(classify(&partial, 3), LineRefusal::Limit(2)));
        let gone = error("woocommerce_rest_cart_invalid_product", "x");
        assert!(matches!(
            classify(&gone, 1),
            LineRefusal::Problem(LineProblemKind::NotFound)
        ));
    }
}
