//! Nonces seen on verified signatures. UCP's replay protection is the idempotency key
//! (SIG-030); a signature that carries a `nonce` (WBA-shape, 08-25) promises it is unique
//! within its validity window, so a second use of one is refused.

use std::time::Duration;

use moka::future::Cache;

const CAP: u64 = 100_000;

pub(super) struct Nonces {
    seen: Cache<String, ()>,
}

impl Nonces {
    /// `window` is how long a signature stays acceptable, so how long a nonce must be held.
    pub(super) fn new(window: Duration) -> Self {
        Self {
            seen: Cache::builder()
                .max_capacity(CAP)
                .time_to_live(window)
                .build(),
        }
    }

    /// True the first time `nonce` is presented for this signer's key.
    pub(super) async fn first_use(&self, profile: &str, keyid: &str, nonce: &str) -> bool {
        let key = format!("{profile}\u{0}{keyid}\u{0}{nonce}");
        self.seen.entry(key).or_insert(()).await.is_fresh()
    }
}
