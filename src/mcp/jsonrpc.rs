//! Every JSON-RPC frame the bridge writes itself (rmcp writes the rest): results, errors,
//! and the one place a pipeline refusal becomes a JSON-RPC error object. The id is echoed
//! as the client wrote it (its raw JSON text), byte for byte; refusals of a request whose id
//! could not be read carry [`NULL_ID`].

use std::sync::OnceLock;

use axum::body::Body;
use axum::response::{IntoResponse, Response};
use http::header::CONTENT_TYPE;
use http::{HeaderValue, StatusCode};
use rmcp::model::{ErrorCode, ErrorData};
use serde_json::Value;

use crate::pipeline::ProtocolError;
use crate::protocol::answer::Answer;

/// The id of a refusal that answers no readable request.
pub const NULL_ID: &str = "null";

/// What a refusal's error object says: the pipeline's code, reason and registry data.
pub fn error_data(error: &ProtocolError) -> ErrorData {
    ErrorData::new(ErrorCode(error.code()), error.to_string(), error.data())
}

/// An error object with a code and message of the front's own.
pub fn plain_error(code: i32, message: impl Into<String>) -> ErrorData {
    ErrorData::new(ErrorCode(code), message.into(), None)
}

fn open(id: &str, capacity: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(capacity + id.len() + 32);
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    out.extend_from_slice(id.as_bytes());
    out
}

/// A result already written as JSON text.
pub fn result(id: &str, result: &str) -> Vec<u8> {
    let mut out = open(id, result.len());
    out.extend_from_slice(br#","result":"#);
    out.extend_from_slice(result.as_bytes());
    out.push(b'}');
    out
}

/// The frame rmcp writes for `CallToolResult::structured(answer)` with the merchant-text
/// `_meta`, byte for byte, from one copy of the answer and one escaping pass.
pub fn tool_result(id: &str, answer: &Answer) -> Vec<u8> {
    let json = answer.json();
    let literal = answer.literal();
    let meta = merchant_text_meta_json();
    let mut out = open(id, json.len() + literal.len() + meta.len() + 100);
    out.extend_from_slice(br#","result":{"content":[{"type":"text","text":"#);
    out.extend_from_slice(literal.as_bytes());
    out.extend_from_slice(br#"}],"structuredContent":"#);
    out.extend_from_slice(json.as_bytes());
    out.extend_from_slice(br#","isError":false,"_meta":"#);
    out.extend_from_slice(meta.as_bytes());
    out.extend_from_slice(b"}}");
    out
}

/// An error frame, as rmcp writes one for the same `ErrorData`.
pub fn error(id: &str, error: &ErrorData) -> Vec<u8> {
    let mut out = open(id, 224);
    out.extend_from_slice(br#","error":"#);
    let start = out.len();
    if serde_json::to_writer(&mut out, error).is_err() {
        out.truncate(start);
        out.extend_from_slice(br#"{"code":-32603,"message":"Internal error"}"#);
    }
    out.push(b'}');
    out
}

/// A frame as an HTTP answer.
pub fn response(status: StatusCode, frame: Vec<u8>) -> Response {
    (
        status,
        [(CONTENT_TYPE, HeaderValue::from_static("application/json"))],
        Body::from(frame),
    )
        .into_response()
}

/// A pipeline refusal as an HTTP answer, with the status the error registry assigns.
pub fn refused(id: &str, refusal: &ProtocolError) -> Response {
    response(refusal.http_status(), error(id, &error_data(refusal)))
}

/// Marks every result as carrying merchant-authored text, for agents that read `_meta`.
pub fn merchant_text_meta_value() -> Value {
    serde_json::json!({
        "br.dev.bcp/merchant-text": {
            "trust": "data",
            "notice": crate::brain::untrusted::MERCHANT_TEXT_NOTICE,
        }
    })
}

/// The result `_meta` as JSON text, written once per process.
pub fn merchant_text_meta_json() -> &'static str {
    static META: OnceLock<String> = OnceLock::new();
    META.get_or_init(|| merchant_text_meta_value().to_string())
}
