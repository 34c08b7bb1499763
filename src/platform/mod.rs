//! The platform layer: the ports every store implements, one per concern (`catalog`, `cart`;
//! `port` bundles them with the errors), the one road to an upstream
//! (`upstream`: budget, retries, timeouts), the decorators any store can sit behind (the product
//! `cache`, per-cart write serialisation in `serial`), and a folder per platform.
//! Which platforms exist is the top-level `registry`'s business.

pub mod cache;
pub mod cart;
pub mod catalog;
pub mod categories;
pub mod checkout;
pub mod coalesce;
pub mod error;
pub mod exclusive;
pub mod factory;
pub mod fence;
pub mod footprint;
pub mod freshness;
#[cfg(test)]
mod held;
pub mod intent;
pub mod port;
pub mod sample;
pub mod serial;
pub mod shopify;
pub mod store_keys;
pub mod upstream;
pub mod vtex;
pub mod woocommerce;

pub use cart::{CartExt, CartPort, SharedCarts};
pub use catalog::{CatalogExt, CatalogPort, SharedCatalog};
pub use factory::{BuildContext, PlatformFactory};
pub use port::{
    Capabilities, Health, LineJudge, Platform, PlatformError, Pushdown, SharedPlatform, StoreInfo,
};
