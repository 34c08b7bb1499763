//! The order a buyer placed on VTEX's payment page for a checkout the bridge handed off, read
//! from the Orders API (app key required): VTEX tells the orderForm nothing when it becomes
//! an order, and its order list is searched by the buyer's email (`q`, `GET
//! /api/oms/pvt/orders`) but does not show `orderFormId`; each listed order is read once
//! (`GET /api/oms/pvt/orders/{orderId}`) to learn which orderForm it came from, which never
//! changes, so a checkout asked about again costs one list call until its order shows up.

use std::sync::Arc;

use moka::future::Cache;
use reqwest::StatusCode;
use serde::Deserialize;

use super::super::client::VtexApi;
use super::invoices::OmsOrder;
use crate::model::checkout::{Buyer, CheckoutState, Order, Stage};
use crate::platform::port::PlatformError;

/// How many of the buyer's most recent orders are looked at: a buyer pays for a checkout
/// soon after the hand-off, so its order is among the latest.
const RECENT: usize = 5;
/// Orders and checkouts remembered (ids only, no buyer data).
const REMEMBERED: u64 = 100_000;

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct OrderList {
    list: Vec<Listed>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct Listed {
    order_id: String,
}

/// VTEX order ids are `{sequence digits}-{two digits}` (`1468780500454-01`).
pub fn valid_order_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 64
        && id
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || byte == b'-')
}

pub struct Placements {
    api: Arc<VtexApi>,
    /// orderFormId → the order placed for it.
    orders: Cache<String, String>,
    /// orderId → the orderForm it was placed from.
    forms: Cache<String, String>,
}

impl Placements {
    pub fn new(api: Arc<VtexApi>) -> Self {
        let cache = || Cache::builder().max_capacity(REMEMBERED).build();
        Self {
            api,
            orders: cache(),
            forms: cache(),
        }
    }

    /// The Orders API's order `id`; `None` when the store has none by that id.
    pub async fn read(&self, id: &str) -> Result<Option<OmsOrder>, PlatformError> {
        if !valid_order_id(id) {
            return Ok(None);
        }
        let response = self
            .api
            .get(&["api", "oms", "pvt", "orders", id], &[], None)
            .await?;
        if response.status == StatusCode::NOT_FOUND {
            return Ok(None);
        }
        let raw: OmsOrder = self.api.decode(&response, "order")?;
        if let Some(form) = raw.order_form_id() {
            self.forms.insert(id.to_owned(), form.to_owned()).await;
        }
        Ok(Some(raw))
    }

    /// The order placed for orderForm `form_id` by the buyer with `email`, if there is one.
    pub async fn order_of(
        &self,
        form_id: &str,
        email: Option<&str>,
    ) -> Result<Option<OmsOrder>, PlatformError> {
        if let Some(order_id) = self.orders.get(form_id).await {
            return self.read(&order_id).await;
        }
        let Some(email) = email.filter(|email| !email.is_empty()) else {
            return Ok(None);
        };
        let response = self
            .api
            .get(
                &["api", "oms", "pvt", "orders"],
                &[
                    ("q", email.to_owned()),
                    ("orderBy", "creationDate,desc".to_owned()),
                    ("per_page", RECENT.to_string()),
                ],
                None,
            )
            .await?;
        let listed: OrderList = self.api.decode(&response, "order list")?;
        for order in listed.list.iter().take(RECENT) {
            let known = self.forms.get(&order.order_id).await;
            if known.as_deref().is_some_and(|form| form != form_id) {
                continue;
            }
            let Some(raw) = self.read(&order.order_id).await? else {
                continue;
            };
            if raw.order_form_id() == Some(form_id) {
                self.orders
                    .insert(form_id.to_owned(), order.order_id.clone())
                    .await;
                return Ok(Some(raw));
            }
        }
        Ok(None)
    }
}

/// A checkout whose order the buyer placed: what was ordered, completed. `open` is the
/// checkout as the orderForm still shows it (its buyer and options), when it does.
pub fn state(
    id: &str,
    order: &Order,
    open: Option<CheckoutState>,
    buyer: Option<Buyer>,
) -> CheckoutState {
    let mut state = open.unwrap_or_else(|| CheckoutState::of_order(id, order, Buyer::default()));
    if let Some(buyer) = buyer {
        state.buyer = buyer;
    }
    state.stage = Stage::Placed(order.reference());
    state.continue_url = None;
    state.escalation = None;
    state.requirements = Vec::new();
    state
}
