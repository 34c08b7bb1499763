//! HTTP in front of rmcp's Streamable HTTP service: admits the request's Host and Origin,
//! makes the bare JSON POSTs real UCP clients send acceptable, answers malformed bodies with
//! JSON-RPC errors instead of plain text, answers plain tool calls itself (with the HTTP
//! status the BCP error registry assigns), and holds each body as received for the
//! request-signature check (`Content-Digest` hashes raw bytes).

use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::io::Read;

use flate2::read::GzDecoder;
use http::header::{ACCEPT, CONNECTION, CONTENT_ENCODING, CONTENT_LENGTH, CONTENT_TYPE};
use http::{HeaderValue, Method, StatusCode};
use http_body_util::LengthLimitError;

use crate::access::hosts::Hosts;
use crate::inbound::body_read::{BodyTimedOut, caused_by, declared_over};
use crate::logging::echo;
use crate::mcp::direct::Direct;
use crate::mcp::frame::{self, Verdict};
use crate::mcp::jsonrpc;
use crate::pipeline::{Covered, Passage, Pipeline};
use crate::signatures::SignatureError;

/// What the front needs besides the request: the body cap, the Host and Origin rules, the
/// pipeline, and the answers it gives itself.
#[derive(Clone)]
pub struct Front {
    pub body_limit: usize,
    pub hosts: Arc<Hosts>,
    pub pipeline: Arc<Pipeline>,
    pub direct: Arc<Direct>,
}

/// Answers of the front are JSON-RPC errors with the client's id as written.
fn refusal(status: StatusCode, id: &str, code: i32, message: &str) -> Response {
    jsonrpc::response(
        status,
        jsonrpc::error(id, &jsonrpc::plain_error(code, message)),
    )
}

/// Why a body could not be read, as the answer the client gets.
fn unreadable_body(error: &axum::Error, limit: usize) -> Response {
    let inner: &(dyn std::error::Error + 'static) = error;
    if caused_by::<LengthLimitError>(inner) {
        refusal(
            StatusCode::PAYLOAD_TOO_LARGE,
            jsonrpc::NULL_ID,
            -32600,
            &format!("Invalid Request: body larger than {limit} bytes"),
        )
    } else if caused_by::<BodyTimedOut>(inner) {
        let mut response = refusal(
            StatusCode::REQUEST_TIMEOUT,
            jsonrpc::NULL_ID,
            -32600,
            "Invalid Request: the body did not arrive in time",
        );
        response
            .headers_mut()
            .insert(CONNECTION, HeaderValue::from_static("close"));
        response
    } else {
        refusal(
            StatusCode::BAD_REQUEST,
            jsonrpc::NULL_ID,
            -32600,
            "Invalid Request: the body could not be read (malformed framing)",
        )
    }
}

/// `gzip` bodies are inflated (the body cap applies to the inflated size too, so a small
/// bomb is refused); other encodings are refused with 415.
fn decode(encoding: Option<&str>, bytes: Bytes, limit: usize) -> Result<Bytes, Box<Response>> {
    match encoding
        .map(str::trim)
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        None | Some("" | "identity") => Ok(bytes),
        Some("gzip" | "x-gzip") => {
            let mut inflated = Vec::new();
            let cap = u64::try_from(limit).unwrap_or(u64::MAX).saturating_add(1);
            match GzDecoder::new(&bytes[..])
                .take(cap)
                .read_to_end(&mut inflated)
            {
                Ok(_) if inflated.len() > limit => Err(Box::new(refusal(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    jsonrpc::NULL_ID,
                    -32600,
                    &format!("Invalid Request: inflated body larger than {limit} bytes"),
                ))),
                Ok(_) => Ok(Bytes::from(inflated)),
                Err(_) => Err(Box::new(refusal(
                    StatusCode::BAD_REQUEST,
                    jsonrpc::NULL_ID,
                    -32700,
                    "Parse error: the body is not valid gzip",
                ))),
            }
        }
        Some(_) => Err(Box::new(refusal(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            jsonrpc::NULL_ID,
            -32600,
            "Invalid Request: Content-Encoding must be gzip or identity",
        ))),
    }
}

/// An HTTP-level refusal from below (rmcp's 405/406/415/403 …) in plain text becomes the
/// JSON-RPC error every other refusal is.
async fn as_jsonrpc(response: Response) -> Response {
    let status = response.status();
    let is_json = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.starts_with("application/json"));
    if !(status.is_client_error() || status.is_server_error()) || is_json {
        return response;
    }
    let (parts, body) = response.into_parts();
    let text = axum::body::to_bytes(body, 4096).await.unwrap_or_default();
    let reason = String::from_utf8_lossy(&text);
    let code = if status.is_server_error() {
        -32603
    } else {
        -32600
    };
    let mut answer = refusal(
        status,
        jsonrpc::NULL_ID,
        code,
        &format!("HTTP {}: {}", status.as_u16(), echo(reason.trim())),
    );
    for (name, value) in &parts.headers {
        if name != CONTENT_TYPE && name != CONTENT_LENGTH {
            answer.headers_mut().insert(name.clone(), value.clone());
        }
    }
    answer
}

pub async fn mcp_front(State(front): State<Front>, request: Request, next: Next) -> Response {
    let limit = front.body_limit;
    let (mut parts, body) = request.into_parts();
    if let Err(foreign) = front.hosts.check(&parts) {
        tracing::info!(outcome = "forbidden", %foreign, "MCP request refused");
        return refusal(
            StatusCode::FORBIDDEN,
            jsonrpc::NULL_ID,
            -32600,
            &foreign.to_string(),
        );
    }
    if parts.method != Method::POST {
        let request = Request::from_parts(parts, body);
        return as_jsonrpc(next.run(request).await).await;
    }
    // The front adjusts Accept, Content-Type and Content-Encoding below; a signature covers
    // the headers as sent.
    // Only a signed request needs them kept (an unsigned one is judged by the mode alone).
    let signed =
        parts.headers.contains_key("signature-input") || parts.headers.contains_key("signature");
    let sent_headers =
        (signed && front.pipeline.verifies_signatures()).then(|| parts.headers.clone());
    let plain = front.direct.eligible(&parts);
    let accept = parts
        .headers
        .get(ACCEPT)
        .and_then(|value| value.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase();
    if !(accept.contains("application/json") && accept.contains("text/event-stream")) {
        // Bare JSON clients: rmcp still answers with plain JSON because the service runs in
        // JSON-response mode; it only insists on seeing both media types.
        parts.headers.insert(
            ACCEPT,
            HeaderValue::from_static("application/json, text/event-stream"),
        );
    }
    if !parts.headers.contains_key(CONTENT_TYPE) {
        parts
            .headers
            .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    }
    if declared_over(&body, limit) {
        let mut response = refusal(
            StatusCode::PAYLOAD_TOO_LARGE,
            jsonrpc::NULL_ID,
            -32600,
            &format!("Invalid Request: body larger than {limit} bytes"),
        );
        // The rest of the declared body is not read: the connection cannot carry another
        // request.
        response
            .headers_mut()
            .insert(CONNECTION, HeaderValue::from_static("close"));
        return response;
    }
    let bytes: Bytes = match axum::body::to_bytes(body, limit).await {
        Ok(bytes) => bytes,
        Err(error) => return unreadable_body(&error, limit),
    };
    let encoding = parts
        .headers
        .get(CONTENT_ENCODING)
        .map(|value| value.to_str().unwrap_or("(not text)").to_owned());
    let received = bytes.clone();
    let bytes = match decode(encoding.as_deref(), bytes, limit) {
        Ok(bytes) => bytes,
        Err(refused) => return *refused,
    };
    if encoding.is_some() {
        parts.headers.remove(CONTENT_ENCODING);
        parts.headers.remove(CONTENT_LENGTH);
    }
    let decoded = bytes.clone();
    let sent = sent_headers.as_ref().unwrap_or(&parts.headers);
    let covered = covered(&parts, sent, &received, &decoded);
    let body = match frame::judge(bytes, plain) {
        Verdict::Pass(body) => body,
        Verdict::Accepted => return StatusCode::ACCEPTED.into_response(),
        Verdict::Direct(call) => return front.direct.respond(call, covered, &parts).await,
        Verdict::Listing { id, method } => {
            return match front.pipeline.admit(&covered).await {
                Ok(()) => front.direct.list(&id, method),
                Err(error) => jsonrpc::refused(&id, &error),
            };
        }
        Verdict::Refuse(refused) => {
            let status = if refused.http_400 {
                StatusCode::BAD_REQUEST
            } else {
                StatusCode::OK
            };
            return refusal(status, &refused.id, refused.code, &refused.message);
        }
    };
    let passage = match front.pipeline.passage(&covered).await {
        Ok(Passage::ReplayOnly) if !frame::is_tool_call(&decoded) => {
            return jsonrpc::refused(
                &frame::raw_id(&decoded),
                &SignatureError::nonce_reused().into(),
            );
        }
        Ok(passage) => passage,
        Err(error) => return jsonrpc::refused(&frame::raw_id(&decoded), &error),
    };
    // The handler reads what the signature step found (a retried signed call is answered
    // from the idempotency store only).
    parts.extensions.insert(passage);
    let notification = !body_has_id(&body);
    let response = next.run(Request::from_parts(parts, Body::from(body))).await;
    if notification && response.status().is_success() {
        // JSON-RPC: a notification is never answered.
        return StatusCode::ACCEPTED.into_response();
    }
    as_jsonrpc(response).await
}

/// What the signature step covers: the headers and body as the client sent them, and the
/// decoded frame.
fn covered<'a>(
    parts: &'a http::request::Parts,
    sent_headers: &'a http::HeaderMap,
    raw_body: &'a Bytes,
    frame: &'a Bytes,
) -> Covered<'a> {
    Covered {
        method: &parts.method,
        uri: &parts.uri,
        headers: sent_headers,
        raw_body,
        frame,
    }
}

fn body_has_id(body: &[u8]) -> bool {
    #[derive(serde::Deserialize)]
    struct HasId {
        #[serde(default)]
        id: Option<serde::de::IgnoredAny>,
    }
    serde_json::from_slice::<HasId>(body).is_ok_and(|frame| frame.id.is_some())
}
