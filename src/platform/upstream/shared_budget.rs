//! One upstream budget per store across every replica (`[redis] url`): each call takes its
//! token from a GCRA budget in Redis. Shopify and WooCommerce hosts throttle per shop, not per
//! replica, so N replicas with N budgets would send N times what the store allows. When Redis
//! cannot be asked, the caller falls back to this replica's local share of the budget.

use std::fmt;
use std::time::{Duration, Instant};

use crate::replicas::gcra::Gcra;
use crate::replicas::{RedisDown, Shared, hashed};

/// The shared budget of one store.
#[derive(Clone)]
pub struct SharedBudget {
    shared: Shared,
    /// Names the store (platform and address), not the replica: every replica draws from it.
    store: String,
}

impl fmt::Debug for SharedBudget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SharedBudget")
            .field("replicas", &self.shared.replicas)
            .finish_non_exhaustive()
    }
}

/// What the shared budget said about one call.
pub enum Verdict {
    Admitted,
    /// No token within the caller's wait; the next one is free after this.
    Exhausted(Duration),
}

impl SharedBudget {
    /// `store` identifies the upstream store the same way on every replica.
    pub fn new(shared: &Shared, store: &str) -> Self {
        Self {
            shared: shared.clone(),
            store: store.to_owned(),
        }
    }

    pub fn replicas(&self) -> u32 {
        self.shared.replicas
    }

    /// This replica's share of `budget` for when Redis is away.
    pub fn local_share(&self, budget: u32) -> u32 {
        self.shared.local_share(budget)
    }

    /// Waits (until `started + max_wait` at most) for a token of `per_second` / `burst`.
    pub async fn admit(
        &self,
        per_second: u32,
        burst: u32,
        started: Instant,
        max_wait: Duration,
    ) -> Result<Verdict, RedisDown> {
        let gcra = Gcra::new(
            format!("bcp:budget:{}", hashed(&self.store)),
            per_second,
            Duration::from_secs(1),
            burst,
        );
        loop {
            match gcra.take(&self.shared.link).await? {
                None => return Ok(Verdict::Admitted),
                Some(wait) if started.elapsed() + wait > max_wait => {
                    return Ok(Verdict::Exhausted(wait));
                }
                Some(wait) => tokio::time::sleep(wait).await,
            }
        }
    }
}
