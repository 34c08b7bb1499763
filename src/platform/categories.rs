//! The one category-tree cache every adapter that needs its store's tree keeps: categories
//! change rarely and products name them on every page, so the tree is fetched once per TTL,
//! and concurrent misses share one upstream call. Each adapter keeps its own tree shape.

use std::sync::Arc;
use std::time::Duration;

use moka::future::Cache;

use super::error::PlatformError;

pub struct CategoryCache<T> {
    tree: Cache<(), Arc<T>>,
}

impl<T: Send + Sync + 'static> CategoryCache<T> {
    pub fn new(ttl: Duration) -> Self {
        Self {
            tree: Cache::builder().max_capacity(1).time_to_live(ttl).build(),
        }
    }

    /// The cached tree, or the one `fetch` reads when there is none (a failure is not kept).
    pub async fn get(
        &self,
        fetch: impl Future<Output = Result<T, PlatformError>>,
    ) -> Result<Arc<T>, PlatformError> {
        self.tree
            .try_get_with((), async { fetch.await.map(Arc::new) })
            .await
            .map_err(|error| (*error).clone())
    }
}
