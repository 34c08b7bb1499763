//! The store for several replicas: one Redis key per scoped idempotency key, claimed with
//! `SET NX PX` so exactly one replica runs the mutation. It runs on the replicas' shared link
//! (`[redis] url`) or on a link of its own (`[idempotency] redis_url`).
//!
//! Redis bounds its own memory (`maxmemory`), so a claim's room is not counted here; each
//! client's share is kept by every replica in its own process (`quota`), which keeps the
//! claim one `SET NX` and costs no Redis round trip.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;

use super::{ClaimError, IdempotencyStore, Record, Room, StoreUnavailable};
use crate::replicas::link::{Link, millis};
use crate::settings::Secret;

pub use crate::replicas::link::check_url;

pub struct RedisStore {
    link: Arc<Link>,
}

impl RedisStore {
    pub fn new(url: &Secret) -> Result<Self, String> {
        Ok(Self::on(Arc::new(Link::new(url)?)))
    }

    /// On a link shared with the rest of the replicas' state.
    pub fn on(link: Arc<Link>) -> Self {
        Self { link }
    }

    async fn query<T: redis::FromRedisValue>(
        &self,
        command: &redis::Cmd,
    ) -> Result<T, StoreUnavailable> {
        self.link.query(command).await.map_err(|_| {
            tracing::warn!("redis idempotency store unavailable");
            StoreUnavailable
        })
    }
}

#[async_trait]
impl IdempotencyStore for RedisStore {
    async fn claim(
        &self,
        key: &str,
        fingerprint: &str,
        lock: Duration,
        _room: Room,
    ) -> Result<Option<Record>, ClaimError> {
        let pending = serde_json::to_string(&Record::Pending {
            fingerprint: fingerprint.to_owned(),
        })
        .map_err(|_| StoreUnavailable)?;
        // SET NX and GET are two steps; the key can expire in between, hence the retry.
        for _ in 0..3 {
            let mut set = redis::cmd("SET");
            set.arg(key)
                .arg(&pending)
                .arg("NX")
                .arg("PX")
                .arg(millis(lock));
            let claimed: Option<String> = self.query(&set).await?;
            if claimed.is_some() {
                return Ok(None);
            }
            let mut get = redis::cmd("GET");
            get.arg(key);
            let stored: Option<String> = self.query(&get).await?;
            if let Some(text) = stored {
                return serde_json::from_str(&text).map(Some).map_err(|_| {
                    tracing::warn!("redis idempotency store: unreadable record");
                    StoreUnavailable.into()
                });
            }
        }
        Err(StoreUnavailable.into())
    }

    async fn complete(
        &self,
        key: &str,
        record: &Record,
        ttl: Duration,
    ) -> Result<(), StoreUnavailable> {
        let text = serde_json::to_string(record).map_err(|_| StoreUnavailable)?;
        let mut set = redis::cmd("SET");
        set.arg(key).arg(text).arg("PX").arg(millis(ttl));
        let _: () = self.query(&set).await?;
        Ok(())
    }

    async fn peek(&self, key: &str) -> Result<Option<Record>, StoreUnavailable> {
        let mut get = redis::cmd("GET");
        get.arg(key);
        let stored: Option<String> = self.query(&get).await?;
        stored
            .map(|text| {
                serde_json::from_str(&text).map_err(|_| {
                    tracing::warn!("redis idempotency store: unreadable record");
                    StoreUnavailable
                })
            })
            .transpose()
    }

    async fn release(&self, key: &str) -> Result<(), StoreUnavailable> {
        let mut del = redis::cmd("DEL");
        del.arg(key);
        let _: () = self.query(&del).await?;
        Ok(())
    }
}
