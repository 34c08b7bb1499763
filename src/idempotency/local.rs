//! The single-replica store: a map with expiry. An ordered index of expiries sits beside it,
//! so each operation drops a few of the oldest expired records instead of sweeping the whole
//! map: with tens of thousands of live 24-hour records, every call stays O(log n).

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use async_trait::async_trait;

use super::{IdempotencyStore, Record, StoreUnavailable};

/// Expired records dropped per operation: more than one, so they go faster than they come.
const EXPIRED_PER_OPERATION: usize = 8;

#[derive(Default)]
struct Entries {
    records: HashMap<String, (Record, Instant, u64)>,
    /// (expiry, insertion number) → key; the number keeps equal instants apart.
    by_expiry: BTreeMap<(Instant, u64), String>,
    inserted: u64,
}

impl Entries {
    fn insert(&mut self, key: &str, record: Record, expires: Instant) {
        self.inserted += 1;
        let stamp = (expires, self.inserted);
        if let Some((_, old_expiry, old_number)) = self
            .records
            .insert(key.to_owned(), (record, expires, self.inserted))
        {
            self.by_expiry.remove(&(old_expiry, old_number));
        }
        self.by_expiry.insert(stamp, key.to_owned());
    }

    fn remove(&mut self, key: &str) {
        if let Some((_, expiry, number)) = self.records.remove(key) {
            self.by_expiry.remove(&(expiry, number));
        }
    }

    fn drop_expired(&mut self, now: Instant) {
        for _ in 0..EXPIRED_PER_OPERATION {
            match self.by_expiry.first_key_value() {
                Some(((expiry, _), _)) if *expiry <= now => {
                    if let Some((_, key)) = self.by_expiry.pop_first() {
                        self.records.remove(&key);
                    }
                }
                _ => break,
            }
        }
    }

    fn live(&self, key: &str, now: Instant) -> Option<&Record> {
        self.records
            .get(key)
            .filter(|(_, expires, _)| *expires > now)
            .map(|(record, _, _)| record)
    }
}

#[derive(Default)]
pub struct MemoryStore {
    entries: Mutex<Entries>,
}

impl MemoryStore {
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
}

#[async_trait]
impl IdempotencyStore for MemoryStore {
    async fn claim(
        &self,
        key: &str,
        fingerprint: &str,
        lock: Duration,
    ) -> Result<Option<Record>, StoreUnavailable> {
        self.with(|entries| {
            let now = Instant::now();
            if let Some(record) = entries.live(key, now) {
                return Some(record.clone());
            }
            entries.insert(
                key,
                Record::Pending {
                    fingerprint: fingerprint.to_owned(),
                },
                now + lock,
            );
            None
        })
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
    #![allow(clippy::unwrap_used)]
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
