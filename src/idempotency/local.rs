//! The single-replica store: a map with expiry. An ordered index of expiries sits beside it,
//! so each operation drops a few of the oldest expired records instead of sweeping the whole
//! map: with tens of thousands of live 24-hour records, every call stays O(log n).
//!
//! The map is bounded in bytes. A full store refuses new keys and never evicts live ones:
//! forgetting a record before its 24 hours would let a retry run its mutation twice. The last
//! eighth of the bound is for `complete_checkout` claims alone (issue 35 item 2): whoever
//! fills the rest, a buyer's completion with a fresh key still gets its record.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use async_trait::async_trait;

use super::{
    COMPLETION_RESERVE_DIVISOR, ClaimError, IdempotencyStore, Record, Room, StoreUnavailable,
    weight,
};

/// Expired records dropped per operation: more than one, so they go faster than they come.
const EXPIRED_PER_OPERATION: usize = 8;

/// A record, its expiry and insertion number, and the bytes it is counted at (a claim's
/// room while pending, its weight once done).
type Held = (Record, Instant, u64, usize);

struct Entries {
    records: HashMap<String, Held>,
    /// (expiry, insertion number) → key; the number keeps equal instants apart.
    by_expiry: BTreeMap<(Instant, u64), String>,
    inserted: u64,
    /// The weight of every record held, expired ones not yet dropped included.
    bytes: usize,
    budget: usize,
    /// The part of `budget` only completions may fill.
    reserve: usize,
}

impl Entries {
    fn insert(&mut self, key: &str, record: Record, expires: Instant, counted: usize) {
        self.inserted += 1;
        let stamp = (expires, self.inserted);
        self.bytes += counted;
        if let Some((_, old_expiry, old_number, old_counted)) = self
            .records
            .insert(key.to_owned(), (record, expires, self.inserted, counted))
        {
            self.bytes -= old_counted;
            self.by_expiry.remove(&(old_expiry, old_number));
        }
        self.by_expiry.insert(stamp, key.to_owned());
    }

    fn remove(&mut self, key: &str) {
        if let Some((_, expiry, number, counted)) = self.records.remove(key) {
            self.bytes -= counted;
            self.by_expiry.remove(&(expiry, number));
        }
    }

    fn drop_expired(&mut self, now: Instant) {
        for _ in 0..EXPIRED_PER_OPERATION {
            match self.by_expiry.first_key_value() {
                Some(((expiry, _), _)) if *expiry <= now => {
                    if let Some((_, key)) = self.by_expiry.pop_first()
                        && let Some((_, _, _, counted)) = self.records.remove(&key)
                    {
                        self.bytes -= counted;
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
            .filter(|(_, expires, _, _)| *expires > now)
            .map(|(record, _, _, _)| record)
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
    /// A store that holds at most `budget` bytes of records, the last eighth of them for
    /// completions.
    pub fn new(budget: usize) -> Self {
        Self {
            entries: Mutex::new(Entries {
                records: HashMap::new(),
                by_expiry: BTreeMap::new(),
                inserted: 0,
                bytes: 0,
                budget,
                reserve: budget / COMPLETION_RESERVE_DIVISOR,
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
        room: Room,
    ) -> Result<Option<Record>, ClaimError> {
        self.with(|entries| {
            let now = Instant::now();
            if let Some(record) = entries.live(key, now) {
                return Ok(Some(record.clone()));
            }
            let pending = Record::Pending {
                fingerprint: fingerprint.to_owned(),
            };
            // Counted at the room its answer may take, so the claims in flight cannot carry
            // the store into the completions' part when they land.
            let counted = weight(key, &pending).max(room.bytes);
            let bound = if room.completion {
                entries.budget
            } else {
                entries.budget - entries.reserve
            };
            // The bound is checked only here: a claimed key always completes, since its
            // mutation has run, so an answer larger than its room may pass the bound.
            if entries.bytes + counted > bound {
                return Err(ClaimError::Full {
                    retry_after: entries.room_in(now),
                });
            }
            entries.insert(key, pending, now + lock, counted);
            Ok(None)
        })?
    }

    async fn complete(
        &self,
        key: &str,
        record: &Record,
        ttl: Duration,
    ) -> Result<(), StoreUnavailable> {
        self.with(|entries| {
            entries.insert(
                key,
                record.clone(),
                Instant::now() + ttl,
                weight(key, record),
            );
        })
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

    /// A cart mutation's claim holding no room beyond its pending record.
    const CART: Room = Room {
        bytes: 0,
        completion: false,
    };
    const COMPLETION: Room = Room {
        bytes: 0,
        completion: true,
    };

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
        let claimed = store
            .claim("new", "fp", Duration::from_secs(60), CART)
            .await;
        assert_eq!(claimed.unwrap(), None);
        assert_eq!(store.len(), before - EXPIRED_PER_OPERATION + 1);
        // Expired records are never replayed, swept or not.
        let expired = store
            .claim("old19999", "fp", Duration::from_secs(60), CART)
            .await;
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
            assert_eq!(
                store.claim(&key, "fp", lock, COMPLETION).await.unwrap(),
                None
            );
            store.complete(&key, &done(n), ttl).await.unwrap();
        }
        assert_eq!(store.bytes(), 3 * held);
        let refused = store.claim("k3", "fp", lock, COMPLETION).await;
        let Err(ClaimError::Full { retry_after }) = refused else {
            panic!("{refused:?}");
        };
        assert!(retry_after > Duration::from_secs(55), "{retry_after:?}");
        // What is held still replays; nothing was evicted to make room.
        let replay = store.claim("k1", "fp1", lock, CART).await.unwrap();
        assert_eq!(replay, Some(done(1)));
        assert_eq!(store.len(), 3);
        // A released record frees its bytes exactly.
        store.release("k1").await.unwrap();
        assert_eq!(store.bytes(), 2 * held);
        assert_eq!(
            store.claim("k3", "fp", lock, COMPLETION).await.unwrap(),
            None
        );
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
                .claim("k2", "fp", Duration::from_secs(1), CART)
                .await
                .is_err()
        );
        tokio::time::sleep(Duration::from_millis(150)).await;
        assert_eq!(
            store
                .claim("k2", "fp", Duration::from_secs(1), CART)
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
        let replay = store.claim("k", "fp1", Duration::from_secs(1), CART).await;
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

    #[tokio::test]
    async fn the_last_eighth_is_for_completions_whoever_filled_the_rest() {
        // Issue 35 item 2: a flood of cart mutations leaves a fresh-key completion its room.
        let ttl = Duration::from_secs(86_400);
        let lock = Duration::from_secs(30);
        let held = weight("k0000", &done(0));
        let store = MemoryStore::new(80 * held);
        let mut admitted = 0;
        for n in 0..100 {
            let key = format!("k{n:04}");
            match store.claim(&key, "fp", lock, CART).await {
                Ok(None) => {
                    store.complete(&key, &done(0), ttl).await.unwrap();
                    admitted += 1;
                }
                Err(ClaimError::Full { retry_after }) => {
                    assert!(retry_after > Duration::from_secs(86_000));
                    break;
                }
                other => panic!("{other:?}"),
            }
        }
        assert_eq!(admitted, 70, "seven eighths of 80 records' bytes");
        // Completions use the rest, and only the rest.
        for n in 0..10 {
            let key = format!("c{n:04}");
            assert_eq!(
                store.claim(&key, "fp", lock, COMPLETION).await.unwrap(),
                None
            );
            store.complete(&key, &done(0), ttl).await.unwrap();
        }
        let refused = store.claim("c9999", "fp", lock, COMPLETION).await;
        assert!(
            matches!(refused, Err(ClaimError::Full { .. })),
            "{refused:?}"
        );
    }

    #[tokio::test]
    async fn a_running_claim_holds_its_answers_room_until_it_completes() {
        let lock = Duration::from_secs(30);
        let store = MemoryStore::new(1 << 20);
        let room = Room {
            bytes: 64 << 10,
            completion: false,
        };
        assert_eq!(store.claim("k", "fp", lock, room).await.unwrap(), None);
        assert_eq!(store.bytes(), 64 << 10);
        // Seven eighths of 1 MiB is 14 rooms of 64 KiB: the 15th claim waits for room.
        for n in 1..14 {
            let key = format!("k{n}");
            assert_eq!(store.claim(&key, "fp", lock, room).await.unwrap(), None);
        }
        assert!(store.claim("k14", "fp", lock, room).await.is_err());
        // A completed record is counted at its own weight.
        store
            .complete("k", &done(1), Duration::from_secs(60))
            .await
            .unwrap();
        assert_eq!(store.bytes(), 13 * (64 << 10) + weight("k", &done(1)));
        // A released claim gives its room back.
        store.release("k1").await.unwrap();
        assert_eq!(store.claim("k14", "fp", lock, room).await.unwrap(), None);
    }
}
