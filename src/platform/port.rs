//! The port between the protocol brain and a store: what every adapter implements and the
//! errors it speaks. An adapter fetches and normalises upstream data into `crate::model` and
//! performs cart operations; it never applies protocol rules (relaxation, correlation, cart
//! outcomes), which the brain does once for every platform.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use iso_currency::Currency;

use crate::model::{
    BuyerContext, CartDraft, CartOutcome, CartState, ProductHit, Resolved, SearchPage,
    SearchRequest,
};

#[derive(Debug, thiserror::Error)]
pub enum PlatformError {
    #[error("the store is throttling requests")]
    RateLimited { retry_after: Option<Duration> },
    /// A bounded store is at its bound; space frees up after `retry_after`.
    #[error("the {what} is full")]
    Full {
        what: &'static str,
        retry_after: Duration,
    },
    #[error("the store is unavailable: {reason}")]
    Unavailable {
        reason: String,
        retry_after: Option<Duration>,
    },
    /// Cart writes cannot be coordinated across replicas right now (the shared Redis is
    /// unreachable, or another replica held the cart past the wait): refused rather than
    /// risk two replicas interleaving writes to one cart. Reads keep working.
    #[error("cart writes are paused: {reason}")]
    WritesPaused {
        reason: &'static str,
        retry_after: Duration,
    },
    /// The upstream answered, but not in a shape the adapter understands.
    #[error("the store sent an unexpected response: {0}")]
    BadResponse(String),
    /// The agent's input cannot be honoured by this upstream (e.g. a stale cursor).
    #[error("{0}")]
    InvalidInput(String),
    /// Like `InvalidInput`, naming the argument at fault by its JSON path (`$.cart.context.language`).
    #[error("{path}: {message}")]
    InvalidAt { path: String, message: String },
    #[error("this store does not support {0}")]
    Unsupported(&'static str),
    /// The store refused the bridge's own credentials: nothing the agent can fix; `key` is
    /// the configuration key the merchant must.
    #[error("the store refused the bridge's credentials ({key})")]
    Unauthorized { key: &'static str },
}

/// Which catalog filters the upstream applies itself; the brain post-filters the rest.
#[derive(Debug, Clone, Copy, Default)]
pub struct Pushdown {
    pub categories: bool,
    pub price: bool,
}

#[derive(Debug, Clone, Copy)]
pub struct Capabilities {
    pub search: bool,
    pub lookup: bool,
    pub cart: bool,
}

/// Who judges the lines of a cart write: unknown ids, products that need a variant choice,
/// sold-out and short-stocked items.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum LineJudge {
    /// The brain resolves every line through the catalog first, and the store receives only
    /// confirmed variant ids. Right for stores whose catalog reads are cheap or cached.
    #[default]
    Brain,
    /// The store's own write answer says which lines it refused, as `LineProblem`s: the
    /// brain sends the agent's item ids straight to the write and saves the catalog round
    /// trip. The rules that turn problems into messages stay in the brain.
    Store,
}

#[derive(Debug, Clone)]
pub struct StoreInfo {
    pub platform: &'static str,
    pub name: String,
    pub currency: Currency,
    /// The shop's home page: where a buyer goes when no cart could be made.
    pub storefront_url: String,
    pub capabilities: Capabilities,
    pub pushdown: Pushdown,
    pub cart_lines: LineJudge,
}

#[async_trait]
pub trait Platform: Send + Sync + 'static {
    fn info(&self) -> &StoreInfo;

    /// One page of products matching `request`, ordered by the upstream's relevance.
    async fn search(&self, request: &SearchRequest) -> Result<SearchPage, PlatformError>;

    /// Resolves each distinct input (product id, variant id, SKU, handle) it recognises.
    /// Inputs it does not know are simply absent from the answer. Ids the adapter cannot parse
    /// are unknown, never spliced into an upstream request.
    async fn resolve(
        &self,
        ids: &[String],
        context: &BuyerContext,
    ) -> Result<Vec<Resolved>, PlatformError>;

    /// The product named by a product or variant id, with ALL its variants.
    async fn product(
        &self,
        id: &str,
        context: &BuyerContext,
    ) -> Result<Option<ProductHit>, PlatformError>;

    /// Creates an upstream cart holding `draft.lines` (variants the brain already resolved).
    async fn create_cart(&self, draft: &CartDraft) -> Result<CartOutcome, PlatformError>;

    /// `None` for unknown, expired or cancelled carts.
    async fn get_cart(&self, id: &str) -> Result<Option<CartState>, PlatformError>;

    /// Makes the cart's lines exactly `draft.lines`, with as few upstream writes as it can.
    async fn replace_cart_lines(
        &self,
        id: &str,
        draft: &CartDraft,
    ) -> Result<Option<CartOutcome>, PlatformError>;

    /// Cancels the cart and returns it as it was just before; later calls must see `None`.
    async fn cancel_cart(&self, id: &str) -> Result<Option<CartState>, PlatformError>;

    /// Whether the upstream answers at all (for readiness probes).
    async fn ready(&self) -> Result<(), PlatformError> {
        Ok(())
    }

    /// What the adapter found out about the store once it answered (e.g. which of several
    /// upstream APIs it uses), for `doctor` and logs; `None` when there is nothing to say.
    fn describe(&self) -> Option<String> {
        None
    }
}

pub type SharedPlatform = Arc<dyn Platform>;
