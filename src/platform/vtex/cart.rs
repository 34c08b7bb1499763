//! Carts are VTEX orderForms (`/api/checkout/pub/orderForm`). Create = a new orderForm
//! (`forceNewCart`) then one add; update = a read then ONE `PATCH items` whose index-addressed
//! changes go highest index first (a removal never shifts a line still to be addressed) and
//! whose adds come last; cancel = a read then `removeAll`. An emptied orderForm reads as not
//! found, so a cancelled cart stays gone across restarts. Item problems come back inside
//! HTTP 200 (`messages[]`, clamped quantities) and are judged against what was asked.

use std::sync::Arc;

use iso_currency::Currency;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use url::Url;

use super::catalog::Catalog;
use super::client::{VtexApi, ownership_cookie, unexpected};
use super::mapping;
use super::owners::Owners;
use super::wire::OrderForm;
use crate::model::lines;
use crate::model::{
    CartDraft, CartLineInput, CartOutcome, CartState, LineProblem, LineProblemKind,
};
use crate::platform::cart::CartPort;
use crate::platform::port::PlatformError;
use crate::platform::upstream::UpstreamResponse;
use async_trait::async_trait;

const ORDER_FORM: [&str; 4] = ["api", "checkout", "pub", "orderForm"];

/// Message codes that mean "this item cannot be bought now".
const SOLD_OUT_CODES: &[&str] = &[
    "withoutStock",
    "unavailableItemFulfillment",
    "cannotBeDelivered",
    "withoutPriceFulfillment",
    "ORD028",
];
const QUANTITY_CODES: &[&str] = &["itemQuantityNotAvailable", "itemMaxQuantityReached"];
const NOT_FOUND_CODES: &[&str] = &["ORD027", "CHK0022"];

pub struct Carts {
    api: Arc<VtexApi>,
    catalog: Arc<Catalog>,
    owners: Owners,
    currency: Currency,
    storefront: Url,
    sales_channel: u32,
    seller: String,
}

/// An orderFormId is 32 hex digits; anything else names no cart and is never sent.
fn valid_id(id: &str) -> bool {
    id.len() == 32 && id.bytes().all(|byte| byte.is_ascii_hexdigit())
}

fn path<'a>(id: &'a str, tail: &[&'a str]) -> Vec<&'a str> {
    let mut segments: Vec<&str> = ORDER_FORM.to_vec();
    segments.push(id);
    segments.extend(tail);
    segments
}

fn message_for<'a>(form: &'a OrderForm, codes: &[&str]) -> Option<&'a str> {
    form.messages
        .iter()
        .find(|message| {
            message
                .code
                .as_deref()
                .is_some_and(|code| codes.contains(&code))
        })
        .map(|message| message.text.as_str())
        .filter(|text| !text.trim().is_empty())
}

/// What the store did with each asked line: missing lines and lower quantities, named by the
/// store's own message where it gave one.
fn judge(asked: &[CartLineInput], form: &OrderForm) -> Vec<LineProblem> {
    let mut problems = Vec::new();
    for line in asked {
        let got: u32 = form
            .items
            .iter()
            .filter(|item| item.id == line.item_id)
            .map(|item| item.quantity)
            .sum();
        if got >= line.quantity {
            continue;
        }
        let (kind, text) = if got > 0 {
            (
                LineProblemKind::InsufficientStock { available: got },
                message_for(form, QUANTITY_CODES).map_or_else(
                    || format!("Only {got} of item {} are available", line.item_id),
                    str::to_owned,
                ),
            )
        } else if let Some(text) = message_for(form, NOT_FOUND_CODES) {
            (LineProblemKind::NotFound, text.to_owned())
        } else if let Some(text) =
            message_for(form, SOLD_OUT_CODES).or(message_for(form, QUANTITY_CODES))
        {
            (LineProblemKind::OutOfStock, text.to_owned())
        } else {
            (
                LineProblemKind::OutOfStock,
                format!("The store did not add item {}", line.item_id),
            )
        };
        problems.push(LineProblem {
            item_id: line.item_id.clone(),
            kind,
            message: text,
        });
    }
    problems
}

fn masked(form: &OrderForm) -> bool {
    form.client_profile_data
        .as_ref()
        .and_then(|profile| profile.get("email"))
        .and_then(Value::as_str)
        .is_some_and(|email| email.contains('*'))
}

impl Carts {
    pub fn new(
        api: Arc<VtexApi>,
        catalog: Arc<Catalog>,
        owners: Owners,
        currency: Currency,
        storefront: Url,
        sales_channel: u32,
        seller: String,
    ) -> Self {
        Self {
            api,
            catalog,
            owners,
            currency,
            storefront,
            sales_channel,
            seller,
        }
    }

    /// `https://{store}/checkout/?orderFormId={id}#/cart`: the shared-cart handoff.
    fn checkout_url(&self, id: &str) -> Option<String> {
        self.checkout_step(id, "/cart")
    }

    /// `https://{store}/checkout/?orderFormId={id}#{step}`: the store's own checkout page for
    /// this orderForm, opened at `step` (query before the hash, as VTEX's shared cart has it).
    pub(super) fn checkout_step(&self, id: &str, step: &str) -> Option<String> {
        let mut url = self.storefront.join("checkout/").ok()?;
        url.query_pairs_mut().append_pair("orderFormId", id);
        url.set_fragment(Some(step));
        Some(url.into())
    }

    pub(super) fn currency(&self) -> Currency {
        self.currency
    }

    pub(super) async fn cookie(&self, id: &str) -> Option<String> {
        self.owners.cookie(id).await
    }

    fn state(&self, form: &OrderForm) -> Result<CartState, PlatformError> {
        mapping::cart(form, self.currency, self.checkout_url(&form.order_form_id))
    }

    /// Decodes an orderForm answer and keeps any refreshed ownership cookie.
    async fn read_form(
        &self,
        response: &UpstreamResponse,
        what: &str,
    ) -> Result<OrderForm, PlatformError> {
        let form: OrderForm = self.api.decode(response, what)?;
        if let Some(cookie) = ownership_cookie(response) {
            self.owners.keep(&form.order_form_id, cookie).await;
        }
        if masked(&form) {
            tracing::warn!(
                "the orderForm came back masked: its ownership cookie is not known here"
            );
        }
        Ok(form)
    }

    /// The orderForm and its ownership cookie; `None` for an id that names no cart, or an
    /// emptied one (a cancelled cart stays gone).
    pub(super) async fn fetch(
        &self,
        id: &str,
    ) -> Result<Option<(OrderForm, Option<String>)>, PlatformError> {
        if !valid_id(id) {
            return Ok(None);
        }
        let cookie = self.owners.cookie(id).await;
        let response = self.api.get(&path(id, &[]), &[], cookie.as_deref()).await?;
        if response.status == StatusCode::NOT_FOUND {
            return Ok(None);
        }
        let form = self.read_form(&response, "orderForm").await?;
        if form.items.is_empty() || form.order_form_id != id {
            return Ok(None);
        }
        Ok(Some((form, cookie)))
    }

    fn seller_of(&self, sku: &str) -> String {
        self.catalog
            .seller_of(sku)
            .unwrap_or_else(|| self.seller.clone())
    }

    pub(super) async fn write(
        &self,
        method: Method,
        id: &str,
        tail: &[&str],
        body: Value,
        cookie: Option<&str>,
        what: &str,
    ) -> Result<OrderForm, PlatformError> {
        let response = self
            .api
            .write(method, &path(id, tail), &body, cookie)
            .await?;
        if response.status == StatusCode::FORBIDDEN && cookie.is_none() {
            return Err(PlatformError::Unavailable {
                reason: format!(
                    "{what}: the store refused to edit a cart whose ownership cookie this bridge no longer holds"
                ),
                retry_after: None,
            });
        }
        if response.status != StatusCode::OK {
            return Err(unexpected(what, &response));
        }
        self.read_form(&response, what).await
    }

    /// The `orderItems` of one `PATCH items` that turns `form`'s lines into `wanted`.
    fn replacement(&self, form: &OrderForm, wanted: &[CartLineInput]) -> Vec<Value> {
        let diff = lines::diff(
            form.items
                .iter()
                .map(|item| (item.id.as_str(), i64::from(item.quantity))),
            wanted,
            |line| (line.item_id.as_str(), line.quantity),
        );
        let mut changes: Vec<(usize, u32)> = diff
            .changes
            .iter()
            .map(|change| (change.index, change.to.map_or(0, |line| line.quantity)))
            .collect();
        // Highest index first: removing a line shifts only the lines after it.
        changes.sort_by_key(|change| std::cmp::Reverse(change.0));
        let mut items: Vec<Value> = changes
            .into_iter()
            .map(|(index, quantity)| json!({"index": index, "quantity": quantity}))
            .collect();
        items.extend(diff.additions.into_iter().map(|line| {
            json!({"id": line.item_id, "quantity": line.quantity, "seller": self.seller_of(&line.item_id)})
        }));
        items
    }
}

impl Carts {
    /// A new orderForm holding `lines`, and the lines the store refused: what a new cart and
    /// a new checkout from lines both are.
    pub(super) async fn new_form(
        &self,
        lines: &[CartLineInput],
    ) -> Result<(OrderForm, Vec<LineProblem>), PlatformError> {
        let response = self
            .api
            .get(
                &ORDER_FORM,
                &[
                    ("forceNewCart", "true".to_owned()),
                    ("sc", self.sales_channel.to_string()),
                ],
                None,
            )
            .await?;
        let created = self.read_form(&response, "new orderForm").await?;
        let id = created.order_form_id.clone();
        if !valid_id(&id) {
            return Err(PlatformError::BadResponse(
                "new orderForm: no orderFormId".to_owned(),
            ));
        }
        if lines.is_empty() {
            return Ok((created, Vec::new()));
        }
        let cookie = self.owners.cookie(&id).await;
        let items: Vec<Value> = lines
            .iter()
            .map(|line| {
                json!({"id": line.item_id, "quantity": line.quantity, "seller": self.seller_of(&line.item_id)})
            })
            .collect();
        let form = self
            .write(
                Method::POST,
                &id,
                &["items"],
                json!({ "orderItems": items }),
                cookie.as_deref(),
                "adding items",
            )
            .await?;
        let problems = judge(lines, &form);
        Ok((form, problems))
    }

    /// Makes the orderForm's lines exactly `lines` (one `PATCH items`); `None` for an
    /// orderForm the store does not hold.
    pub(super) async fn replace_form(
        &self,
        id: &str,
        lines: &[CartLineInput],
    ) -> Result<Option<(OrderForm, Vec<LineProblem>)>, PlatformError> {
        let Some((form, cookie)) = self.fetch(id).await? else {
            return Ok(None);
        };
        let items = self.replacement(&form, lines);
        let form = if items.is_empty() {
            form
        } else {
            self.write(
                Method::PATCH,
                id,
                &["items"],
                json!({ "orderItems": items }),
                cookie.as_deref(),
                "replacing items",
            )
            .await?
        };
        // Anything left that was not asked for means the indexes did not address what the
        // bridge read: never hand out such a cart as the requested one.
        if let Some(stray) = form
            .items
            .iter()
            .find(|item| !lines.iter().any(|line| line.item_id == item.id))
        {
            return Err(PlatformError::BadResponse(format!(
                "replacing items: the store kept item {} the update removed",
                stray.id
            )));
        }
        let problems = judge(lines, &form);
        Ok(Some((form, problems)))
    }

    /// Empties the orderForm (it then reads as gone); `None` for one the store does not hold.
    pub(super) async fn empty_form(&self, id: &str) -> Result<Option<OrderForm>, PlatformError> {
        let Some((form, cookie)) = self.fetch(id).await? else {
            return Ok(None);
        };
        self.write(
            Method::POST,
            id,
            &["items", "removeAll"],
            json!({}),
            cookie.as_deref(),
            "emptying the cart",
        )
        .await?;
        Ok(Some(form))
    }
}

#[async_trait]
impl CartPort for Carts {
    async fn create(&self, draft: &CartDraft) -> Result<CartOutcome, PlatformError> {
        let (form, problems) = self.new_form(&draft.lines).await?;
        Ok(CartOutcome {
            cart: self.state(&form)?,
            problems,
        })
    }

    async fn get(&self, id: &str) -> Result<Option<CartState>, PlatformError> {
        match self.fetch(id).await? {
            Some((form, _)) => self.state(&form).map(Some),
            None => Ok(None),
        }
    }

    async fn replace(
        &self,
        id: &str,
        draft: &CartDraft,
    ) -> Result<Option<CartOutcome>, PlatformError> {
        Ok(match self.replace_form(id, &draft.lines).await? {
            Some((form, problems)) => Some(CartOutcome {
                cart: self.state(&form)?,
                problems,
            }),
            None => None,
        })
    }

    async fn cancel(&self, id: &str) -> Result<Option<CartState>, PlatformError> {
        match self.empty_form(id).await? {
            Some(form) => self.state(&form).map(Some),
            None => Ok(None),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn form(items: &[(&str, u32)]) -> OrderForm {
        serde_json::from_value(json!({
            "orderFormId": "ede846222cd44046ba6c638442c3505a",
            "items": items.iter().map(|(id, quantity)| json!({"id": id, "quantity": quantity})).collect::<Vec<_>>(),
            "messages": [{"code": "itemQuantityNotAvailable", "text": "A quantidade desejada não está disponível", "status": "warning"}]
        }))
        .unwrap()
    }

    fn asked(lines: &[(&str, u32)]) -> Vec<CartLineInput> {
        lines
            .iter()
            .map(|(id, quantity)| CartLineInput {
                item_id: (*id).to_owned(),
                quantity: *quantity,
            })
            .collect()
    }

    #[test]
    fn clamped_and_missing_lines_are_judged_against_the_request() {
        let problems = judge(
            &asked(&[("1", 5), ("2", 1), ("3", 1)]),
            &form(&[("1", 2), ("2", 1)]),
        );
        assert_eq!(problems.len(), 2);
        assert_eq!(
            problems[0].kind,
            LineProblemKind::InsufficientStock { available: 2 }
        );
        assert_eq!(problems[1].item_id, "3");
        assert_eq!(problems[1].kind, LineProblemKind::OutOfStock);
    }

    #[test]
    fn ids_that_are_not_order_form_ids_are_never_sent() {
        assert!(valid_id("ede846222cd44046ba6c638442c3505a"));
        for bad in [
            "",
            "../x",
            "ede846222cd44046ba6c638442c3505",
            "zzz846222cd44046ba6c638442c3505a",
        ] {
            assert!(!valid_id(bad), "{bad}");
        }
    }
}
