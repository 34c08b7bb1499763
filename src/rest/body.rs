//! A REST request body as received (what `Content-Digest` hashes) and decoded (what the
//! operation reads), under the same cap as the MCP front: `[limits] max_body_bytes`, applied
//! to the inflated size too so a small gzip bomb is refused.

use std::io::Read;

use axum::body::{Body, Bytes};
use flate2::read::GzDecoder;
use http::HeaderMap;
use http::header::CONTENT_ENCODING;
use http_body_util::LengthLimitError;

use super::error::RestError;
use crate::inbound::body_read::{BodyTimedOut, caused_by, declared_over};

pub struct Received {
    pub raw: Bytes,
    pub decoded: Bytes,
}

pub async fn read(headers: &HeaderMap, body: Body, limit: usize) -> Result<Received, RestError> {
    if declared_over(&body, limit) {
        return Err(RestError::too_large(format!(
            "the body is larger than {limit} bytes"
        )));
    }
    let raw = axum::body::to_bytes(body, limit).await.map_err(|error| {
        let inner: &(dyn std::error::Error + 'static) = &error;
        if caused_by::<LengthLimitError>(inner) {
            RestError::too_large(format!("the body is larger than {limit} bytes"))
        } else if caused_by::<BodyTimedOut>(inner) {
            RestError::timed_out()
        } else {
            RestError::bad_request("the body could not be read (malformed framing)", None)
        }
    })?;
    let encoding = match headers.get(CONTENT_ENCODING) {
        None => None,
        Some(value) => Some(
            value
                .to_str()
                .map_err(|_| RestError::unsupported_media_type("Content-Encoding is not text"))?
                .trim()
                .to_ascii_lowercase(),
        ),
    };
    let decoded = match encoding.as_deref() {
        None | Some("" | "identity") => raw.clone(),
        Some("gzip" | "x-gzip") => inflate(&raw, limit)?,
        Some(_) => {
            return Err(RestError::unsupported_media_type(
                "Content-Encoding must be gzip or identity",
            ));
        }
    };
    Ok(Received { raw, decoded })
}

fn inflate(raw: &[u8], limit: usize) -> Result<Bytes, RestError> {
    let mut inflated = Vec::new();
    let cap = u64::try_from(limit).unwrap_or(u64::MAX).saturating_add(1);
    match GzDecoder::new(raw).take(cap).read_to_end(&mut inflated) {
        Ok(_) if inflated.len() > limit => Err(RestError::too_large(format!(
            "the inflated body is larger than {limit} bytes"
        ))),
        Ok(_) => Ok(Bytes::from(inflated)),
        Err(_) => Err(RestError::bad_request("the body is not valid gzip", None)),
    }
}
