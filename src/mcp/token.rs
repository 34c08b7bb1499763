//! The bearer-token check in front of the MCP route, answered in JSON-RPC's shape.

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;
use http::HeaderValue;
use http::header::{AUTHORIZATION, WWW_AUTHENTICATE};

use super::jsonrpc;
use crate::access::Access;
use crate::pipeline::ProtocolError;

/// Axum middleware for the MCP route: refuses requests without an accepted bearer token.
pub async fn require_token(State(access): State<Access>, request: Request, next: Next) -> Response {
    let authorization = request
        .headers()
        .get(AUTHORIZATION)
        .and_then(|value| value.to_str().ok());
    match access.check_bearer(authorization) {
        Ok(()) => next.run(request).await,
        Err(denied) => {
            let error = ProtocolError::from(denied);
            tracing::info!(
                outcome = "unauthorized",
                "MCP request without an accepted token"
            );
            let challenge = if authorization.is_some() {
                "Bearer error=\"invalid_token\""
            } else {
                "Bearer"
            };
            let mut response = jsonrpc::refused(jsonrpc::NULL_ID, &error);
            response
                .headers_mut()
                .insert(WWW_AUTHENTICATE, HeaderValue::from_static(challenge));
            response
        }
    }
}
