//! Identical catalog reads in flight share one store request (issue 39 item 1), on every
//! platform and whatever `[cache]` says: it wraps the store's catalog port beneath the product
//! cache, so it also covers what the cache does not keep (search pages by default, lookups of
//! several ids). A read joins only a request still under way, so every caller gets an answer
//! the store gave after the caller asked: nothing is kept once the answer is out.
//!
//! The request runs in a task of its own, not in the first caller's: a caller whose deadline
//! passes (its future is dropped) is answered on time and takes nothing from the others, who
//! keep waiting within their own deadlines. The store read still ends within the upstream's
//! `read_deadline_ms`, even when every caller has gone.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use tokio::sync::watch;
use tracing::Instrument;

use super::catalog::{CatalogPort, SharedCatalog};
use super::error::PlatformError;
use crate::model::{BuyerContext, Filters, ProductHit, Resolved, SearchPage, SearchRequest};

/// Everything a search's answer depends on: two requests with one key are the same read.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) struct SearchKey {
    query: Option<String>,
    categories: Vec<String>,
    price: Option<(Option<i64>, Option<i64>)>,
    context: BuyerContext,
    cursor: Option<String>,
    limit: u32,
}

impl SearchKey {
    pub(super) fn new(request: &SearchRequest) -> Self {
        let Filters { categories, price } = &request.filters;
        Self {
            query: request.query.clone(),
            categories: categories.clone(),
            price: price.as_ref().map(|bounds| (bounds.min, bounds.max)),
            context: request.context.clone(),
            cursor: request.upstream_cursor.clone(),
            limit: request.limit,
        }
    }
}

/// One id read in one buyer context.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) struct IdKey {
    pub(super) id: String,
    pub(super) context: BuyerContext,
}

type Outcome<V> = Option<Result<V, PlatformError>>;

/// One read under way: its answer, once it comes, and how many callers joined it.
struct Entry<V> {
    answer: watch::Receiver<Outcome<V>>,
    joined: usize,
}

type Calls<K, V> = Arc<Mutex<HashMap<K, Entry<V>>>>;

/// The reads of one kind under way, by key.
struct InFlight<K, V> {
    read: &'static str,
    calls: Calls<K, V>,
}

/// Forgets a finished read (also when its task panicked), before its answer goes out, so a
/// caller arriving after the answer asks the store again.
struct Forget<K: Hash + Eq, V> {
    calls: Calls<K, V>,
    key: Option<K>,
}

impl<K: Hash + Eq, V> Drop for Forget<K, V> {
    fn drop(&mut self) {
        if let Some(key) = self.key.take() {
            lock(&self.calls).remove(&key);
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl<K, V> InFlight<K, V>
where
    K: Hash + Eq + Clone + Send + 'static,
    V: Clone + Send + Sync + 'static,
{
    fn new(read: &'static str) -> Self {
        Self {
            read,
            calls: Arc::new(Mutex::new(HashMap::new())),
        }
    }

    /// The answer of the read `key` under way, or of `fetch` started now for later callers
    /// to share.
    async fn share(
        &self,
        key: K,
        fetch: impl Future<Output = Result<V, PlatformError>> + Send + 'static,
    ) -> Result<V, PlatformError> {
        let mut answer = {
            let mut calls = lock(&self.calls);
            match calls.get_mut(&key) {
                Some(entry) => {
                    entry.joined += 1;
                    crate::prometheus::read_shared(self.read);
                    entry.answer.clone()
                }
                None => {
                    let (sender, answer) = watch::channel(None);
                    calls.insert(
                        key.clone(),
                        Entry {
                            answer: answer.clone(),
                            joined: 0,
                        },
                    );
                    let forget = Forget {
                        calls: self.calls.clone(),
                        key: Some(key),
                    };
                    tokio::spawn(
                        async move {
                            let outcome = fetch.await;
                            drop(forget);
                            let _ = sender.send(Some(outcome));
                        }
                        .in_current_span(),
                    );
                    answer
                }
            }
        };
        let outcome = answer
            .wait_for(Option::is_some)
            .await
            .ok()
            .and_then(|outcome| outcome.clone());
        outcome.unwrap_or_else(|| {
            Err(PlatformError::Unavailable {
                reason: "the store read ended without an answer".to_owned(),
                retry_after: None,
            })
        })
    }

    /// Callers that joined the read `key` under way (tests).
    #[cfg(test)]
    fn joined(&self, key: &K) -> usize {
        lock(&self.calls).get(key).map_or(0, |entry| entry.joined)
    }
}

/// The store's catalog with identical reads in flight shared.
pub struct CoalescedCatalog {
    inner: SharedCatalog,
    searches: InFlight<SearchKey, SearchPage>,
    products: InFlight<IdKey, Option<ProductHit>>,
    lookups: InFlight<(Vec<String>, BuyerContext), Vec<Resolved>>,
}

impl CoalescedCatalog {
    pub fn new(inner: SharedCatalog) -> Self {
        Self {
            inner,
            searches: InFlight::new("search"),
            products: InFlight::new("product"),
            lookups: InFlight::new("lookup"),
        }
    }
}

#[async_trait]
impl CatalogPort for CoalescedCatalog {
    async fn search(&self, request: &SearchRequest) -> Result<SearchPage, PlatformError> {
        let inner = self.inner.clone();
        let owned = request.clone();
        self.searches
            .share(SearchKey::new(request), async move {
                inner.search(&owned).await
            })
            .await
    }

    async fn resolve(
        &self,
        ids: &[String],
        context: &BuyerContext,
    ) -> Result<Vec<Resolved>, PlatformError> {
        let inner = self.inner.clone();
        let (owned_ids, owned_context) = (ids.to_vec(), context.clone());
        self.lookups
            .share((ids.to_vec(), context.clone()), async move {
                inner.resolve(&owned_ids, &owned_context).await
            })
            .await
    }

    async fn product(
        &self,
        id: &str,
        context: &BuyerContext,
    ) -> Result<Option<ProductHit>, PlatformError> {
        let inner = self.inner.clone();
        let key = IdKey {
            id: id.to_owned(),
            context: context.clone(),
        };
        let owned = key.clone();
        self.products
            .share(key, async move {
                inner.product(&owned.id, &owned.context).await
            })
            .await
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use std::time::Duration;

    use super::*;
    use crate::platform::held::{HeldStore, search, until};

    /// Issue 39 item 1: waiters share one store request; the first caller's deadline passing
    /// answers it on time and leaves the request to the others; a read after the answer asks
    /// the store again; another query is its own read.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn identical_reads_share_one_request_and_each_keeps_its_deadline() {
        let store = Arc::new(HeldStore::new());
        let catalog = Arc::new(CoalescedCatalog::new(store.clone()));
        let key = SearchKey::new(&search("camisa"));
        let first = {
            let catalog = catalog.clone();
            tokio::spawn(async move {
                tokio::time::timeout(Duration::from_millis(50), catalog.search(&search("camisa")))
                    .await
            })
        };
        let others: Vec<_> = (0..9)
            .map(|_| {
                let catalog = catalog.clone();
                tokio::spawn(async move { catalog.search(&search("camisa")).await })
            })
            .collect();
        until("nine joined", || catalog.searches.joined(&key) == 9).await;
        // The store has not answered: the first caller's deadline passes all the same.
        assert!(first.await.unwrap().is_err(), "answered by its deadline");
        assert_eq!(store.requests(), 1);
        store.answers.add_permits(1);
        for other in others {
            let page = other.await.unwrap().unwrap();
            assert_eq!(page.next_cursor.as_deref(), Some("answer 1"));
        }
        // Asked after the answer came: a new store request, not the old answer.
        store.answers.add_permits(2);
        let again = catalog.search(&search("camisa")).await.unwrap();
        assert_eq!(again.next_cursor.as_deref(), Some("answer 2"));
        let other_query = catalog.search(&search("chinelo")).await.unwrap();
        assert_eq!(other_query.next_cursor.as_deref(), Some("answer 3"));
        assert_eq!(store.requests(), 3);
    }
}
