//! Version negotiation: fetch the agent's profile (`meta["ucp-agent"].profile`) and settle the
//! newest protocol version both sides speak: the agent's `ucp.version` and the keys of its
//! `supported_versions` against the versions this bridge serves (`agreement`). The profile URL is chosen by whoever calls us,
//! so the fetch is SSRF-hardened: https only, no special-use targets (`special_use`), the
//! checked address is the one connected to (no DNS-rebinding swap), no redirects followed
//! (DISC-002), a short timeout, a size cap, and bounded concurrency (`limits`). Outcomes are
//! cached, failures briefly; concurrent checks of one URL share one fetch.

mod agreement;
mod client;
mod code;
mod fetch;
mod limits;
mod special_use;
#[cfg(test)]
mod tests;

use std::sync::Arc;
use std::time::{Duration, Instant};

use moka::Expiry;
use moka::future::Cache;
use serde::Deserialize;
use serde_json::Value;

use crate::protocol::Namespace;
use crate::protocol::request::CallMeta;
use crate::settings::ConfigProblem;

pub use agreement::Agreement;
pub use client::ProfileClient;
pub use code::NegotiationCode;
pub use fetch::is_restricted;

#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct NegotiationConfig {
    pub enabled: bool,
    /// Hosts whose profiles may be fetched over plain http (tests, internal agents).
    pub allow_http_hosts: Vec<String>,
    /// Hosts allowed to resolve to special-use addresses (loopback, private, link-local, ...).
    pub allow_private_hosts: Vec<String>,
    pub timeout_ms: u64,
    pub cache_ttl_secs: u64,
    /// Failures are cached too (so a dead profile host is not hammered), but briefly.
    pub failure_cache_ttl_secs: u64,
    pub max_profile_bytes: usize,
    /// Profile fetches on the wire at once, across all hosts.
    pub max_concurrent_fetches: usize,
    /// Profile fetches on the wire at once to one host.
    pub max_fetches_per_host: usize,
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
            // UCP 2026-08-25 asks a cap of no less than 128 KiB (DISC-012).
            max_profile_bytes: 128 * 1024,
            max_concurrent_fetches: 16,
            max_fetches_per_host: 4,
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
        if self.max_concurrent_fetches == 0 || self.max_concurrent_fetches > 1024 {
            problems.push(ConfigProblem::new(
                "negotiation.max_concurrent_fetches",
                "must be between 1 and 1024",
            ));
        }
        if self.max_fetches_per_host == 0 || self.max_fetches_per_host > self.max_concurrent_fetches
        {
            problems.push(ConfigProblem::new(
                "negotiation.max_fetches_per_host",
                "must be between 1 and negotiation.max_concurrent_fetches",
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

/// A negotiation failure as the registry names it: this layer's error, which the pipeline
/// turns into the protocol error `ProtocolError::Negotiation`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NegotiationError {
    pub code: NegotiationCode,
    pub content: String,
    /// Says nothing about the profile (the bridge was busy): never cached.
    transient: bool,
}

impl NegotiationError {
    fn new(code: NegotiationCode, content: impl Into<String>) -> Self {
        Self {
            code,
            content: content.into(),
            transient: false,
        }
    }

    /// NEG-005 puts an unresolvable profile URL under `invalid_profile_url` (400); NEG-003
    /// keeps `profile_unreachable` (424) for a URL that resolved but whose fetch failed.
    pub fn unresolvable() -> Self {
        Self::invalid_url("the profile host could not be resolved")
    }

    /// Every fetch slot stayed taken for the whole timeout.
    pub fn busy() -> Self {
        Self {
            transient: true,
            ..Self::unreachable("too many agent profiles are being fetched; retry shortly")
        }
    }

    /// Names the profile and says what can be done about the refusal: the agent's builder
    /// reads it in the answer, the operator in the log.
    fn explained(mut self, profile: &str) -> Self {
        let shown: String = profile
            .chars()
            .take(200)
            .map(|c| if c.is_control() { '\u{fffd}' } else { c })
            .collect();
        let fix = self.code.fix();
        self.content = format!(
            "agent profile {shown}: {}. {fix}Operators: negotiation.enabled = false skips this check, and [agents] default_profile serves clients that send no profile.",
            self.content.trim_end_matches('.')
        );
        self
    }

    pub fn invalid_url(content: impl Into<String>) -> Self {
        Self::new(NegotiationCode::InvalidProfileUrl, content)
    }

    pub fn unreachable(content: impl Into<String>) -> Self {
        Self::new(NegotiationCode::ProfileUnreachable, content)
    }

    pub fn malformed(content: impl Into<String>) -> Self {
        Self::new(NegotiationCode::ProfileMalformed, content)
    }
}

/// Outcomes kept at most; the cache evicts the least useful beyond this to bound memory.
const CACHE_CAP: u64 = 10_000;

type Outcome = Result<Agreement, NegotiationError>;

/// Successes live `cache_ttl_secs`, failures `failure_cache_ttl_secs`.
struct OutcomeTtl {
    success: Duration,
    failure: Duration,
}

impl Expiry<String, Outcome> for OutcomeTtl {
    fn expire_after_create(&self, _: &String, outcome: &Outcome, _: Instant) -> Option<Duration> {
        Some(match outcome {
            Ok(_) => self.success,
            Err(_) => self.failure,
        })
    }
}

pub struct Negotiator {
    config: NegotiationConfig,
    namespace: Namespace,
    outcomes: Cache<String, Outcome>,
    fetcher: Arc<fetch::Fetcher>,
}

impl Negotiator {
    /// `profiles`: the fetcher shared with the other readers of agent profiles.
    pub fn new(
        config: &NegotiationConfig,
        namespace: &Namespace,
        profiles: &ProfileClient,
    ) -> Self {
        Self::with_fetcher(config, namespace, profiles.fetcher.clone())
    }

    #[cfg(test)]
    fn with_resolver(
        config: &NegotiationConfig,
        namespace: &Namespace,
        resolver: fetch::Resolver,
    ) -> Self {
        Self::with_fetcher(
            config,
            namespace,
            Arc::new(fetch::Fetcher::new(config, resolver)),
        )
    }

    fn with_fetcher(
        config: &NegotiationConfig,
        namespace: &Namespace,
        fetcher: Arc<fetch::Fetcher>,
    ) -> Self {
        let outcomes = Cache::builder()
            .max_capacity(CACHE_CAP)
            .expire_after(OutcomeTtl {
                success: Duration::from_secs(config.cache_ttl_secs),
                failure: Duration::from_secs(config.failure_cache_ttl_secs),
            })
            .build();
        Self {
            config: config.clone(),
            namespace: namespace.clone(),
            outcomes,
            fetcher,
        }
    }

    pub fn enabled(&self) -> bool {
        self.config.enabled
    }

    /// Negotiates with the agent named in `meta["ucp-agent"].profile`: `None` when nothing was
    /// negotiated (negotiation is off, or the profile is missing, which is left to argument
    /// validation, -32602).
    pub async fn check(&self, meta: &CallMeta) -> Result<Option<Agreement>, NegotiationError> {
        if !self.config.enabled {
            return Ok(None);
        }
        let Some(profile) = meta.profile.as_deref() else {
            return Ok(None);
        };
        self.outcome(profile)
            .await
            .map(Some)
            .map_err(|refusal| refusal.explained(profile))
    }

    /// The cached outcome for `profile`, or one fetch shared by every concurrent caller.
    async fn outcome(&self, profile: &str) -> Outcome {
        if profile.len() > 2048 {
            return Err(NegotiationError::invalid_url("profile URL is too long"));
        }
        let shared = self
            .outcomes
            .try_get_with_by_ref(profile, async {
                let outcome = self.negotiate(profile).await;
                if let Err(refusal) = &outcome {
                    tracing::info!(
                        code = refusal.code.as_str(),
                        reason = %refusal.content,
                        "agent profile refused"
                    );
                    if refusal.transient {
                        return Err(refusal.clone());
                    }
                }
                Ok(outcome)
            })
            .await;
        match shared {
            Ok(outcome) => outcome,
            Err(refusal) => Err(NegotiationError::clone(&refusal)),
        }
    }

    async fn negotiate(&self, profile: &str) -> Result<Agreement, NegotiationError> {
        let body = self.fetcher.fetch(profile).await?;
        let document: Value = serde_json::from_slice(&body)
            .map_err(|_| NegotiationError::malformed("the agent profile is not valid JSON"))?;
        agreement::settle(&self.namespace, &document)
    }
}
