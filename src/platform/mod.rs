//! The platform layer: the port every store implements (`port`), the one road to an upstream
//! (`upstream`: budget, retries, timeouts), the product cache any store can sit behind, and a
//! folder per platform. Which platforms exist is the top-level `registry`'s business.

pub mod cache;
pub mod factory;
pub mod port;
pub mod sample;
pub mod shopify;
pub mod upstream;
pub mod woocommerce;

pub use factory::{BuildContext, PlatformFactory};
pub use port::{Capabilities, Platform, PlatformError, Pushdown, SharedPlatform, StoreInfo};
