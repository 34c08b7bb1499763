//! Deliveries already taken. A store retries a delivery it thinks failed under the same
//! delivery id, with the same body; a copy of a signed request sent again is the same too.
//! Either is taken once: the key is a digest of the route, the delivery id and the raw body,
//! so a copy of a body under a delivery id the store has not used yet (the header is not
//! signed) cannot shut out the store's own delivery of another body. The key is recorded only
//! after the signature was checked, in memory bounded in bytes (oldest first out, each kept
//! for the store's retry window) and, with `[redis]`, in Redis as well (`SET NX` with the same
//! expiry), so a copy sent to another replica is refused too. Redis unreachable: memory alone.

use std::time::Duration;

use moka::policy::EvictionPolicy;
use sha2::{Digest, Sha256};

use crate::replicas::Shared;
use crate::replicas::link::millis;

/// How long a delivery is remembered: Shopify retries a failed delivery for up to 48 hours.
const REMEMBERED: Duration = Duration::from_secs(48 * 3600);
/// Bytes of keys kept in memory (a key weighs its 32 bytes plus the map's own share).
const MEMORY_BYTES: u64 = 8 * 1024 * 1024;
const ENTRY_BYTES: u32 = 32 + 96;

pub type DeliveryKey = [u8; 32];

/// The key of one delivery to `route`: the store's delivery id and the exact body.
pub fn delivery_key(route: &str, delivery_id: &str, body: &[u8]) -> DeliveryKey {
    let mut digest = Sha256::new();
    for part in [route.as_bytes(), delivery_id.as_bytes()] {
        digest.update((part.len() as u64).to_be_bytes());
        digest.update(part);
    }
    digest.update(body);
    digest.finalize().into()
}

#[derive(Clone)]
pub struct Replays {
    memory: moka::future::Cache<DeliveryKey, ()>,
    shared: Option<Shared>,
}

fn redis_key(key: &DeliveryKey) -> String {
    format!("bcp:webhook:delivery:{}", hex::encode(key))
}

impl Replays {
    pub fn new(shared: Option<Shared>) -> Self {
        Self {
            memory: moka::future::Cache::builder()
                .max_capacity(MEMORY_BYTES)
                .weigher(|_, _| ENTRY_BYTES)
                .time_to_live(REMEMBERED)
                .eviction_policy(EvictionPolicy::lru())
                .build(),
            shared,
        }
    }

    /// Records the delivery; `false` when it was taken before, here or on another replica.
    pub async fn first(&self, key: &DeliveryKey) -> bool {
        let here = self.memory.entry(*key).or_insert(()).await.is_fresh();
        let Some(shared) = &self.shared else {
            return here;
        };
        let mut set = redis::cmd("SET");
        set.arg(redis_key(key))
            .arg(1)
            .arg("NX")
            .arg("PX")
            .arg(millis(REMEMBERED));
        match shared.link.query::<Option<String>>(&set).await {
            Ok(answer) => here && answer.is_some(),
            Err(_) => {
                tracing::warn!("webhook delivery ids kept in memory only: redis unavailable");
                here
            }
        }
    }

    /// Forgets a delivery that was not taken after all (it failed), so the store's retry is.
    pub async fn forget(&self, key: &DeliveryKey) {
        self.memory.invalidate(key).await;
        if let Some(shared) = &self.shared {
            let mut delete = redis::cmd("DEL");
            delete.arg(redis_key(key));
            let _ = shared.link.query::<i64>(&delete).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_delivery_is_taken_once_and_again_once_forgotten() {
        let replays = Replays::new(None);
        let key = delivery_key("shopify-orders", "d-1", b"{}");
        assert!(replays.first(&key).await);
        assert!(!replays.first(&key).await);
        // Another body under the same id, or the same body under another id: another key.
        assert!(
            replays
                .first(&delivery_key("shopify-orders", "d-1", b"{ }"))
                .await
        );
        assert!(
            replays
                .first(&delivery_key("shopify-orders", "d-2", b"{}"))
                .await
        );
        assert_ne!(
            delivery_key("ab", "c", b""),
            delivery_key("a", "bc", b""),
            "the parts cannot run into each other"
        );
        replays.forget(&key).await;
        assert!(replays.first(&key).await);
    }
}
