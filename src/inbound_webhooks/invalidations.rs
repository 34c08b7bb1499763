//! Product invalidations every replica applies: a webhook reaches one replica, which drops
//! the product from its own cache and publishes the ids on Redis; every replica (itself
//! included, harmlessly) drops them on hearing it. A replica that was not listening for a
//! while clears its whole cache when it subscribes again, since it may have missed some.

use std::sync::Arc;

use crate::platform::cache::CachedCatalog;
use crate::replicas::{Shared, fanout};

const CHANNEL: &str = "bcp:invalidate";

#[derive(Clone)]
pub struct Invalidations {
    cache: Arc<CachedCatalog>,
    shared: Option<Shared>,
}

impl Invalidations {
    /// With `shared`, starts listening for other replicas' invalidations (needs a runtime).
    pub fn new(cache: Arc<CachedCatalog>, shared: Option<Shared>) -> Self {
        if let Some(shared) = &shared {
            let (on_message, on_gap) = (cache.clone(), cache.clone());
            fanout::listen(
                shared.link.clone(),
                CHANNEL,
                move |payload| match serde_json::from_str::<Vec<String>>(&payload) {
                    Ok(ids) => on_message.invalidate_product(&ids),
                    Err(_) => tracing::warn!("unreadable invalidation ignored"),
                },
                move || on_gap.invalidate_all(),
            );
        }
        Self { cache, shared }
    }

    /// The link to the other replicas, when there are any.
    pub fn shared(&self) -> Option<&Shared> {
        self.shared.as_ref()
    }

    /// The store says these products changed: drop them here and on every replica.
    pub async fn product_changed(&self, ids: &[String]) {
        self.cache.invalidate_product(ids);
        let Some(shared) = &self.shared else {
            return;
        };
        let published = match serde_json::to_string(ids) {
            Ok(payload) => fanout::publish(&shared.link, CHANNEL, &payload).await,
            Err(_) => return,
        };
        if published.is_err() {
            tracing::warn!(
                "invalidation not fanned out: other replicas keep the product until their cache TTL"
            );
        }
    }
}
