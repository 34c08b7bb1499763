//! Checkouts that ended (`canceled`, `completed`), remembered by the bridge itself. Stores
//! forget a canceled checkout (WooCommerce empties the Store API cart, VTEX the orderForm,
//! Shopify's cart is dropped), so a later read would say `not_found` and a later write could
//! even find an open cart again; and a completed one may be known only where it was placed.
//! A terminal state is final (checkout.md), so every write after it is refused as immutable
//! (CHK-017, CHK-027) from this record, and a read answers the checkout as it ended.
//!
//! What is kept per checkout: how it ended, its currency and totals, and for a completed one
//! the order's store id, label and permalink. No buyer data (no name, email, phone or
//! address) and no lines: a checkout answered from this record shows neither. In memory
//! (bounded in bytes, least recently used first) for one process; with `[redis]` under
//! `bcp:checkout-end:<sha256 of the id>`, so every replica and a restarted one knows it.

use std::sync::Arc;
use std::time::Duration;

use iso_currency::Currency;
use serde::{Deserialize, Serialize};

use crate::model::checkout::{CheckoutState, CheckoutTotals, OrderRef, Stage};
use crate::platform::footprint;
use crate::replicas::link::millis;
use crate::replicas::{Link, RedisDown, hashed};

/// As long as a placed order is read back (WooCommerce's sessions keep it a month).
const COMPLETED_KEPT: Duration = Duration::from_secs(30 * 24 * 3600);
/// As long as any store's cart behind a checkout lives (Shopify's: ten days).
const CANCELED_KEPT: Duration = Duration::from_secs(10 * 24 * 3600);
/// What one process remembers, in bytes.
const MEMORY_BYTES: u64 = 16 << 20;
/// A map entry's own cost beyond its strings.
const ENTRY_OVERHEAD: usize = 200;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Ended {
    /// `canceled` or `completed`.
    status: String,
    currency: String,
    /// subtotal, discount, fulfillment, tax, total (minor units).
    totals: (i64, i64, Option<i64>, Option<i64>, i64),
    order: Option<EndedOrder>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct EndedOrder {
    id: String,
    label: Option<String>,
    permalink_url: String,
}

/// How a checkout ended, as the brain reads it back.
#[derive(Debug, Clone, PartialEq)]
pub struct Terminal(Ended);

impl Terminal {
    /// The record of `state` if it is terminal: canceled, or placed and paid for (a placed
    /// order still awaiting payment on the store's page is not `completed`).
    pub fn of(state: &CheckoutState, completed: bool) -> Option<Self> {
        let (status, order) = match &state.stage {
            Stage::Canceled => ("canceled", None),
            Stage::Placed(order) if completed => (
                "completed",
                Some(EndedOrder {
                    id: order.id.clone(),
                    label: order.label.clone(),
                    permalink_url: order.permalink_url.clone(),
                }),
            ),
            _ => return None,
        };
        let totals = state.totals;
        Some(Self(Ended {
            status: status.to_owned(),
            currency: state.currency.code().to_owned(),
            totals: (
                totals.subtotal,
                totals.discount,
                totals.fulfillment,
                totals.tax,
                totals.total,
            ),
            order,
        }))
    }

    fn stage(&self) -> Stage {
        match &self.0.order {
            Some(order) if self.0.status == "completed" => Stage::Placed(OrderRef {
                id: order.id.clone(),
                label: order.label.clone(),
                permalink_url: order.permalink_url.clone(),
            }),
            _ => Stage::Canceled,
        }
    }

    /// `state` (what the store still holds) as it ended: its stage is the record's, and it
    /// offers no way on (no continue_url, no escalation).
    pub fn over(&self, mut state: CheckoutState) -> CheckoutState {
        state.stage = self.stage();
        state.continue_url = None;
        state.escalation = None;
        state
    }

    /// The checkout `id` as the record keeps it, for a store that no longer holds it.
    pub fn restored(&self, id: &str) -> Option<CheckoutState> {
        let currency = Currency::from_code(&self.0.currency)?;
        let (subtotal, discount, fulfillment, tax, total) = self.0.totals;
        Some(CheckoutState {
            id: id.to_owned(),
            lines: Vec::new(),
            currency,
            buyer: Default::default(),
            needs_email: false,
            address: None,
            needs_fulfillment: false,
            fulfillment: Vec::new(),
            codes: Vec::new(),
            discounts: Vec::new(),
            refused_codes: Vec::new(),
            totals: CheckoutTotals {
                subtotal,
                discount,
                fulfillment,
                tax,
                total,
            },
            handlers: Vec::new(),
            continue_url: None,
            escalation: None,
            stage: self.stage(),
            expires_at: None,
            requirements: Vec::new(),
        })
    }

    fn kept(&self) -> Duration {
        if self.0.status == "completed" {
            COMPLETED_KEPT
        } else {
            CANCELED_KEPT
        }
    }

    fn weight(&self, id: &str) -> usize {
        ENTRY_OVERHEAD
            + id.len()
            + self.0.order.as_ref().map_or(0, |order| {
                order.id.len()
                    + order.label.as_ref().map_or(0, String::len)
                    + order.permalink_url.len()
            })
    }
}

/// The records, in this process or in the replicas' Redis.
pub enum Terminals {
    Local(moka::future::Cache<String, Arc<Terminal>>),
    Shared(Arc<Link>),
}

fn key(id: &str) -> String {
    format!("bcp:checkout-end:{}", hashed(id))
}

impl Terminals {
    pub fn local() -> Self {
        Self::Local(
            moka::future::Cache::builder()
                .max_capacity(MEMORY_BYTES)
                .weigher(|id: &String, ended: &Arc<Terminal>| footprint::weight(ended.weight(id)))
                .eviction_policy(moka::policy::EvictionPolicy::lru())
                .time_to_idle(COMPLETED_KEPT)
                .build(),
        )
    }

    /// Remembers how `id` ended. Redis being away loses only the record (logged): the store
    /// still says what it says, as before this record existed.
    pub async fn remember(&self, id: &str, ended: Terminal) {
        match self {
            Self::Local(cache) => cache.insert(id.to_owned(), Arc::new(ended)).await,
            Self::Shared(link) => {
                let Ok(text) = serde_json::to_string(&ended.0) else {
                    return;
                };
                let mut set = redis::cmd("SET");
                set.arg(key(id))
                    .arg(text)
                    .arg("PX")
                    .arg(millis(ended.kept()));
                let stored: Result<(), RedisDown> = link.query(&set).await;
                if stored.is_err() {
                    tracing::warn!("a checkout's end was not recorded in the shared Redis");
                }
            }
        }
    }

    /// A store made a new checkout under `id`: a cancellation recorded for an earlier one of
    /// that id is not its (a completed one stays: the store places a cart once).
    pub async fn forget_canceled(&self, id: &str) {
        if !matches!(self.recall(id).await, Ok(Some(Terminal(ref ended))) if ended.status == "canceled")
        {
            return;
        }
        match self {
            Self::Local(cache) => cache.invalidate(id).await,
            Self::Shared(link) => {
                let mut del = redis::cmd("DEL");
                del.arg(key(id));
                let _: Result<i64, RedisDown> = link.query(&del).await;
            }
        }
    }

    /// How `id` ended, if it did. An unreadable record counts as none.
    pub async fn recall(&self, id: &str) -> Result<Option<Terminal>, RedisDown> {
        match self {
            Self::Local(cache) => Ok(cache.get(id).await.map(|ended| ended.as_ref().clone())),
            Self::Shared(link) => {
                let mut get = redis::cmd("GET");
                get.arg(key(id));
                let text: Option<String> = link.query(&get).await?;
                Ok(text
                    .and_then(|text| serde_json::from_str(&text).ok())
                    .map(Terminal))
            }
        }
    }
}
