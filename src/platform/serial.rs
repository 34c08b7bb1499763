//! One cart, one writer at a time. Stores like WooCommerce are last-writer-wins with no
//! version check, and a replacement can take several upstream requests, so two agents writing
//! one cart at once would leave a mix neither asked for. This decorator runs every operation
//! on an existing cart under that cart's lock, so each answer is the store's state right
//! after its own write. The lock is per process; with `[redis]` a write also holds the cart's
//! lease in Redis, so replicas take turns too, and runs inside the lease's fence (see
//! `fence`): a holder paused past its lease sends nothing more once another replica has the
//! cart. Without Redis to coordinate, writes are refused (fail closed) while reads go on.
//!
//! A read on one replica while another writes the cart waits (at most the lock wait) for
//! that write to finish, so it never shows a replacement half done; if the write outlasts
//! the wait, the read is refused as retriable rather than answered with a cart that may be
//! mid-change. A replacement is recorded before it starts (`intent`); one left unfinished
//! by a writer that died, lost its lease or met a failing store is finished by the next
//! reader (or overwritten by the next writer), so the cart is always the set before or the
//! set asked for. A checkout's writes take the same lock, lease and fence (`Exclusive`): on
//! stores where a checkout is its cart (WooCommerce, Shopify, VTEX) the two share one id, so
//! a cart and the checkout made from it have one writer at a time.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use tokio::sync::OwnedMutexGuard;

use super::cart::{CartPort, SharedCarts};
use super::fence::{fenced, redis_away};
use super::intent::{self, Intent};
use super::port::{Platform, PlatformError, SharedPlatform};
use crate::model::{CartDraft, CartOutcome, CartState};
use crate::replicas::lease::{self, Lease, LeaseError};
use crate::replicas::{Shared, hashed};

/// A lock per key, forgotten when nobody holds or waits for it, so the map stays as small
/// as the number of carts being written right now.
#[derive(Default)]
pub struct KeyedLocks {
    locks: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
}

/// Holds one key's lock; dropping it releases the lock and forgets an idle key.
pub struct KeyGuard<'a> {
    owner: &'a KeyedLocks,
    key: String,
    guard: Option<OwnedMutexGuard<()>>,
}

impl KeyedLocks {
    pub async fn lock(&self, key: &str) -> KeyGuard<'_> {
        let lock = {
            let mut locks = self
                .locks
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            locks.entry(key.to_owned()).or_default().clone()
        };
        KeyGuard {
            owner: self,
            key: key.to_owned(),
            guard: Some(lock.lock_owned().await),
        }
    }

    /// Keys currently held or awaited.
    pub fn len(&self) -> usize {
        self.locks
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Drop for KeyGuard<'_> {
    fn drop(&mut self) {
        let mut locks = self
            .owner
            .locks
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        self.guard = None;
        // Only the map's own handle left: nobody holds or waits for this key.
        if locks
            .get(&self.key)
            .is_some_and(|lock| Arc::strong_count(lock) == 1)
        {
            locks.remove(&self.key);
        }
    }
}

/// Polling another replica's write from a read.
const READ_POLL: Duration = Duration::from_millis(25);

pub struct SerializedCarts {
    inner: SharedCarts,
    locks: Arc<KeyedLocks>,
    /// The replicas' Redis: writes take the cart's lease there too.
    shared: Option<Shared>,
}

/// Puts `platform`'s carts behind per-cart serialisation; its other ports stay as they are.
pub fn wrap(platform: SharedPlatform) -> SharedPlatform {
    wrap_shared(platform, None)
}

/// `wrap`, serialising across every replica sharing `shared`.
pub fn wrap_shared(platform: SharedPlatform, shared: Option<Shared>) -> SharedPlatform {
    wrap_with(platform, shared, Arc::new(KeyedLocks::default()))
}

/// `wrap_shared`, taking this process's turns on `locks` (shared with checkout writes).
pub fn wrap_with(
    platform: SharedPlatform,
    shared: Option<Shared>,
    locks: Arc<KeyedLocks>,
) -> SharedPlatform {
    let carts = Arc::new(SerializedCarts {
        inner: platform.carts.clone(),
        locks,
        shared,
    });
    Arc::new(Platform {
        carts,
        ..Platform::clone(&platform)
    })
}

/// What a write recorded before it started.
enum Written {
    Replacement(intent::Recorded),
    /// A cancel records nothing; it makes moot the unfinished replacement it found.
    Cancel(Option<String>),
}

/// Errors after which running the same replacement again may well succeed.
fn passing(error: &PlatformError) -> bool {
    matches!(
        error,
        PlatformError::RateLimited { .. }
            | PlatformError::Unavailable { .. }
            | PlatformError::Full { .. }
            | PlatformError::WritesPaused { .. }
    )
}

/// The Redis key of the lease on cart (or checkout) `id`.
pub fn lock_key(id: &str) -> String {
    format!("bcp:cart-lock:{}", hashed(id))
}

/// The cart's lease across replicas (taken after this process's own lock, so one replica's
/// writers queue there rather than polling Redis); `None` without `[redis]`.
pub async fn take_lease(shared: Option<&Shared>, id: &str) -> Result<Option<Lease>, PlatformError> {
    let Some(shared) = shared else {
        return Ok(None);
    };
    let fence_key = format!("bcp:cart-fence:{}", hashed(id));
    match lease::acquire(
        &shared.link,
        lock_key(id),
        &fence_key,
        shared.lease,
        shared.lock_wait,
    )
    .await
    {
        Ok(lease) => Ok(Some(lease)),
        Err(LeaseError::Down(_)) => Err(redis_away()),
        Err(LeaseError::Busy) => Err(PlatformError::WritesPaused {
            reason: "another replica is still writing this cart",
            retry_after: Duration::from_secs(1),
        }),
    }
}

impl SerializedCarts {
    /// Waits (at most the lock wait) until no replica holds the cart's lease; answers the
    /// replacement a writer left unfinished, if any. Redis being away does not stop reads:
    /// they go on without waiting.
    async fn settled(&self, id: &str) -> Result<Option<Intent>, PlatformError> {
        let Some(shared) = &self.shared else {
            return Ok(None);
        };
        let mut both = redis::cmd("MGET");
        both.arg(lock_key(id)).arg(intent::key(id));
        let started = std::time::Instant::now();
        loop {
            let found: Result<(Option<String>, Option<String>), _> = shared.link.query(&both).await;
            match found {
                Err(_) => return Ok(None),
                Ok((None, unfinished)) => return Ok(intent::parse(unfinished)),
                Ok(_) if started.elapsed() >= shared.lock_wait => {
                    return Err(PlatformError::Unavailable {
                        reason: "another replica is still writing this cart".to_owned(),
                        retry_after: Some(Duration::from_secs(1)),
                    });
                }
                Ok(_) => tokio::time::sleep(READ_POLL).await,
            }
        }
    }

    async fn lease(&self, id: &str) -> Result<Option<Lease>, PlatformError> {
        take_lease(self.shared.as_ref(), id).await
    }

    /// Runs a write under the cart's lease and inside its fence, released when the write
    /// is done. A replacement (`draft`) is recorded first and forgotten once it is in the
    /// store, or when it failed before sending anything; a cancel forgets the replacement
    /// it makes moot.
    async fn write<T>(
        &self,
        id: &str,
        draft: Option<&CartDraft>,
        write: impl Future<Output = Result<T, PlatformError>>,
    ) -> Result<T, PlatformError> {
        let (Some(shared), Some(lease)) = (&self.shared, self.lease(id).await?) else {
            return write.await;
        };
        let fence = lease.fence();
        let recorded = match draft {
            Some(draft) => intent::record(&shared.link, id, fence.token(), draft)
                .await
                .map(Written::Replacement),
            None => intent::pending(&shared.link, id)
                .await
                .map(|unfinished| Written::Cancel(unfinished.map(|intent| intent.text))),
        };
        let Ok(recorded) = recorded else {
            lease.release().await;
            return Err(redis_away());
        };
        let (outcome, sent) = fenced(fence, write).await;
        match (&recorded, outcome.is_ok()) {
            (Written::Replacement(recorded), true) => {
                intent::clear(&shared.link, id, &recorded.text).await;
            }
            (Written::Replacement(recorded), false) if !sent => {
                intent::abandon(&shared.link, id, recorded).await;
            }
            (Written::Cancel(Some(text)), true) => intent::clear(&shared.link, id, text).await,
            _ => {}
        }
        lease.release().await;
        outcome
    }

    /// Finishes, under the lease, a replacement a writer left unfinished (it died, lost
    /// its lease, or the store failed between its requests), so a read shows the set asked
    /// for rather than a mix. A replacement the store refuses for good is forgotten.
    async fn finish(&self, id: &str) -> Result<(), PlatformError> {
        let (Some(shared), Some(lease)) = (&self.shared, self.lease(id).await?) else {
            return Ok(());
        };
        // Another replica may have finished it, or written anew, while this one waited.
        let outcome = match intent::pending(&shared.link, id).await {
            Ok(Some(unfinished)) => {
                tracing::info!("finishing a cart replacement its writer left unfinished");
                let (done, _) =
                    fenced(lease.fence(), self.inner.replace(id, &unfinished.draft)).await;
                match done {
                    Err(error) if passing(&error) => Err(error),
                    _ => {
                        intent::clear(&shared.link, id, &unfinished.text).await;
                        Ok(())
                    }
                }
            }
            Ok(None) | Err(_) => Ok(()),
        };
        lease.release().await;
        outcome
    }
}

#[async_trait]
impl CartPort for SerializedCarts {
    async fn create(&self, draft: &CartDraft) -> Result<CartOutcome, PlatformError> {
        // A new cart has no other writer yet.
        self.inner.create(draft).await
    }

    async fn get(&self, id: &str) -> Result<Option<CartState>, PlatformError> {
        // Reads wait too, so they never see a replacement half done here; they take no lease
        // (unless a replacement is left to finish), so they keep working while Redis is away.
        let _held = self.locks.lock(id).await;
        if self.settled(id).await?.is_some() {
            self.finish(id).await?;
        }
        self.inner.get(id).await
    }

    async fn replace(
        &self,
        id: &str,
        draft: &CartDraft,
    ) -> Result<Option<CartOutcome>, PlatformError> {
        let _held = self.locks.lock(id).await;
        self.write(id, Some(draft), self.inner.replace(id, draft))
            .await
    }

    async fn cancel(&self, id: &str) -> Result<Option<CartState>, PlatformError> {
        let _held = self.locks.lock(id).await;
        self.write(id, None, self.inner.cancel(id)).await
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    #[tokio::test]
    async fn one_key_runs_one_holder_at_a_time_and_is_forgotten_after() {
        let locks = Arc::new(KeyedLocks::default());
        let inside = Arc::new(AtomicUsize::new(0));
        let most = Arc::new(AtomicUsize::new(0));
        let mut tasks = Vec::new();
        for _ in 0..8 {
            let (locks, inside, most) = (locks.clone(), inside.clone(), most.clone());
            tasks.push(tokio::spawn(async move {
                let _held = locks.lock("cart-1").await;
                let now = inside.fetch_add(1, Ordering::SeqCst) + 1;
                most.fetch_max(now, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(5)).await;
                inside.fetch_sub(1, Ordering::SeqCst);
            }));
        }
        for task in tasks {
            task.await.unwrap();
        }
        assert_eq!(most.load(Ordering::SeqCst), 1);
        assert!(locks.is_empty(), "idle keys are forgotten");
    }

    #[tokio::test]
    async fn different_keys_do_not_wait_for_each_other() {
        let locks = KeyedLocks::default();
        let _a = locks.lock("a").await;
        let b = tokio::time::timeout(Duration::from_secs(1), locks.lock("b")).await;
        assert!(b.is_ok());
        assert_eq!(locks.len(), 2);
    }
}
