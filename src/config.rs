//! Configuration: one TOML file, one serde struct per section, unknown keys rejected by name.
//! Secrets are `SecretString`s that may live in the file or come from an environment variable
//! (`token = { env = "NAME" }`), so the file itself can be committed without them.

use std::collections::BTreeMap;
use std::fmt;
use std::net::SocketAddr;
use std::path::Path;

use secrecy::SecretString;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer};
use url::Url;

use crate::platform;
use crate::protocol::{Namespace, Protocol};

/// One thing wrong with a configuration, located by its dotted key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigProblem {
    pub key: String,
    pub message: String,
}

impl ConfigProblem {
    pub fn new(key: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            key: key.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for ConfigProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.key, self.message)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("{} problem(s) in the configuration:\n{}", .0.len(), render(.0))]
    Invalid(Vec<ConfigProblem>),
}

fn render(problems: &[ConfigProblem]) -> String {
    problems
        .iter()
        .map(|problem| format!("  - {problem}"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[derive(Debug, Clone)]
pub struct BridgeConfig {
    pub server: ServerConfig,
    pub limits: LimitsConfig,
    pub cart: CartConfig,
    pub cache: CacheConfig,
    pub upstream: UpstreamConfig,
    pub inbound: InboundConfig,
    /// The `[store]` table: `platform` plus that platform's own keys, which its adapter
    /// deserialises (and rejects unknown keys of) itself.
    pub store: toml::Table,
    pub idempotency: crate::idempotency::IdempotencyConfig,
    pub negotiation: crate::negotiation::NegotiationConfig,
    pub access: crate::access::AccessConfig,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ServerConfig {
    pub listen: SocketAddr,
    /// Where agents reach the bridge; used in the discovery profile, in `continue_url` of the
    /// sample store, and for Host/Origin checks. Defaults to `http://<listen>`.
    pub public_base_url: Option<Url>,
    pub mcp_path: String,
    /// Extra `Host` values accepted besides the public base URL's host (e.g. an internal name).
    pub allowed_hosts: Vec<String>,
    /// Browser origins allowed to call the MCP endpoint; empty means only non-browser clients
    /// and the public base URL's own origin.
    pub allowed_origins: Vec<String>,
    /// Budget of one whole MCP request; past it the agent gets -32000 / HTTP 503.
    pub request_timeout_ms: u64,
    /// `bcp` (default), `ucp` (UCP compatibility: `dev.ucp.*` names, `/.well-known/ucp`) or
    /// `both` (each namespace with its own profile and MCP endpoint).
    pub protocol: Protocol,
    /// The MCP endpoint of the UCP namespace (`mcp_path` is the BCP one).
    pub ucp_mcp_path: String,
}

impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            listen: SocketAddr::from(([127, 0, 0, 1], 8080)),
            public_base_url: None,
            mcp_path: "/bcp/mcp".to_owned(),
            allowed_hosts: Vec::new(),
            allowed_origins: Vec::new(),
            request_timeout_ms: 30_000,
            protocol: Protocol::default(),
            ucp_mcp_path: "/ucp/mcp".to_owned(),
        }
    }
}

impl ServerConfig {
    /// Where `namespace`'s MCP endpoint is mounted.
    pub fn mcp_path_for(&self, namespace: &Namespace) -> &str {
        if namespace.service == Namespace::UCP.service {
            &self.ucp_mcp_path
        } else {
            &self.mcp_path
        }
    }

    /// The public base URL without a trailing slash.
    pub fn base_url(&self, bound: SocketAddr) -> String {
        match &self.public_base_url {
            Some(url) => url.as_str().trim_end_matches('/').to_owned(),
            None => format!("http://{bound}"),
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LimitsConfig {
    pub default_page_size: u32,
    /// Larger requested page sizes are clamped to this silently.
    pub max_page_size: u32,
    /// `lookup_catalog` with more ids than this is refused with -32602.
    pub max_lookup_batch: u32,
    pub max_cart_lines: u32,
    pub max_line_quantity: u32,
    pub max_body_bytes: usize,
}

impl Default for LimitsConfig {
    fn default() -> Self {
        Self {
            default_page_size: 10,
            max_page_size: 50,
            max_lookup_batch: 50,
            max_cart_lines: 100,
            max_line_quantity: 999,
            max_body_bytes: 1024 * 1024,
        }
    }
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CartConfig {
    /// Replaces scheme, host and port of the store's checkout URL (e.g. the shop's public
    /// domain when the upstream answers with an internal one).
    pub checkout_base_url: Option<Url>,
    /// Query parameters added to every `continue_url` (attribution), replacing same-name ones.
    pub checkout_params: BTreeMap<String, String>,
}

/// `[cache]`: product cache in front of the store (see `platform::cache`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CacheConfig {
    pub enabled: bool,
    pub ttl_secs: u64,
    pub max_entries: u64,
    /// Also cache search pages (same TTL); a product webhook drops pages that show it.
    pub search: bool,
    /// Enables `POST /webhooks/shopify|woocommerce`, which drop a product from the cache.
    pub webhook_secret: Option<Secret>,
}

impl Default for CacheConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            ttl_secs: 60,
            max_entries: 10_000,
            search: false,
            webhook_secret: None,
        }
    }
}

/// `[upstream]`: per-store budget, timeouts and retries of calls to the store.
#[derive(Debug, Clone, Deserialize)]
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
        }
    }
}

/// `[inbound]`: per-agent and per-client-address budgets of tool calls (0 = off).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct InboundConfig {
    pub per_agent_per_minute: u32,
    pub per_ip_per_minute: u32,
}

/// A secret from the file (`key = "value"`) or from the environment (`key = { env = "NAME" }`).
/// Debug output and error messages never contain the value.
#[derive(Clone)]
pub struct Secret(pub SecretString);

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret([REDACTED])")
    }
}

impl<'de> Deserialize<'de> for Secret {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Source {
            Literal(String),
            Env { env: String },
        }
        match Source::deserialize(deserializer) {
            Ok(Source::Literal(value)) if value.is_empty() => {
                Err(serde::de::Error::custom("the secret is empty"))
            }
            Ok(Source::Literal(value)) => Ok(Self(SecretString::from(value))),
            Ok(Source::Env { env }) => match std::env::var(&env) {
                Ok(value) if !value.is_empty() => Ok(Self(SecretString::from(value))),
                _ => Err(serde::de::Error::custom(format!(
                    "environment variable {env} is not set or empty"
                ))),
            },
            Err(_) => Err(serde::de::Error::custom(
                "expected a string or a table { env = \"VARIABLE_NAME\" }",
            )),
        }
    }
}

const SECTIONS: &[&str] = &[
    "server",
    "limits",
    "cart",
    "cache",
    "upstream",
    "inbound",
    "store",
    "idempotency",
    "negotiation",
    "access",
];

impl Default for BridgeConfig {
    fn default() -> Self {
        let mut store = toml::Table::new();
        store.insert("platform".into(), toml::Value::String("sample".into()));
        Self {
            server: ServerConfig::default(),
            limits: LimitsConfig::default(),
            cart: CartConfig::default(),
            cache: CacheConfig::default(),
            upstream: UpstreamConfig::default(),
            inbound: InboundConfig::default(),
            store,
            idempotency: Default::default(),
            negotiation: Default::default(),
            access: Default::default(),
        }
    }
}

impl BridgeConfig {
    /// `demo`: the sample store, with no agent-profile fetching (demo agents such as the
    /// printed curl call name profiles that do not exist).
    pub fn demo() -> Self {
        let mut config = Self::default();
        config.negotiation.enabled = false;
        config
    }

    pub fn from_file(path: &Path) -> Result<Self, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.display().to_string(),
            source,
        })?;
        Self::from_toml(&text)
    }

    /// Parses and validates everything that can be checked without the network, collecting
    /// every problem instead of stopping at the first.
    pub fn from_toml(text: &str) -> Result<Self, ConfigError> {
        let root: toml::Table = text.parse().map_err(|error: toml::de::Error| {
            ConfigError::Invalid(vec![ConfigProblem::new(
                "(file)",
                format!("not valid TOML: {}", error.message()),
            )])
        })?;
        let mut problems = Vec::new();
        for key in root.keys() {
            if !SECTIONS.contains(&key.as_str()) {
                problems.push(ConfigProblem::new(
                    key.clone(),
                    format!("unknown section; expected one of {}", SECTIONS.join(", ")),
                ));
            }
        }
        let server = section::<ServerConfig>(&root, "server", &mut problems);
        let limits = section::<LimitsConfig>(&root, "limits", &mut problems);
        let cart = section::<CartConfig>(&root, "cart", &mut problems);
        let cache = section::<CacheConfig>(&root, "cache", &mut problems);
        let upstream = section::<UpstreamConfig>(&root, "upstream", &mut problems);
        let inbound = section::<InboundConfig>(&root, "inbound", &mut problems);
        let idempotency = section(&root, "idempotency", &mut problems);
        let negotiation = section(&root, "negotiation", &mut problems);
        let access = section(&root, "access", &mut problems);
        let store = match root.get("store") {
            Some(toml::Value::Table(table)) => table.clone(),
            Some(_) => {
                problems.push(ConfigProblem::new("store", "must be a table"));
                toml::Table::new()
            }
            None => BridgeConfig::default().store,
        };
        let config = BridgeConfig {
            server: server.unwrap_or_default(),
            limits: limits.unwrap_or_default(),
            cart: cart.unwrap_or_default(),
            cache: cache.unwrap_or_default(),
            upstream: upstream.unwrap_or_default(),
            inbound: inbound.unwrap_or_default(),
            store,
            idempotency: idempotency.unwrap_or_default(),
            negotiation: negotiation.unwrap_or_default(),
            access: access.unwrap_or_default(),
        };
        problems.extend(config.semantic_problems());
        if problems.is_empty() {
            Ok(config)
        } else {
            Err(ConfigError::Invalid(problems))
        }
    }

    fn semantic_problems(&self) -> Vec<ConfigProblem> {
        let mut problems = Vec::new();
        if let Some(url) = &self.server.public_base_url {
            if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
                problems.push(ConfigProblem::new(
                    "server.public_base_url",
                    "must be an http(s) URL with a host",
                ));
            }
            if url.query().is_some() || url.fragment().is_some() {
                problems.push(ConfigProblem::new(
                    "server.public_base_url",
                    "must not have a query or fragment",
                ));
            }
        }
        for (key, path, example) in [
            ("server.mcp_path", &self.server.mcp_path, "/bcp/mcp"),
            ("server.ucp_mcp_path", &self.server.ucp_mcp_path, "/ucp/mcp"),
        ] {
            if !path.starts_with('/') || path.len() < 2 || path.contains(['?', '#', ' ']) {
                problems.push(ConfigProblem::new(
                    key,
                    format!("must be an absolute path such as {example}"),
                ));
            }
        }
        if self.server.protocol == Protocol::Both
            && self.server.mcp_path == self.server.ucp_mcp_path
        {
            problems.push(ConfigProblem::new(
                "server.ucp_mcp_path",
                "must differ from server.mcp_path when server.protocol is \"both\"",
            ));
        }
        let limits = &self.limits;
        for (key, value, max) in [
            ("limits.default_page_size", limits.default_page_size, 250),
            ("limits.max_page_size", limits.max_page_size, 250),
            ("limits.max_lookup_batch", limits.max_lookup_batch, 250),
            ("limits.max_cart_lines", limits.max_cart_lines, 500),
            (
                "limits.max_line_quantity",
                limits.max_line_quantity,
                1_000_000,
            ),
        ] {
            if value == 0 || value > max {
                problems.push(ConfigProblem::new(
                    key,
                    format!("must be between 1 and {max}"),
                ));
            }
        }
        if limits.default_page_size > limits.max_page_size {
            problems.push(ConfigProblem::new(
                "limits.default_page_size",
                "must not exceed limits.max_page_size",
            ));
        }
        if limits.max_body_bytes < 1024 {
            problems.push(ConfigProblem::new(
                "limits.max_body_bytes",
                "must be at least 1024",
            ));
        }
        if let Some(url) = &self.cart.checkout_base_url
            && (!matches!(url.scheme(), "http" | "https") || url.host_str().is_none())
        {
            problems.push(ConfigProblem::new(
                "cart.checkout_base_url",
                "must be an http(s) URL with a host",
            ));
        }
        problems.extend(self.hardening_problems());
        problems.extend(self.idempotency.problems());
        problems.extend(self.negotiation.problems());
        problems.extend(self.access.problems());
        match self.store.get("platform") {
            Some(toml::Value::String(name)) => match platform::factory(name) {
                Some(factory) => problems.extend((factory.check)(&self.store)),
                None => problems.push(ConfigProblem::new(
                    "store.platform",
                    format!(
                        "unknown platform {name:?}; expected one of {}",
                        platform::platform_names().join(", ")
                    ),
                )),
            },
            Some(_) => problems.push(ConfigProblem::new("store.platform", "must be a string")),
            None => problems.push(ConfigProblem::new(
                "store.platform",
                format!(
                    "missing; expected one of {}",
                    platform::platform_names().join(", ")
                ),
            )),
        }
        problems
    }

    fn hardening_problems(&self) -> Vec<ConfigProblem> {
        let mut problems = Vec::new();
        let up = &self.upstream;
        for (key, value, min, max) in [
            (
                "server.request_timeout_ms",
                self.server.request_timeout_ms,
                100,
                600_000,
            ),
            ("cache.ttl_secs", self.cache.ttl_secs, 1, 86_400),
            ("cache.max_entries", self.cache.max_entries, 1, 10_000_000),
            (
                "upstream.requests_per_second",
                u64::from(up.requests_per_second),
                0,
                100_000,
            ),
            ("upstream.max_wait_ms", up.max_wait_ms, 0, 60_000),
            ("upstream.timeout_ms", up.timeout_ms, 100, 120_000),
            (
                "upstream.read_deadline_ms",
                up.read_deadline_ms,
                100,
                300_000,
            ),
            ("upstream.max_retries", u64::from(up.max_retries), 0, 10),
        ] {
            if value < min || value > max {
                problems.push(ConfigProblem::new(
                    key,
                    format!("must be between {min} and {max}"),
                ));
            }
        }
        if up.requests_per_second > 0 && (up.burst == 0 || up.burst > 100_000) {
            problems.push(ConfigProblem::new(
                "upstream.burst",
                "must be between 1 and 100000 when upstream.requests_per_second is set",
            ));
        }
        if self.cache.webhook_secret.is_some() && !self.cache.enabled {
            problems.push(ConfigProblem::new(
                "cache.webhook_secret",
                "has no effect while cache.enabled = false",
            ));
        }
        if up.read_deadline_ms < up.timeout_ms {
            problems.push(ConfigProblem::new(
                "upstream.read_deadline_ms",
                "must not be shorter than upstream.timeout_ms",
            ));
        }
        problems
    }

    pub fn platform_name(&self) -> &str {
        self.store
            .get("platform")
            .and_then(toml::Value::as_str)
            .unwrap_or("sample")
    }
}

/// Deserialises `root[name]` (absent → default), recording a problem located at the exact key.
fn section<T: DeserializeOwned + Default>(
    root: &toml::Table,
    name: &str,
    problems: &mut Vec<ConfigProblem>,
) -> Option<T> {
    let Some(value) = root.get(name) else {
        return Some(T::default());
    };
    deserialize_at(value.clone(), name, problems)
}

/// Deserialises a TOML value, turning the first error into a problem that names the full key
/// (`server.listen`, `store.shop_domain`, …). Used by platform adapters for their own tables.
pub fn deserialize_at<T: DeserializeOwned>(
    value: toml::Value,
    prefix: &str,
    problems: &mut Vec<ConfigProblem>,
) -> Option<T> {
    match serde_path_to_error::deserialize::<_, T>(value) {
        Ok(parsed) => Some(parsed),
        Err(error) => {
            let inner = error.inner().to_string().trim().to_owned();
            let path = error.path().to_string();
            let mut key = if path == "." || path.is_empty() {
                prefix.to_owned()
            } else {
                format!("{prefix}.{path}")
            };
            // serde names an unknown key only in its message; make it part of the key.
            if let Some(unknown) = unknown_field_name(&inner)
                && !key.ends_with(&format!(".{unknown}"))
            {
                key = format!("{key}.{unknown}");
            }
            problems.push(ConfigProblem::new(key, inner));
            None
        }
    }
}

fn unknown_field_name(message: &str) -> Option<&str> {
    let rest = message.strip_prefix("unknown field `")?;
    rest.split('`').next()
}

/// Deserialises a platform's `[store]` table into its own struct, without the `platform` key.
pub fn store_settings<T: DeserializeOwned>(
    store: &toml::Table,
    problems: &mut Vec<ConfigProblem>,
) -> Option<T> {
    let mut table = store.clone();
    table.remove("platform");
    deserialize_at(toml::Value::Table(table), "store", problems)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]
    use super::*;

    fn problems(text: &str) -> Vec<ConfigProblem> {
        match BridgeConfig::from_toml(text) {
            Err(ConfigError::Invalid(problems)) => problems,
            other => panic!("expected problems, got {other:?}"),
        }
    }

    #[test]
    fn empty_file_is_the_sample_store_on_loopback() {
        let config = BridgeConfig::from_toml("").unwrap();
        assert_eq!(config.platform_name(), "sample");
        assert_eq!(config.server.mcp_path, "/bcp/mcp");
        assert_eq!(config.limits.default_page_size, 10);
    }

    #[test]
    fn unknown_keys_are_named_with_their_section() {
        let found = problems("[server]\nlisten = \"127.0.0.1:1\"\nlisen = 1\n");
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].key, "server.lisen");
        let found = problems("[serverr]\n");
        assert_eq!(found[0].key, "serverr");
    }

    #[test]
    fn every_section_reports_its_own_problem() {
        let found = problems(
            "[server]\nlisten = \"nope\"\n[limits]\nmax_page_size = 0\n[store]\nplatform = \"magento\"\n",
        );
        let keys: Vec<_> = found.iter().map(|p| p.key.as_str()).collect();
        assert!(keys.contains(&"server.listen"), "{keys:?}");
        assert!(keys.contains(&"limits.max_page_size"), "{keys:?}");
        assert!(keys.contains(&"store.platform"), "{keys:?}");
    }

    #[test]
    fn protocol_is_checked_by_key() {
        let config = BridgeConfig::from_toml("[server]\nprotocol = \"both\"\n").unwrap();
        assert_eq!(config.server.protocol, Protocol::Both);
        assert_eq!(config.server.ucp_mcp_path, "/ucp/mcp");
        let found = problems("[server]\nprotocol = \"acp\"\n");
        assert_eq!(found[0].key, "server.protocol");
        let found = problems(
            "[server]\nprotocol = \"both\"\nmcp_path = \"/mcp\"\nucp_mcp_path = \"/mcp\"\n",
        );
        assert_eq!(found[0].key, "server.ucp_mcp_path");
    }

    #[test]
    fn secrets_come_from_the_environment_and_never_print() {
        #[derive(Deserialize, Debug)]
        struct WithSecret {
            token: Secret,
        }
        // set_var is unsafe in edition 2024 (and the crate forbids unsafe), so read a variable
        // every test environment has.
        let from_env: WithSecret = toml::from_str("token = { env = \"PATH\" }").unwrap();
        assert!(!format!("{from_env:?}").contains('/'));
        use secrecy::ExposeSecret;
        assert_eq!(
            from_env.token.0.expose_secret(),
            std::env::var("PATH").unwrap()
        );
        let literal: WithSecret = toml::from_str("token = \"shpat_supersecret\"").unwrap();
        assert!(!format!("{literal:?}").contains("supersecret"));
        let missing = toml::from_str::<WithSecret>("token = { env = \"BCP_TEST_UNSET_VAR\" }")
            .unwrap_err()
            .to_string();
        assert!(missing.contains("BCP_TEST_UNSET_VAR"), "{missing}");
    }
}
