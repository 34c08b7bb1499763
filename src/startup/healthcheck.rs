//! `bcp-bridge healthcheck`: the image's HEALTHCHECK. It reads `server.listen` and
//! `[server.tls]` from the same file `serve` reads, so the probe follows the configured port
//! instead of a port written into the Dockerfile, and the image needs no curl.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::time::Duration;

use super::server_config::ServerConfig;

/// Where this process's own `/healthz` is reached: the listen address, with a wildcard
/// (`0.0.0.0`, `::`) replaced by loopback, since the probe runs beside the server.
pub fn probe_url(server: &ServerConfig) -> String {
    let ip = match server.listen.ip() {
        IpAddr::V4(ip) if ip.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
        IpAddr::V6(ip) if ip.is_unspecified() => IpAddr::V6(Ipv6Addr::LOCALHOST),
        ip => ip,
    };
    let scheme = if server.tls.is_some() {
        "https"
    } else {
        "http"
    };
    format!(
        "{scheme}://{}/healthz",
        SocketAddr::new(ip, server.listen.port())
    )
}

/// GETs `/healthz` once; `Err` says why the bridge is not healthy.
pub async fn probe(server: &ServerConfig, timeout: Duration) -> Result<(), String> {
    let url = probe_url(server);
    let client = reqwest::Client::builder()
        .timeout(timeout)
        // The certificate names the public host, never the loopback address probed here; this
        // checks that the process serves, not who it is, and sends nothing secret.
        .tls_danger_accept_invalid_certs(true)
        .build()
        .map_err(|error| format!("cannot build the probe client: {error}"))?;
    let response = client
        .get(&url)
        .send()
        .await
        .map_err(|error| format!("{url}: {error}"))?;
    if response.status().is_success() {
        Ok(())
    } else {
        Err(format!("{url}: HTTP {}", response.status()))
    }
}
