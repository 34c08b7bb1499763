//! State several replicas of the bridge share through one Redis (`[redis] url`): the link
//! itself, a rate budget every replica draws from (`gcra`), a lock with a lease (`lease`) and
//! messages every replica hears (`fanout`). What is shared — idempotency records, product
//! invalidations, the upstream budget, inbound limits, cart locks — is decided by the modules
//! that own those things; this one only knows Redis. Without `[redis]` nothing here runs and
//! each replica keeps its state in memory, as a single process does.

pub mod fanout;
pub mod gcra;
pub mod lease;
pub mod link;
pub mod records;
pub mod secret;

use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;

use crate::settings::{ConfigProblem, Secret};

pub use link::{Link, RedisDown};

/// `[redis]`: the one Redis every replica shares.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct RedisConfig {
    /// `redis://[:password@]host:port[/db]`; a secret because it may carry a password.
    pub url: Option<Secret>,
    /// How many replicas are expected to run: while Redis is unreachable each one keeps to
    /// its share of the upstream budget (`[upstream] requests_per_second / replicas`).
    pub replicas: u32,
    /// How long a cart lock outlives a replica that died holding it.
    pub lock_lease_ms: u64,
    /// How long a cart write waits for another replica's write to the same cart.
    pub lock_wait_ms: u64,
}

impl Default for RedisConfig {
    fn default() -> Self {
        Self {
            url: None,
            replicas: 1,
            lock_lease_ms: 5_000,
            lock_wait_ms: 10_000,
        }
    }
}

impl RedisConfig {
    pub fn problems(&self) -> Vec<ConfigProblem> {
        let mut problems = Vec::new();
        if let Some(url) = &self.url
            && let Err(message) = link::check_url(url)
        {
            problems.push(ConfigProblem::new("redis.url", message));
        }
        if !(1..=1_000).contains(&self.replicas) {
            problems.push(ConfigProblem::new(
                "redis.replicas",
                "must be between 1 and 1000",
            ));
        }
        for (key, value) in [
            ("redis.lock_lease_ms", self.lock_lease_ms),
            ("redis.lock_wait_ms", self.lock_wait_ms),
        ] {
            if !(100..=600_000).contains(&value) {
                problems.push(ConfigProblem::new(key, "must be between 100 and 600000"));
            }
        }
        problems
    }

    /// The shared handle, or `None` without `[redis] url`. Connects lazily.
    pub fn connect(&self) -> Result<Option<Shared>, ConfigProblem> {
        let Some(url) = &self.url else {
            return Ok(None);
        };
        let link = Link::new(url).map_err(|message| ConfigProblem::new("redis.url", message))?;
        Ok(Some(Shared {
            link: Arc::new(link),
            replicas: self.replicas.max(1),
            lease: Duration::from_millis(self.lock_lease_ms),
            lock_wait: Duration::from_millis(self.lock_wait_ms),
        }))
    }
}

/// One replica's handle on the shared Redis; clones share the connection.
#[derive(Clone)]
pub struct Shared {
    pub link: Arc<Link>,
    /// Expected replicas: the divisor of a budget's local share.
    pub replicas: u32,
    pub lease: Duration,
    pub lock_wait: Duration,
}

impl Shared {
    /// This replica's share of `budget` when the shared one cannot be consulted (at least 1).
    pub fn local_share(&self, budget: u32) -> u32 {
        (budget / self.replicas).max(1)
    }
}

/// A key part derived from text an outsider may choose (ids, profiles), so it can never
/// shape the key space.
pub fn hashed(text: &str) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(text.as_bytes()))
}
