//! The last applied `updated_at` of each order a webhook changed, so a body no newer than it
//! (a late retry, a copy sent again, under any delivery id or topic) changes nothing and
//! announces nothing. Equal counts as not newer: the store moves `updated_at` with every change
//! of the order, and its several topics for one change (`orders/create`, `orders/paid`) carry
//! the same state; two changes within one second of the store's clock keep the first until the
//! next change, which is better than letting a kept copy of either overwrite the other.
//!
//! Memory holds only orders this bridge kept (bounded in bytes, oldest first out, as long as
//! the order book keeps an order). With `[redis]` every replica's applied version is kept there
//! too: a body older than what any replica applied is not applied, and only the replica that
//! moved Redis's version forward announces, so the agent never hears an older state after a
//! newer one, whichever replica each delivery reached.

use std::time::Duration;

use moka::policy::EvictionPolicy;
use sha2::{Digest, Sha256};

use crate::platform::checkout::Version;
use crate::replicas::Shared;
use crate::replicas::link::{millis, script};

/// As long as the Shopify order book keeps an order after its last change.
const REMEMBERED: Duration = Duration::from_secs(20 * 24 * 3600);
const MEMORY_BYTES: u64 = 8 * 1024 * 1024;
const ENTRY_BYTES: u32 = 32 + 8 + 96;

/// Sets the version when it is newer than the one kept: 1 when set, 0 when not newer.
const ADVANCE: &str = r"
local kept = redis.call('GET', KEYS[1])
if kept and tonumber(kept) >= tonumber(ARGV[1]) then
  return 0
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
";

/// Microseconds since the epoch: exact in Lua's doubles for the next few centuries.
fn stamp(version: &Version) -> i64 {
    i64::try_from(version.updated_at.unix_timestamp_nanos() / 1_000).unwrap_or(i64::MAX)
}

#[derive(Clone)]
pub struct Versions {
    scope: &'static str,
    memory: moka::future::Cache<[u8; 32], i64>,
    shared: Option<Shared>,
}

impl Versions {
    /// `scope` keeps one platform's resource ids apart from another's.
    pub fn new(scope: &'static str, shared: Option<Shared>) -> Self {
        Self {
            scope,
            memory: moka::future::Cache::builder()
                .max_capacity(MEMORY_BYTES)
                .weigher(|_, _| ENTRY_BYTES)
                .time_to_live(REMEMBERED)
                .eviction_policy(EvictionPolicy::lru())
                .build(),
            shared,
        }
    }

    fn key(&self, version: &Version) -> [u8; 32] {
        let mut digest = Sha256::new();
        digest.update(self.scope.as_bytes());
        digest.update([0]);
        digest.update(version.resource.as_bytes());
        digest.finalize().into()
    }

    fn redis_key(&self, version: &Version) -> String {
        format!("bcp:webhook:version:{}", hex::encode(self.key(version)))
    }

    /// Whether a state at least as new was applied, here or (with Redis) on any replica.
    /// Callers hold their own lock from this check until `applied`.
    pub async fn stale(&self, version: &Version) -> bool {
        let at = stamp(version);
        if self
            .memory
            .get(&self.key(version))
            .await
            .is_some_and(|kept| kept >= at)
        {
            return true;
        }
        let Some(shared) = &self.shared else {
            return false;
        };
        let mut get = redis::cmd("GET");
        get.arg(self.redis_key(version));
        match shared.link.query::<Option<i64>>(&get).await {
            Ok(kept) => kept.is_some_and(|kept| kept >= at),
            Err(_) => {
                tracing::warn!("webhook order versions checked in memory only: redis unavailable");
                false
            }
        }
    }

    /// Records an applied state; `true` when no replica had applied one as new (so this one
    /// announces it).
    pub async fn applied(&self, version: &Version) -> bool {
        let at = stamp(version);
        self.memory.insert(self.key(version), at).await;
        let Some(shared) = &self.shared else {
            return true;
        };
        let advance = script(
            ADVANCE,
            &self.redis_key(version),
            &[&at.to_string(), &millis(REMEMBERED).to_string()],
        );
        match shared.link.query::<i64>(&advance).await {
            Ok(moved) => moved == 1,
            Err(_) => true,
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use time::OffsetDateTime;
    use time::format_description::well_known::Rfc3339;

    use super::*;

    fn version(resource: &str, updated_at: &str) -> Version {
        Version {
            resource: resource.to_owned(),
            updated_at: OffsetDateTime::parse(updated_at, &Rfc3339).unwrap(),
        }
    }

    #[tokio::test]
    async fn an_older_or_equal_state_is_stale_a_newer_one_or_another_order_is_not() {
        let versions = Versions::new("shopify", None);
        let first = version("gid://shopify/Order/1", "2026-12-05T10:00:00-05:00");
        assert!(!versions.stale(&first).await);
        assert!(versions.applied(&first).await);
        assert!(versions.stale(&first).await, "equal is not newer");
        // The same instant written in another offset is the same instant.
        assert!(
            versions
                .stale(&version("gid://shopify/Order/1", "2026-12-05T15:00:00Z"))
                .await
        );
        let older = version("gid://shopify/Order/1", "2026-12-05T09:59:59-05:00");
        assert!(versions.stale(&older).await);
        let newer = version("gid://shopify/Order/1", "2026-12-05T10:00:01-05:00");
        assert!(!versions.stale(&newer).await);
        assert!(
            !versions
                .stale(&version("gid://shopify/Order/2", "2026-12-01T00:00:00Z"))
                .await
        );
    }
}
