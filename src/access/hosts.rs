//! Which `Host` and `Origin` a request to an agent endpoint may carry: the DNS-rebinding
//! defence of every front (MCP and REST alike), checked before the body is read. A request
//! without `Origin` (every non-browser agent) passes the origin rule.

use http::header::{HOST, ORIGIN};
use http::request::Parts;

/// A `host[:port]` entry: without a port it matches every port of that host.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Authority {
    host: String,
    port: Option<u16>,
}

fn authority(text: &str) -> Option<Authority> {
    let authority = http::uri::Authority::try_from(text.trim()).ok()?;
    Some(Authority {
        host: authority
            .host()
            .trim_matches(['[', ']'])
            .to_ascii_lowercase(),
        port: authority.port_u16(),
    })
}

/// An origin as RFC 6454 compares it: scheme, host and port (the scheme's default when the
/// serialisation omits it), or the opaque `null`.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Origin {
    Null,
    Tuple {
        scheme: String,
        host: String,
        port: Option<u16>,
    },
}

fn default_port(scheme: &str) -> Option<u16> {
    match scheme {
        "http" => Some(80),
        "https" => Some(443),
        _ => None,
    }
}

fn origin(text: &str) -> Option<Origin> {
    let text = text.trim();
    if text.eq_ignore_ascii_case("null") {
        return Some(Origin::Null);
    }
    let uri = http::Uri::try_from(text).ok()?;
    let scheme = uri.scheme_str()?.to_ascii_lowercase();
    let authority = uri.authority()?;
    let port = authority.port_u16().or_else(|| default_port(&scheme));
    Some(Origin::Tuple {
        host: authority
            .host()
            .trim_matches(['[', ']'])
            .to_ascii_lowercase(),
        scheme,
        port,
    })
}

/// An allowed origin: `scheme://host[:port]`, `scheme://host:*` for any port, or `null`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct AllowedOrigin {
    origin: Origin,
    any_port: bool,
}

fn allowed_origin(text: &str) -> Option<AllowedOrigin> {
    match text.trim().strip_suffix(":*") {
        Some(base) => Some(AllowedOrigin {
            origin: origin(base)?,
            any_port: true,
        }),
        None => Some(AllowedOrigin {
            origin: origin(text)?,
            any_port: false,
        }),
    }
}

impl AllowedOrigin {
    fn admits(&self, origin: &Origin) -> bool {
        match (&self.origin, origin) {
            (Origin::Null, Origin::Null) => true,
            (
                Origin::Tuple { scheme, host, port },
                Origin::Tuple {
                    scheme: their_scheme,
                    host: their_host,
                    port: their_port,
                },
            ) => {
                scheme == their_scheme
                    && host == their_host
                    && (self.any_port || port == their_port)
            }
            _ => false,
        }
    }
}

/// Why a request's `Host` or `Origin` was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ForeignRequest {
    #[error("Forbidden: Host header is not allowed")]
    Host,
    #[error("Forbidden: Origin header is not allowed")]
    Origin,
}

/// The allow-lists, parsed once at start.
#[derive(Debug, Clone, Default)]
pub struct Hosts {
    /// Empty: every host.
    hosts: Vec<Authority>,
    /// Empty: no browser origin at all.
    origins: Vec<AllowedOrigin>,
}

impl Hosts {
    pub fn new(hosts: &[String], origins: &[String]) -> Self {
        Self {
            hosts: hosts.iter().filter_map(|host| authority(host)).collect(),
            origins: origins
                .iter()
                .filter_map(|origin| allowed_origin(origin))
                .collect(),
        }
    }

    pub fn check(&self, parts: &Parts) -> Result<(), ForeignRequest> {
        self.check_host(parts, false)
    }

    /// [`Self::check`] for what monitoring scrapes (`/metrics`): a `Host` that is an IP
    /// address also passes. Prometheus addresses each replica by its own IP (a Kubernetes
    /// pod-role scrape), which no allow-list can name in advance; and an IP cannot be
    /// re-bound, so it opens no DNS-rebinding path (the attack needs the browser to send the
    /// attacker's own name, still refused). The Origin rule is unchanged.
    pub fn check_scrape(&self, parts: &Parts) -> Result<(), ForeignRequest> {
        self.check_host(parts, true)
    }

    fn check_host(&self, parts: &Parts, addresses_pass: bool) -> Result<(), ForeignRequest> {
        if !self.hosts.is_empty() {
            let sent = match parts.headers.get(HOST) {
                Some(value) => value.to_str().ok().and_then(authority),
                None => parts.uri.authority().and_then(|it| authority(it.as_str())),
            };
            let address = |sent: &Authority| sent.host.parse::<std::net::IpAddr>().is_ok();
            let known = sent.is_some_and(|sent| {
                (addresses_pass && address(&sent))
                    || self.hosts.iter().any(|allowed| {
                        allowed.host == sent.host
                            && allowed.port.is_none_or(|port| sent.port == Some(port))
                    })
            });
            if !known {
                return Err(ForeignRequest::Host);
            }
        }
        if let Some(value) = parts.headers.get(ORIGIN) {
            let sent = value.to_str().ok().and_then(origin);
            let known =
                sent.is_some_and(|sent| self.origins.iter().any(|allowed| allowed.admits(&sent)));
            if !known {
                return Err(ForeignRequest::Origin);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn parts(headers: &[(&str, &str)]) -> Parts {
        let mut request = http::Request::builder().uri("/mcp");
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        request.body(()).unwrap().into_parts().0
    }

    #[test]
    fn hosts_match_by_name_and_by_port_when_the_entry_names_one() {
        let hosts = Hosts::new(
            &[
                "Shop.Example".into(),
                "127.0.0.1:8080".into(),
                "[::1]:8080".into(),
            ],
            &[],
        );
        for ok in [
            "shop.example",
            "shop.example:9999",
            "127.0.0.1:8080",
            "[::1]:8080",
        ] {
            assert_eq!(hosts.check(&parts(&[("host", ok)])), Ok(()), "{ok}");
        }
        for refused in [
            "evil.example",
            "127.0.0.1:8081",
            "127.0.0.1",
            "shop.example.evil",
        ] {
            assert_eq!(
                hosts.check(&parts(&[("host", refused)])),
                Err(ForeignRequest::Host),
                "{refused}"
            );
        }
        assert_eq!(hosts.check(&parts(&[])), Err(ForeignRequest::Host));
        assert_eq!(
            Hosts::new(&[], &[]).check(&parts(&[("host", "any.example")])),
            Ok(())
        );
    }

    #[test]
    fn a_scrape_may_name_an_ip_address_but_no_foreign_name() {
        let hosts = Hosts::new(&["shop.example".into()], &[]);
        for address in ["10.1.2.3:8080", "[fd00::7]:8080", "127.0.0.1"] {
            let sent = parts(&[("host", address)]);
            assert_eq!(hosts.check_scrape(&sent), Ok(()), "{address}");
            assert_eq!(hosts.check(&sent), Err(ForeignRequest::Host), "{address}");
        }
        for refused in ["evil.example", "10.1.2.3.evil.example", "shop.example.evil"] {
            assert_eq!(
                hosts.check_scrape(&parts(&[("host", refused)])),
                Err(ForeignRequest::Host),
                "{refused}"
            );
        }
        assert_eq!(
            hosts.check_scrape(&parts(&[
                ("host", "10.1.2.3"),
                ("origin", "https://evil.example")
            ])),
            Err(ForeignRequest::Origin)
        );
    }

    #[test]
    fn origins_match_scheme_host_and_port_as_rfc_6454_compares_them() {
        let hosts = Hosts::new(
            &[],
            &[
                "https://app.example".into(),
                "http://localhost:*".into(),
                "null".into(),
            ],
        );
        for ok in [
            "https://app.example",
            "https://app.example:443",
            "http://localhost:3000",
            "null",
        ] {
            assert_eq!(hosts.check(&parts(&[("origin", ok)])), Ok(()), "{ok}");
        }
        for refused in [
            "http://app.example",
            "https://app.example:8443",
            "https://evil.example",
            "not a url",
        ] {
            assert_eq!(
                hosts.check(&parts(&[("origin", refused)])),
                Err(ForeignRequest::Origin),
                "{refused}"
            );
        }
        assert_eq!(
            hosts.check(&parts(&[])),
            Ok(()),
            "agents without Origin pass"
        );
        assert_eq!(
            Hosts::new(&[], &[]).check(&parts(&[("origin", "https://app.example")])),
            Err(ForeignRequest::Origin),
            "no browser origin is allowed unless listed"
        );
    }
}
