//! Inbound budgets: tool calls per agent profile and per client address, per minute. Each
//! budget tracks a bounded number of keys with O(log n) work per check (see `keyed`), so a
//! client inventing a new agent profile per call can neither grow memory nor slow the checks.

use std::net::IpAddr;

use serde::Deserialize;
use sha2::{Digest, Sha256};

use super::limiter::BoundedKeyed;
use crate::access::client_address;

/// `[inbound]`: per-agent and per-client-address budgets of tool calls, on by default (0 = off).
///
/// Sized so a real agent never meets them and a flood does. A buyer's shopping session is at
/// most a few calls a second, in bursts of 20–50 (a search, a handful of product reads, a
/// cart). Each budget is a per-minute rate whose whole minute is available at once, so a burst
/// is only ever refused once it exceeds a minute's budget.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct InboundConfig {
    /// Tool calls per minute per agent profile (`meta["ucp-agent"].profile`), shared by every
    /// replica with `[redis]`; 0 = off. Default 3000 (50 a second): one agent platform runs many
    /// buyers' sessions under one profile, so this is tens of sessions at their peak at once.
    /// The profile is whatever the client writes unless `[signatures] mode = "enforce"`: a
    /// flood can change it per call, which `per_ip_per_minute` does not let it escape.
    pub per_agent_per_minute: u32,
    /// Tool calls per minute per client address (IPv6: per /64, what one host is given;
    /// behind a proxy in `[server] trusted_proxies`, the address its `X-Forwarded-For` names);
    /// 0 = off. Default 600 (10 a second, all 600 at once): ten shopping sessions' bursts back
    /// to back, or two to three sessions at their peak without end; at most half the store's
    /// default `[upstream] requests_per_second` (20), so one address cannot take the store's
    /// budget from everyone else. A flood of thousands a second is refused after its first
    /// 600 calls and held to 10 a second. Raise it (or 0) when one address carries many
    /// buyers: an agent platform's egress, or a proxy not listed in `trusted_proxies`.
    pub per_ip_per_minute: u32,
}

/// `per_agent_per_minute` unless configured.
pub const DEFAULT_PER_AGENT_PER_MINUTE: u32 = 3_000;
/// `per_ip_per_minute` unless configured.
pub const DEFAULT_PER_IP_PER_MINUTE: u32 = 600;

impl Default for InboundConfig {
    fn default() -> Self {
        Self {
            per_agent_per_minute: DEFAULT_PER_AGENT_PER_MINUTE,
            per_ip_per_minute: DEFAULT_PER_IP_PER_MINUTE,
        }
    }
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
        crate::prometheus::rate_limited(scope, "-");
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
            check(limiter, &client_address(ip), "inbound_ip")?;
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
    #![allow(clippy::panic, clippy::unwrap_used)]
    use super::*;

    #[test]
    fn budgets_are_on_by_default_and_zero_turns_them_off() {
        let defaults = InboundConfig::default();
        assert_eq!(
            (defaults.per_agent_per_minute, defaults.per_ip_per_minute),
            (DEFAULT_PER_AGENT_PER_MINUTE, DEFAULT_PER_IP_PER_MINUTE)
        );
        let parsed: InboundConfig = toml::from_str("per_ip_per_minute = 0\n").unwrap();
        assert_eq!(parsed.per_agent_per_minute, DEFAULT_PER_AGENT_PER_MINUTE);
        let off = InboundLimiter::new(&parsed);
        let ip = Some(IpAddr::from([192, 0, 2, 1]));
        for _ in 0..DEFAULT_PER_IP_PER_MINUTE * 2 {
            assert!(off.check(None, ip).is_ok());
        }
    }

    #[test]
    fn an_ipv6_host_is_one_client_across_its_64() {
        let limiter = InboundLimiter::new(&InboundConfig {
            per_agent_per_minute: 0,
            per_ip_per_minute: 2,
        });
        let address = |text: &str| Some(text.parse::<IpAddr>().unwrap());
        assert!(limiter.check(None, address("2001:db8:1:2::1")).is_ok());
        assert!(limiter.check(None, address("2001:db8:1:2::ffff")).is_ok());
        assert!(
            limiter
                .check(None, address("2001:db8:1:2:dead:beef::7"))
                .is_err()
        );
        // The next /64 is another client; IPv4 (also as an IPv4-mapped IPv6) per address.
        assert!(limiter.check(None, address("2001:db8:1:3::1")).is_ok());
        assert!(limiter.check(None, address("192.0.2.1")).is_ok());
        assert!(limiter.check(None, address("::ffff:192.0.2.1")).is_ok());
        assert!(limiter.check(None, address("192.0.2.1")).is_err());
        assert!(limiter.check(None, address("192.0.2.2")).is_ok());
    }

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
