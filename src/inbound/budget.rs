//! Inbound budgets: tool calls per agent profile and per client address, per minute. Each
//! budget tracks a bounded number of keys with O(log n) work per check (see `keyed`), so a
//! client inventing a new agent profile per call can neither grow memory nor slow the checks.

use std::net::IpAddr;

use serde::Deserialize;
use sha2::{Digest, Sha256};

use super::limiter::BoundedKeyed;

/// `[inbound]`: per-agent and per-client-address budgets of tool calls (0 = off).
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
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

/// Keys tracked per budget at most (agents, client addresses). At ~100 bytes a key (agent
/// profiles are kept as their SHA-256, whatever their length) this is about 10 MB.
const MAX_TRACKED_KEYS: usize = 100_000;

pub struct InboundLimiter {
    per_agent: Option<BoundedKeyed<[u8; 32]>>,
    per_ip: Option<BoundedKeyed<IpAddr>>,
}

fn keyed<K: std::hash::Hash + Eq + Clone>(per_minute: u32) -> Option<BoundedKeyed<K>> {
    (per_minute > 0).then(|| BoundedKeyed::per_minute(per_minute, MAX_TRACKED_KEYS))
}

fn check<K: std::hash::Hash + Eq + Clone>(
    limiter: &BoundedKeyed<K>,
    key: &K,
    scope: &'static str,
) -> Result<(), Throttled> {
    limiter.check(key).map_err(|wait| {
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
        }
    }

    /// One tool call by `profile` from `ip`; either budget exhausted → -32000 / HTTP 429.
    pub fn check(&self, profile: Option<&str>, ip: Option<IpAddr>) -> Result<(), Throttled> {
        if let (Some(limiter), Some(ip)) = (&self.per_ip, ip) {
            check(limiter, &ip, "inbound_ip")?;
        }
        // Calls without a profile are refused later by validation; they still count per IP.
        if let (Some(limiter), Some(profile)) = (&self.per_agent, profile) {
            let key: [u8; 32] = Sha256::digest(profile.as_bytes()).into();
            check(limiter, &key, "inbound_agent")?;
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
