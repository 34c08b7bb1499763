//! The SSRF-safe profile fetch. Per hop: static URL checks, a slot under the fetch limits, name
//! resolution, the special-use check on every resolved address, then a connection pinned to the
//! address just checked. A refused address is refused before any socket exists.
//!
//! One fetcher serves every reader of agent profiles (negotiation, signature keys), so a
//! document fetched for one is shared with the other for a few seconds: on a cold cache the
//! signature check and negotiation of one call fetch the profile once. A document that came
//! with a validator (`ETag`, `Last-Modified`; DISC-009) is revalidated with a conditional
//! request when it is fetched again, and a 304 reuses the bytes already held.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use moka::future::Cache;
use reqwest::redirect::Policy;
use url::{Host, Url};

use super::limits::FetchLimits;
use super::special_use::special_use;
use super::{NegotiationConfig, NegotiationError};

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
    /// Documents fetched within [`SHARE_WINDOW`]: what one call's readers share.
    recent: Cache<String, Bytes>,
    /// The last document of each profile that carried a validator, to revalidate.
    validated: Cache<String, Arc<Validated>>,
}

/// How long a fetched document is handed to other readers without asking again: long enough
/// for one call's signature check and negotiation, far below UCP's 60 s cache floor (and
/// never past `cache_ttl_secs`).
const SHARE_WINDOW: Duration = Duration::from_secs(5);
/// How long a validator is kept for revalidation.
const VALIDATOR_TTL: Duration = Duration::from_secs(86_400);
const DOCUMENTS_CAP: u64 = 10_000;

/// A document and the validators it came with.
struct Validated {
    etag: Option<String>,
    last_modified: Option<String>,
    body: Bytes,
}

/// A fetch's answer: a new document (with its validators), or the held one still current.
enum Got {
    Fresh(Validated),
    NotModified,
}

fn host_listed(list: &[String], host: &str) -> bool {
    list.iter()
        .any(|allowed| allowed.eq_ignore_ascii_case(host))
}

fn fetch_failed() -> NegotiationError {
    NegotiationError::unreachable("the agent profile could not be fetched")
}

impl Fetcher {
    pub(super) fn new(config: &NegotiationConfig, resolver: Resolver) -> Self {
        Self {
            config: config.clone(),
            resolver,
            limits: FetchLimits::new(config.max_concurrent_fetches, config.max_fetches_per_host),
            // Never longer than the operator lets outcomes be cached (0: concurrent readers
            // still share one request, later ones ask again).
            recent: Cache::builder()
                .max_capacity(DOCUMENTS_CAP)
                .time_to_live(SHARE_WINDOW.min(Duration::from_secs(config.cache_ttl_secs)))
                .build(),
            validated: Cache::builder()
                .max_capacity(DOCUMENTS_CAP)
                .time_to_live(VALIDATOR_TTL)
                .build(),
        }
    }

    fn timeout(&self) -> Duration {
        Duration::from_millis(self.config.timeout_ms)
    }

    /// Fetches the profile body. A redirect is refused, not followed: UCP profile endpoints
    /// must not redirect and verifiers must not follow them (DISC-002).
    /// A document fetched within the share window is answered as it is; concurrent fetches of
    /// one URL share one request.
    pub(super) async fn fetch(&self, profile: &str) -> Result<Bytes, NegotiationError> {
        self.recent
            .try_get_with_by_ref(profile, self.revalidate(profile))
            .await
            .map_err(|refusal| NegotiationError::clone(&refusal))
    }

    /// [`Fetcher::fetch`] past the share window: asks the host again (conditionally when a
    /// validator is held), e.g. for keys after an unknown `kid`.
    pub(super) async fn fetch_again(&self, profile: &str) -> Result<Bytes, NegotiationError> {
        self.recent.invalidate(profile).await;
        self.fetch(profile).await
    }

    /// One request for the document, conditional when a validator is held.
    async fn revalidate(&self, profile: &str) -> Result<Bytes, NegotiationError> {
        let url = Url::parse(profile)
            .map_err(|_| NegotiationError::invalid_url("the profile URL is not a URL"))?;
        let held = self.validated.get(profile).await;
        match self.get(&url, held.as_deref()).await? {
            Got::NotModified => match held {
                Some(held) => Ok(held.body.clone()),
                // `get` answers NotModified only to a conditional request.
                None => Err(fetch_failed()),
            },
            Got::Fresh(document) => {
                let body = document.body.clone();
                if document.etag.is_some() || document.last_modified.is_some() {
                    self.validated
                        .insert(profile.to_owned(), Arc::new(document))
                        .await;
                } else {
                    self.validated.invalidate(profile).await;
                }
                Ok(body)
            }
        }
    }

    async fn get(&self, url: &Url, held: Option<&Validated>) -> Result<Got, NegotiationError> {
        let target = self.target(url)?;
        let _admission = tokio::time::timeout(self.timeout(), self.limits.admit(&target.host))
            .await
            .ok()
            .flatten()
            .ok_or_else(NegotiationError::busy)?;
        let client = self.pinned(&target, self.timeout()).await?;
        let mut request = client
            .get(url.clone())
            .header(http::header::ACCEPT, "application/json");
        if let Some(held) = held {
            if let Some(etag) = &held.etag {
                request = request.header(http::header::IF_NONE_MATCH, etag);
            }
            if let Some(last_modified) = &held.last_modified {
                request = request.header(http::header::IF_MODIFIED_SINCE, last_modified);
            }
        }
        let mut response = request.send().await.map_err(|_| fetch_failed())?;
        let status = response.status();
        if status == reqwest::StatusCode::NOT_MODIFIED && held.is_some() {
            return Ok(Got::NotModified);
        }
        if status.is_redirection() {
            return Err(NegotiationError::unreachable(format!(
                "the agent profile answered a redirect (HTTP {}); UCP profile URLs must not \
                 redirect and are not followed: publish the profile at its final URL",
                status.as_u16()
            )));
        }
        if !status.is_success() {
            return Err(NegotiationError::unreachable(format!(
                "fetching the agent profile answered HTTP {}",
                status.as_u16()
            )));
        }
        // Validators are short header values; a long or non-text one is not kept.
        let validator = |name: http::header::HeaderName| {
            response
                .headers()
                .get(name)
                .and_then(|value| value.to_str().ok())
                .filter(|value| value.len() <= 256)
                .map(str::to_owned)
        };
        let etag = validator(http::header::ETAG);
        let last_modified = validator(http::header::LAST_MODIFIED);
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
        Ok(Got::Fresh(Validated {
            etag,
            last_modified,
            body: Bytes::from(body),
        }))
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
    ) -> Result<reqwest::Client, NegotiationError> {
        let target = self.target(url)?;
        self.pinned(&target, timeout).await
    }

    async fn pinned(
        &self,
        target: &Target,
        timeout: Duration,
    ) -> Result<reqwest::Client, NegotiationError> {
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
    fn target(&self, url: &Url) -> Result<Target, NegotiationError> {
        let (host, literal) = match url.host() {
            Some(Host::Domain(domain)) => (domain.to_ascii_lowercase(), None),
            Some(Host::Ipv4(ip)) => (ip.to_string(), Some(IpAddr::V4(ip))),
            Some(Host::Ipv6(ip)) => (format!("[{ip}]"), Some(IpAddr::V6(ip))),
            None => return Err(NegotiationError::invalid_url("the profile URL has no host")),
        };
        match url.scheme() {
            "https" => {}
            "http" if host_listed(&self.config.allow_http_hosts, &host) => {}
            _ => {
                return Err(NegotiationError::invalid_url(
                    "the profile URL must use https",
                ));
            }
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(NegotiationError::invalid_url(
                "the profile URL must not carry credentials",
            ));
        }
        let port = url
            .port_or_known_default()
            .ok_or_else(|| NegotiationError::invalid_url("the profile URL has no port"))?;
        Ok(Target {
            host,
            literal,
            port,
        })
    }

    /// The address to connect to. Every answer must be acceptable: a name that also resolves
    /// inward is refused outright (DISC-011).
    async fn resolve(&self, target: &Target) -> Result<SocketAddr, NegotiationError> {
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
                    return Err(NegotiationError::unreachable(
                        "the profile host did not resolve in time",
                    ));
                }
            },
        };
        let Some(first) = candidates.first().copied() else {
            return Err(NegotiationError::unresolvable());
        };
        if host_listed(&self.config.allow_private_hosts, &target.host) {
            return Ok(first);
        }
        if let Some(block) = candidates.iter().find_map(|addr| special_use(addr.ip())) {
            tracing::debug!(
                block,
                "agent profile host resolves to a special-use address"
            );
            return Err(NegotiationError::invalid_url(
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

fn too_big(cap: usize) -> NegotiationError {
    NegotiationError::malformed(format!("the agent profile is larger than {cap} bytes"))
}
