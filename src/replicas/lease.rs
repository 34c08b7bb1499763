//! A lock with a lease, held by one replica at a time: `SET key token NX PX lease` takes it,
//! a task renews it while the holder works, and a compare-and-delete releases it (only the
//! holder's own token). A replica that dies stops renewing, so its lock ends with its lease.
//!
//! The token is a fencing token: a counter in Redis (`INCR` on the lock's fence key) taken
//! with the lock in one script, so every holder of one key gets a larger number than the one
//! before. A holder that was paused past its lease (a stopped process, a long GC-like stall)
//! learns from [`Fence::check`] that the key now holds someone else's token, and stops.

use std::time::{Duration, Instant};

use tokio::task::JoinHandle;

use super::link::{DELETE_IF_HOLDS, Link, RedisDown, millis, script};

/// Extends the lease only while the key still holds our token.
const RENEW: &str = r"
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
";

/// Takes the lock if free, its value the next number of the fence counter; answers that
/// number, or nil when the lock is taken. The counter outlives every lease by far (a day,
/// refreshed on each take), so two holders never share a number.
const TAKE: &str = r"
if redis.call('EXISTS', KEYS[1]) == 1 then
  return false
end
local token = redis.call('INCR', KEYS[2])
redis.call('PEXPIRE', KEYS[2], 86400000)
redis.call('SET', KEYS[1], token, 'PX', ARGV[1])
return token
";

/// 1 while the key holds our token with at least ARGV[2] ms of its lease left; 0 otherwise.
const HELD: &str = r"
if redis.call('GET', KEYS[1]) == ARGV[1] and redis.call('PTTL', KEYS[1]) >= tonumber(ARGV[2]) then
  return 1
end
return 0
";

/// Polling a taken lock: often enough that a released lock is picked up quickly.
const POLL: Duration = Duration::from_millis(15);

/// Why a lock was not taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum LeaseError {
    #[error(transparent)]
    Down(#[from] RedisDown),
    /// Another holder kept it past the wait.
    #[error("the lock stayed taken")]
    Busy,
}

/// A lock taken; `release` it when done. Dropped without release (the task was cancelled),
/// it stops renewing and frees the key in the background.
pub struct Lease {
    link: std::sync::Arc<Link>,
    key: String,
    token: String,
    lease: Duration,
    renewer: Option<JoinHandle<()>>,
}

/// What a holder checks before each step that must not run once the lock is someone else's.
#[derive(Clone)]
pub struct Fence {
    link: std::sync::Arc<Link>,
    key: String,
    token: String,
    /// The least lease a step may start with: a third of the lease, the renewal period, so
    /// a holder whose renewals fail stops before its lease can run out under a step.
    margin: Duration,
}

/// Why a fenced step may not run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum FenceError {
    #[error(transparent)]
    Down(#[from] RedisDown),
    /// The lock expired (or is about to) and may be another holder's by now.
    #[error("the lock is no longer ours")]
    Lost,
}

impl Fence {
    /// One round trip: whether the lock still holds our token with a margin of lease left.
    pub async fn check(&self) -> Result<(), FenceError> {
        let margin = millis(self.margin).to_string();
        let held: i64 = self
            .link
            .query(&script(HELD, &self.key, &[&self.token, &margin]))
            .await?;
        if held == 1 {
            Ok(())
        } else {
            Err(FenceError::Lost)
        }
    }

    /// The fencing token (larger for every later holder of the key).
    pub fn token(&self) -> &str {
        &self.token
    }
}

/// Takes `key` for `lease`, waiting at most `wait` for another holder; its token is the
/// next number of the counter at `fence_key`.
pub async fn acquire(
    link: &std::sync::Arc<Link>,
    key: String,
    fence_key: &str,
    lease: Duration,
    wait: Duration,
) -> Result<Lease, LeaseError> {
    let started = Instant::now();
    let token = loop {
        let mut take = redis::cmd("EVAL");
        take.arg(TAKE)
            .arg(2)
            .arg(&key)
            .arg(fence_key)
            .arg(millis(lease));
        let taken: Option<i64> = link.query(&take).await?;
        if let Some(token) = taken {
            break token.to_string();
        }
        if started.elapsed() >= wait {
            return Err(LeaseError::Busy);
        }
        tokio::time::sleep(POLL).await;
    };
    let renewer = {
        let (link, key, token) = (link.clone(), key.clone(), token.clone());
        tokio::spawn(async move {
            let lease_ms = millis(lease).to_string();
            loop {
                tokio::time::sleep(lease / 3).await;
                let renewed: Result<i64, RedisDown> =
                    link.query(&script(RENEW, &key, &[&token, &lease_ms])).await;
                if !matches!(renewed, Ok(1)) {
                    // Lost (expired while Redis was away, or Redis is down): another
                    // replica may now take the key; the holder's `Fence::check` fails from
                    // here on, so its next fenced step does not run.
                    tracing::warn!("cart lock lease could not be renewed");
                }
            }
        })
    };
    Ok(Lease {
        link: link.clone(),
        key,
        token,
        lease,
        renewer: Some(renewer),
    })
}

/// Whether `key` is free now (no holder), without taking it.
pub async fn is_free(link: &Link, key: &str) -> Result<bool, RedisDown> {
    let mut exists = redis::cmd("EXISTS");
    exists.arg(key);
    let taken: i64 = link.query(&exists).await?;
    Ok(taken == 0)
}

impl Lease {
    /// The fence a holder checks before each step of its work.
    pub fn fence(&self) -> Fence {
        Fence {
            link: self.link.clone(),
            key: self.key.clone(),
            token: self.token.clone(),
            margin: self.lease / 3,
        }
    }

    pub async fn release(mut self) {
        if let Some(renewer) = self.renewer.take() {
            renewer.abort();
        }
        let released: Result<i64, RedisDown> = self
            .link
            .query(&script(DELETE_IF_HOLDS, &self.key, &[&self.token]))
            .await;
        if released.is_err() {
            tracing::warn!("cart lock not released: it ends with its lease");
        }
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        let Some(renewer) = self.renewer.take() else {
            return;
        };
        renewer.abort();
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let (link, key, token) = (
                self.link.clone(),
                std::mem::take(&mut self.key),
                std::mem::take(&mut self.token),
            );
            runtime.spawn(async move {
                let _: Result<i64, RedisDown> =
                    link.query(&script(DELETE_IF_HOLDS, &key, &[&token])).await;
            });
        }
    }
}
