//! The REST binding's request headers: `UCP-Agent` (an RFC 8941 dictionary, parsed by `sfv`,
//! the parser the signature step uses), `Idempotency-Key`, `Request-Id`, and the media types
//! of `Content-Type` and `Accept`.

use http::HeaderMap;
use http::header::{ACCEPT, CONTENT_TYPE};
use serde_json::{Map, Value, json};
use sfv::{BareItem, Dictionary, ListEntry, Parser};

/// Bounds what the front echoes or forwards of a client's header.
const MAX_HEADER_ECHO: usize = 256;

/// Why the `UCP-Agent` header could not be read; the pipeline would call the same thing
/// `invalid_profile_url` (NEG-005, SIG-039, SIG-040).
#[derive(Debug, PartialEq, Eq)]
pub struct BadAgent(pub &'static str);

/// The `profile` member of `UCP-Agent: profile="https://…"`; `None` when the header is
/// absent (the pipeline then applies `[agents] default_profile`). Several lines are one
/// field (RFC 9110 §5.3), joined as RFC 8941 §4.2 says.
pub fn agent_profile(headers: &HeaderMap) -> Result<Option<String>, BadAgent> {
    let mut lines = Vec::new();
    for value in headers.get_all("ucp-agent") {
        let text = value
            .to_str()
            .map_err(|_| BadAgent("the UCP-Agent header is not visible ASCII"))?;
        lines.push(text.trim());
    }
    if lines.is_empty() {
        return Ok(None);
    }
    let text = lines.join(", ");
    let dictionary = Parser::new(&text)
        .parse::<Dictionary>()
        .map_err(|_| BadAgent("the UCP-Agent header is not an RFC 8941 dictionary"))?;
    match dictionary.get("profile") {
        Some(ListEntry::Item(item)) => match &item.bare_item {
            BareItem::String(profile) => Ok(Some(profile.as_str().to_owned())),
            _ => Err(BadAgent(
                "the UCP-Agent profile member must be a quoted string holding an https URL",
            )),
        },
        _ => Err(BadAgent("the UCP-Agent header has no profile member")),
    }
}

/// A header's value when it is visible ASCII, bounded.
fn text<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    let value = headers.get(name)?.to_str().ok()?.trim();
    (!value.is_empty() && value.len() <= MAX_HEADER_ECHO).then_some(value)
}

/// The first of `required` (lower-case name, shown name) the request lacks or sends empty;
/// its shown name.
pub fn first_missing(
    headers: &HeaderMap,
    required: &[(&'static str, &'static str)],
) -> Option<&'static str> {
    required
        .iter()
        .find(|(name, _)| {
            headers
                .get_all(*name)
                .iter()
                .all(|value| value.as_bytes().iter().all(u8::is_ascii_whitespace))
        })
        .map(|(_, shown)| *shown)
}

/// The transport metadata the pipeline completes `meta` from (`Call::meta`).
pub fn meta(profile: Option<String>, headers: &HeaderMap) -> Map<String, Value> {
    let mut meta = Map::new();
    if let Some(profile) = profile {
        meta.insert("ucp-agent".to_owned(), json!({ "profile": profile }));
    }
    // Unbounded or non-ASCII keys are passed as they are, for the pipeline's schema to name.
    if let Some(key) = headers
        .get("idempotency-key")
        .and_then(|value| value.to_str().ok())
    {
        meta.insert(
            "idempotency-key".to_owned(),
            Value::String(key.trim().to_owned()),
        );
    }
    meta
}

/// `Request-Id` as the response echoes it; a fresh one when the client sent none (or one
/// that cannot be echoed), so every answer can be traced.
pub fn request_id(headers: &HeaderMap) -> String {
    text(headers, "request-id")
        .map(str::to_owned)
        .unwrap_or_else(|| uuid::Uuid::new_v4().to_string())
}

/// Whether a media type (without parameters) is JSON: `application/json` or `*/*+json`.
fn is_json(essence: &str) -> bool {
    let essence = essence.trim().to_ascii_lowercase();
    essence == "application/json"
        || essence
            .split_once('/')
            .is_some_and(|(_, subtype)| subtype.ends_with("+json"))
}

/// `Content-Type` of a request with a body must be JSON (OVR-008).
pub fn content_is_json(headers: &HeaderMap) -> bool {
    headers
        .get(CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.split(';').next())
        .is_some_and(is_json)
}

/// Whether `Accept` admits `application/json`: absent, `*/*`, `application/*` or a JSON
/// type, with a non-zero `q` (RFC 9110 §12.5.1).
pub fn accepts_json(headers: &HeaderMap) -> bool {
    let mut ranges = headers
        .get_all(ACCEPT)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .map(str::trim)
        .filter(|range| !range.is_empty())
        .peekable();
    if ranges.peek().is_none() {
        return true;
    }
    ranges.any(|range| {
        let mut parts = range.split(';');
        let essence = parts.next().unwrap_or("").trim().to_ascii_lowercase();
        let refused = parts.any(|parameter| {
            parameter.split_once('=').is_some_and(|(name, value)| {
                name.trim().eq_ignore_ascii_case("q")
                    && value.trim().parse::<f32>().is_ok_and(|q| q <= 0.0)
            })
        });
        !refused && (essence == "*/*" || essence == "application/*" || is_json(&essence))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(*name, HeaderValue::from_static(value));
        }
        map
    }

    #[test]
    fn the_profile_member_is_read_from_the_dictionary() {
        let found = agent_profile(&headers(&[(
            "ucp-agent",
            r#"profile="https://agent.example/.well-known/ucp", v=1"#,
        )]));
        assert_eq!(
            found,
            Ok(Some("https://agent.example/.well-known/ucp".to_owned()))
        );
        assert_eq!(agent_profile(&HeaderMap::new()), Ok(None));
        // Two lines are one dictionary.
        let split = agent_profile(&headers(&[
            ("ucp-agent", "v=1"),
            ("ucp-agent", r#"profile="https://a.example/p""#),
        ]));
        assert_eq!(split, Ok(Some("https://a.example/p".to_owned())));
    }

    #[test]
    fn a_profile_that_is_not_a_quoted_string_is_refused() {
        for bad in [
            "https://agent.example/.well-known/ucp",
            "profile=https",
            "profile=?1",
            "v=1",
            "profile=\"unterminated",
        ] {
            let map = headers(&[("ucp-agent", bad)]);
            assert!(agent_profile(&map).is_err(), "{bad}");
        }
    }

    #[test]
    fn json_media_types_are_recognised() {
        assert!(content_is_json(&headers(&[(
            "content-type",
            "application/json; charset=utf-8"
        )])));
        assert!(content_is_json(&headers(&[(
            "content-type",
            "application/merge-patch+json"
        )])));
        assert!(!content_is_json(&headers(&[(
            "content-type",
            "text/plain"
        )])));
        assert!(!content_is_json(&HeaderMap::new()));
    }

    #[test]
    fn accept_admits_json_unless_it_excludes_it() {
        assert!(accepts_json(&HeaderMap::new()));
        assert!(accepts_json(&headers(&[("accept", "*/*")])));
        assert!(accepts_json(&headers(&[(
            "accept",
            "text/html, application/json;q=0.5"
        )])));
        assert!(accepts_json(&headers(&[("accept", "application/*")])));
        assert!(!accepts_json(&headers(&[("accept", "text/html")])));
        assert!(!accepts_json(&headers(&[(
            "accept",
            "application/json;q=0, text/html"
        )])));
    }

    #[test]
    fn meta_carries_the_profile_and_the_key() {
        let map = headers(&[("idempotency-key", " k-1 ")]);
        let meta = meta(Some("https://a.example/p".into()), &map);
        assert_eq!(
            Value::Object(meta),
            json!({"ucp-agent": {"profile": "https://a.example/p"}, "idempotency-key": "k-1"})
        );
    }

    #[test]
    fn a_missing_or_blank_required_header_is_named() {
        let required = [
            ("request-id", "Request-Id"),
            ("idempotency-key", "Idempotency-Key"),
        ];
        let full = headers(&[("request-id", "r"), ("idempotency-key", "k")]);
        assert_eq!(first_missing(&full, &required), None);
        let blank = headers(&[("request-id", "r"), ("idempotency-key", " ")]);
        assert_eq!(first_missing(&blank, &required), Some("Idempotency-Key"));
        assert_eq!(
            first_missing(&HeaderMap::new(), &required),
            Some("Request-Id")
        );
    }

    #[test]
    fn request_id_is_echoed_or_made() {
        let map = headers(&[("request-id", "abc-123")]);
        assert_eq!(request_id(&map), "abc-123");
        assert_eq!(request_id(&HeaderMap::new()).len(), 36);
    }
}
