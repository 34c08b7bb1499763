//! A lock with a lease, held by one replica at a time: `SET key token NX PX lease` takes it,
//! a task renews it while the holder works, and a compare-and-delete releases it (only the
//! holder's own token). A replica that dies stops renewing, so its lock ends with its lease.

use std::time::{Duration, Instant};

use tokio::task::JoinHandle;

use super::link::{Link, RedisDown, millis};

/// Extends the lease only while the key still holds our token.
const RENEW: &str = r"
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
";

/// Deletes the key only while it still holds our token.
const RELEASE: &str = r"
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
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
    renewer: Option<JoinHandle<()>>,
}

fn script(code: &str, key: &str, args: &[&str]) -> redis::Cmd {
    let mut eval = redis::cmd("EVAL");
    eval.arg(code).arg(1).arg(key);
    for arg in args {
        eval.arg(*arg);
    }
    eval
}

/// Takes `key` for `lease`, waiting at most `wait` for another holder.
pub async fn acquire(
    link: &std::sync::Arc<Link>,
    key: String,
    lease: Duration,
    wait: Duration,
) -> Result<Lease, LeaseError> {
    let token = uuid::Uuid::new_v4().to_string();
    let started = Instant::now();
    loop {
        let mut set = redis::cmd("SET");
        set.arg(&key)
            .arg(&token)
            .arg("NX")
            .arg("PX")
            .arg(millis(lease));
        let taken: Option<String> = link.query(&set).await?;
        if taken.is_some() {
            break;
        }
        if started.elapsed() >= wait {
            return Err(LeaseError::Busy);
        }
        tokio::time::sleep(POLL).await;
    }
    let renewer = {
        let (link, key, token) = (link.clone(), key.clone(), token.clone());
        tokio::spawn(async move {
            let lease_ms = millis(lease).to_string();
            loop {
                tokio::time::sleep(lease / 3).await;
                let renewed: Result<i64, RedisDown> =
                    link.query(&script(RENEW, &key, &[&token, &lease_ms])).await;
                if !matches!(renewed, Ok(1)) {
                    // Lost (expired while Redis was away, or Redis is down): the write in
                    // flight finishes, but another replica may now take the cart.
                    tracing::warn!("cart lock lease could not be renewed");
                }
            }
        })
    };
    Ok(Lease {
        link: link.clone(),
        key,
        token,
        renewer: Some(renewer),
    })
}

impl Lease {
    pub async fn release(mut self) {
        if let Some(renewer) = self.renewer.take() {
            renewer.abort();
        }
        let released: Result<i64, RedisDown> = self
            .link
            .query(&script(RELEASE, &self.key, &[&self.token]))
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
                let _: Result<i64, RedisDown> = link.query(&script(RELEASE, &key, &[&token])).await;
            });
        }
    }
}
