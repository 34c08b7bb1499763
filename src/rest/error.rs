//! Every REST error, written in one place: the pipeline's `ProtocolError`s and the front's
//! own (media types, unreadable bodies), as the REST binding's statuses and bodies.
//!
//! Reading of the binding's error text (catalog/rest.md, cart-rest.md, overview.md):
//! - discovery and version failures (`invalid_profile_url` 400, `profile_unreachable` 424,
//!   `profile_malformed` / `version_unsupported` 422) carry the body the overview's REST
//!   example shows: `{"code", "content"}` (NEG-001, NEG-003 … NEG-005);
//! - every other protocol refusal carries the error envelope (`types/error_response`:
//!   `ucp.status: "error"` and one error message with `code`, `content`, `severity`, and the
//!   JSONPath of a bad field in `path`), which holds the `code`/`content` cart-rest.md asks
//!   for and stays valid against a schema with `additionalProperties: false` (ERR-028 …
//!   ERR-036);
//! - business outcomes are answers, not refusals: 200 with the bytes MCP puts in
//!   `structuredContent` (never written here).

use axum::body::Body;
use axum::response::{IntoResponse, Response};
use http::header::{CONTENT_TYPE, RETRY_AFTER, WWW_AUTHENTICATE};
use http::{HeaderValue, StatusCode};
use serde_json::{Value, json};

use crate::access::hosts::ForeignRequest;
use crate::pipeline::ProtocolError;
use crate::pipeline::tools::Declaration;

/// The two body shapes of a refusal (see the module text).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    Discovery,
    Envelope,
}

/// A protocol error as the REST binding writes it (status, body, headers).
#[derive(Debug)]
pub struct RestError {
    status: StatusCode,
    code: &'static str,
    content: String,
    path: Option<String>,
    retry_after: Option<u64>,
    shape: Shape,
}

impl RestError {
    fn new(status: StatusCode, code: &'static str, content: impl Into<String>) -> Self {
        Self {
            status,
            code,
            content: content.into(),
            path: None,
            retry_after: None,
            shape: Shape::Envelope,
        }
    }

    #[cfg(test)]
    pub fn status(&self) -> StatusCode {
        self.status
    }

    #[cfg(test)]
    pub fn code(&self) -> &'static str {
        self.code
    }

    fn at(mut self, path: Option<String>) -> Self {
        self.path = path;
        self
    }

    pub fn bad_request(content: impl Into<String>, path: Option<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "invalid_request", content).at(path)
    }

    pub fn bad_agent(content: &str) -> Self {
        Self {
            shape: Shape::Discovery,
            ..Self::new(StatusCode::BAD_REQUEST, "invalid_profile_url", content)
        }
    }

    pub fn too_large(content: impl Into<String>) -> Self {
        Self::new(StatusCode::PAYLOAD_TOO_LARGE, "request_too_large", content)
    }

    pub fn timed_out() -> Self {
        Self::new(
            StatusCode::REQUEST_TIMEOUT,
            "request_timeout",
            "the body did not arrive in time",
        )
    }

    pub fn unsupported_media_type(content: &str) -> Self {
        Self::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported_media_type",
            content,
        )
    }

    /// A Host or Origin the endpoint does not serve (DNS rebinding, foreign pages).
    pub fn forbidden(foreign: ForeignRequest) -> Self {
        Self::new(StatusCode::FORBIDDEN, "forbidden", foreign.to_string())
    }

    /// A method the resource does not serve; the caller adds `Allow`.
    pub fn method_not_allowed() -> Self {
        Self::new(
            StatusCode::METHOD_NOT_ALLOWED,
            "method_not_allowed",
            "this resource does not serve this method (see the Allow header)",
        )
    }

    pub fn not_acceptable() -> Self {
        Self::new(
            StatusCode::NOT_ACCEPTABLE,
            "not_acceptable",
            "this endpoint answers application/json only",
        )
    }

    /// The pipeline's refusal of `operation` (`None` before a resource is known), with
    /// argument paths spelled from the REST body's root and `meta` problems named by the
    /// header they come from.
    pub fn from_protocol(operation: Option<&'static Declaration>, error: &ProtocolError) -> Self {
        match error {
            ProtocolError::InvalidParams { message, data } => invalid(operation, message, data),
            ProtocolError::UnknownTool(_) => Self::new(
                StatusCode::NOT_FOUND,
                "not_found",
                "this store does not serve this operation",
            ),
            ProtocolError::Negotiation { code, content, .. } => Self {
                shape: Shape::Discovery,
                ..Self::new(error.http_status(), code.as_str(), content.clone())
            },
            ProtocolError::Signature { code, .. } => {
                Self::new(error.http_status(), code.as_str(), error.to_string())
            }
            ProtocolError::RateLimited { retry_after_secs } => Self {
                retry_after: Some(*retry_after_secs),
                ..Self::new(error.http_status(), "rate_limited", error.to_string())
            },
            ProtocolError::Unavailable { retry_after_secs }
            | ProtocolError::Full {
                retry_after_secs, ..
            }
            | ProtocolError::WritesPaused {
                retry_after_secs, ..
            } => Self {
                retry_after: Some(*retry_after_secs),
                ..Self::new(error.http_status(), "unavailable", error.to_string())
            },
            ProtocolError::Internal => {
                Self::new(error.http_status(), "internal_error", error.to_string())
            }
            ProtocolError::Unauthorized => {
                Self::new(error.http_status(), "unauthorized", error.to_string())
            }
            ProtocolError::Forbidden => {
                Self::new(error.http_status(), "forbidden", error.to_string())
            }
            ProtocolError::Conflict => Self::new(
                error.http_status(),
                "idempotency_conflict",
                error.to_string(),
            ),
        }
    }

    fn severity(&self) -> &'static str {
        if self.status.is_server_error() && self.retry_after.is_none() {
            "unrecoverable"
        } else {
            "recoverable"
        }
    }

    fn body(&self, version: &str) -> Value {
        match self.shape {
            Shape::Discovery => json!({"code": self.code, "content": self.content}),
            Shape::Envelope => {
                let mut message = json!({
                    "type": "error",
                    "code": self.code,
                    "content": self.content,
                    "severity": self.severity(),
                });
                if let (Some(path), Some(object)) = (&self.path, message.as_object_mut()) {
                    object.insert("path".to_owned(), Value::String(path.clone()));
                }
                json!({
                    "ucp": {"version": version, "status": "error"},
                    "messages": [message],
                })
            }
        }
    }

    /// The response, `Request-Id` echoed by the caller.
    pub fn response(&self, version: &str) -> Response {
        let mut response = (
            self.status,
            [(CONTENT_TYPE, HeaderValue::from_static("application/json"))],
            Body::from(self.body(version).to_string()),
        )
            .into_response();
        let headers = response.headers_mut();
        if let Some(seconds) = self.retry_after {
            headers.insert(RETRY_AFTER, HeaderValue::from(seconds));
        }
        if self.status == StatusCode::UNAUTHORIZED && self.code == "unauthorized" {
            headers.insert(WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        response
    }
}

/// An argument the schema or the brain refused, as the REST request spells it.
fn invalid(
    operation: Option<&'static Declaration>,
    message: &str,
    data: &Option<Value>,
) -> RestError {
    let path = data
        .as_ref()
        .and_then(|data| data.get("path"))
        .and_then(Value::as_str);
    let detail = data
        .as_ref()
        .and_then(|data| data.pointer("/errors/0/message"))
        .and_then(Value::as_str)
        .unwrap_or(message);
    let Some(path) = path else {
        return RestError::bad_request(message, None);
    };
    if path.starts_with("$.meta") || (path == "$" && detail.contains("\"meta\"")) {
        let everything = format!("{path} {detail}");
        return if everything.contains("idempotency-key") {
            RestError::bad_request(
                "this operation needs an Idempotency-Key header (a fresh UUID per distinct request)",
                None,
            )
        } else {
            // NEG-005: a missing or unusable profile URL.
            RestError::bad_agent(
                "the UCP-Agent header must name the agent's profile: UCP-Agent: profile=\"https://agent.example/.well-known/ucp\"",
            )
        };
    }
    if path == "$.id" {
        return RestError::bad_request(format!("cart id in the path: {detail}"), None);
    }
    let body_path = operation.and_then(|operation| body_path(operation, path));
    let shown = body_path.as_deref().unwrap_or(path);
    // catalog/rest.md conformance 5: past the lookup batch, 400 `request_too_large`.
    if operation.and_then(|operation| operation.rest.batch) == Some(shown)
        && (detail.contains("more than") || detail.contains("too many"))
    {
        return RestError {
            code: "request_too_large",
            ..RestError::bad_request(format!("{shown}: {detail}"), body_path)
        };
    }
    RestError::bad_request(format!("{shown}: {detail}"), body_path)
}

/// An argument path of the tool (`$.catalog.ids[3]`) as the REST request spells it: the
/// body's own root (`$.ids[3]`); `None` when it names no part of the body (path, headers).
fn body_path(operation: &Declaration, path: &str) -> Option<String> {
    let member = operation.rest.body.member()?;
    let rest = path.strip_prefix("$.")?.strip_prefix(member)?;
    if rest.is_empty() {
        Some("$".to_owned())
    } else if rest.starts_with(['.', '[']) {
        Some(format!("${rest}"))
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::negotiation::NegotiationCode;
    use crate::pipeline::tools::{CREATE_CART, GET_CART, LOOKUP_CATALOG, SEARCH_CATALOG};

    fn body_of(refusal: &RestError) -> Value {
        refusal.body("2026-08-25")
    }

    #[test]
    fn a_bad_field_is_an_envelope_naming_the_body_path() {
        let error = ProtocolError::invalid_at("$.catalog.pagination.limit", "0 is less than 1");
        let refusal = RestError::from_protocol(Some(&SEARCH_CATALOG), &error);
        assert_eq!(refusal.status(), StatusCode::BAD_REQUEST);
        let body = body_of(&refusal);
        assert_eq!(body["ucp"]["status"], "error");
        assert_eq!(body["messages"][0]["type"], "error");
        assert_eq!(body["messages"][0]["path"], "$.pagination.limit");
        assert_eq!(body["messages"][0]["severity"], "recoverable");
        assert_eq!(body.as_object().map(|o| o.len()), Some(2));
    }

    #[test]
    fn a_missing_profile_is_invalid_profile_url() {
        let error = ProtocolError::invalid_at("$.meta", "\"ucp-agent\" is a required property");
        let refusal = RestError::from_protocol(Some(&GET_CART), &error);
        assert_eq!(refusal.code(), "invalid_profile_url");
        assert_eq!(body_of(&refusal)["code"], "invalid_profile_url");
    }

    #[test]
    fn discovery_failures_keep_their_status_and_plain_body() {
        let error = ProtocolError::Negotiation {
            code: NegotiationCode::ProfileUnreachable,
            content: "down".into(),
        };
        let refusal = RestError::from_protocol(Some(&SEARCH_CATALOG), &error);
        assert_eq!(refusal.status(), StatusCode::FAILED_DEPENDENCY);
        assert_eq!(
            body_of(&refusal),
            json!({"code": "profile_unreachable", "content": "down"})
        );
    }

    #[test]
    fn throttles_say_when_to_come_back() {
        let refusal = RestError::from_protocol(
            Some(&SEARCH_CATALOG),
            &ProtocolError::RateLimited {
                retry_after_secs: 7,
            },
        );
        let response = refusal.response("v");
        assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(
            response.headers().get(RETRY_AFTER),
            Some(&HeaderValue::from(7u64))
        );
        let conflict = RestError::from_protocol(Some(&CREATE_CART), &ProtocolError::Conflict);
        assert_eq!(conflict.status(), StatusCode::CONFLICT);
    }

    #[test]
    fn argument_paths_become_body_paths() {
        let lookup = &LOOKUP_CATALOG;
        assert_eq!(
            body_path(lookup, "$.catalog.ids[3]").as_deref(),
            Some("$.ids[3]")
        );
        assert_eq!(body_path(lookup, "$.catalog").as_deref(), Some("$"));
        assert_eq!(body_path(lookup, "$.catalogue"), None);
        assert_eq!(body_path(lookup, "$.meta['ucp-agent']"), None);
        assert_eq!(
            body_path(&CREATE_CART, "$.cart.line_items[0]").as_deref(),
            Some("$.line_items[0]")
        );
        assert_eq!(body_path(&GET_CART, "$.id"), None);
    }
}
