//! `[server]`: where the bridge listens and is reached, its endpoints' paths, and the
//! connection deadlines of the accept loop; checked here, by the start-up that uses it.

use std::net::SocketAddr;

use super::proxies::ProxyRange;

use serde::Deserialize;
use url::Url;

use crate::protocol::{Namespace, Protocol};
use crate::settings::ConfigProblem;
use crate::status_page::StatusPageSetting;
use crate::tls::TlsConfig;

/// A transport binding of the UCP operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Transport {
    Mcp,
    Rest,
}

#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
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
    /// The base path of the BCP namespace's REST binding (`{rest_path}/catalog/search`, …).
    pub rest_path: String,
    /// The base path of the UCP namespace's REST binding.
    pub ucp_rest_path: String,
    /// The transports served and declared in the profiles: `mcp`, `rest` (both by default).
    pub transports: Vec<Transport>,
    /// A connection must deliver a request's whole header block within this time.
    pub header_read_timeout_ms: u64,
    /// A request's whole body must arrive within this time of its headers.
    pub body_read_timeout_ms: u64,
    /// A keep-alive connection with no request in flight and no traffic is closed after this.
    pub idle_timeout_ms: u64,
    /// Open connections at most; past it a newcomer takes the place of an idle connection
    /// (the one that has sent least, of the client holding the most) or, when every one is
    /// busy answering, is answered 503 (-32000) and closed.
    pub max_connections: usize,
    /// Open connections one client address may hold at most (past it a new one is answered
    /// 503); a quarter of `max_connections` when unset, so no one address can starve the rest.
    pub max_connections_per_client: Option<usize>,
    /// Proxies in front of the bridge (addresses or CIDR ranges): each carries many clients,
    /// so has no per-address connection share, and a request it brings counts as the client's
    /// its `X-Forwarded-For` names (per-client budgets tell those clients apart).
    pub trusted_proxies: Vec<ProxyRange>,
    /// After SIGTERM, in-flight calls get this long to finish; then every connection is closed.
    pub shutdown_grace_ms: u64,
    /// The merchant page at `GET /` (on by default; `false` answers 404).
    pub status_page: StatusPageSetting,
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
            rest_path: "/bcp".to_owned(),
            ucp_rest_path: "/ucp".to_owned(),
            transports: vec![Transport::Mcp, Transport::Rest],
            header_read_timeout_ms: 10_000,
            body_read_timeout_ms: 30_000,
            idle_timeout_ms: 60_000,
            max_connections: 1_024,
            max_connections_per_client: None,
            trusted_proxies: Vec::new(),
            shutdown_grace_ms: 10_000,
            status_page: StatusPageSetting::default(),
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

    /// Where `namespace`'s REST resources are mounted (no trailing slash).
    pub fn rest_path_for(&self, namespace: &Namespace) -> &str {
        let path = if namespace.service == Namespace::UCP.service {
            &self.ucp_rest_path
        } else {
            &self.rest_path
        };
        path.trim_end_matches('/')
    }

    /// `max_connections_per_client`, or its default.
    pub fn connections_per_client(&self) -> usize {
        self.max_connections_per_client
            .unwrap_or(self.max_connections / 4)
            .clamp(1, self.max_connections.max(1))
    }

    pub fn serves(&self, transport: Transport) -> bool {
        self.transports.contains(&transport)
    }

    /// The public base URL without a trailing slash.
    pub fn base_url(&self, bound: SocketAddr) -> String {
        match &self.public_base_url {
            Some(url) => url.as_str().trim_end_matches('/').to_owned(),
            None if self.tls.is_some() => format!("https://{bound}"),
            None => format!("http://{bound}"),
        }
    }

    /// What is wrong with `[server]` on its own (the TLS files included).
    pub fn problems(&self) -> Vec<ConfigProblem> {
        let mut problems = self.address_problems();
        problems.extend(self.path_problems());
        problems.extend(self.deadline_problems());
        if let Some(tls) = &self.tls {
            problems.extend(tls.problems());
        }
        problems
    }

    /// `public_base_url` against `listen`: what agents are told to call must be reachable.
    fn address_problems(&self) -> Vec<ConfigProblem> {
        let mut problems = Vec::new();
        if self.public_base_url.is_none() && self.listen.ip().is_unspecified() {
            problems.push(ConfigProblem::new(
                "server.public_base_url",
                format!(
                    "required when server.listen is a wildcard address ({}): agents would be told to call http://{}{}; set the URL agents reach the bridge at, e.g. https://shop.example",
                    self.listen.ip(),
                    self.listen,
                    self.mcp_path
                ),
            ));
        }
        if let Some(url) = &self.public_base_url
            && !matches!(url.path(), "" | "/")
        {
            problems.push(ConfigProblem::new(
                "server.public_base_url",
                format!(
                    "must not have a path (got {:?}): endpoints are placed by server.mcp_path and server.ucp_mcp_path, so {} would become {}{}",
                    url.path(),
                    url.as_str().trim_end_matches('/'),
                    url.as_str().trim_end_matches('/'),
                    self.mcp_path
                ),
            ));
        }
        if let Some(url) = &self.public_base_url {
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
        problems
    }

    fn path_problems(&self) -> Vec<ConfigProblem> {
        let mut problems = Vec::new();
        for (key, path, example) in [
            ("server.mcp_path", &self.mcp_path, "/bcp/mcp"),
            ("server.ucp_mcp_path", &self.ucp_mcp_path, "/ucp/mcp"),
        ] {
            if !path.starts_with('/') || path.len() < 2 || path.contains(['?', '#', ' ']) {
                problems.push(ConfigProblem::new(
                    key,
                    format!("must be an absolute path such as {example}"),
                ));
            }
        }
        for (key, path, example) in [
            ("server.rest_path", &self.rest_path, "/bcp"),
            ("server.ucp_rest_path", &self.ucp_rest_path, "/ucp"),
        ] {
            if !path.starts_with('/') || path.contains(['?', '#', ' ', '{', '}']) {
                problems.push(ConfigProblem::new(
                    key,
                    format!("must be an absolute path such as {example} (\"/\" for the root)"),
                ));
            }
        }
        if self.protocol == Protocol::Both
            && self.rest_path.trim_end_matches('/') == self.ucp_rest_path.trim_end_matches('/')
        {
            problems.push(ConfigProblem::new(
                "server.ucp_rest_path",
                "must differ from server.rest_path when server.protocol is \"both\"",
            ));
        }
        if self.transports.is_empty() {
            problems.push(ConfigProblem::new(
                "server.transports",
                "must name at least one of \"mcp\", \"rest\"",
            ));
        }
        if self.protocol == Protocol::Both && self.mcp_path == self.ucp_mcp_path {
            problems.push(ConfigProblem::new(
                "server.ucp_mcp_path",
                "must differ from server.mcp_path when server.protocol is \"both\"",
            ));
        }
        problems
    }

    fn deadline_problems(&self) -> Vec<ConfigProblem> {
        let mut problems = Vec::new();
        if !(100..=600_000).contains(&self.request_timeout_ms) {
            problems.push(ConfigProblem::new(
                "server.request_timeout_ms",
                "must be between 100 and 600000",
            ));
        }
        for (key, value) in [
            ("server.header_read_timeout_ms", self.header_read_timeout_ms),
            ("server.body_read_timeout_ms", self.body_read_timeout_ms),
            ("server.idle_timeout_ms", self.idle_timeout_ms),
            ("server.shutdown_grace_ms", self.shutdown_grace_ms),
        ] {
            if !(100..=600_000).contains(&value) {
                problems.push(ConfigProblem::new(key, "must be between 100 and 600000"));
            }
        }
        if !(1..=1_000_000).contains(&self.max_connections) {
            problems.push(ConfigProblem::new(
                "server.max_connections",
                "must be between 1 and 1000000",
            ));
        }
        if let Some(share) = self.max_connections_per_client
            && !(1..=self.max_connections.max(1)).contains(&share)
        {
            problems.push(ConfigProblem::new(
                "server.max_connections_per_client",
                "must be between 1 and server.max_connections",
            ));
        }
        problems
    }
}
