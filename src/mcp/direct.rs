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

use axum::extract::ConnectInfo;
use axum::response::Response;
use http::header::CONTENT_TYPE;
use http::{StatusCode, request::Parts};
use rmcp::model::{EmptyResult, ListToolsResult, ProtocolVersion, ServerResult};

use super::frame::{DirectCall, Listing, RawId};
use super::jsonrpc;
use crate::pipeline::{Call, Covered, Passage, Pipeline};

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
        match self.pipeline.call(call).await {
            Ok(answer) => jsonrpc::response(StatusCode::OK, jsonrpc::tool_result(&id, &answer)),
            Err(error) => jsonrpc::refused(&id, &error),
        }
    }

    /// `tools/list` or `ping`, once the request is admitted.
    pub fn list(&self, id: &RawId, method: Listing) -> Response {
        let result = match method {
            Listing::Tools => &self.tools,
            Listing::Ping => &self.ping,
        };
        jsonrpc::response(StatusCode::OK, jsonrpc::result(id, result))
    }
}
