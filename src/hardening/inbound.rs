//! Inbound budgets: tool calls per agent profile and per client address, per minute.

use std::hash::Hash;
use std::net::IpAddr;
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU64, Ordering};

use governor::clock::{Clock, DefaultClock};
use governor::state::keyed::HashMapStateStore;
use governor::{Quota, RateLimiter};

use serde::Deserialize;

/// `[inbound]`: per-agent and per-client-address budgets of tool calls (0 = off).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct InboundConfig {
    pub per_agent_per_minute: u32,
    pub per_ip_per_minute: u32,
}

/// A budget ran out: the caller may try again after `retry_after_secs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("too many requests")]
pub struct Throttled {
    pub retry_after_secs: u64,
}

type Keyed<K> = RateLimiter<K, HashMapStateStore<K>, DefaultClock>;

/// Forgotten keys are swept every this many checks, so spoofed profiles cannot grow memory
/// without bound.
const SWEEP_EVERY: u64 = 4096;

pub struct InboundLimiter {
    per_agent: Option<Keyed<String>>,
    per_ip: Option<Keyed<IpAddr>>,
    checks: AtomicU64,
}

fn keyed<K: Hash + Eq + Clone>(per_minute: u32) -> Option<Keyed<K>> {
    NonZeroU32::new(per_minute).map(|rate| RateLimiter::hashmap(Quota::per_minute(rate)))
}

fn check<K: Hash + Eq + Clone>(
    limiter: &Keyed<K>,
    key: &K,
    scope: &'static str,
) -> Result<(), Throttled> {
    limiter.check_key(key).map_err(|not_until| {
        let wait = not_until.wait_time_from(DefaultClock::default().now());
        crate::observability::rate_limited(scope, "-");
        Throttled {
            retry_after_secs: wait.as_secs() + u64::from(wait.subsec_nanos() > 0),
        }
    })
}

impl InboundLimiter {
    pub fn new(config: &InboundConfig) -> Self {
        Self {
            per_agent: keyed(config.per_agent_per_minute),
            per_ip: keyed(config.per_ip_per_minute),
            checks: AtomicU64::new(0),
        }
    }

    /// One tool call by `profile` from `ip`; either budget exhausted → -32000 / HTTP 429.
    pub fn check(&self, profile: Option<&str>, ip: Option<IpAddr>) -> Result<(), Throttled> {
        if self.checks.fetch_add(1, Ordering::Relaxed) % SWEEP_EVERY == SWEEP_EVERY - 1 {
            if let Some(limiter) = &self.per_agent {
                limiter.retain_recent();
            }
            if let Some(limiter) = &self.per_ip {
                limiter.retain_recent();
            }
        }
        if let (Some(limiter), Some(ip)) = (&self.per_ip, ip) {
            check(limiter, &ip, "inbound_ip")?;
        }
        // Calls without a profile are refused later by validation; they still count per IP.
        if let (Some(limiter), Some(profile)) = (&self.per_agent, profile) {
            check(limiter, &profile.to_owned(), "inbound_agent")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::panic)]
    use super::*;

    #[test]
    fn agents_are_limited_separately() {
        let limiter = InboundLimiter::new(&InboundConfig {
            per_agent_per_minute: 2,
            per_ip_per_minute: 0,
        });
        assert!(limiter.check(Some("a"), None).is_ok());
        assert!(limiter.check(Some("a"), None).is_ok());
        match limiter.check(Some("a"), None) {
            Err(Throttled { retry_after_secs }) => {
                assert!(retry_after_secs >= 1)
            }
            other => panic!("expected RateLimited, got {other:?}"),
        }
        assert!(limiter.check(Some("b"), None).is_ok());
    }
}
