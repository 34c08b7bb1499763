//! A product cache in front of any store's catalog port. `product()` and `resolve()` answers
//! are kept per (id, buyer context) for a TTL, optionally search pages too; concurrent misses
//! of one key share one upstream call, and beneath it `coalesce` shares every identical read
//! in flight, kept or not (with the cache off too). It wraps the catalog only: carts are the
//! buyer's live state and go straight to the store.
//!
//! Each entry knows when it expires, and every read reports that to `freshness`, so a layer
//! keeping results built from entries (the answer cache) drops them no later than the entries.
//! Every invalidation also moves the catalog's `generation`, retiring such results at once.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use moka::future::Cache;

use serde::Deserialize;

use super::catalog::{CatalogPort, SharedCatalog};
use super::coalesce::{CoalescedCatalog, IdKey, SearchKey};
use super::freshness;
use super::port::{Platform, PlatformError, SharedPlatform};
use crate::model::{BuyerContext, ProductHit, Resolved, SearchPage, SearchRequest};
use crate::settings::{ConfigProblem, Secret};

/// `[cache]`: product cache in front of the store (see `platform::cache`).
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct CacheConfig {
    pub enabled: bool,
    pub ttl_secs: u64,
    pub max_entries: u64,
    /// Also cache search pages (same TTL); any product webhook drops them all.
    pub search: bool,
    /// Enables `POST /webhooks/shopify|woocommerce`, which drop a product from the cache.
    pub webhook_secret: Option<Secret>,
    /// Also keep the encoded answers of `search_catalog`, `lookup_catalog` and `get_product`
    /// built from cached entries, from the second time a read is asked (needs `enabled`;
    /// search answers need `search`).
    pub answers: bool,
    /// Bytes of kept answers (their JSON and arguments) before the least used go.
    pub answer_bytes: u64,
}

impl Default for CacheConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            ttl_secs: 60,
            max_entries: 10_000,
            search: true,
            webhook_secret: None,
            answers: true,
            answer_bytes: 64 << 20,
        }
    }
}

impl CacheConfig {
    pub fn problems(&self) -> Vec<ConfigProblem> {
        let mut problems = Vec::new();
        for (key, value, max) in [
            ("cache.ttl_secs", self.ttl_secs, 86_400),
            ("cache.max_entries", self.max_entries, 10_000_000),
        ] {
            if value < 1 || value > max {
                problems.push(ConfigProblem::new(
                    key,
                    format!("must be between 1 and {max}"),
                ));
            }
        }
        if !(ANSWER_BYTES_MIN..=ANSWER_BYTES_MAX).contains(&self.answer_bytes) {
            problems.push(ConfigProblem::new(
                "cache.answer_bytes",
                format!("must be between {ANSWER_BYTES_MIN} and {ANSWER_BYTES_MAX}"),
            ));
        }
        if self.webhook_secret.is_some() && !self.enabled {
            problems.push(ConfigProblem::new(
                "cache.webhook_secret",
                "has no effect while cache.enabled = false",
            ));
        }
        problems
    }
}

/// Below this an answer cache holds too few answers to be worth its lookups.
const ANSWER_BYTES_MIN: u64 = 64 << 10;
const ANSWER_BYTES_MAX: u64 = 16 << 30;

/// An entry and the moment it stops being served (its insertion is a little later, so the
/// cache itself drops it no earlier).
#[derive(Debug, Clone)]
struct Stamped<V> {
    value: V,
    expires: Instant,
}

/// Why a miss's read was not kept: the store failed, or an invalidation came while the read was
/// in flight, so what the store answered may predate the change (its waiters still get it:
/// the store gave it after they asked).
#[derive(Debug, Clone)]
enum Unkept<V> {
    Failed(PlatformError),
    Overtaken(Stamped<V>),
}

impl<V: Clone> Unkept<V> {
    fn answer(error: Arc<Self>) -> Result<Stamped<V>, PlatformError> {
        match &*error {
            Self::Failed(error) => Err(error.clone()),
            Self::Overtaken(stamped) => Ok(stamped.clone()),
        }
    }
}

impl<V> Stamped<V> {
    /// The value, its expiry reported to the tracked work reading it.
    fn read(self) -> V {
        freshness::read_cached(self.expires);
        self.value
    }
}

pub struct CachedCatalog {
    inner: SharedCatalog,
    ttl: Duration,
    products: Cache<IdKey, Stamped<Option<ProductHit>>>,
    resolved: Cache<IdKey, Stamped<Option<Resolved>>>,
    searches: Option<Cache<SearchKey, Stamped<SearchPage>>>,
    generation: AtomicU64,
}

fn cache<K, V>(max_entries: u64, ttl: Duration) -> Cache<K, V>
where
    K: std::hash::Hash + Eq + Send + Sync + 'static,
    V: Clone + Send + Sync + 'static,
{
    Cache::builder()
        .max_capacity(max_entries)
        .time_to_live(ttl)
        .support_invalidation_closures()
        .build()
}

/// Whether a product id as the adapter spells it is one of `ids` as a webhook spells them.
fn product_matcher(ids: &[String]) -> impl Fn(&str) -> bool + Clone + Send + Sync + 'static {
    let ids = ids.to_vec();
    move |id: &str| {
        ids.iter().any(|wanted| {
            id == wanted
                // Shopify ids are GIDs (gid://shopify/Product/123); a webhook may say 123.
                || id.rsplit_once('/').is_some_and(|(_, tail)| tail == wanted)
        })
    }
}

impl CachedCatalog {
    pub fn new(inner: SharedCatalog, config: &CacheConfig) -> Self {
        Self::with_ttl(inner, config, Duration::from_secs(config.ttl_secs))
    }

    /// Like `new` with a TTL finer than whole seconds (tests).
    pub fn with_ttl(inner: SharedCatalog, config: &CacheConfig, ttl: Duration) -> Self {
        Self {
            inner,
            ttl,
            products: cache(config.max_entries, ttl),
            resolved: cache(config.max_entries, ttl),
            searches: config.search.then(|| cache(config.max_entries, ttl)),
            generation: AtomicU64::new(0),
        }
    }

    /// Moves on every invalidation: a result built from entries read at an older generation
    /// may show something the store has changed since.
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::SeqCst)
    }

    /// Once before the entries go (results built earlier are retired at once) and once after
    /// (a result built meanwhile may have read an entry just before it went).
    fn next_generation(&self) {
        self.generation.fetch_add(1, Ordering::SeqCst);
    }

    fn stamp<V>(&self, value: V) -> Stamped<V> {
        Stamped {
            value,
            expires: Instant::now() + self.ttl,
        }
    }

    /// A miss's read, kept only when no invalidation came while it was in flight: a read
    /// begun before a webhook and answered after it must not outlive the webhook.
    async fn read_to_keep<V>(
        &self,
        read: impl std::future::Future<Output = Result<V, PlatformError>>,
    ) -> Result<Stamped<V>, Unkept<V>> {
        let before = self.generation();
        let value = read.await.map_err(Unkept::Failed)?;
        let stamped = self.stamp(value);
        if self.generation() == before {
            Ok(stamped)
        } else {
            Err(Unkept::Overtaken(stamped))
        }
    }

    /// Drops every cached answer that shows one of `ids` (product ids as the adapter or the
    /// webhook spells them): all buyer contexts, every input that resolved to the product
    /// (variant ids, SKUs, handles), and every search page.
    pub fn invalidate_product(&self, ids: &[String]) {
        self.next_generation();
        self.drop_products(ids);
        self.next_generation();
        tracing::info!(ids = ?ids, "product dropped from the cache");
    }

    fn drop_products(&self, ids: &[String]) {
        let matches = product_matcher(ids);
        let by_product = matches.clone();
        let products =
            self.products
                .invalidate_entries_if(move |key, entry: &Stamped<Option<ProductHit>>| {
                    by_product(&key.id)
                        || entry
                            .value
                            .as_ref()
                            .is_some_and(|hit| by_product(&hit.product.id))
                });
        let by_resolved = matches.clone();
        let resolved =
            self.resolved
                .invalidate_entries_if(move |key, entry: &Stamped<Option<Resolved>>| {
                    by_resolved(&key.id)
                        || entry
                            .value
                            .as_ref()
                            .is_some_and(|hit| by_resolved(&hit.product.id))
                });
        // Every search page goes, not only those listing the product: a changed product may
        // now match queries whose pages did not show it (a new title, a new product, back in
        // stock), and a page must never be older than the webhook that changed its answer.
        if let Some(searches) = &self.searches {
            searches.invalidate_all();
        }
        if products.is_err() || resolved.is_err() {
            tracing::warn!("targeted invalidation failed; clearing the product cache");
            self.drop_all();
        }
    }

    /// Drops every cached answer (e.g. after invalidations may have been missed).
    pub fn invalidate_all(&self) {
        self.next_generation();
        self.drop_all();
        self.next_generation();
    }

    fn drop_all(&self) {
        self.products.invalidate_all();
        self.resolved.invalidate_all();
        if let Some(searches) = &self.searches {
            searches.invalidate_all();
        }
    }
}

#[async_trait]
impl CatalogPort for CachedCatalog {
    async fn search(&self, request: &SearchRequest) -> Result<SearchPage, PlatformError> {
        let Some(searches) = &self.searches else {
            freshness::read_uncached();
            return self.inner.search(request).await;
        };
        let mut missed = false;
        let page = match searches
            .try_get_with(SearchKey::new(request), async {
                missed = true;
                self.read_to_keep(self.inner.search(request)).await
            })
            .await
        {
            Ok(page) => page,
            Err(unkept) => Unkept::answer(unkept)?,
        };
        crate::prometheus::cache("search", !missed);
        Ok(page.read())
    }

    async fn resolve(
        &self,
        ids: &[String],
        context: &BuyerContext,
    ) -> Result<Vec<Resolved>, PlatformError> {
        let mut found = Vec::with_capacity(ids.len());
        let mut missing = Vec::new();
        for id in ids {
            let key = IdKey {
                id: id.clone(),
                context: context.clone(),
            };
            match self.resolved.get(&key).await {
                Some(hit) => {
                    crate::prometheus::cache("resolve", true);
                    found.extend(hit.read());
                }
                None => {
                    crate::prometheus::cache("resolve", false);
                    if !missing.contains(id) {
                        missing.push(id.clone());
                    }
                }
            }
        }
        if missing.is_empty() {
            return Ok(found);
        }
        // One batched upstream call for every miss (the adapter batches), rather than one
        // coalesced call per id.
        let before = self.generation();
        let fresh = self.inner.resolve(&missing, context).await?;
        let overtaken = self.generation() != before;
        for id in &missing {
            let answer = self.stamp(fresh.iter().find(|resolved| resolved.input == *id).cloned());
            freshness::read_cached(answer.expires);
            if overtaken {
                continue;
            }
            self.resolved
                .insert(
                    IdKey {
                        id: id.clone(),
                        context: context.clone(),
                    },
                    answer,
                )
                .await;
        }
        found.extend(fresh);
        Ok(found)
    }

    async fn product(
        &self,
        id: &str,
        context: &BuyerContext,
    ) -> Result<Option<ProductHit>, PlatformError> {
        let key = IdKey {
            id: id.to_owned(),
            context: context.clone(),
        };
        let mut missed = false;
        let hit = match self
            .products
            .try_get_with(key, async {
                missed = true;
                self.read_to_keep(self.inner.product(id, context)).await
            })
            .await
        {
            Ok(hit) => hit,
            Err(unkept) => Unkept::answer(unkept)?,
        };
        crate::prometheus::cache("product", !missed);
        Ok(hit.read())
    }
}

/// Shares `platform`'s identical catalog reads in flight and puts them behind the cache when
/// `[cache] enabled`; its other ports stay as they are.
pub fn wrap(
    platform: SharedPlatform,
    config: &CacheConfig,
) -> (SharedPlatform, Option<Arc<CachedCatalog>>) {
    let coalesced: SharedCatalog = Arc::new(CoalescedCatalog::new(platform.catalog.clone()));
    let cached = config
        .enabled
        .then(|| Arc::new(CachedCatalog::new(coalesced.clone(), config)));
    let catalog: SharedCatalog = match &cached {
        Some(cached) => cached.clone(),
        None => coalesced,
    };
    let platform = Platform {
        catalog,
        ..Platform::clone(&platform)
    };
    (Arc::new(platform), cached)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use crate::platform::held::{HeldStore, search, until};

    /// Issue 39 item 4 (found by the store-load day): a search begun before a product
    /// webhook and answered after it is handed to its caller but not kept, so the next
    /// search asks the store again instead of serving a page older than the webhook.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_read_overtaken_by_an_invalidation_is_answered_but_not_kept() {
        let store = Arc::new(HeldStore::new());
        let cached = Arc::new(CachedCatalog::new(store.clone(), &CacheConfig::default()));
        let request = search("camisa");
        let first = tokio::spawn({
            let (cached, request) = (cached.clone(), request.clone());
            async move { cached.search(&request).await }
        });
        until("the first search reaches the store", || {
            store.requests() == 1
        })
        .await;
        cached.invalidate_product(&["42".to_owned()]);
        store.answers.add_permits(1);
        let page = first.await.unwrap().unwrap();
        assert_eq!(page.next_cursor.as_deref(), Some("answer 1"));
        store.answers.add_permits(1);
        let again = cached.search(&request).await.unwrap();
        assert_eq!(again.next_cursor.as_deref(), Some("answer 2"));
        assert_eq!(store.requests(), 2);
        // Not overtaken, the read is kept: the third search costs the store nothing.
        let kept = cached.search(&request).await.unwrap();
        assert_eq!(kept.next_cursor.as_deref(), Some("answer 2"));
        assert_eq!(store.requests(), 2);
    }

    /// The same for products and for the batched resolve.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn products_and_resolves_overtaken_by_an_invalidation_are_not_kept() {
        let store = Arc::new(HeldStore::new());
        let cached = Arc::new(CachedCatalog::new(store.clone(), &CacheConfig::default()));
        let context = BuyerContext::default();
        let product = tokio::spawn({
            let (cached, context) = (cached.clone(), context.clone());
            async move { cached.product("42", &context).await }
        });
        until("the product read reaches the store", || {
            store.requests() == 1
        })
        .await;
        cached.invalidate_product(&["42".to_owned()]);
        store.answers.add_permits(1);
        product.await.unwrap().unwrap();
        let resolve = tokio::spawn({
            let (cached, context) = (cached.clone(), context.clone());
            async move { cached.resolve(&["42".to_owned()], &context).await }
        });
        until("the resolve reaches the store", || store.requests() == 2).await;
        cached.invalidate_product(&["42".to_owned()]);
        store.answers.add_permits(1);
        resolve.await.unwrap().unwrap();
        store.answers.add_permits(2);
        cached.product("42", &context).await.unwrap();
        cached.resolve(&["42".to_owned()], &context).await.unwrap();
        assert_eq!(store.requests(), 4, "both asked again");
    }

    #[test]
    fn the_answer_bound_is_checked_by_its_key() {
        let problems = |answer_bytes| {
            CacheConfig {
                answer_bytes,
                ..CacheConfig::default()
            }
            .problems()
            .into_iter()
            .map(|problem| problem.key)
            .collect::<Vec<_>>()
        };
        assert!(problems(CacheConfig::default().answer_bytes).is_empty());
        for wrong in [0, 1024, ANSWER_BYTES_MAX + 1] {
            assert_eq!(problems(wrong), ["cache.answer_bytes"], "{wrong}");
        }
    }

    #[test]
    fn webhook_ids_match_gids_and_their_numeric_tail() {
        let by_number = product_matcher(&["632910392".to_owned()]);
        assert!(by_number("gid://shopify/Product/632910392"));
        assert!(by_number("632910392"));
        assert!(!by_number("gid://shopify/Product/6329103921"));
        let by_gid = product_matcher(&["gid://shopify/Product/1".to_owned()]);
        assert!(by_gid("gid://shopify/Product/1"));
        assert!(!by_gid("1"));
    }
}
