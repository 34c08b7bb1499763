//! The port between the protocol brain and a store: the ports every adapter implements
//! (`catalog::CatalogPort`, `cart::CartPort`, `Health` here), bundled as a `Platform`, and the
//! errors they speak. An adapter fetches and normalises upstream data into `crate::model` and
//! performs cart operations; it never applies protocol rules (relaxation, correlation, cart
//! outcomes), which the brain does once for every platform.

use std::sync::Arc;

use async_trait::async_trait;
use iso_currency::Currency;

pub use super::error::PlatformError;

use super::cart::SharedCarts;
use super::catalog::SharedCatalog;
use super::checkout::SharedCheckout;
use super::upstream::Load;

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

/// Whether the store answers, and what the adapter found out about it: asked by readiness
/// probes and `doctor`, never by the brain, so no decorator wraps it.
#[async_trait]
pub trait Health: Send + Sync + 'static {
    /// Whether the upstream answers at all (for readiness probes).
    async fn ready(&self) -> Result<(), PlatformError>;

    /// What the adapter found out about the store once it answered (e.g. which of several
    /// upstream APIs it uses), for `doctor` and logs; `None` when there is nothing to say.
    fn describe(&self) -> Option<String> {
        None
    }
}

/// A store as the layers above see it: what it is, and one port per concern. Each decorator
/// wraps only the port it is about (`cache` the catalog, `serial` the carts) and takes the
/// others as they are, so none of them forwards a call it does not change.
#[derive(Clone)]
pub struct Platform {
    pub info: StoreInfo,
    pub catalog: SharedCatalog,
    pub carts: SharedCarts,
    pub health: Arc<dyn Health>,
    /// `None` when the adapter does not implement the checkout port: the checkout tools and
    /// capability are then not served at all.
    pub checkout: Option<SharedCheckout>,
    /// How busy the store is kept (requests in flight, queued, waits), for the merchant
    /// page; `None` for a store with no upstream (the sample store).
    pub load: Option<Arc<Load>>,
}

impl Platform {
    /// A port added later (checkout) comes with a `with_…` of its own, so adapters that do not
    /// offer it keep calling this unchanged.
    pub fn new(
        info: StoreInfo,
        catalog: SharedCatalog,
        carts: SharedCarts,
        health: Arc<dyn Health>,
    ) -> Self {
        Self {
            info,
            catalog,
            carts,
            health,
            checkout: None,
            load: None,
        }
    }

    pub fn with_load(mut self, load: Arc<Load>) -> Self {
        self.load = Some(load);
        self
    }

    pub fn with_checkout(mut self, checkout: SharedCheckout) -> Self {
        self.checkout = Some(checkout);
        self
    }

    pub fn info(&self) -> &StoreInfo {
        &self.info
    }
}

pub type SharedPlatform = Arc<Platform>;
