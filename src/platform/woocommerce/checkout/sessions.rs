//! What the bridge keeps per WooCommerce checkout, beside the store's own cart session: the
//! buyer (the Store API has no field for it before the order) and, once placed, how to read
//! the order back (its key and billing email). Keyed by the checkout id an agent sends, so:
//! an entry is written only after the store answered for that id (a forged or expired
//! Cart-Token never gets one), the whole map is bounded in bytes, and each entry leaves when
//! the resource it describes would: an open checkout with the store's cart session, a placed
//! one after its order has not been read for a month. `get_order` finds its checkout through an
//! index, not by walking every session.
//!
//! With `[redis]`, what reads a placed order back is kept there too, so `get_order` answers on
//! every replica and after a restart: per order (`bcp:woo-order:<sha256 of the order id>`) the
//! checkout id, the order key and the billing email — the one piece of buyer data kept in
//! Redis, because the Store API reads a guest order only with both — for as long as a placed
//! session lives here. An open checkout's buyer and address are not kept in Redis: once
//! written they are in the store's cart, which every replica reads (`checkout::stored_customer`).
//!
//! At the bound the least recently used checkout goes first (LRU rather than moka's default,
//! which refuses new entries once full and would refuse a new buyer's): with entries written
//! only for carts the store made, filling the bound takes that many real store sessions.

use std::sync::Arc;
use std::time::{Duration, Instant};

use moka::Expiry;
use moka::future::Cache;
use moka::policy::EvictionPolicy;

use serde::{Deserialize, Serialize};

use crate::model::CartLine;
use crate::model::checkout::{Address, Buyer, Order};
use crate::platform::PlatformError;
use crate::platform::footprint;
use crate::replicas::link::millis;
use crate::replicas::{Link, RedisDown, hashed};

/// About 25,000 checkouts with a placed order of a dozen lines, more open ones.
pub(super) const MAX_BYTES: u64 = 64 << 20;
/// WooCommerce's Store API Cart-Token expires two days after it was issued: an open
/// checkout's session is no use to anyone after that.
const OPEN_IDLE: Duration = Duration::from_secs(2 * 24 * 3600);
/// A placed order is read back (status, shipping) for weeks after it was placed.
const PLACED_IDLE: Duration = Duration::from_secs(30 * 24 * 3600);
/// An entry's key, moka's node and the index row beside it.
const ENTRY_OVERHEAD: usize = 256;

/// What the bridge keeps for a checkout.
#[derive(Default, Clone)]
pub(super) struct Session {
    pub buyer: Buyer,
    pub address: Option<Address>,
    pub placed: Option<Placed>,
}

#[derive(Clone)]
pub(super) struct Placed {
    pub order: Order,
    /// The checkout's lines as they were placed: the order read names items by SKU and its
    /// own item ids only, not by the ids the checkout's lines had.
    pub lines: Vec<CartLine>,
    pub key: String,
    pub email: String,
    pub pay_url: Option<String>,
}

/// How to read a placed order back from the store.
#[derive(Clone, Serialize, Deserialize)]
pub(super) struct OrderAccess {
    pub checkout: String,
    pub key: String,
    pub email: String,
}

fn order_key(order_id: &str) -> String {
    format!("bcp:woo-order:{}", hashed(order_id))
}

fn weight(id: &str, session: &Session) -> u32 {
    let placed = session.placed.as_ref().map_or(0, |placed| {
        footprint::order(&placed.order)
            + footprint::lines(&placed.lines)
            + placed.key.len()
            + placed.email.len()
            + placed.pay_url.as_ref().map_or(0, String::len)
            // The index row: order id → checkout id.
            + placed.order.id.len()
            + id.len()
    });
    footprint::weight(
        ENTRY_OVERHEAD
            + id.len()
            + footprint::buyer(&session.buyer)
            + session.address.as_ref().map_or(0, footprint::address)
            + placed,
    )
}

/// An open checkout lives as its cart session does; a placed one as its order is read.
struct ByStage {
    open: Duration,
    placed: Duration,
}

impl ByStage {
    fn idle(&self, session: &Session) -> Duration {
        if session.placed.is_some() {
            self.placed
        } else {
            self.open
        }
    }
}

impl Expiry<String, Arc<Session>> for ByStage {
    fn expire_after_create(
        &self,
        _: &String,
        session: &Arc<Session>,
        _: Instant,
    ) -> Option<Duration> {
        Some(self.idle(session))
    }

    fn expire_after_read(
        &self,
        _: &String,
        session: &Arc<Session>,
        _: Instant,
        _: Option<Duration>,
        _: Instant,
    ) -> Option<Duration> {
        Some(self.idle(session))
    }

    fn expire_after_update(
        &self,
        _: &String,
        session: &Arc<Session>,
        _: Instant,
        _: Option<Duration>,
    ) -> Option<Duration> {
        Some(self.idle(session))
    }
}

pub(super) struct Sessions {
    by_checkout: Cache<String, Arc<Session>>,
    /// Order id → checkout id, for `get_order`. Weighed with its session (above); bounded
    /// apart as well, since its rows outlive an evicted session until they are next read.
    by_order: Cache<String, String>,
    /// The replicas' Redis (`[redis]`), where placed orders' access is shared.
    shared: Option<std::sync::Arc<Link>>,
    placed_idle: Duration,
}

impl Sessions {
    pub(super) fn new(max_bytes: u64) -> Self {
        Self::lasting(max_bytes, OPEN_IDLE, PLACED_IDLE)
    }

    /// Placed orders' access kept in `link` too, for every replica.
    pub(super) fn shared(mut self, link: Option<std::sync::Arc<Link>>) -> Self {
        self.shared = link;
        self
    }

    /// Whether replicas share checkouts (`[redis]`): each one's memory may then be older than
    /// the store's cart.
    pub(super) fn is_shared(&self) -> bool {
        self.shared.is_some()
    }

    fn lasting(max_bytes: u64, open: Duration, placed: Duration) -> Self {
        Self {
            shared: None,
            placed_idle: placed,
            by_checkout: Cache::builder()
                .max_capacity(max_bytes)
                .weigher(|id: &String, session: &Arc<Session>| weight(id, session))
                .eviction_policy(EvictionPolicy::lru())
                .expire_after(ByStage { open, placed })
                .build(),
            by_order: Cache::builder()
                .max_capacity(max_bytes / 8)
                .weigher(|order: &String, checkout: &String| {
                    footprint::weight(ENTRY_OVERHEAD + order.len() + checkout.len())
                })
                .eviction_policy(EvictionPolicy::lru())
                .time_to_idle(placed)
                .build(),
        }
    }

    /// What is kept for `id`, or an empty session (nothing kept yet, or forgotten).
    pub(super) async fn get(&self, id: &str) -> Session {
        self.by_checkout
            .get(id)
            .await
            .map(|session| session.as_ref().clone())
            .unwrap_or_default()
    }

    pub(super) fn contains(&self, id: &str) -> bool {
        self.by_checkout.contains_key(id)
    }

    /// Changes what is kept for `id`. Only for an id the store has just answered for.
    pub(super) async fn update(&self, id: &str, change: impl FnOnce(&mut Session)) -> Session {
        let entry = self
            .by_checkout
            .entry(id.to_owned())
            .and_upsert_with(|current| {
                let mut session = current
                    .map(|entry| entry.into_value().as_ref().clone())
                    .unwrap_or_default();
                change(&mut session);
                std::future::ready(Arc::new(session))
            })
            .await;
        let session = entry.into_value();
        if let Some(placed) = &session.placed {
            self.by_order
                .insert(placed.order.id.clone(), id.to_owned())
                .await;
            self.share(id, placed).await;
        }
        session.as_ref().clone()
    }

    async fn share(&self, id: &str, placed: &Placed) {
        let Some(link) = &self.shared else {
            return;
        };
        let access = OrderAccess {
            checkout: id.to_owned(),
            key: placed.key.clone(),
            email: placed.email.clone(),
        };
        let Ok(text) = serde_json::to_string(&access) else {
            return;
        };
        let mut set = redis::cmd("SET");
        set.arg(order_key(&placed.order.id))
            .arg(text)
            .arg("PX")
            .arg(millis(self.placed_idle));
        let stored: Result<(), RedisDown> = link.query(&set).await;
        if stored.is_err() {
            tracing::warn!("a placed order's access was not shared: other replicas cannot read it");
        }
    }

    /// How to read order `order_id` back: from this replica's sessions, else (`[redis]`)
    /// from what the replica that placed it shared.
    pub(super) async fn access(
        &self,
        order_id: &str,
    ) -> Result<Option<OrderAccess>, PlatformError> {
        if let Some(placed) = self.placed(order_id).await {
            return Ok(Some(OrderAccess {
                checkout: placed.order.checkout_id,
                key: placed.key,
                email: placed.email,
            }));
        }
        let Some(link) = &self.shared else {
            return Ok(None);
        };
        let mut get = redis::cmd("GET");
        get.arg(order_key(order_id));
        let text: Option<String> =
            link.query(&get)
                .await
                .map_err(|_| PlatformError::Unavailable {
                    reason: "the shared state (Redis) is unreachable".into(),
                    retry_after: Some(Duration::from_secs(2)),
                })?;
        Ok(text.and_then(|text| serde_json::from_str(&text).ok()))
    }

    pub(super) async fn forget(&self, id: &str) {
        if let Some(session) = self.by_checkout.remove(id).await
            && let Some(placed) = &session.placed
        {
            self.by_order.invalidate(&placed.order.id).await;
        }
    }

    /// The placed order `order_id` and the checkout it was placed from.
    pub(super) async fn placed(&self, order_id: &str) -> Option<Placed> {
        let checkout = self.by_order.get(order_id).await?;
        let session = self.by_checkout.get(&checkout).await?;
        session
            .placed
            .clone()
            .filter(|placed| placed.order.id == order_id)
    }

    #[cfg(test)]
    async fn bytes(&self) -> u64 {
        self.by_checkout.run_pending_tasks().await;
        self.by_checkout.weighted_size()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::model::checkout::CheckoutTotals;

    fn order(id: &str, checkout: &str) -> Order {
        Order {
            id: id.to_owned(),
            checkout_id: checkout.to_owned(),
            label: None,
            permalink_url: String::new(),
            store_status: "processing".to_owned(),
            paid: true,
            lines: Vec::new(),
            currency: iso_currency::Currency::BRL,
            totals: CheckoutTotals::default(),
            shipping_address: None,
            fulfillment_title: None,
            codes: Vec::new(),
            placed_at: None,
            nfe: None,
        }
    }

    fn placed(id: &str, checkout: &str) -> Placed {
        Placed {
            order: order(id, checkout),
            lines: Vec::new(),
            key: "wc_order_key".to_owned(),
            email: "ana@example.com".to_owned(),
            pay_url: None,
        }
    }

    /// Issue 35 item 2: a flood of distinct checkouts (each with a heavy buyer) never takes
    /// the map past its byte bound.
    #[tokio::test]
    async fn a_flood_of_distinct_checkouts_stays_within_the_byte_bound() {
        let bound = 256 * 1024;
        let sessions = Sessions::new(bound);
        let heavy = "x".repeat(2000);
        for index in 0..2000 {
            sessions
                .update(&format!("wc_cart_{index}"), |session| {
                    session.buyer.email = Some(heavy.clone());
                })
                .await;
        }
        let bytes = sessions.bytes().await;
        assert!(bytes <= bound, "{bytes} > {bound}");
        assert!(bytes > bound / 2, "the bound is used, not refused: {bytes}");
    }

    /// At the bound the least recently used checkout goes, not the one a buyer is using.
    #[tokio::test]
    async fn at_the_bound_the_checkout_in_use_stays() {
        let sessions = Sessions::new(64 * 1024);
        sessions
            .update("wc_cart_buyer", |session| {
                session.buyer.email = Some("ana@example.com".to_owned());
            })
            .await;
        for index in 0..2000 {
            sessions
                .update(&format!("wc_cart_{index}"), |session| {
                    session.buyer.first_name = Some("flood".repeat(20));
                })
                .await;
            if index % 50 == 0 {
                // The buyer keeps using their checkout while the flood runs.
                assert_eq!(
                    sessions.get("wc_cart_buyer").await.buyer.email.as_deref(),
                    Some("ana@example.com"),
                    "after {index}"
                );
                sessions.by_checkout.run_pending_tasks().await;
            }
        }
    }

    /// `get_order` is one indexed lookup, and answers only for the order the checkout placed.
    #[tokio::test]
    async fn a_placed_order_is_found_by_its_id_and_forgotten_with_its_checkout() {
        let sessions = Sessions::new(MAX_BYTES);
        sessions
            .update("wc_cart_a", |session| {
                session.placed = Some(placed("wc_order_7", "wc_cart_a"));
            })
            .await;
        let found = sessions.placed("wc_order_7").await.unwrap();
        assert_eq!(found.order.checkout_id, "wc_cart_a");
        assert!(sessions.placed("wc_order_8").await.is_none());
        sessions.forget("wc_cart_a").await;
        assert!(sessions.placed("wc_order_7").await.is_none());
        assert!(!sessions.contains("wc_cart_a"));
    }

    /// Issue 35 item 2: an entry leaves when its resource would (an open checkout with its
    /// cart session), and a placed order's index row with it.
    #[tokio::test]
    async fn an_expired_checkout_is_gone() {
        let sessions = Sessions::lasting(
            MAX_BYTES,
            Duration::from_millis(1),
            Duration::from_millis(1),
        );
        sessions
            .update("wc_cart_a", |session| {
                session.placed = Some(placed("wc_order_7", "wc_cart_a"));
            })
            .await;
        sessions.update("wc_cart_b", |_| {}).await;
        let deadline = Instant::now() + Duration::from_secs(10);
        while sessions.contains("wc_cart_a") || sessions.contains("wc_cart_b") {
            assert!(Instant::now() < deadline, "never expired");
            tokio::task::yield_now().await;
        }
        assert!(sessions.placed("wc_order_7").await.is_none());
        assert!(sessions.get("wc_cart_b").await.buyer.is_empty());
    }

    #[test]
    fn an_open_checkout_lives_as_its_cart_session_and_a_placed_one_longer() {
        let stages = ByStage {
            open: OPEN_IDLE,
            placed: PLACED_IDLE,
        };
        let done = Session {
            placed: Some(placed("wc_order_1", "wc_cart_a")),
            ..Session::default()
        };
        assert_eq!(stages.idle(&Session::default()), OPEN_IDLE);
        assert_eq!(stages.idle(&done), PLACED_IDLE);
        assert!(PLACED_IDLE > OPEN_IDLE);
    }
}
