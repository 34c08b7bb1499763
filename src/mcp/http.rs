//! HTTP in front of rmcp's Streamable HTTP service: makes the bare JSON POSTs real UCP
//! clients send acceptable, answers malformed bodies with JSON-RPC errors instead of plain
//! text, and lets a tool error choose the HTTP status the BCP error registry assigns.

use std::sync::{Arc, Mutex};

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http::header::{ACCEPT, CONTENT_TYPE};
use http::{HeaderValue, Method, StatusCode};
use rmcp::model::{ClientJsonRpcMessage, ClientRequest, JsonRpcMessage};
use serde_json::{Value, json};

/// Where the tool handler leaves the HTTP status its error calls for.
#[derive(Clone, Default)]
pub struct StatusSlot(Arc<Mutex<Option<StatusCode>>>);

impl StatusSlot {
    pub fn set(&self, status: StatusCode) {
        if let Ok(mut slot) = self.0.lock() {
            *slot = Some(status);
        }
    }

    fn take(&self) -> Option<StatusCode> {
        self.0.lock().ok().and_then(|mut slot| slot.take())
    }
}

#[derive(Clone, Copy)]
pub struct BodyLimit(pub usize);

pub fn jsonrpc_error(status: StatusCode, id: Value, code: i32, message: &str) -> Response {
    let body = json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}});
    (
        status,
        [(CONTENT_TYPE, HeaderValue::from_static("application/json"))],
        body.to_string(),
    )
        .into_response()
}

const MCP_METHODS: &[&str] = &[
    "initialize",
    "ping",
    "tools/list",
    "tools/call",
    "notifications/initialized",
    "notifications/cancelled",
    "resources/list",
    "prompts/list",
    "logging/setLevel",
    "completion/complete",
    "server/discover",
];

/// rmcp files a tools/call whose params it cannot read under "custom request".
fn is_custom_tools_call(message: &ClientJsonRpcMessage) -> bool {
    matches!(message, JsonRpcMessage::Request(request)
        if matches!(&request.request, ClientRequest::CustomRequest(custom) if custom.method == "tools/call"))
}

/// Classifies a body rmcp would refuse, so the client gets the JSON-RPC error it expects.
fn refuse_unparseable(bytes: &[u8]) -> Option<Response> {
    // The common case, a message rmcp reads, costs one typed parse here and no JSON tree.
    // `readable` then only marks a tools/call rmcp took for a custom request (checked below).
    let readable = match serde_json::from_slice::<ClientJsonRpcMessage>(bytes) {
        Ok(message) if is_custom_tools_call(&message) => true,
        Ok(_) => return None,
        Err(_) => false,
    };
    let value: Value = match serde_json::from_slice(bytes) {
        Ok(value) => value,
        Err(error) => {
            return Some(jsonrpc_error(
                StatusCode::BAD_REQUEST,
                Value::Null,
                -32700,
                &format!("Parse error: {error}"),
            ));
        }
    };
    let id = value.get("id").cloned().unwrap_or(Value::Null);
    if value.get("method").and_then(Value::as_str) == Some("tools/call") {
        // rmcp files a tools/call it cannot read under "custom request" and answers
        // method-not-found; the client's mistake is in the params.
        let params = value.get("params");
        let named = params
            .and_then(|params| params.get("name"))
            .is_some_and(Value::is_string);
        let arguments_ok = params
            .and_then(|params| params.get("arguments"))
            .is_none_or(|arguments| arguments.is_object() || arguments.is_null());
        if !named || !arguments_ok {
            return Some(jsonrpc_error(
                StatusCode::OK,
                id,
                -32602,
                "Invalid params: tools/call needs params.name (string) and params.arguments (object)",
            ));
        }
    }
    if readable {
        return None;
    }
    if value.is_array() {
        return Some(jsonrpc_error(
            StatusCode::BAD_REQUEST,
            Value::Null,
            -32600,
            "Invalid Request: JSON-RPC batches are not supported",
        ));
    }
    let method = value.get("method").and_then(Value::as_str);
    let (code, message) = match method {
        _ if value.get("jsonrpc").and_then(Value::as_str) != Some("2.0") => (
            -32600,
            "Invalid Request: jsonrpc must be \"2.0\"".to_owned(),
        ),
        None => (-32600, "Invalid Request: missing method".to_owned()),
        Some(name) if MCP_METHODS.contains(&name) || name.starts_with("notifications/") => {
            (-32602, format!("Invalid params for {}", crate::logging::echo(name)))
        }
        Some(name) => (-32601, format!("Method not found: {}", crate::logging::echo(name))),
    };
    let status = if code == -32601 || code == -32602 {
        StatusCode::OK
    } else {
        StatusCode::BAD_REQUEST
    };
    Some(jsonrpc_error(status, id, code, &message))
}

pub async fn mcp_front(State(limit): State<BodyLimit>, request: Request, next: Next) -> Response {
    if request.method() != Method::POST {
        return next.run(request).await;
    }
    let (mut parts, body) = request.into_parts();
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
    let bytes: Bytes = match axum::body::to_bytes(body, limit.0).await {
        Ok(bytes) => bytes,
        Err(_) => {
            return jsonrpc_error(
                StatusCode::PAYLOAD_TOO_LARGE,
                Value::Null,
                -32600,
                &format!("Invalid Request: body larger than {} bytes", limit.0),
            );
        }
    };
    if let Some(refusal) = refuse_unparseable(&bytes) {
        return refusal;
    }
    let slot = StatusSlot::default();
    parts.extensions.insert(slot.clone());
    let mut response = next
        .run(Request::from_parts(parts, Body::from(bytes)))
        .await;
    if let Some(status) = slot.take()
        && response.status() == StatusCode::OK
    {
        *response.status_mut() = status;
    }
    response
}
