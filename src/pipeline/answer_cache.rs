//! The answer cache: the encoded answers of the catalog reads (`search_catalog`,
//! `lookup_catalog`, `get_product`), so a repeated read skips the brain and costs a lookup and
//! a copy of its bytes. Only the brain's work is skipped: every step before it has run.
//!
//! An answer is keyed by everything it is a function of besides the catalog: the namespace,
//! the release negotiation agreed (version, layout and extensions in force), the tool, and the
//! arguments' canonical bytes (`meta` left out, the buyer context kept). Store settings are
//! fixed for the process's life.
//!
//! It is never older than the product cache that fed it: an answer is kept only when every
//! catalog read behind it came from a cached entry, expires when the first of those entries
//! does, and is tagged with the catalog's generation read before the brain ran, so any
//! invalidation the product cache honours (webhook, fan-out from another replica, a full
//! flush) retires it. One generation for the whole catalog rather than tags per product: a
//! changed product can also enter a search page or lookup that did not show it before, which
//! per-product tags would miss; the cost is that one product's webhook retires every answer.
//!
//! An answer is kept on its key's second miss, not its first ([`Doorkeeper`]): most keys are
//! asked once (a buyer postal code nobody sends again, a one-off query), and keeping each of
//! those filled the byte bound with answers no call would read, evicting the ones agents
//! repeat. A repeated read is built twice, then answered from the cache.

use std::hash::{BuildHasher, RandomState};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use moka::Expiry;
use moka::future::Cache;
use serde_json::Value;

use crate::platform::cache::CachedCatalog;
use crate::platform::freshness;
use crate::protocol::answer::Answer;
use crate::protocol::{Capability, Release, ToolName, canonical};

/// What one kept answer costs beyond its JSON and argument bytes (key, entry, moka's own).
const ENTRY_OVERHEAD: usize = 160;

#[derive(Debug, PartialEq, Eq, Hash)]
struct Key {
    namespace: &'static str,
    release: Release,
    tool: ToolName,
    arguments: Box<[u8]>,
}

#[derive(Debug, Clone)]
struct Kept {
    answer: Answer,
    generation: u64,
    expires: Instant,
}

/// Each answer leaves when the first product-cache entry it was built from does.
struct UntilEntriesExpire;

impl Expiry<Key, Kept> for UntilEntriesExpire {
    fn expire_after_create(&self, _: &Key, kept: &Kept, now: Instant) -> Option<Duration> {
        Some(kept.expires.saturating_duration_since(now))
    }

    /// A rebuilt answer (the old one retired) lives by its own entries, not the old one's.
    fn expire_after_update(
        &self,
        _: &Key,
        kept: &Kept,
        now: Instant,
        _: Option<Duration>,
    ) -> Option<Duration> {
        Some(kept.expires.saturating_duration_since(now))
    }
}

fn weight(key: &Key, kept: &Kept) -> u32 {
    // The answer's JSON, and its escaped copy once a front has asked for it (at least as long).
    let bytes = key.arguments.len()
        + kept.answer.json().len() * 2
        + kept.answer.reason().map_or(0, str::len)
        + ENTRY_OVERHEAD;
    u32::try_from(bytes).unwrap_or(u32::MAX)
}

/// The keys missed lately, by hash: a fixed table of slots, each holding the last key hashed
/// to it. A key whose hash is still in its slot was missed before. Two keys sharing a slot
/// push each other out, which only delays keeping an answer; the table never grows, so a flood
/// of one-off keys costs its 8 bytes a slot and nothing more.
struct Doorkeeper {
    /// Keyed per process, so no agent can aim keys at one slot.
    hasher: RandomState,
    slots: Box<[AtomicU64]>,
}

impl Doorkeeper {
    /// One slot per KiB of the cache's bound (a kept answer weighs a few KiB or more), from
    /// 1,024 to 1,048,576 slots: 8 KiB to 8 MiB.
    fn new(max_bytes: u64) -> Self {
        let wanted = usize::try_from(max_bytes >> 10).unwrap_or(usize::MAX);
        let count = wanted.clamp(1 << 10, 1 << 20).next_power_of_two();
        Self {
            hasher: RandomState::new(),
            slots: (0..count).map(|_| AtomicU64::new(0)).collect(),
        }
    }

    /// Whether `key` was missed before; this miss is remembered either way.
    fn seen_before(&self, key: &Key) -> bool {
        // Never 0: an empty slot holds 0.
        let hash = self.hasher.hash_one(key) | 1;
        // The high bits pick the slot, so the low bit forced above does not halve the table.
        let index = usize::try_from(hash >> 40).unwrap_or(0) & (self.slots.len() - 1);
        self.slots[index].swap(hash, Ordering::Relaxed) == hash
    }
}

pub struct AnswerCache {
    answers: Cache<Key, Kept>,
    doorkeeper: Doorkeeper,
    catalog: Arc<CachedCatalog>,
}

impl AnswerCache {
    /// Answers built from `catalog`, at most `max_bytes` of them.
    pub fn new(catalog: Arc<CachedCatalog>, max_bytes: u64) -> Self {
        Self {
            answers: Cache::builder()
                .max_capacity(max_bytes)
                .weigher(weight)
                .expire_after(UntilEntriesExpire)
                .build(),
            doorkeeper: Doorkeeper::new(max_bytes),
            catalog,
        }
    }

    /// Whether `tool`'s answers are kept: the catalog reads, nothing that touches a cart.
    pub fn keeps(tool: ToolName) -> bool {
        matches!(
            tool.capability(),
            Capability::CatalogSearch | Capability::CatalogLookup
        )
    }

    /// The kept answer to these arguments, while it is still as fresh as the product cache;
    /// otherwise what [`AnswerCache::build`] needs to build and keep one. Small on purpose: a
    /// hit never holds the brain's (large) future.
    pub async fn lookup(
        &self,
        namespace: &'static str,
        release: Release,
        tool: ToolName,
        arguments: &Value,
    ) -> Result<Answer, Miss> {
        let key = Key {
            namespace,
            release,
            tool,
            arguments: canonical::payload(arguments).into_boxed_slice(),
        };
        // Read before the brain runs: an invalidation landing while it runs retires its answer.
        let generation = self.catalog.generation();
        if let Some(kept) = self.answers.get(&key).await
            && kept.generation == generation
            && kept.expires > Instant::now()
        {
            crate::prometheus::answer_cache(tool.as_str(), true);
            return Ok(kept.answer);
        }
        crate::prometheus::answer_cache(tool.as_str(), false);
        Err(Miss { key, generation })
    }

    /// `build`'s answer to the arguments `miss` was looked up with, kept when its key was
    /// missed before and every catalog read behind it came from the product cache. Refusals
    /// and failures are never kept.
    pub async fn build<F, E>(
        &self,
        miss: Miss,
        arguments: Value,
        build: impl FnOnce(Value) -> F,
    ) -> Result<Answer, E>
    where
        F: Future<Output = Result<Answer, E>>,
    {
        let (built, reads) = freshness::tracked(build(arguments)).await;
        let answer = built?;
        let repeated = self.doorkeeper.seen_before(&miss.key);
        if let Some(expires) = reads.keep_until()
            && repeated
        {
            let kept = Kept {
                answer: answer.clone(),
                generation: miss.generation,
                expires,
            };
            self.answers.insert(miss.key, kept).await;
        }
        Ok(answer)
    }
}

/// A lookup that found no fresh answer: its key, and the catalog generation it saw.
#[derive(Debug)]
pub struct Miss {
    key: Key,
    generation: u64,
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::platform::cache::CacheConfig;
    use crate::protocol::answer::Outcome;

    async fn catalog() -> Arc<CachedCatalog> {
        let config = crate::startup::BridgeConfig::default();
        let platform = config
            .build_platform("http://127.0.0.1:1".to_owned())
            .await
            .unwrap();
        Arc::new(CachedCatalog::new(
            platform.catalog.clone(),
            &CacheConfig::default(),
        ))
    }

    fn key(index: usize) -> Key {
        Key {
            namespace: "br.dev.bcp.shopping",
            release: crate::protocol::Namespace::BCP.release(None),
            tool: super::super::tools::SEARCH_CATALOG.name,
            arguments: format!("{{\"q\":{index}}}").into_bytes().into_boxed_slice(),
        }
    }

    /// Calls `cache` for one fixed search, the build doing `reads`; whether it was built.
    async fn built(cache: &AnswerCache, reads: impl FnOnce()) -> bool {
        let arguments = serde_json::json!({"catalog": {"query": "cup"}});
        let release = crate::protocol::Namespace::BCP.release(None);
        let lookup = cache
            .lookup(
                "br.dev.bcp.shopping",
                release,
                super::super::tools::SEARCH_CATALOG.name,
                &arguments,
            )
            .await;
        let (answer, built) = match lookup {
            Ok(kept) => (kept, false),
            Err(miss) => {
                let answer = cache
                    .build(miss, arguments, |_| async {
                        reads();
                        Answer::encode(&"built", Outcome::Success).map_err(|_| ())
                    })
                    .await
                    .unwrap();
                (answer, true)
            }
        };
        assert_eq!(answer.json(), "\"built\"");
        built
    }

    #[tokio::test]
    async fn an_answer_lives_no_longer_than_what_it_read() {
        let catalog = catalog().await;
        let cache = AnswerCache::new(catalog.clone(), 1 << 20);
        let later = || Instant::now() + Duration::from_secs(60);
        // Nothing read from the cache, or something read past it: nothing kept.
        assert!(built(&cache, || {}).await);
        assert!(built(&cache, freshness::read_uncached).await);
        assert!(built(&cache, || freshness::read_cached(later())).await);
        assert!(!built(&cache, || {}).await, "kept");
        // Any invalidation retires it, even one landing while the answer was being built.
        catalog.invalidate_product(&["prod_other".to_owned()]);
        assert!(
            built(&cache, || {
                freshness::read_cached(later());
                catalog.invalidate_all();
            })
            .await
        );
        assert!(built(&cache, || freshness::read_cached(later())).await);
        assert!(!built(&cache, || {}).await, "kept");
        catalog.invalidate_all();
        // It expires with the first entry it read.
        let soon = Instant::now() + Duration::from_millis(50);
        assert!(
            built(&cache, || {
                freshness::read_cached(later());
                freshness::read_cached(soon);
            })
            .await
        );
        assert!(!built(&cache, || {}).await, "kept");
        tokio::time::sleep(Duration::from_millis(80)).await;
        assert!(built(&cache, || {}).await, "expired with its entry");
    }

    #[tokio::test]
    async fn an_answer_is_kept_on_its_second_miss() {
        let cache = AnswerCache::new(catalog().await, 1 << 20);
        let later = || Instant::now() + Duration::from_secs(60);
        assert!(built(&cache, || freshness::read_cached(later())).await);
        assert!(
            built(&cache, || freshness::read_cached(later())).await,
            "asked once: not kept"
        );
        assert!(!built(&cache, || {}).await, "asked twice: kept");
    }

    #[test]
    fn only_a_key_missed_before_is_seen() {
        let doorkeeper = Doorkeeper::new(1 << 20);
        assert_eq!(doorkeeper.slots.len(), 1024);
        assert!(!doorkeeper.seen_before(&key(0)));
        assert!(doorkeeper.seen_before(&key(0)));
        assert!(doorkeeper.seen_before(&key(0)));
        // A flood of one-off keys: none is taken for a repeat, and the table does not grow.
        for index in 1..5000 {
            assert!(!doorkeeper.seen_before(&key(index)), "{index}");
        }
        assert_eq!(doorkeeper.slots.len(), 1024);
        assert_eq!(Doorkeeper::new(64 << 20).slots.len(), 65536);
        assert_eq!(Doorkeeper::new(u64::MAX).slots.len(), 1 << 20);
    }

    #[tokio::test]
    async fn kept_answers_stay_within_their_byte_bound() {
        const BOUND: u64 = 64 << 10;
        let cache = AnswerCache::new(catalog().await, BOUND);
        let body = Value::String("x".repeat(1000));
        let answer = Answer::encode(&body, Outcome::Success).unwrap();
        let one = u64::from(weight(
            &key(0),
            &Kept {
                answer: answer.clone(),
                generation: 0,
                expires: Instant::now(),
            },
        ));
        assert!(one > 1000, "an entry weighs at least its answer's bytes");
        for index in 0..200 {
            let kept = Kept {
                answer: answer.clone(),
                generation: 0,
                expires: Instant::now() + Duration::from_secs(60),
            };
            cache.answers.insert(key(index), kept).await;
        }
        cache.answers.run_pending_tasks().await;
        let held = cache.answers.weighted_size();
        assert!(held <= BOUND, "{held} bytes held, bound {BOUND}");
        // Full, not emptied: the bound is used.
        assert!(held + 2 * one > BOUND, "{held} bytes held of {BOUND}");
        assert!(cache.answers.entry_count() < 200);
    }
}
