//! The checkout port: the store operations a checkout and its order need. It stands beside
//! the catalog and cart port and speaks the same `PlatformError`. An adapter performs the
//! operation and answers with what the store then holds; the status lifecycle, the messages,
//! the retry rule of complete and "placed at most once" are the brain's (`brain::checkout`).
//!
//! Every write answers `None` when the store does not know the checkout (unknown, expired,
//! cancelled), like the cart operations. Writes to one checkout must be serialised by the
//! caller (the brain's completion ledger does it for `place`).

use std::sync::Arc;

use async_trait::async_trait;

use super::error::PlatformError;
use crate::model::checkout::{
    Address, Buyer, CheckoutDraft, CheckoutState, CodeOutcome, Order, PaymentHandler, Placement,
};
use crate::model::{CartLineInput, LineProblem};
use crate::settings::Secret;

/// A checkout field the store asks for, as `doctor` lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreField {
    pub key: String,
    pub label: String,
    pub required: bool,
    /// What the bridge fills it from (`buyer.taxpayer_id`…); `None`: only the store's page
    /// collects it.
    pub filled_from: Option<&'static str>,
}

/// A new checkout and the lines the store refused while making it.
#[derive(Debug, Clone)]
pub struct CheckoutOutcome {
    pub checkout: CheckoutState,
    pub problems: Vec<LineProblem>,
}

#[async_trait]
pub trait CheckoutPort: Send + Sync + 'static {
    /// The handlers an agent may complete with (the bridge can place with them); none for a
    /// store where the buyer always pays on its own page.
    fn handlers(&self) -> &[PaymentHandler] {
        &[]
    }

    /// Whether `get_order` answers for orders placed through the bridge; a store that only
    /// hands off reads none.
    fn reads_orders(&self) -> bool {
        false
    }

    /// Whether orders carry their NF-e (`Order::nfe`) when the store has issued one: the
    /// profile declares `br.dev.bcp.shopping.nfe` only then.
    fn reads_invoices(&self) -> bool {
        false
    }

    /// The fields the store's checkout asks for beyond the ones every store has (a plugin's
    /// CPF, house number…), and which of them the bridge fills: for `doctor`.
    async fn checkout_fields(&self) -> Result<Vec<StoreField>, PlatformError> {
        Ok(Vec::new())
    }

    async fn create_checkout(
        &self,
        draft: &CheckoutDraft,
    ) -> Result<CheckoutOutcome, PlatformError>;

    async fn get_checkout(&self, id: &str) -> Result<Option<CheckoutState>, PlatformError>;

    /// Makes the checkout's lines exactly `lines`.
    async fn set_lines(
        &self,
        id: &str,
        lines: &[CartLineInput],
    ) -> Result<Option<CheckoutOutcome>, PlatformError>;

    async fn set_buyer(
        &self,
        id: &str,
        buyer: &Buyer,
    ) -> Result<Option<CheckoutState>, PlatformError>;

    /// The buyer's address; the answer carries the options the store offers for it.
    async fn set_destination(
        &self,
        id: &str,
        address: &Address,
    ) -> Result<Option<CheckoutState>, PlatformError>;

    /// Selects an option of a group, both by the ids the checkout handed out. An id the
    /// checkout does not hold is `PlatformError::InvalidAt`.
    async fn select_option(
        &self,
        id: &str,
        group_id: &str,
        option_id: &str,
    ) -> Result<Option<CheckoutState>, PlatformError>;

    /// A refused code is not an error: the outcome names it with the store's reason and the
    /// checkout is unchanged.
    async fn apply_code(&self, id: &str, code: &str) -> Result<Option<CodeOutcome>, PlatformError>;

    async fn remove_code(
        &self,
        id: &str,
        code: &str,
    ) -> Result<Option<CheckoutState>, PlatformError>;

    /// Places the order with `handler_id` (one of `handlers()`, or `None` for the store's own
    /// page). Called at most once per checkout by the brain; an adapter never retries it.
    async fn place(
        &self,
        id: &str,
        handler_id: Option<&str>,
    ) -> Result<Option<Placement>, PlatformError>;

    /// Cancels an open checkout and returns it as it was just before.
    async fn cancel_checkout(&self, id: &str) -> Result<Option<CheckoutState>, PlatformError>;

    /// An order placed through this bridge, by the id its checkout answered with (only asked
    /// when `reads_orders`).
    async fn order(&self, _id: &str) -> Result<Option<Order>, PlatformError> {
        Ok(None)
    }

    /// Whether the store can take an order that awaits a payment made outside it (the Pix
    /// handler): placed with stock held, marked paid or cancelled later by the bridge.
    fn takes_unpaid(&self) -> bool {
        false
    }

    /// Why the store cannot take an order unpaid although its platform can (a missing write
    /// key): for `check` and `doctor`. `None` when it can, or when the platform never can.
    fn unpaid_refusal(&self) -> Option<String> {
        None
    }

    /// For `doctor`, when `takes_unpaid`: whether the bridge may mark the store's orders paid
    /// and cancel them, asked without changing any order; the detail to show when it may.
    async fn check_unpaid_writes(&self) -> Result<String, PlatformError> {
        Ok("the store takes orders awaiting a Pix payment".to_owned())
    }

    /// Places the order awaiting payment (stock held), only when `takes_unpaid`: `Placed`
    /// with the unpaid order, or the store's refusal as `place` answers it. Called at most
    /// once per checkout by the brain; an adapter never retries it.
    async fn place_unpaid(&self, _id: &str) -> Result<Option<Placement>, PlatformError> {
        Err(PlatformError::Unsupported(
            "orders awaiting an outside payment",
        ))
    }

    /// Marks an order placed by `place_unpaid` paid; `reference` is the payment's id (the Pix
    /// `endToEndId`), kept with the order where the store keeps one. Marking it again changes
    /// nothing.
    async fn mark_paid(
        &self,
        _order_id: &str,
        _reference: &str,
    ) -> Result<Option<Order>, PlatformError> {
        Err(PlatformError::Unsupported(
            "orders awaiting an outside payment",
        ))
    }

    /// Cancels an order placed by `place_unpaid` that was never paid: its stock goes back.
    /// Cancelling it again changes nothing; a paid order is not cancelled.
    async fn cancel_unpaid(&self, _order_id: &str) -> Result<Option<Order>, PlatformError> {
        Err(PlatformError::Unsupported(
            "orders awaiting an outside payment",
        ))
    }

    /// Where a store that takes orders on its own page reports them (a signed webhook), when
    /// the merchant configured it: the bridge links each to the checkout it handed off.
    fn order_feed(&self) -> Option<Arc<dyn OrderFeed>> {
        None
    }
}

/// How a store's order webhook reaches the bridge: `POST /webhooks/{platform}/orders`, a
/// base64 HMAC-SHA256 of the raw body in `signature_header`, the event in `topic_header`, the
/// store's id of the delivery (the same on each retry of it) in `delivery_header`. Only the
/// body is signed: the headers are whatever the sender wrote.
pub struct FeedRoute {
    pub platform: &'static str,
    pub signature_header: &'static str,
    pub topic_header: &'static str,
    pub delivery_header: &'static str,
}

/// Which resource a signed body is about and when the store last changed it, read from the
/// body alone: what webhooks are ordered by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Version {
    pub resource: String,
    pub updated_at: time::OffsetDateTime,
}

/// Orders the store reports itself, for checkouts that handed the buyer to its page.
#[async_trait]
pub trait OrderFeed: Send + Sync {
    fn route(&self) -> FeedRoute;

    /// The secret the store signs these webhooks with.
    fn secret(&self) -> &Secret;

    /// The order a signed body names and its store's `updated_at`, or `None` when the body
    /// names no order or no time (it then changes nothing). `InvalidInput` when it is not JSON.
    fn version(&self, body: &[u8]) -> Result<Option<Version>, PlatformError>;

    /// One signed event: the order as now kept, or `None` when it is about no checkout this
    /// bridge handed off (not kept). `InvalidInput` when the body is not an order. `topic` is
    /// the unsigned header as sent: the body alone decides what is kept.
    async fn received(&self, topic: &str, body: &[u8]) -> Result<Option<Order>, PlatformError>;
}

pub type SharedCheckout = Arc<dyn CheckoutPort>;

/// `[checkout]`: how an adapter whose store takes payment itself may place orders. Empty (the
/// default) leaves checkout off for such stores, so a merchant opts in to agents placing
/// orders; the sample store's test checkout needs none of it.
#[derive(Debug, Clone, Default, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct CheckoutConfig {
    /// The store's offline gateways (`bacs`, `cod`, `cheque`) an agent may place an order
    /// with; the order is then placed in the store, its status as the gateway sets it.
    pub place_with: Vec<String>,
    /// A gateway that leaves the order pending for the buyer to pay on the store's order-pay
    /// page (e.g. a Pix plugin's); complete then escalates there.
    pub pay_with: Option<String>,
}

impl CheckoutConfig {
    /// Whether the merchant turned checkout on for a store that takes payment itself.
    pub fn enabled(&self) -> bool {
        !self.place_with.is_empty() || self.pay_with.is_some()
    }
}
