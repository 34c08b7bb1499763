//! Nonces seen on verified signatures. UCP's replay protection is the idempotency key
//! (SIG-030); a signature that carries a `nonce` (WBA-shape, 08-25) promises it is unique
//! within its validity window, so a second use of one is refused.
//!
//! Bounded in bytes (issue 35 item 2): a nonce longer than `MAX_NONCE_BYTES` is refused with
//! its signature, and each one is held as a fixed-size digest of (profile, key, nonce), so the
//! bound is a number of nonces whatever the signer sent. At the bound the least recently seen
//! nonce is forgotten first (a flood from one signer cannot keep others' fresh nonces out);
//! a replay of a forgotten one still meets the idempotency store, UCP's own replay guard.

use std::time::Duration;

use moka::future::Cache;
use moka::policy::EvictionPolicy;
use sha2::{Digest, Sha256};

/// Longer than any nonce a signer needs (WBA's are 64 bytes of base64).
pub(super) const MAX_NONCE_BYTES: usize = 256;
/// About 100,000 nonces.
const MAX_BYTES: u64 = 16 << 20;
/// A digest, moka's node and the map's share.
const ENTRY_BYTES: u32 = 160;

pub(super) struct Nonces {
    seen: Cache<[u8; 32], ()>,
}

impl Nonces {
    /// `window` is how long a signature stays acceptable, so how long a nonce must be held.
    pub(super) fn new(window: Duration) -> Self {
        Self::bounded(window, MAX_BYTES)
    }

    fn bounded(window: Duration, max_bytes: u64) -> Self {
        Self {
            seen: Cache::builder()
                .max_capacity(max_bytes)
                .weigher(|_, ()| ENTRY_BYTES)
                .eviction_policy(EvictionPolicy::lru())
                .time_to_live(window)
                .build(),
        }
    }

    /// True the first time `nonce` is presented for this signer's key. The caller refuses a
    /// nonce over `MAX_NONCE_BYTES` first; one here is never held whole either way.
    pub(super) async fn first_use(&self, profile: &str, keyid: &str, nonce: &str) -> bool {
        let mut digest = Sha256::new();
        for part in [profile, keyid, nonce] {
            digest.update((part.len() as u64).to_be_bytes());
            digest.update(part.as_bytes());
        }
        let key: [u8; 32] = digest.finalize().into();
        self.seen.entry(key).or_insert(()).await.is_fresh()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_nonce_is_good_once_per_signer_key() {
        let nonces = Nonces::new(Duration::from_secs(60));
        assert!(nonces.first_use("p", "k", "n1").await);
        assert!(!nonces.first_use("p", "k", "n1").await);
        assert!(nonces.first_use("p", "k2", "n1").await);
        // The parts are length-prefixed: moving a byte between them is another nonce.
        assert!(nonces.first_use("p", "k2n", "1").await);
    }

    /// Issue 35 item 2: a flood of distinct (long) nonces stays within the byte bound.
    #[tokio::test]
    async fn a_flood_of_nonces_stays_within_the_byte_bound() {
        let bound = 64 * 1024;
        let nonces = Nonces::bounded(Duration::from_secs(60), bound);
        let long = "n".repeat(MAX_NONCE_BYTES - 8);
        for index in 0..5000 {
            assert!(nonces.first_use("p", "k", &format!("{long}{index}")).await);
        }
        nonces.seen.run_pending_tasks().await;
        assert!(nonces.seen.weighted_size() <= bound);
        assert!(nonces.seen.entry_count() >= bound / u64::from(ENTRY_BYTES) / 2);
    }

    #[tokio::test]
    async fn an_expired_nonce_is_gone() {
        let nonces = Nonces::new(Duration::from_millis(1));
        assert!(nonces.first_use("p", "k", "n1").await);
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        // Fresh again once its window has passed.
        while !nonces.first_use("p", "k", "n1").await {
            assert!(std::time::Instant::now() < deadline, "never expired");
            tokio::task::yield_now().await;
        }
    }
}
