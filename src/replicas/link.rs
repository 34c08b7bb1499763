//! The one connection a replica keeps to Redis: multiplexed (every task shares it), each
//! command bounded by a short timeout, dropped and re-made after a failure. After a failure
//! the link stays "down" for a moment and answers at once, so a dead or black-holed Redis
//! costs callers nothing but the fallback they chose. Errors are logged by kind only: a
//! message could echo the URL, which may carry a password.

use std::sync::Mutex as SyncMutex;
use std::time::{Duration, Instant};

use redis::aio::{MultiplexedConnection, PubSub};
use secrecy::ExposeSecret;
use tokio::sync::Mutex;

use crate::settings::Secret;

/// Redis answers in microseconds on a local network; anything slower is treated as down.
const OP_TIMEOUT: Duration = Duration::from_secs(2);
/// How long a failure keeps the link answering "down" without trying.
const DOWN_FOR: Duration = Duration::from_millis(500);

/// Redis could not be reached or did not answer in time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("redis unavailable")]
pub struct RedisDown;

pub fn check_url(url: &Secret) -> Result<(), String> {
    match url::Url::parse(url.0.expose_secret()) {
        Ok(parsed) if parsed.scheme() == "redis" && parsed.host_str().is_some() => Ok(()),
        // The value is deliberately not quoted back.
        _ => Err("must be a redis://[:password@]host[:port][/db] URL".to_owned()),
    }
}

pub struct Link {
    client: redis::Client,
    connection: Mutex<Option<MultiplexedConnection>>,
    down_until: SyncMutex<Option<Instant>>,
}

impl Link {
    /// Checks the URL; connects lazily, on the first command.
    pub fn new(url: &Secret) -> Result<Self, String> {
        check_url(url)?;
        let client = redis::Client::open(url.0.expose_secret())
            .map_err(|_| "is not a usable Redis URL".to_owned())?;
        Ok(Self {
            client,
            connection: Mutex::new(None),
            down_until: SyncMutex::new(None),
        })
    }

    fn lock_down(&self) -> std::sync::MutexGuard<'_, Option<Instant>> {
        self.down_until
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Whether a recent failure says not to try now.
    pub fn seems_down(&self) -> bool {
        self.lock_down().is_some_and(|until| Instant::now() < until)
    }

    fn failed(&self, what: &'static str, error: Option<&redis::RedisError>) -> RedisDown {
        match error {
            Some(error) => tracing::warn!(kind = ?error.kind(), what, "redis error"),
            None => tracing::warn!(what, "redis timed out"),
        }
        *self.lock_down() = Some(Instant::now() + DOWN_FOR);
        RedisDown
    }

    async fn connection(&self) -> Result<MultiplexedConnection, RedisDown> {
        let mut slot = self.connection.lock().await;
        if let Some(connection) = slot.as_ref() {
            return Ok(connection.clone());
        }
        let connection =
            tokio::time::timeout(OP_TIMEOUT, self.client.get_multiplexed_async_connection())
                .await
                .map_err(|_| self.failed("connect", None))?
                .map_err(|error| self.failed("connect", Some(&error)))?;
        *slot = Some(connection.clone());
        Ok(connection)
    }

    /// Runs one command (or script) within the timeout.
    pub async fn query<T: redis::FromRedisValue>(
        &self,
        command: &redis::Cmd,
    ) -> Result<T, RedisDown> {
        if self.seems_down() {
            return Err(RedisDown);
        }
        let mut connection = self.connection().await?;
        let outcome =
            tokio::time::timeout(OP_TIMEOUT, command.query_async::<T>(&mut connection)).await;
        let down = match outcome {
            Ok(Ok(value)) => {
                *self.lock_down() = None;
                return Ok(value);
            }
            Ok(Err(error)) if !connection_broken(&error) => {
                // Redis answered (a script or type error): the link itself is fine.
                tracing::warn!(kind = ?error.kind(), "redis refused a command");
                return Err(RedisDown);
            }
            Ok(Err(error)) => self.failed("command", Some(&error)),
            Err(_) => self.failed("command", None),
        };
        // A broken connection is dropped so the next command reconnects.
        *self.connection.lock().await = None;
        Err(down)
    }

    /// `PING`, for readiness.
    pub async fn ping(&self) -> Result<(), RedisDown> {
        let _: String = self.query(&redis::cmd("PING")).await?;
        Ok(())
    }

    /// A dedicated connection subscribed to `channel` (pub/sub cannot share the multiplexed one).
    pub async fn subscribe(&self, channel: &str) -> Result<PubSub, RedisDown> {
        let connect = async {
            let mut pubsub = self.client.get_async_pubsub().await?;
            pubsub.subscribe(channel).await?;
            Ok::<_, redis::RedisError>(pubsub)
        };
        match tokio::time::timeout(OP_TIMEOUT, connect).await {
            Ok(Ok(pubsub)) => Ok(pubsub),
            Ok(Err(error)) => Err(self.failed("subscribe", Some(&error))),
            Err(_) => Err(self.failed("subscribe", None)),
        }
    }
}

fn connection_broken(error: &redis::RedisError) -> bool {
    error.is_io_error()
        || error.is_connection_dropped()
        || error.is_connection_refusal()
        || error.is_timeout()
        || matches!(
            error.kind(),
            redis::ErrorKind::AuthenticationFailed | redis::ErrorKind::ClientError
        )
}

/// Milliseconds for `PX`, at least 1.
/// Deletes the key only while it still holds ARGV[1] (a lock's token, a record's text).
pub const DELETE_IF_HOLDS: &str = r"
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
";

/// `EVAL code 1 key args…`.
pub fn script(code: &str, key: &str, args: &[&str]) -> redis::Cmd {
    let mut eval = redis::cmd("EVAL");
    eval.arg(code).arg(1).arg(key);
    for arg in args {
        eval.arg(*arg);
    }
    eval
}

pub fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis())
        .unwrap_or(u64::MAX)
        .max(1)
}
