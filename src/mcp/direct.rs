//! Sessionless JSON `tools/call` answered without rmcp. rmcp's `CallToolResult` holds the
//! answer as a `serde_json::Value` and serialises it twice (tree → text copy, tree → frame);
//! here the brain's encoded answer is copied into `structuredContent` as it is, escaped once
//! into the text copy, and the JSON-RPC frame is written around both. Every step of the call
//! is the pipeline's, as on rmcp's path.
//! rmcp keeps everything else: initialize, tools/list, sessions, and any request carrying
//! protocol headers or metadata it must judge (see `eligible`).

use std::net::SocketAddr;

use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::response::{IntoResponse, Response};
use http::header::{CONTENT_TYPE, HOST, ORIGIN};
use http::{HeaderValue, StatusCode, request::Parts};

use std::sync::Arc;

use super::frame::DirectCall;
use super::handler::merchant_text_meta_json;
use crate::pipeline::{Call, Covered, Pipeline, ProtocolError};
use crate::protocol::answer::Answer;

/// `MCP-Protocol-Version` values rmcp answers with the plain result shape (no
/// `resultType`, no standard headers to check): anything else goes to rmcp.
const PLAIN_VERSIONS: &[&str] = &["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

pub struct Direct {
    pipeline: Arc<Pipeline>,
    /// The Host allow-list rmcp enforces (empty: every host), parsed once.
    hosts: Vec<(String, Option<u16>)>,
}

/// `host[:port]` lower-cased, IPv6 brackets removed, as rmcp compares them.
fn authority(text: &str) -> Option<(String, Option<u16>)> {
    let authority = http::uri::Authority::try_from(text.trim()).ok()?;
    let host = authority
        .host()
        .trim_matches(['[', ']'])
        .to_ascii_lowercase();
    Some((host, authority.port_u16()))
}

impl Direct {
    pub fn new(pipeline: Arc<Pipeline>, hosts: &[String]) -> Self {
        let hosts = hosts
            .iter()
            .filter_map(|allowed| authority(allowed))
            .collect();
        Self { pipeline, hosts }
    }

    /// Whether the front may answer a `tools/call` with these headers itself. Only requests
    /// whose outcome rmcp would not change qualify: no session, no Origin (rmcp's origin
    /// policy stays rmcp's), a Host rmcp allows, JSON content, and a protocol version
    /// without per-request metadata rules.
    pub fn eligible(&self, parts: &Parts) -> bool {
        let headers = &parts.headers;
        if headers.contains_key("mcp-session-id") || headers.contains_key(ORIGIN) {
            return false;
        }
        let version_ok = match headers.get("mcp-protocol-version") {
            None => true,
            Some(value) => value
                .to_str()
                .is_ok_and(|version| PLAIN_VERSIONS.contains(&version)),
        };
        let json = headers
            .get(CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .is_some_and(|value| {
                value
                    .split(';')
                    .next()
                    .is_some_and(|essence| essence.trim().eq_ignore_ascii_case("application/json"))
            });
        version_ok && json && self.host_allowed(parts)
    }

    fn host_allowed(&self, parts: &Parts) -> bool {
        if self.hosts.is_empty() {
            return true;
        }
        let Some((host, port)) = headers_host(parts) else {
            return false;
        };
        self.hosts.iter().any(|(allowed_host, allowed_port)| {
            *allowed_host == host && allowed_port.is_none_or(|wanted| port == Some(wanted))
        })
    }

    pub async fn respond(&self, call: DirectCall, covered: Covered<'_>, parts: &Parts) -> Response {
        let peer = parts
            .extensions
            .get::<ConnectInfo<SocketAddr>>()
            .map(|info| info.0.ip());
        let DirectCall {
            id,
            name,
            arguments,
            meta,
        } = call;
        let call = Call {
            tool: &name,
            arguments,
            meta: meta.as_ref(),
            covered: Some(covered),
            peer,
        };
        let (status, body) = match self.pipeline.call(call).await {
            Ok(answer) => (StatusCode::OK, result_frame(&id, &answer)),
            Err(error) => (error.http_status(), error_frame(&id, &error)),
        };
        (
            status,
            [(CONTENT_TYPE, HeaderValue::from_static("application/json"))],
            Body::from(body),
        )
            .into_response()
    }
}

fn headers_host(parts: &Parts) -> Option<(String, Option<u16>)> {
    match parts.headers.get(HOST) {
        Some(value) => authority(value.to_str().ok()?),
        None => authority(parts.uri.authority()?.as_str()),
    }
}

/// The frame rmcp writes for `CallToolResult::structured(answer)` with the merchant-text
/// `_meta`, byte for byte, from one copy of the answer and one escaping pass.
pub fn result_frame(id: &str, answer: &Answer) -> Vec<u8> {
    let json = answer.json();
    let meta = merchant_text_meta_json();
    // The text copy escapes quotes: a little over twice the answer, plus the frame.
    let mut out = Vec::with_capacity(json.len() * 2 + json.len() / 8 + meta.len() + 160);
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    out.extend_from_slice(id.as_bytes());
    out.extend_from_slice(br#","result":{"content":[{"type":"text","text":"#);
    // Writing a `&str` into a Vec cannot fail.
    let _ = serde_json::to_writer(&mut out, json);
    out.extend_from_slice(br#"}],"structuredContent":"#);
    out.extend_from_slice(json.as_bytes());
    out.extend_from_slice(br#","isError":false,"_meta":"#);
    out.extend_from_slice(meta.as_bytes());
    out.extend_from_slice(b"}}");
    out
}

/// The JSON-RPC error rmcp writes for the handler's `ErrorData`.
pub fn error_frame(id: &str, error: &ProtocolError) -> Vec<u8> {
    let mut out = Vec::with_capacity(256);
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    out.extend_from_slice(id.as_bytes());
    out.extend_from_slice(br#","error":"#);
    if serde_json::to_writer(&mut out, &error.to_error_data()).is_err() {
        out.truncate(0);
        out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
        out.extend_from_slice(id.as_bytes());
        out.extend_from_slice(br#","error":{"code":-32603,"message":"Internal error""#);
        out.push(b'}');
    }
    out.push(b'}');
    out
}
