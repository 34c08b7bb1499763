//! Sessionless JSON `tools/call` answered without rmcp. rmcp's `CallToolResult` holds the
//! answer as a `serde_json::Value` and serialises it twice (tree → text copy, tree → frame);
//! here the brain's encoded answer is copied into `structuredContent` as it is, escaped once
//! into the text copy, and the JSON-RPC frame is written around both. Every step of the call
//! is the pipeline's, as on rmcp's path.
//! `tools/list` and `ping` are answered here too, from rmcp's own result types, so every id
//! comes back as the client wrote it. rmcp keeps everything else: initialize,
//! notifications, and any request of a protocol version with per-request metadata (see
//! `eligible`).

use std::net::SocketAddr;
use std::sync::Arc;

use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::response::{IntoResponse, Response};
use http::header::CONTENT_TYPE;
use http::{HeaderValue, StatusCode, request::Parts};
use rmcp::model::{EmptyResult, ListToolsResult, ProtocolVersion, ServerResult};

use super::frame::{DirectCall, Listing, RawId};
use super::handler::merchant_text_meta_json;
use crate::pipeline::{Call, Covered, Passage, Pipeline, ProtocolError};
use crate::protocol::answer::Answer;

pub struct Direct {
    pipeline: Arc<Pipeline>,
    /// The `tools/list` and `ping` results, written once: they are the same for every plain
    /// client.
    tools: String,
    ping: String,
}

/// A result in the plain shape: rmcp's own type, with what rmcp strips for peers that
/// negotiated a version before per-request metadata.
fn plain_result(mut result: ServerResult) -> String {
    result.strip_result_type_for_legacy_peer();
    result.strip_non_object_output_for_legacy_peer();
    serde_json::to_string(&result).unwrap_or_else(|_| "{}".to_owned())
}

impl Direct {
    pub fn new(pipeline: Arc<Pipeline>) -> Self {
        let tools = plain_result(ServerResult::ListToolsResult(
            ListToolsResult::with_all_items(pipeline.tools().tools()),
        ));
        let ping = plain_result(ServerResult::EmptyResult(EmptyResult {}));
        Self {
            pipeline,
            tools,
            ping,
        }
    }

    /// Whether the front may answer this request itself: JSON content, and a protocol
    /// version that rmcp answers in the plain shape (one with the `initialize` handshake, as
    /// rmcp's `ProtocolVersion` says; none sent means the oldest). Anything newer carries
    /// per-request metadata and header rules that stay rmcp's.
    pub fn eligible(&self, parts: &Parts) -> bool {
        let headers = &parts.headers;
        let version_ok = match headers.get("mcp-protocol-version") {
            None => true,
            Some(value) => value.to_str().is_ok_and(|version| {
                ProtocolVersion::KNOWN_VERSIONS
                    .iter()
                    .any(|known| known.as_str() == version && known.has_initialize())
            }),
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
        version_ok && json
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
            admitted: Passage::UNSIGNED,
            peer,
            transport: "mcp",
            trace_headers: Some(&parts.headers),
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

    /// `tools/list` or `ping`, once the request is admitted.
    pub fn list(&self, id: &RawId, method: Listing) -> Response {
        let result = match method {
            Listing::Tools => &self.tools,
            Listing::Ping => &self.ping,
        };
        let mut out = Vec::with_capacity(result.len() + id.len() + 40);
        out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
        out.extend_from_slice(id.as_bytes());
        out.extend_from_slice(br#","result":"#);
        out.extend_from_slice(result.as_bytes());
        out.push(b'}');
        (
            [(CONTENT_TYPE, HeaderValue::from_static("application/json"))],
            Body::from(out),
        )
            .into_response()
    }
}

/// The frame rmcp writes for `CallToolResult::structured(answer)` with the merchant-text
/// `_meta`, byte for byte, from one copy of the answer and one escaping pass.
pub fn result_frame(id: &str, answer: &Answer) -> Vec<u8> {
    let json = answer.json();
    let literal = answer.literal();
    let meta = merchant_text_meta_json();
    let mut out = Vec::with_capacity(json.len() + literal.len() + meta.len() + id.len() + 120);
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    out.extend_from_slice(id.as_bytes());
    out.extend_from_slice(br#","result":{"content":[{"type":"text","text":"#);
    out.extend_from_slice(literal.as_bytes());
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
    if serde_json::to_writer(&mut out, &super::refusal::error_data(error)).is_err() {
        out.truncate(0);
        out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
        out.extend_from_slice(id.as_bytes());
        out.extend_from_slice(br#","error":{"code":-32603,"message":"Internal error""#);
        out.push(b'}');
    }
    out.push(b'}');
    out
}
