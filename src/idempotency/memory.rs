//! The single-replica store: a map with expiry, swept as it grows.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use async_trait::async_trait;

use super::{IdempotencyStore, Record, StoreUnavailable};

/// Above this many entries every insert first drops the expired ones.
const SWEEP_ABOVE: usize = 10_000;

#[derive(Default)]
pub struct MemoryStore {
    entries: Mutex<HashMap<String, (Record, Instant)>>,
}

impl MemoryStore {
    fn with<T>(
        &self,
        f: impl FnOnce(&mut HashMap<String, (Record, Instant)>) -> T,
    ) -> Result<T, StoreUnavailable> {
        let mut entries = self.entries.lock().map_err(|_| StoreUnavailable)?;
        Ok(f(&mut entries))
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
            if entries.len() > SWEEP_ABOVE {
                entries.retain(|_, (_, expires)| *expires > now);
            }
            match entries.get(key) {
                Some((record, expires)) if *expires > now => Some(record.clone()),
                _ => {
                    entries.insert(
                        key.to_owned(),
                        (
                            Record::Pending {
                                fingerprint: fingerprint.to_owned(),
                            },
                            now + lock,
                        ),
                    );
                    None
                }
            }
        })
    }

    async fn complete(
        &self,
        key: &str,
        record: &Record,
        ttl: Duration,
    ) -> Result<(), StoreUnavailable> {
        self.with(|entries| {
            entries.insert(key.to_owned(), (record.clone(), Instant::now() + ttl));
        })
    }

    async fn release(&self, key: &str) -> Result<(), StoreUnavailable> {
        self.with(|entries| {
            entries.remove(key);
        })
    }
}
