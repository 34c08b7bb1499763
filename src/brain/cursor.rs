//! Opaque pagination cursors. The agent sees base64url text; inside is the upstream's own
//! cursor plus a fingerprint of the query it belongs to, so a cursor replayed against a
//! different query is refused instead of silently returning the wrong page.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::{Deserialize, Serialize};

const VERSION: u8 = 1;
/// Upstream cursors are short (Shopify ~60 bytes, offsets a few digits); anything far larger
/// is not ours.
const MAX_CURSOR_LEN: usize = 2048;

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum CursorError {
    #[error("the cursor is not one this server issued")]
    Malformed,
    #[error("the cursor belongs to a different query; start again without a cursor")]
    WrongQuery,
}

#[derive(Serialize, Deserialize)]
struct Payload {
    v: u8,
    q: String,
    u: String,
}

/// A stable fingerprint of everything that defines a result list (not the page size).
pub fn fingerprint(parts: &[&str]) -> String {
    // FNV-1a: stable across processes, releases and replicas, unlike std's RandomState.
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for byte in part.as_bytes().iter().chain(std::iter::once(&0xff)) {
            hash ^= u64::from(*byte);
            hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    format!("{hash:016x}")
}

pub fn encode(upstream_cursor: &str, query_fingerprint: &str) -> String {
    let payload = Payload {
        v: VERSION,
        q: query_fingerprint.to_owned(),
        u: upstream_cursor.to_owned(),
    };
    // Serialising three plain fields cannot fail; fall back to an empty body defensively.
    let json = serde_json::to_vec(&payload).unwrap_or_default();
    URL_SAFE_NO_PAD.encode(json)
}

pub fn decode(cursor: &str, query_fingerprint: &str) -> Result<String, CursorError> {
    if cursor.len() > MAX_CURSOR_LEN {
        return Err(CursorError::Malformed);
    }
    let bytes = URL_SAFE_NO_PAD
        .decode(cursor.trim_end_matches('='))
        .map_err(|_| CursorError::Malformed)?;
    let payload: Payload = serde_json::from_slice(&bytes).map_err(|_| CursorError::Malformed)?;
    if payload.v != VERSION {
        return Err(CursorError::Malformed);
    }
    if payload.q != query_fingerprint {
        return Err(CursorError::WrongQuery);
    }
    Ok(payload.u)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn round_trips_and_is_opaque() {
        let fp = fingerprint(&["shoes", "Footwear"]);
        let cursor = encode("offset:20", &fp);
        assert!(!cursor.contains("offset"));
        assert_eq!(decode(&cursor, &fp).unwrap(), "offset:20");
    }

    #[test]
    fn refuses_foreign_and_tampered_cursors() {
        let fp = fingerprint(&["shoes"]);
        let other = fingerprint(&["hats"]);
        let cursor = encode("10", &fp);
        assert_eq!(decode(&cursor, &other), Err(CursorError::WrongQuery));
        assert_eq!(decode("not a cursor!", &fp), Err(CursorError::Malformed));
        assert_eq!(decode("eyJwYWdlIjoxfQ==", &fp), Err(CursorError::Malformed));
        assert_eq!(decode(&"A".repeat(5000), &fp), Err(CursorError::Malformed));
    }

    #[test]
    fn fingerprint_separates_parts() {
        assert_ne!(fingerprint(&["ab", "c"]), fingerprint(&["a", "bc"]));
        assert_eq!(fingerprint(&["x"]), fingerprint(&["x"]));
    }
}
