//! Version negotiation: fetch the agent's profile (`meta["ucp-agent"].profile`) and check that
//! its `ucp.version` is one this bridge serves. The profile URL is chosen by whoever calls us,
//! so the fetch is SSRF-hardened: https only, no private/loopback targets, the checked address
//! is the one connected to (no DNS-rebinding swap), few redirects each re-checked, a short
//! timeout and a size cap. Outcomes are cached, failures briefly.

mod fetch;

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::Value;

use crate::protocol::Namespace;
use crate::protocol::request::CallMeta;
use crate::settings::ConfigProblem;

pub use fetch::is_restricted;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NegotiationConfig {
    pub enabled: bool,
    /// Hosts whose profiles may be fetched over plain http (tests, internal agents).
    pub allow_http_hosts: Vec<String>,
    /// Hosts allowed to resolve to loopback/private/link-local addresses.
    pub allow_private_hosts: Vec<String>,
    pub timeout_ms: u64,
    pub cache_ttl_secs: u64,
    /// Failures are cached too (so a dead profile host is not hammered), but briefly.
    pub failure_cache_ttl_secs: u64,
    pub max_profile_bytes: usize,
}

impl Default for NegotiationConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            allow_http_hosts: Vec::new(),
            allow_private_hosts: Vec::new(),
            timeout_ms: 3_000,
            cache_ttl_secs: 300,
            failure_cache_ttl_secs: 30,
            max_profile_bytes: 64 * 1024,
        }
    }
}

impl NegotiationConfig {
    pub fn problems(&self) -> Vec<ConfigProblem> {
        let mut problems = Vec::new();
        if self.timeout_ms < 100 || self.timeout_ms > 30_000 {
            problems.push(ConfigProblem::new(
                "negotiation.timeout_ms",
                "must be between 100 and 30000",
            ));
        }
        if self.cache_ttl_secs > 86_400 {
            problems.push(ConfigProblem::new(
                "negotiation.cache_ttl_secs",
                "must be at most 86400",
            ));
        }
        if self.failure_cache_ttl_secs > self.cache_ttl_secs {
            problems.push(ConfigProblem::new(
                "negotiation.failure_cache_ttl_secs",
                "must not exceed negotiation.cache_ttl_secs",
            ));
        }
        if self.max_profile_bytes < 1024 || self.max_profile_bytes > 1024 * 1024 {
            problems.push(ConfigProblem::new(
                "negotiation.max_profile_bytes",
                "must be between 1024 and 1048576",
            ));
        }
        for (key, hosts) in [
            ("negotiation.allow_http_hosts", &self.allow_http_hosts),
            ("negotiation.allow_private_hosts", &self.allow_private_hosts),
        ] {
            if hosts.iter().any(|host| {
                host.is_empty() || host.contains(['/', ':', ' ']) && !host.starts_with('[')
            }) {
                problems.push(ConfigProblem::new(
                    key,
                    "entries are bare host names or IP addresses (no scheme, port or path)",
                ));
            }
        }
        problems
    }
}

/// A negotiation failure as the registry names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub code: &'static str,
    pub content: String,
}

impl Refusal {
    fn new(code: &'static str, content: impl Into<String>) -> Self {
        Self {
            code,
            content: content.into(),
        }
    }

    pub fn invalid_url(content: impl Into<String>) -> Self {
        Self::new("invalid_profile_url", content)
    }

    pub fn unreachable(content: impl Into<String>) -> Self {
        Self::new("profile_unreachable", content)
    }

    pub fn malformed(content: impl Into<String>) -> Self {
        Self::new("profile_malformed", content)
    }
}

type Cache = HashMap<String, (Result<(), Refusal>, Instant)>;

/// Cache entries beyond this are dropped (expired first, then all) to bound memory.
const CACHE_CAP: usize = 10_000;

pub struct Negotiator {
    config: NegotiationConfig,
    versions: Vec<&'static str>,
    cache: Mutex<Cache>,
}

impl Negotiator {
    pub fn new(config: &NegotiationConfig, namespace: &Namespace) -> Self {
        let mut versions = vec![namespace.version];
        versions.extend(namespace.supported_versions.iter().copied());
        Self {
            config: config.clone(),
            versions,
            cache: Mutex::new(HashMap::new()),
        }
    }

    pub fn enabled(&self) -> bool {
        self.config.enabled
    }

    fn cached(&self, url: &str) -> Option<Result<(), Refusal>> {
        let cache = self.cache.lock().ok()?;
        match cache.get(url) {
            Some((outcome, expires)) if *expires > Instant::now() => Some(outcome.clone()),
            _ => None,
        }
    }

    fn remember(&self, url: &str, outcome: &Result<(), Refusal>) {
        let ttl = Duration::from_secs(match outcome {
            Ok(()) => self.config.cache_ttl_secs,
            Err(_) => self.config.failure_cache_ttl_secs,
        });
        if ttl.is_zero() {
            return;
        }
        if let Ok(mut cache) = self.cache.lock() {
            if cache.len() >= CACHE_CAP {
                let now = Instant::now();
                cache.retain(|_, (_, expires)| *expires > now);
                if cache.len() >= CACHE_CAP {
                    cache.clear();
                }
            }
            cache.insert(url.to_owned(), (outcome.clone(), Instant::now() + ttl));
        }
    }

    /// Checks the agent named in `meta["ucp-agent"].profile`. A missing profile is left to
    /// argument validation (-32602).
    pub async fn check(&self, meta: &CallMeta) -> Result<(), Refusal> {
        if !self.config.enabled {
            return Ok(());
        }
        let Some(profile) = meta.profile.as_deref() else {
            return Ok(());
        };
        if profile.len() > 2048 {
            return Err(Refusal::invalid_url("profile URL is too long"));
        }
        if let Some(outcome) = self.cached(profile) {
            return outcome;
        }
        let outcome = self.negotiate(profile).await;
        if let Err(refusal) = &outcome {
            tracing::info!(code = refusal.code, "agent profile refused");
        }
        self.remember(profile, &outcome);
        outcome
    }

    async fn negotiate(&self, profile: &str) -> Result<(), Refusal> {
        let body = fetch::fetch_profile(&self.config, profile).await?;
        let document: Value = serde_json::from_slice(&body)
            .map_err(|_| Refusal::malformed("the agent profile is not valid JSON"))?;
        let version = document
            .get("ucp")
            .and_then(|ucp| ucp.get("version"))
            .and_then(Value::as_str)
            .ok_or_else(|| Refusal::malformed("the agent profile has no ucp.version string"))?;
        if self.versions.contains(&version) {
            Ok(())
        } else {
            Err(Refusal::new(
                "version_unsupported",
                format!(
                    "protocol version {} is not supported; this business serves {}",
                    version.chars().take(40).collect::<String>(),
                    self.versions.join(", ")
                ),
            ))
        }
    }
}
