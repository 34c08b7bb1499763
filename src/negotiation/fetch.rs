//! The SSRF-safe profile fetch. Per hop: static URL checks, a slot under the fetch limits, name
//! resolution, the special-use check on every resolved address, then a connection pinned to the
//! address just checked. A refused address is refused before any socket exists.

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use bytes::Bytes;
use reqwest::redirect::Policy;
use url::{Host, Url};

use super::limits::FetchLimits;
use super::special_use::special_use;
use super::{NegotiationConfig, Refusal};

/// Addresses a profile fetch must not reach unless the host is explicitly allowed: every
/// special-use block (see `special_use`).
pub fn is_restricted(ip: IpAddr) -> bool {
    special_use(ip).is_some()
}

/// Where host names are looked up. Tests use a table so that no query leaves the machine.
pub(super) enum Resolver {
    System,
    #[cfg(test)]
    Table(std::collections::HashMap<String, TestAnswer>),
}

#[cfg(test)]
pub(super) enum TestAnswer {
    Addresses(Vec<IpAddr>),
    /// A resolver that never answers.
    Hang,
}

enum Lookup {
    Found(Vec<SocketAddr>),
    NotFound,
}

impl Resolver {
    async fn lookup(&self, host: &str, port: u16) -> Lookup {
        match self {
            Self::System => match tokio::net::lookup_host((host, port)).await {
                Ok(addresses) => Lookup::Found(addresses.collect()),
                Err(_) => Lookup::NotFound,
            },
            #[cfg(test)]
            Self::Table(table) => match table.get(host) {
                Some(TestAnswer::Addresses(ips)) => {
                    Lookup::Found(ips.iter().map(|ip| SocketAddr::new(*ip, port)).collect())
                }
                Some(TestAnswer::Hang) => std::future::pending().await,
                None => Lookup::NotFound,
            },
        }
    }
}

/// One hop's URL, checked without touching the network.
struct Target {
    /// Lower-cased domain, or the IP literal as written in allow-lists (`[v6]` bracketed).
    host: String,
    literal: Option<IpAddr>,
    port: u16,
}

pub(super) struct Fetcher {
    config: NegotiationConfig,
    resolver: Resolver,
    limits: FetchLimits,
}

fn host_listed(list: &[String], host: &str) -> bool {
    list.iter()
        .any(|allowed| allowed.eq_ignore_ascii_case(host))
}

fn fetch_failed() -> Refusal {
    Refusal::unreachable("the agent profile could not be fetched")
}

impl Fetcher {
    pub(super) fn new(config: &NegotiationConfig, resolver: Resolver) -> Self {
        Self {
            config: config.clone(),
            resolver,
            limits: FetchLimits::new(config.max_concurrent_fetches, config.max_fetches_per_host),
        }
    }

    fn timeout(&self) -> Duration {
        Duration::from_millis(self.config.timeout_ms)
    }

    /// Fetches the profile body. A redirect is refused, not followed: UCP profile endpoints
    /// must not redirect and verifiers must not follow them (DISC-002).
    pub(super) async fn fetch(&self, profile: &str) -> Result<Bytes, Refusal> {
        let url = Url::parse(profile)
            .map_err(|_| Refusal::invalid_url("the profile URL is not a URL"))?;
        self.get(&url).await
    }

    async fn get(&self, url: &Url) -> Result<Bytes, Refusal> {
        let target = self.target(url)?;
        let _admission = tokio::time::timeout(self.timeout(), self.limits.admit(&target.host))
            .await
            .ok()
            .flatten()
            .ok_or_else(Refusal::busy)?;
        let client = self.pinned(&target, self.timeout()).await?;
        let mut response = client
            .get(url.clone())
            .header(http::header::ACCEPT, "application/json")
            .send()
            .await
            .map_err(|_| fetch_failed())?;
        let status = response.status();
        if status.is_redirection() {
            return Err(Refusal::unreachable(format!(
                "the agent profile answered a redirect (HTTP {}); UCP profile URLs must not \
                 redirect and are not followed: publish the profile at its final URL",
                status.as_u16()
            )));
        }
        if !status.is_success() {
            return Err(Refusal::unreachable(format!(
                "fetching the agent profile answered HTTP {}",
                status.as_u16()
            )));
        }
        let cap = self.config.max_profile_bytes;
        if response
            .content_length()
            .is_some_and(|length| length > cap as u64)
        {
            return Err(too_big(cap));
        }
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|_| fetch_failed())? {
            if body.len() + chunk.len() > cap {
                return Err(too_big(cap));
            }
            body.extend_from_slice(&chunk);
        }
        Ok(Bytes::from(body))
    }

    /// A client for `url` under the same rules as a profile fetch (https unless
    /// `allow_http_hosts`, no credentials, no special-use address unless
    /// `allow_private_hosts`, no redirects, no proxy), its connection pinned to the address
    /// just checked. For the bridge's own outbound requests to an agent (order webhooks);
    /// the caller bounds how many run at once.
    pub(super) async fn client_for(
        &self,
        url: &Url,
        timeout: Duration,
    ) -> Result<reqwest::Client, Refusal> {
        let target = self.target(url)?;
        self.pinned(&target, timeout).await
    }

    async fn pinned(&self, target: &Target, timeout: Duration) -> Result<reqwest::Client, Refusal> {
        let address = self.resolve(target).await?;
        let mut builder = reqwest::Client::builder()
            .redirect(Policy::none())
            .timeout(timeout)
            .connect_timeout(timeout)
            .no_proxy();
        if target.literal.is_none() {
            // Pins the connection to the address just checked; a second lookup could differ.
            builder = builder.resolve(&target.host, address);
        }
        builder.build().map_err(|_| fetch_failed())
    }

    /// Scheme, credentials, host and port of one hop.
    fn target(&self, url: &Url) -> Result<Target, Refusal> {
        let (host, literal) = match url.host() {
            Some(Host::Domain(domain)) => (domain.to_ascii_lowercase(), None),
            Some(Host::Ipv4(ip)) => (ip.to_string(), Some(IpAddr::V4(ip))),
            Some(Host::Ipv6(ip)) => (format!("[{ip}]"), Some(IpAddr::V6(ip))),
            None => return Err(Refusal::invalid_url("the profile URL has no host")),
        };
        match url.scheme() {
            "https" => {}
            "http" if host_listed(&self.config.allow_http_hosts, &host) => {}
            _ => return Err(Refusal::invalid_url("the profile URL must use https")),
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(Refusal::invalid_url(
                "the profile URL must not carry credentials",
            ));
        }
        let port = url
            .port_or_known_default()
            .ok_or_else(|| Refusal::invalid_url("the profile URL has no port"))?;
        Ok(Target {
            host,
            literal,
            port,
        })
    }

    /// The address to connect to. Every answer must be acceptable: a name that also resolves
    /// inward is refused outright (DISC-011).
    async fn resolve(&self, target: &Target) -> Result<SocketAddr, Refusal> {
        let candidates = match target.literal {
            Some(ip) => vec![SocketAddr::new(ip, target.port)],
            None => match tokio::time::timeout(
                self.timeout(),
                self.resolver.lookup(&target.host, target.port),
            )
            .await
            {
                Ok(Lookup::Found(addresses)) => addresses,
                Ok(Lookup::NotFound) => Vec::new(),
                Err(_) => {
                    return Err(Refusal::unreachable(
                        "the profile host did not resolve in time",
                    ));
                }
            },
        };
        let Some(first) = candidates.first().copied() else {
            return Err(Refusal::unresolvable());
        };
        if host_listed(&self.config.allow_private_hosts, &target.host) {
            return Ok(first);
        }
        if let Some(block) = candidates.iter().find_map(|addr| special_use(addr.ip())) {
            tracing::debug!(
                block,
                "agent profile host resolves to a special-use address"
            );
            return Err(Refusal::invalid_url(
                "the profile host resolves to a non-public address",
            ));
        }
        Ok(first)
    }

    #[cfg(test)]
    pub(super) fn limits(&self) -> &FetchLimits {
        &self.limits
    }
}

fn too_big(cap: usize) -> Refusal {
    Refusal::malformed(format!("the agent profile is larger than {cap} bytes"))
}
