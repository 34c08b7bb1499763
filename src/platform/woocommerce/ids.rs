//! Agent-supplied identifiers, parsed before anything reaches a URL. Whatever does not parse
//! is simply unknown: no upstream request is made for it.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use time::OffsetDateTime;

/// A WooCommerce post id (product or variation): ASCII digits, no sign, no leading zero, so
/// one id has exactly one spelling and correlates with what the store echoes back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct WooId(pub u64);

impl WooId {
    pub fn parse(input: &str) -> Option<Self> {
        if input.is_empty() || input.len() > 19 || input.starts_with('0') {
            return None;
        }
        if !input.bytes().all(|byte| byte.is_ascii_digit()) {
            return None;
        }
        input.parse().ok().filter(|id| *id > 0).map(Self)
    }
}

impl std::fmt::Display for WooId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// A SKU as this adapter looks it up. WooCommerce keeps SKUs as the merchant typed them, so
/// letters and digits of any script count (`CANECA-CAFÉ`, digits only), with `-`, `_`, `.`
/// and single inner spaces (`BOLSA LONA`): the Store API runs `sku=` through
/// `sanitize_text_field` (which trims and collapses spaces) and splits it on commas, so other
/// spellings could never match as sent. Anything else (URL or path syntax, `%`, control
/// characters) is never looked up; what is travels only as one percent-encoded query value
/// (`StoreApi::url`).
pub fn is_sku(input: &str) -> bool {
    (1..=100).contains(&input.chars().count())
        && input.starts_with(char::is_alphanumeric)
        && !input.ends_with(' ')
        && !input.contains("  ")
        && !input.contains("..")
        && input
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.' | ' '))
}

/// A product slug (WordPress `sanitize_title` output, ASCII only).
pub fn is_slug(input: &str) -> bool {
    let bytes = input.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= 200
        && bytes[0].is_ascii_alphanumeric()
        && bytes
            .iter()
            .all(|byte| byte.is_ascii_lowercase() || byte.is_ascii_digit() || *byte == b'-')
}

const CART_ID_PREFIX: &str = "wcc1_";

/// A Store API `Cart-Token` (a JWT): three base64url parts.
fn is_token(token: &str) -> bool {
    token.len() <= 2048
        && token.split('.').count() == 3
        && token
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.'))
}

/// The BCP cart id: a versioned, opaque wrapping of the Cart-Token, so every bridge replica
/// (and a restarted one) can address the same upstream cart without shared state.
pub fn cart_id(token: &str) -> String {
    format!("{CART_ID_PREFIX}{}", URL_SAFE_NO_PAD.encode(token))
}

pub fn cart_token(id: &str) -> Option<String> {
    let encoded = id.strip_prefix(CART_ID_PREFIX)?;
    if encoded.len() > 3000 {
        return None;
    }
    let token = String::from_utf8(URL_SAFE_NO_PAD.decode(encoded).ok()?).ok()?;
    is_token(&token).then_some(token)
}

/// What the bridge reads from a Cart-Token's payload. The signature is the store's business;
/// these claims only decide expiry and whether the store still recognises the session.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TokenClaims {
    pub session: Option<String>,
    pub expires_at: Option<OffsetDateTime>,
}

pub fn claims(token: &str) -> TokenClaims {
    let Some(payload) = token.split('.').nth(1) else {
        return TokenClaims::default();
    };
    let Some(json) = URL_SAFE_NO_PAD
        .decode(payload)
        .ok()
        .and_then(|bytes| serde_json::from_slice::<serde_json::Value>(&bytes).ok())
    else {
        return TokenClaims::default();
    };
    TokenClaims {
        session: json.get("user_id").and_then(|value| match value {
            serde_json::Value::String(text) => Some(text.clone()),
            serde_json::Value::Number(number) => Some(number.to_string()),
            _ => None,
        }),
        expires_at: json
            .get("exp")
            .and_then(serde_json::Value::as_i64)
            .and_then(|exp| OffsetDateTime::from_unix_timestamp(exp).ok()),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    const REAL_TOKEN: &str = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ1c2VyX2lkIjoidF8zZWVkZjg2ZDIwZDU0NTgxNWMwMDkzN2RjODljMjIiLCJleHAiOjE3OTYxNDcwMzcsImlzcyI6IndjXC9zdG9yZVwvdjEiLCJpYXQiOjE3OTU5NzQyMzd9.hbctzK5N82zt5TiDMvJ5KPMtcyTVadMJfXp5AkU9J4g";

    #[test]
    fn ids_are_digits_only() {
        assert_eq!(WooId::parse("16"), Some(WooId(16)));
        for bad in [
            "",
            "0",
            "016",
            "-1",
            "1.5",
            "1e3",
            "../1",
            "1?x",
            "1#",
            "%31",
            " 1",
            "99999999999999999999",
        ] {
            assert_eq!(WooId::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn slugs_reject_url_syntax() {
        assert!(is_slug("logo-tee"));
        for bad in [
            "", "../x", "a/b", "a?b", "a#b", "a%2Fb", "a,b", "a b", "-x", "ä",
        ] {
            assert!(!is_slug(bad), "{bad}");
        }
        assert!(!is_slug("Logo-Tee"));
    }

    #[test]
    fn any_sku_the_store_can_match_is_one() {
        for sku in [
            "TEE-L-RED",
            "BOLSA LONA",
            "CANECA-CAFÉ",
            "12345",
            "0042",
            "v1.2_x",
        ] {
            assert!(is_sku(sku), "{sku}");
        }
        let long = "x".repeat(101);
        for bad in [
            "",
            "../x",
            "a/b",
            "a?b",
            "a#b",
            "a%2Fb",
            "a&b=c",
            "a,b",
            "-x",
            " x",
            "x ",
            "a  b",
            "a\tb",
            "a\r\nb",
            "nul\u{0}",
            "<b>",
            "a..b",
            long.as_str(),
        ] {
            assert!(!is_sku(bad), "{bad:?}");
        }
    }

    #[test]
    fn cart_ids_round_trip_and_reject_foreign_input() {
        let id = cart_id(REAL_TOKEN);
        assert!(!id.contains('.'));
        // The MCP schema caps ids at 512 characters.
        assert!(id.len() < 400, "{}", id.len());
        assert_eq!(cart_token(&id).as_deref(), Some(REAL_TOKEN));
        assert_eq!(cart_token("cart_123"), None);
        assert_eq!(cart_token(&format!("{CART_ID_PREFIX}%2F..")), None);
        let injected = cart_id("a.b.c\r\nX-Evil: 1");
        assert_eq!(cart_token(&injected), None);
    }

    #[test]
    fn reads_expiry_and_session_from_a_real_token() {
        let claims = claims(REAL_TOKEN);
        assert_eq!(
            claims.session.as_deref(),
            Some("t_3eedf86d20d545815c00937dc89c22")
        );
        assert_eq!(claims.expires_at.unwrap().unix_timestamp(), 1_796_147_037);
    }
}
