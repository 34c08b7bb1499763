//! The catalog port: what the brain reads from a store's catalog. The product cache
//! (`cache`) is the one decorator that wraps it.

use std::sync::Arc;

use async_trait::async_trait;

use super::error::PlatformError;
use crate::model::{BuyerContext, ProductHit, Resolved, SearchPage, SearchRequest};

#[async_trait]
pub trait CatalogPort: Send + Sync + 'static {
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
}

/// What callers build on the core: provided once here, so an adapter or a decorator
/// implements only the three calls above and never forwards a convenience.
#[async_trait]
pub trait CatalogExt: CatalogPort {
    /// `resolve`, asking the store nothing when there is nothing to resolve.
    async fn resolve_any(
        &self,
        ids: &[String],
        context: &BuyerContext,
    ) -> Result<Vec<Resolved>, PlatformError> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        self.resolve(ids, context).await
    }
}

impl<T: CatalogPort + ?Sized> CatalogExt for T {}

pub type SharedCatalog = Arc<dyn CatalogPort>;
