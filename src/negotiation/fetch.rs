//! The SSRF-safe profile fetch.

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use bytes::Bytes;
use reqwest::redirect::Policy;
use url::{Host, Url};

use super::{NegotiationConfig, Refusal};

const MAX_REDIRECTS: usize = 3;

/// Addresses a profile fetch must not reach unless the host is explicitly allowed: this host,
/// private networks, link-local (cloud metadata), unique-local, multicast, unspecified.
pub fn is_restricted(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let [a, b, ..] = v4.octets();
            v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_multicast()
                || v4.is_unspecified()
                || v4.is_broadcast()
                || a == 0
                // carrier-grade NAT, 100.64.0.0/10
                || (a == 100 && (64..128).contains(&b))
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_restricted(IpAddr::V4(v4));
            }
            let segments = v6.segments();
            // NAT64 (64:ff9b::/96) reaches the embedded IPv4 address.
            if segments[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
                let [.., a, b, c, d] = v6.octets();
                return is_restricted(IpAddr::V4(std::net::Ipv4Addr::new(a, b, c, d)));
            }
            let first = segments[0];
            v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (first & 0xfe00) == 0xfc00
                || (first & 0xffc0) == 0xfe80
        }
    }
}

fn host_listed(list: &[String], host: &str) -> bool {
    list.iter()
        .any(|allowed| allowed.eq_ignore_ascii_case(host))
}

/// Checks scheme and host of one hop and resolves it to the address to connect to.
async fn vet(config: &NegotiationConfig, url: &Url) -> Result<(String, SocketAddr), Refusal> {
    let host = match url.host() {
        Some(Host::Domain(domain)) => domain.to_ascii_lowercase(),
        Some(Host::Ipv4(ip)) => ip.to_string(),
        Some(Host::Ipv6(ip)) => format!("[{ip}]"),
        None => return Err(Refusal::invalid_url("the profile URL has no host")),
    };
    match url.scheme() {
        "https" => {}
        "http" if host_listed(&config.allow_http_hosts, &host) => {}
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
    let candidates: Vec<SocketAddr> = match url.host() {
        Some(Host::Ipv4(ip)) => vec![SocketAddr::new(IpAddr::V4(ip), port)],
        Some(Host::Ipv6(ip)) => vec![SocketAddr::new(IpAddr::V6(ip), port)],
        _ => tokio::time::timeout(
            Duration::from_millis(config.timeout_ms),
            tokio::net::lookup_host((host.as_str(), port)),
        )
        .await
        .map_err(|_| Refusal::invalid_url("the profile host could not be resolved"))?
        .map_err(|_| Refusal::invalid_url("the profile host could not be resolved"))?
        .collect(),
    };
    let private_ok = host_listed(&config.allow_private_hosts, &host);
    // Every answer must be acceptable: a name that also resolves inward is refused outright.
    if candidates.is_empty() {
        return Err(Refusal::invalid_url(
            "the profile host could not be resolved",
        ));
    }
    if !private_ok && candidates.iter().any(|addr| is_restricted(addr.ip())) {
        return Err(Refusal::invalid_url(
            "the profile host resolves to a non-public address",
        ));
    }
    let chosen = candidates[0];
    Ok((host, chosen))
}

/// Fetches the profile body, following at most `MAX_REDIRECTS` redirects.
pub async fn fetch_profile(config: &NegotiationConfig, profile: &str) -> Result<Bytes, Refusal> {
    let mut url =
        Url::parse(profile).map_err(|_| Refusal::invalid_url("the profile URL is not a URL"))?;
    let timeout = Duration::from_millis(config.timeout_ms);
    for hop in 0..=MAX_REDIRECTS {
        let (host, address) = vet(config, &url).await?;
        let mut builder = reqwest::Client::builder()
            .redirect(Policy::none())
            .timeout(timeout)
            .connect_timeout(timeout)
            .no_proxy();
        if matches!(url.host(), Some(Host::Domain(_))) {
            // Pins the connection to the address just vetted; a second lookup could differ.
            builder = builder.resolve(&host, address);
        }
        let client = builder
            .build()
            .map_err(|_| Refusal::unreachable("the agent profile could not be fetched"))?;
        let mut response = client
            .get(url.clone())
            .header(http::header::ACCEPT, "application/json")
            .send()
            .await
            .map_err(|_| Refusal::unreachable("the agent profile could not be fetched"))?;
        let status = response.status();
        if status.is_redirection() {
            if hop == MAX_REDIRECTS {
                break;
            }
            let location = response
                .headers()
                .get(http::header::LOCATION)
                .and_then(|value| value.to_str().ok())
                .ok_or_else(|| Refusal::unreachable("the profile redirect has no location"))?;
            url = url
                .join(location)
                .map_err(|_| Refusal::unreachable("the profile redirect is not a URL"))?;
            continue;
        }
        if !status.is_success() {
            return Err(Refusal::unreachable(format!(
                "fetching the agent profile answered HTTP {}",
                status.as_u16()
            )));
        }
        if response
            .content_length()
            .is_some_and(|length| length > config.max_profile_bytes as u64)
        {
            return Err(too_big(config));
        }
        let mut body = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|_| Refusal::unreachable("the agent profile could not be fetched"))?
        {
            if body.len() + chunk.len() > config.max_profile_bytes {
                return Err(too_big(config));
            }
            body.extend_from_slice(&chunk);
        }
        return Ok(Bytes::from(body));
    }
    Err(Refusal::unreachable(format!(
        "the agent profile redirects more than {MAX_REDIRECTS} times"
    )))
}

fn too_big(config: &NegotiationConfig) -> Refusal {
    Refusal::malformed(format!(
        "the agent profile is larger than {} bytes",
        config.max_profile_bytes
    ))
}
