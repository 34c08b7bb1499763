//! What `UpstreamClient::send` applies around every call to one store: a local request
//! budget (governor), a hold after the upstream throttled us (Retry-After), and the
//! backoff schedule of read retries.

use std::hash::{BuildHasher, Hasher};
use std::num::NonZeroU32;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use governor::clock::{Clock, DefaultClock};
use governor::state::{InMemoryState, NotKeyed};
use governor::{Quota, RateLimiter};

use serde::Deserialize;

use super::capacity::Capacity;
use super::shared_budget::{SharedBudget, Verdict};
use crate::platform::error::PlatformError;
use crate::settings::ConfigProblem;

/// `[upstream]`: per-store budget, timeouts and retries of calls to the store.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct UpstreamConfig {
    /// 0 = no local budget (upstream throttling is still honoured).
    pub requests_per_second: u32,
    pub burst: u32,
    /// How long a call may wait for budget (or for an upstream Retry-After) before failing.
    pub max_wait_ms: u64,
    /// One attempt.
    pub timeout_ms: u64,
    /// All attempts of a read, backoff included.
    pub read_deadline_ms: u64,
    /// Extra attempts of a read; writes are never retried.
    pub max_retries: u32,
    /// Requests in flight to the store at once: what its PHP workers (or API plan) serve
    /// together. Calls beyond it wait in order, within `max_wait_ms` and their own deadline,
    /// then fail with -32000/503 and a Retry-After. With `[redis]` each replica takes its
    /// share. 0 = no bound.
    pub max_in_flight: u32,
}

impl Default for UpstreamConfig {
    fn default() -> Self {
        Self {
            requests_per_second: 20,
            burst: 40,
            max_wait_ms: 2_000,
            timeout_ms: 10_000,
            read_deadline_ms: 15_000,
            max_retries: 2,
            // Small hosting plans run 4 to 8 PHP workers; agents' reads are short.
            max_in_flight: 6,
        }
    }
}

impl UpstreamConfig {
    pub fn problems(&self) -> Vec<ConfigProblem> {
        let mut problems = Vec::new();
        for (key, value, min, max) in [
            (
                "upstream.requests_per_second",
                u64::from(self.requests_per_second),
                0,
                100_000,
            ),
            ("upstream.max_wait_ms", self.max_wait_ms, 0, 60_000),
            ("upstream.timeout_ms", self.timeout_ms, 100, 120_000),
            (
                "upstream.read_deadline_ms",
                self.read_deadline_ms,
                100,
                300_000,
            ),
            ("upstream.max_retries", u64::from(self.max_retries), 0, 10),
            (
                "upstream.max_in_flight",
                u64::from(self.max_in_flight),
                0,
                10_000,
            ),
        ] {
            if value < min || value > max {
                problems.push(ConfigProblem::new(
                    key,
                    format!("must be between {min} and {max}"),
                ));
            }
        }
        if self.requests_per_second > 0 && (self.burst == 0 || self.burst > 100_000) {
            problems.push(ConfigProblem::new(
                "upstream.burst",
                "must be between 1 and 100000 when upstream.requests_per_second is set",
            ));
        }
        if self.read_deadline_ms < self.timeout_ms {
            problems.push(ConfigProblem::new(
                "upstream.read_deadline_ms",
                "must not be shorter than upstream.timeout_ms",
            ));
        }
        problems
    }
}

type Limiter = RateLimiter<NotKeyed, InMemoryState, DefaultClock>;

/// Retry and budget settings of one upstream.
#[derive(Debug, Clone)]
pub struct UpstreamPolicy {
    pub requests_per_second: u32,
    pub burst: u32,
    pub max_wait: Duration,
    /// Per attempt; `None` keeps the client's own timeout.
    pub attempt_timeout: Option<Duration>,
    pub read_deadline: Duration,
    pub max_retries: u32,
    /// 0: no bound.
    pub max_in_flight: u32,
    /// First backoff step; doubles on each retry (full jitter).
    pub base_backoff: Duration,
    /// The budget every replica draws from (`[redis]`); the local limiter then holds only
    /// this replica's share, used while Redis is away.
    pub shared: Option<SharedBudget>,
}

impl Default for UpstreamPolicy {
    fn default() -> Self {
        Self::from(&UpstreamConfig::default())
    }
}

impl From<&UpstreamConfig> for UpstreamPolicy {
    fn from(config: &UpstreamConfig) -> Self {
        Self {
            requests_per_second: config.requests_per_second,
            burst: config.burst,
            max_wait: Duration::from_millis(config.max_wait_ms),
            attempt_timeout: Some(Duration::from_millis(config.timeout_ms)),
            read_deadline: Duration::from_millis(config.read_deadline_ms),
            max_retries: config.max_retries,
            max_in_flight: config.max_in_flight,
            base_backoff: Duration::from_millis(100),
            shared: None,
        }
    }
}

/// Shared by every clone of one `UpstreamClient`, i.e. one store.
pub struct UpstreamGuard {
    pub policy: UpstreamPolicy,
    limiter: Option<Limiter>,
    /// No call leaves before this instant (set from an upstream Retry-After).
    hold_until: Mutex<Option<Instant>>,
    pub capacity: Capacity,
}

fn rate_limited(wait: Duration) -> PlatformError {
    PlatformError::RateLimited {
        retry_after: Some(wait.max(Duration::from_secs(1))),
    }
}

impl UpstreamGuard {
    pub fn new(policy: UpstreamPolicy) -> Self {
        let (rate, burst) = match &policy.shared {
            Some(shared) => (
                shared.local_share(policy.requests_per_second),
                shared.local_share(policy.burst),
            ),
            None => (policy.requests_per_second, policy.burst),
        };
        let in_flight = match (&policy.shared, policy.max_in_flight) {
            (_, 0) => 0,
            (Some(shared), capacity) => shared.local_share(capacity),
            (None, capacity) => capacity,
        };
        let rate = if policy.requests_per_second == 0 {
            0
        } else {
            rate
        };
        let limiter = NonZeroU32::new(rate).map(|rate| {
            let burst = NonZeroU32::new(burst).unwrap_or(rate);
            RateLimiter::direct(Quota::per_second(rate).allow_burst(burst))
        });
        Self {
            policy,
            limiter,
            hold_until: Mutex::new(None),
            capacity: Capacity::new(usize::try_from(in_flight).unwrap_or(usize::MAX)),
        }
    }

    /// Waits for the store's budget, at most `max_wait`; past that the call fails with
    /// `RateLimited` so the agent backs off instead of piling requests onto a throttled store.
    pub async fn admit(&self, store: &'static str) -> Result<(), PlatformError> {
        let started = Instant::now();
        let held = self
            .hold_until
            .lock()
            .ok()
            .and_then(|hold| *hold)
            .and_then(|until| until.checked_duration_since(Instant::now()));
        if let Some(wait) = held {
            if wait > self.policy.max_wait {
                crate::prometheus::rate_limited("upstream_hold", store);
                return Err(rate_limited(wait));
            }
            tokio::time::sleep(wait).await;
        }
        let Some(limiter) = &self.limiter else {
            return Ok(());
        };
        if let Some(shared) = &self.policy.shared {
            let verdict = shared
                .admit(
                    self.policy.requests_per_second,
                    self.policy.burst,
                    started,
                    self.policy.max_wait,
                )
                .await;
            crate::prometheus::shared_budget(store, verdict.is_ok());
            match verdict {
                Ok(Verdict::Admitted) => return Ok(()),
                Ok(Verdict::Exhausted(wait)) => {
                    crate::prometheus::rate_limited("upstream_budget", store);
                    return Err(rate_limited(wait));
                }
                // Redis is away: this replica keeps to its share (the local limiter below).
                Err(_) => {}
            }
        }
        loop {
            match limiter.check() {
                Ok(()) => return Ok(()),
                Err(not_until) => {
                    let wait = not_until.wait_time_from(DefaultClock::default().now());
                    if started.elapsed() + wait > self.policy.max_wait {
                        crate::prometheus::rate_limited("upstream_budget", store);
                        return Err(rate_limited(wait));
                    }
                    tokio::time::sleep(wait).await;
                }
            }
        }
    }

    /// The upstream said "slow down": nobody calls it again before `retry_after` has passed.
    pub fn hold_for(&self, retry_after: Duration) {
        let until = Instant::now() + retry_after;
        if let Ok(mut hold) = self.hold_until.lock()
            && hold.is_none_or(|current| current < until)
        {
            *hold = Some(until);
        }
    }

    /// Full-jitter exponential backoff before retry number `retry` (1-based).
    pub fn backoff(&self, retry: u32) -> Duration {
        let cap = self
            .policy
            .base_backoff
            .saturating_mul(1u32 << retry.saturating_sub(1).min(10));
        let millis = u64::try_from(cap.as_millis()).unwrap_or(u64::MAX).max(1);
        // Half fixed, half random: retries of many calls spread out but never come back at once.
        Duration::from_millis(millis / 2 + random() % (millis / 2 + 1))
    }
}

/// Cheap randomness for jitter without another dependency: a freshly seeded SipHash.
fn random() -> u64 {
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(Instant::now().elapsed().as_nanos());
    hasher.finish()
}

/// Whether a failed read may be tried again.
pub fn retryable(error: &PlatformError) -> bool {
    matches!(
        error,
        PlatformError::RateLimited { .. } | PlatformError::Unavailable { .. }
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::panic)]
    use super::*;

    #[test]
    fn backoff_grows_and_stays_within_its_cap() {
        let guard = UpstreamGuard::new(UpstreamPolicy {
            base_backoff: Duration::from_millis(100),
            ..UpstreamPolicy::default()
        });
        for retry in 1..=4u32 {
            let cap = Duration::from_millis(100 * (1 << (retry - 1)));
            let step = guard.backoff(retry);
            assert!(step >= cap / 2 && step <= cap, "{retry}: {step:?}");
        }
    }

    #[tokio::test]
    async fn budget_exhausted_beyond_max_wait_fails_fast() {
        let guard = UpstreamGuard::new(UpstreamPolicy {
            requests_per_second: 1,
            burst: 1,
            max_wait: Duration::from_millis(10),
            ..UpstreamPolicy::default()
        });
        assert!(guard.admit("test").await.is_ok());
        match guard.admit("test").await {
            Err(PlatformError::RateLimited { retry_after }) => assert!(retry_after.is_some()),
            other => panic!("expected RateLimited, got {other:?}"),
        }
    }

    #[tokio::test]
    async fn upstream_hold_longer_than_max_wait_fails_with_retry_after() {
        let guard = UpstreamGuard::new(UpstreamPolicy {
            requests_per_second: 0,
            max_wait: Duration::from_millis(10),
            ..UpstreamPolicy::default()
        });
        guard.hold_for(Duration::from_secs(30));
        match guard.admit("test").await {
            Err(PlatformError::RateLimited {
                retry_after: Some(wait),
            }) => assert!(wait > Duration::from_secs(20), "{wait:?}"),
            other => panic!("expected RateLimited, got {other:?}"),
        }
    }
}
