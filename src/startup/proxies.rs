//! Proxies in front of the bridge (`server.trusted_proxies`): addresses or CIDR ranges, since
//! an ingress controller's pods change address with every rollout. A connection from one of
//! them carries many clients, so it has no per-address connection share, and each request it
//! brings is attributed to the client `X-Forwarded-For` names: walking the list from the right
//! (the hop nearest to us), the first address that is not itself a trusted proxy. Everything
//! to its left was written by the client and proves nothing. Without a trusted proxy the
//! header is ignored: any client could write it.

use std::net::{IpAddr, SocketAddr};
use std::str::FromStr;

use http::HeaderMap;

/// One trusted address, or a range of them (`10.0.0.0/8`, `fd00::/8`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProxyRange {
    network: IpAddr,
    prefix: u8,
}

impl ProxyRange {
    pub fn contains(&self, address: IpAddr) -> bool {
        match (self.network, canonical(address)) {
            (IpAddr::V4(network), IpAddr::V4(address)) => {
                let mask = u32::MAX
                    .checked_shl(32 - u32::from(self.prefix))
                    .unwrap_or(0);
                u32::from(network) & mask == u32::from(address) & mask
            }
            (IpAddr::V6(network), IpAddr::V6(address)) => {
                let mask = u128::MAX
                    .checked_shl(128 - u32::from(self.prefix))
                    .unwrap_or(0);
                u128::from(network) & mask == u128::from(address) & mask
            }
            _ => false,
        }
    }
}

/// An IPv4 peer on a dual-stack socket arrives as `::ffff:a.b.c.d`; ranges are written in
/// IPv4.
fn canonical(address: IpAddr) -> IpAddr {
    match address {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(IpAddr::V6(v6), IpAddr::V4),
        v4 => v4,
    }
}

impl FromStr for ProxyRange {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let (address, prefix) = match text.split_once('/') {
            Some((address, prefix)) => (address, Some(prefix)),
            None => (text, None),
        };
        let network: IpAddr = address
            .trim()
            .parse()
            .map_err(|_| format!("`{text}` is not an IP address or a CIDR range"))?;
        let bits = if network.is_ipv4() { 32 } else { 128 };
        let prefix = match prefix {
            None => bits,
            Some(prefix) => prefix
                .trim()
                .parse::<u8>()
                .ok()
                .filter(|prefix| *prefix <= bits)
                .ok_or_else(|| format!("`{text}`: the prefix length must be 0 to {bits}"))?,
        };
        Ok(Self { network, prefix })
    }
}

impl std::fmt::Display for ProxyRange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.network, self.prefix)
    }
}

impl<'de> serde::Deserialize<'de> for ProxyRange {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

impl schemars::JsonSchema for ProxyRange {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "ProxyRange".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string",
            "description": "An IP address or a CIDR range, e.g. \"10.0.0.0/8\"",
            "examples": ["10.0.0.0/8", "192.0.2.10", "fd00::/8"]
        })
    }
}

/// The configured proxies.
#[derive(Debug, Clone, Default)]
pub struct TrustedProxies(Vec<ProxyRange>);

impl TrustedProxies {
    pub fn new(ranges: Vec<ProxyRange>) -> Self {
        Self(ranges)
    }

    pub fn contains(&self, address: IpAddr) -> bool {
        self.0.iter().any(|range| range.contains(address))
    }

    /// Who a request from `peer` is from: `peer` itself, or, when `peer` is a trusted proxy,
    /// the nearest untrusted hop its `X-Forwarded-For` names (port unknown: 0).
    pub fn client(&self, peer: SocketAddr, headers: &HeaderMap) -> SocketAddr {
        if !self.contains(peer.ip()) {
            return peer;
        }
        let hops: Vec<&str> = headers
            .get_all("x-forwarded-for")
            .iter()
            .filter_map(|value| value.to_str().ok())
            .flat_map(|value| value.split(','))
            .map(str::trim)
            .collect();
        let mut client = peer;
        for hop in hops.into_iter().rev() {
            let Some(address) = parse_hop(hop) else {
                // A hop we cannot read: nothing further left can be trusted either.
                break;
            };
            client = SocketAddr::new(address, 0);
            if !self.contains(address) {
                break;
            }
        }
        client
    }
}

/// One `X-Forwarded-For` entry: an address, possibly `[v6]` or with a port (some proxies).
fn parse_hop(hop: &str) -> Option<IpAddr> {
    if let Ok(address) = hop.parse::<IpAddr>() {
        return Some(address);
    }
    hop.parse::<SocketAddr>().ok().map(|socket| socket.ip())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn proxies(ranges: &[&str]) -> TrustedProxies {
        TrustedProxies::new(ranges.iter().map(|range| range.parse().unwrap()).collect())
    }

    fn forwarded(values: &[&str]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for value in values {
            headers.append("x-forwarded-for", value.parse().unwrap());
        }
        headers
    }

    fn peer(address: &str) -> SocketAddr {
        SocketAddr::new(address.parse().unwrap(), 40_000)
    }

    #[test]
    fn ranges_hold_what_their_prefix_says() {
        let range: ProxyRange = "10.1.0.0/16".parse().unwrap();
        assert!(range.contains("10.1.200.3".parse().unwrap()));
        assert!(!range.contains("10.2.0.1".parse().unwrap()));
        // An IPv4 peer seen on a dual-stack socket.
        assert!(range.contains("::ffff:10.1.0.9".parse().unwrap()));
        let one: ProxyRange = "192.0.2.10".parse().unwrap();
        assert!(one.contains("192.0.2.10".parse().unwrap()));
        assert!(!one.contains("192.0.2.11".parse().unwrap()));
        let all: ProxyRange = "0.0.0.0/0".parse().unwrap();
        assert!(all.contains("203.0.113.1".parse().unwrap()));
        let v6: ProxyRange = "fd00::/8".parse().unwrap();
        assert!(v6.contains("fd12::1".parse().unwrap()));
        assert!(!v6.contains("10.0.0.1".parse().unwrap()));
        for bad in ["10.0.0.0/33", "fd00::/129", "ingress", "10.0.0.0/x", ""] {
            assert!(bad.parse::<ProxyRange>().is_err(), "{bad}");
        }
    }

    #[test]
    fn the_client_is_the_nearest_untrusted_hop_behind_a_trusted_proxy() {
        let trusted = proxies(&["10.0.0.0/8"]);
        // Client, then an inner proxy of ours, as nginx appends them.
        let headers = forwarded(&["198.51.100.7, 10.3.3.3"]);
        assert_eq!(
            trusted.client(peer("10.0.0.5"), &headers).ip(),
            "198.51.100.7".parse::<IpAddr>().unwrap()
        );
        // Whatever the client wrote further left is not believed.
        let headers = forwarded(&["1.1.1.1", "198.51.100.7"]);
        assert_eq!(
            trusted.client(peer("10.0.0.5"), &headers).ip(),
            "198.51.100.7".parse::<IpAddr>().unwrap()
        );
        // With ports and brackets, as some proxies write them.
        let headers = forwarded(&["[2001:db8::1]:443"]);
        assert_eq!(
            trusted.client(peer("10.0.0.5"), &headers).ip(),
            "2001:db8::1".parse::<IpAddr>().unwrap()
        );
        // No header: the proxy itself.
        assert_eq!(
            trusted.client(peer("10.0.0.5"), &HeaderMap::new()),
            peer("10.0.0.5")
        );
        // An unreadable hop ends the walk at the last hop we could trust.
        let headers = forwarded(&["198.51.100.7, garbage"]);
        assert_eq!(trusted.client(peer("10.0.0.5"), &headers), peer("10.0.0.5"));
    }

    #[test]
    fn a_client_that_is_not_a_trusted_proxy_cannot_pick_its_address() {
        let trusted = proxies(&["10.0.0.0/8"]);
        let headers = forwarded(&["198.51.100.7"]);
        assert_eq!(
            trusted.client(peer("203.0.113.9"), &headers),
            peer("203.0.113.9")
        );
        assert_eq!(
            TrustedProxies::default().client(peer("10.0.0.5"), &headers),
            peer("10.0.0.5")
        );
    }
}
