//! Configuration: one TOML file, one serde struct per section, unknown keys rejected by name.
//! Each section is owned (defined and checked) by the module that uses it; this top-level
//! module only assembles them into `BridgeConfig`, owns the `[server]` section of the top
//! level itself, and checks what spans sections. Nothing below the top level imports it.

use std::net::SocketAddr;
use std::path::Path;

use serde::Deserialize;
use serde::de::DeserializeOwned;
use url::Url;

use crate::access::AccessConfig;
use crate::brain::{CartConfig, LimitsConfig};
use crate::hardening::inbound::InboundConfig;
use crate::idempotency::IdempotencyConfig;
use crate::mcp::agents::AgentsConfig;
use crate::negotiation::NegotiationConfig;
use crate::platform::cache::CacheConfig;
use crate::platform::upstream::UpstreamConfig;
use crate::platform::{BuildContext, SharedPlatform};
use crate::protocol::{Namespace, Protocol};
use crate::registry;
use crate::settings::{ConfigProblem, deserialize_at};
use crate::tls::TlsConfig;

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
    pub idempotency: IdempotencyConfig,
    pub negotiation: NegotiationConfig,
    pub access: AccessConfig,
    pub agents: AgentsConfig,
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
    /// A connection must deliver a request's whole header block within this time.
    pub header_read_timeout_ms: u64,
    /// A request's whole body must arrive within this time of its headers.
    pub body_read_timeout_ms: u64,
    /// A keep-alive connection with no request in flight and no traffic is closed after this.
    pub idle_timeout_ms: u64,
    /// Open connections at most; past it a new one is answered 503 (-32000) and closed.
    pub max_connections: usize,
    /// After SIGTERM, in-flight calls get this long to finish; then every connection is closed.
    pub shutdown_grace_ms: u64,
    /// `[server.tls]`: terminate TLS 1.3 in the bridge itself (no ingress in front).
    pub tls: Option<TlsConfig>,
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
            header_read_timeout_ms: 10_000,
            body_read_timeout_ms: 30_000,
            idle_timeout_ms: 60_000,
            max_connections: 1_024,
            shutdown_grace_ms: 10_000,
            tls: None,
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
            None if self.tls.is_some() => format!("https://{bound}"),
            None => format!("http://{bound}"),
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
    "agents",
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
            agents: Default::default(),
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
            let place = error
                .span()
                .map(|span| line_and_column(text, span.start))
                .map(|(line, column)| format!(" at line {line}, column {column}"))
                .unwrap_or_default();
            ConfigError::Invalid(vec![ConfigProblem::new(
                "(file)",
                format!("not valid TOML{place}: {}", error.message().trim()),
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
        let agents = section(&root, "agents", &mut problems);
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
            agents: agents.unwrap_or_default(),
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
        if self.server.public_base_url.is_none() && self.server.listen.ip().is_unspecified() {
            problems.push(ConfigProblem::new(
                "server.public_base_url",
                format!(
                    "required when server.listen is a wildcard address ({}): agents would be told to call http://{}{}; set the URL agents reach the bridge at, e.g. https://shop.example",
                    self.server.listen.ip(),
                    self.server.listen,
                    self.server.mcp_path
                ),
            ));
        }
        if let Some(url) = &self.server.public_base_url
            && !matches!(url.path(), "" | "/")
        {
            problems.push(ConfigProblem::new(
                "server.public_base_url",
                format!(
                    "must not have a path (got {:?}): endpoints are placed by server.mcp_path and server.ucp_mcp_path, so {} would become {}{}",
                    url.path(),
                    url.as_str().trim_end_matches('/'),
                    url.as_str().trim_end_matches('/'),
                    self.server.mcp_path
                ),
            ));
        }
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
        if !(100..=600_000).contains(&self.server.request_timeout_ms) {
            problems.push(ConfigProblem::new(
                "server.request_timeout_ms",
                "must be between 100 and 600000",
            ));
        }
        for (key, value) in [
            (
                "server.header_read_timeout_ms",
                self.server.header_read_timeout_ms,
            ),
            (
                "server.body_read_timeout_ms",
                self.server.body_read_timeout_ms,
            ),
            ("server.idle_timeout_ms", self.server.idle_timeout_ms),
            ("server.shutdown_grace_ms", self.server.shutdown_grace_ms),
        ] {
            if !(100..=600_000).contains(&value) {
                problems.push(ConfigProblem::new(key, "must be between 100 and 600000"));
            }
        }
        if !(1..=1_000_000).contains(&self.server.max_connections) {
            problems.push(ConfigProblem::new(
                "server.max_connections",
                "must be between 1 and 1000000",
            ));
        }
        if let Some(tls) = &self.server.tls {
            problems.extend(tls.problems());
        }
        problems.extend(self.limits.problems());
        problems.extend(self.cart.problems());
        problems.extend(self.cache.problems());
        problems.extend(self.upstream.problems());
        problems.extend(self.idempotency.problems());
        problems.extend(self.negotiation.problems());
        problems.extend(self.access.problems());
        problems.extend(self.agents.problems());
        match self.store.get("platform") {
            Some(toml::Value::String(name)) => match registry::factory(name) {
                Some(factory) => {
                    problems.extend((factory.check)(&self.store));
                    for key in self.cart.checkout_params.keys() {
                        if factory.reserved_checkout_params.contains(&key.as_str()) {
                            problems.push(ConfigProblem::new(
                                format!("cart.checkout_params.{key}"),
                                format!(
                                    "{key:?} is part of {name}'s own checkout URL and cannot be overridden"
                                ),
                            ));
                        }
                    }
                }
                None => problems.push(ConfigProblem::new(
                    "store.platform",
                    format!(
                        "unknown platform {name:?}; expected one of {}",
                        registry::platform_names().join(", ")
                    ),
                )),
            },
            Some(_) => problems.push(ConfigProblem::new("store.platform", "must be a string")),
            None => problems.push(ConfigProblem::new(
                "store.platform",
                format!(
                    "missing; expected one of {}",
                    registry::platform_names().join(", ")
                ),
            )),
        }
        problems
    }

    /// The store adapter `[store]` names, built with its share of the rest of the file;
    /// `public_base_url` is where agents reach the bridge (known once the listener is bound).
    pub fn build_platform(
        &self,
        public_base_url: String,
    ) -> Result<SharedPlatform, Vec<ConfigProblem>> {
        let factory = registry::factory(self.platform_name())
            .ok_or_else(|| vec![ConfigProblem::new("store.platform", "unknown platform")])?;
        (factory.build)(
            &self.store,
            &BuildContext {
                upstream: &self.upstream,
                max_response_bytes: self.limits.max_body_bytes,
                public_base_url,
            },
        )
    }

    pub fn platform_name(&self) -> &str {
        self.store
            .get("platform")
            .and_then(toml::Value::as_str)
            .unwrap_or("sample")
    }
}

/// 1-based line and column (in characters) of byte `offset` in `text`.
fn line_and_column(text: &str, offset: usize) -> (usize, usize) {
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let column = before
        .rsplit('\n')
        .next()
        .map_or(0, |tail| tail.chars().count())
        + 1;
    (line, column)
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
}
