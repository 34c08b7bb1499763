//! The single-replica store: a map with expiry. An ordered index of expiries sits beside it,
//! so each operation drops a few of the oldest expired records instead of sweeping the whole
//! map: with tens of thousands of live 24-hour records, every call stays O(log n).
//!
//! The map is bounded in bytes. A full store refuses new keys and never evicts live ones:
//! forgetting a record before its 24 hours would let a retry run its mutation twice.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use async_trait::async_trait;

use super::{ClaimRefused, IdempotencyStore, Record, StoreUnavailable};

/// Expired records dropped per operation: more than one, so they go faster than they come.
const EXPIRED_PER_OPERATION: usize = 8;

/// What one record costs beyond its strings, estimated from the layout: a map slot (~100 bytes
/// at the load factor's average), an index entry in a part-full B-tree node (~80), and the
/// headers of its four allocations.
const RECORD_OVERHEAD: usize = 256;

/// The bytes a record under `key` holds: the key twice (map and index) and the record's text.
fn weight(key: &str, record: &Record) -> usize {
    let text = match record {
        Record::Pending { fingerprint } => fingerprint.len(),
        Record::Done {
            fingerprint,
            answer,
        } => fingerprint.len() + answer.get().len(),
    };
    2 * key.len() + text + RECORD_OVERHEAD
}

struct Entries {
    records: HashMap<String, (Record, Instant, u64)>,
    /// (expiry, insertion number) → key; the number keeps equal instants apart.
    by_expiry: BTreeMap<(Instant, u64), String>,
    inserted: u64,
    /// The weight of every record held, expired ones not yet dropped included.
    bytes: usize,
    budget: usize,
}

impl Entries {
    fn insert(&mut self, key: &str, record: Record, expires: Instant) {
        self.inserted += 1;
        let stamp = (expires, self.inserted);
        self.bytes += weight(key, &record);
        if let Some((old, old_expiry, old_number)) = self
            .records
            .insert(key.to_owned(), (record, expires, self.inserted))
        {
            self.bytes -= weight(key, &old);
            self.by_expiry.remove(&(old_expiry, old_number));
        }
        self.by_expiry.insert(stamp, key.to_owned());
    }

    fn remove(&mut self, key: &str) {
        if let Some((record, expiry, number)) = self.records.remove(key) {
            self.bytes -= weight(key, &record);
            self.by_expiry.remove(&(expiry, number));
        }
    }

    fn drop_expired(&mut self, now: Instant) {
        for _ in 0..EXPIRED_PER_OPERATION {
            match self.by_expiry.first_key_value() {
                Some(((expiry, _), _)) if *expiry <= now => {
                    if let Some((_, key)) = self.by_expiry.pop_first()
                        && let Some((record, _, _)) = self.records.remove(&key)
                    {
                        self.bytes -= weight(&key, &record);
                    }
                }
                _ => break,
            }
        }
    }

    /// When the first record held expires, freeing room: what a refused agent should wait.
    fn room_in(&self, now: Instant) -> Duration {
        self.by_expiry
            .first_key_value()
            .map(|((expiry, _), _)| expiry.saturating_duration_since(now))
            .unwrap_or_default()
    }

    fn live(&self, key: &str, now: Instant) -> Option<&Record> {
        self.records
            .get(key)
            .filter(|(_, expires, _)| *expires > now)
            .map(|(record, _, _)| record)
    }
}

pub struct MemoryStore {
    entries: Mutex<Entries>,
}

impl Default for MemoryStore {
    fn default() -> Self {
        Self::new(super::DEFAULT_MEMORY_BYTES)
    }
}

impl MemoryStore {
    /// A store that holds at most `budget` bytes of records.
    pub fn new(budget: usize) -> Self {
        Self {
            entries: Mutex::new(Entries {
                records: HashMap::new(),
                by_expiry: BTreeMap::new(),
                inserted: 0,
                bytes: 0,
                budget,
            }),
        }
    }

    fn with<T>(&self, f: impl FnOnce(&mut Entries) -> T) -> Result<T, StoreUnavailable> {
        let mut entries = self.entries.lock().map_err(|_| StoreUnavailable)?;
        entries.drop_expired(Instant::now());
        Ok(f(&mut entries))
    }

    /// Records held, expired ones not yet dropped included.
    pub fn len(&self) -> usize {
        self.entries
            .lock()
            .map(|entries| entries.records.len())
            .unwrap_or(0)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The weight of the records held, in bytes.
    pub fn bytes(&self) -> usize {
        self.entries
            .lock()
            .map(|entries| entries.bytes)
            .unwrap_or(0)
    }
}

#[async_trait]
impl IdempotencyStore for MemoryStore {
    async fn claim(
        &self,
        key: &str,
        fingerprint: &str,
        lock: Duration,
    ) -> Result<Option<Record>, ClaimRefused> {
        self.with(|entries| {
            let now = Instant::now();
            if let Some(record) = entries.live(key, now) {
                return Ok(Some(record.clone()));
            }
            let pending = Record::Pending {
                fingerprint: fingerprint.to_owned(),
            };
            // The bound is checked only here: a claimed key always completes, since its
            // mutation has run, so the store may pass the bound by the claims in flight.
            if entries.bytes + weight(key, &pending) > entries.budget {
                return Err(ClaimRefused::Full {
                    retry_after: entries.room_in(now),
                });
            }
            entries.insert(key, pending, now + lock);
            Ok(None)
        })?
    }

    async fn complete(
        &self,
        key: &str,
        record: &Record,
        ttl: Duration,
    ) -> Result<(), StoreUnavailable> {
        self.with(|entries| entries.insert(key, record.clone(), Instant::now() + ttl))
    }

    async fn release(&self, key: &str) -> Result<(), StoreUnavailable> {
        self.with(|entries| entries.remove(key))
    }

    async fn peek(&self, key: &str) -> Result<Option<Record>, StoreUnavailable> {
        self.with(|entries| entries.live(key, Instant::now()).cloned())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]
    use super::*;
    fn done(n: usize) -> Record {
        Record::Done {
            fingerprint: format!("fp{n}"),
            answer: serde_json::value::RawValue::from_string(n.to_string()).unwrap(),
        }
    }

    #[tokio::test]
    async fn at_the_bound_an_operation_drops_a_few_expired_records_not_all() {
        let store = MemoryStore::default();
        for n in 0..20_000 {
            let key = format!("old{n}");
            store
                .complete(&key, &done(n), Duration::from_secs(1))
                .await
                .unwrap();
        }
        tokio::time::sleep(Duration::from_millis(1_100)).await;
        let before = store.len();
        assert_eq!(
            before, 20_000,
            "nothing had expired while they were written"
        );
        // One more claim costs a handful of removals, never a sweep of the 20,000.
        let claimed = store.claim("new", "fp", Duration::from_secs(60)).await;
        assert_eq!(claimed.unwrap(), None);
        assert_eq!(store.len(), before - EXPIRED_PER_OPERATION + 1);
        // Expired records are never replayed, swept or not.
        let expired = store.claim("old19999", "fp", Duration::from_secs(60)).await;
        assert_eq!(expired.unwrap(), None);
    }

    #[tokio::test]
    async fn a_full_store_refuses_new_keys_until_a_record_goes() {
        let ttl = Duration::from_secs(60);
        let lock = Duration::from_secs(5);
        let held = weight("k0", &done(0));
        let store = MemoryStore::new(3 * held);
        for n in 0..3 {
            let key = format!("k{n}");
            assert_eq!(store.claim(&key, "fp", lock).await.unwrap(), None);
            store.complete(&key, &done(n), ttl).await.unwrap();
        }
        assert_eq!(store.bytes(), 3 * held);
        let refused = store.claim("k3", "fp", lock).await;
        let Err(ClaimRefused::Full { retry_after }) = refused else {
            panic!("{refused:?}");
        };
        assert!(retry_after > Duration::from_secs(55), "{retry_after:?}");
        // What is held still replays; nothing was evicted to make room.
        let replay = store.claim("k1", "fp1", lock).await.unwrap();
        assert_eq!(replay, Some(done(1)));
        assert_eq!(store.len(), 3);
        // A released record frees its bytes exactly.
        store.release("k1").await.unwrap();
        assert_eq!(store.bytes(), 2 * held);
        assert_eq!(store.claim("k3", "fp", lock).await.unwrap(), None);
    }

    #[tokio::test]
    async fn expired_records_give_their_room_back() {
        let store = MemoryStore::new(2 * weight("k0", &done(0)));
        for n in 0..2 {
            let key = format!("k{n}");
            store
                .complete(&key, &done(n), Duration::from_millis(100))
                .await
                .unwrap();
        }
        assert!(
            store
                .claim("k2", "fp", Duration::from_secs(1))
                .await
                .is_err()
        );
        tokio::time::sleep(Duration::from_millis(150)).await;
        assert_eq!(
            store
                .claim("k2", "fp", Duration::from_secs(1))
                .await
                .unwrap(),
            None
        );
        assert_eq!(store.len(), 1);
    }

    #[tokio::test]
    async fn live_records_replay_and_replaced_ones_leave_no_stale_index() {
        let store = MemoryStore::default();
        let ttl = Duration::from_secs(60);
        store.complete("k", &done(1), ttl).await.unwrap();
        let replay = store.claim("k", "fp1", Duration::from_secs(1)).await;
        assert_eq!(replay.unwrap(), Some(done(1)));
        store.complete("k", &done(2), ttl).await.unwrap();
        {
            let entries = store.entries.lock().unwrap();
            assert_eq!(entries.records.len(), 1);
            assert_eq!(entries.by_expiry.len(), 1, "the first expiry was unindexed");
        }
        store.release("k").await.unwrap();
        assert!(store.is_empty());
        assert!(store.entries.lock().unwrap().by_expiry.is_empty());
    }
}
