//! The store for several replicas: one Redis key per scoped idempotency key, claimed with
//! `SET NX PX` so exactly one replica runs the mutation. Errors are logged by kind only:
//! messages could echo the URL, which may carry a password.

use std::time::Duration;

use async_trait::async_trait;
use redis::aio::MultiplexedConnection;
use secrecy::ExposeSecret;
use tokio::sync::Mutex;

use super::{IdempotencyStore, Record, StoreUnavailable};
use crate::settings::Secret;

/// Redis answers in microseconds; anything slower is treated as down (fail closed).
const OP_TIMEOUT: Duration = Duration::from_secs(2);

pub fn check_url(url: &Secret) -> Result<(), String> {
    match url::Url::parse(url.0.expose_secret()) {
        Ok(parsed) if parsed.scheme() == "redis" && parsed.host_str().is_some() => Ok(()),
        // The value is deliberately not quoted back.
        _ => Err("must be a redis://[:password@]host[:port][/db] URL".to_owned()),
    }
}

pub struct RedisStore {
    client: redis::Client,
    connection: Mutex<Option<MultiplexedConnection>>,
}

fn unavailable(error: &redis::RedisError) -> StoreUnavailable {
    tracing::warn!(kind = ?error.kind(), "redis idempotency store error");
    StoreUnavailable
}

impl RedisStore {
    pub fn new(url: &Secret) -> Result<Self, String> {
        check_url(url)?;
        let client = redis::Client::open(url.0.expose_secret())
            .map_err(|_| "is not a usable Redis URL".to_owned())?;
        Ok(Self {
            client,
            connection: Mutex::new(None),
        })
    }

    async fn connection(&self) -> Result<MultiplexedConnection, StoreUnavailable> {
        let mut slot = self.connection.lock().await;
        if let Some(connection) = slot.as_ref() {
            return Ok(connection.clone());
        }
        let connection =
            tokio::time::timeout(OP_TIMEOUT, self.client.get_multiplexed_async_connection())
                .await
                .map_err(|_| {
                    tracing::warn!("redis idempotency store: connect timed out");
                    StoreUnavailable
                })?
                .map_err(|error| unavailable(&error))?;
        *slot = Some(connection.clone());
        Ok(connection)
    }

    async fn query<T: redis::FromRedisValue>(
        &self,
        command: &redis::Cmd,
    ) -> Result<T, StoreUnavailable> {
        let mut connection = self.connection().await?;
        let outcome =
            tokio::time::timeout(OP_TIMEOUT, command.query_async::<T>(&mut connection)).await;
        let result = match outcome {
            Ok(Ok(value)) => return Ok(value),
            Ok(Err(error)) => unavailable(&error),
            Err(_) => {
                tracing::warn!("redis idempotency store: command timed out");
                StoreUnavailable
            }
        };
        // A broken connection is dropped so the next request reconnects.
        *self.connection.lock().await = None;
        Err(result)
    }
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis())
        .unwrap_or(u64::MAX)
        .max(1)
}

#[async_trait]
impl IdempotencyStore for RedisStore {
    async fn claim(
        &self,
        key: &str,
        fingerprint: &str,
        lock: Duration,
    ) -> Result<Option<Record>, StoreUnavailable> {
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
                    StoreUnavailable
                });
            }
        }
        Err(StoreUnavailable)
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

    async fn release(&self, key: &str) -> Result<(), StoreUnavailable> {
        let mut del = redis::cmd("DEL");
        del.arg(key);
        let _: () = self.query(&del).await?;
        Ok(())
    }
}
