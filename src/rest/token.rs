//! The bearer-token check in front of the REST routes: the same `Access` check as the MCP
//! route, answered as a REST refusal (401 with `WWW-Authenticate`).

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;
use http::HeaderValue;
use http::header::{AUTHORIZATION, WWW_AUTHENTICATE};

use super::error::RestError;
use super::headers;
use crate::access::Access;
use crate::pipeline::ProtocolError;

/// What the token check needs: the accepted tokens, and the version a refusal's envelope
/// names.
#[derive(Clone)]
pub struct TokenCheck {
    pub access: Access,
    pub version: &'static str,
}

pub async fn require_token(
    State(front): State<TokenCheck>,
    request: Request,
    next: Next,
) -> Response {
    let authorization = request
        .headers()
        .get(AUTHORIZATION)
        .and_then(|value| value.to_str().ok());
    match front.access.check_bearer(authorization) {
        Ok(()) => next.run(request).await,
        Err(denied) => {
            tracing::info!(
                outcome = "unauthorized",
                "REST request without an accepted token"
            );
            let challenge = if authorization.is_some() {
                "Bearer error=\"invalid_token\""
            } else {
                "Bearer"
            };
            let error = ProtocolError::from(denied);
            let mut response = RestError::from_protocol(None, &error).response(front.version);
            let request_id = headers::request_id(request.headers());
            let response_headers = response.headers_mut();
            response_headers.insert(WWW_AUTHENTICATE, HeaderValue::from_static(challenge));
            if let Ok(value) = HeaderValue::from_str(&request_id) {
                response_headers.insert("request-id", value);
            }
            response
        }
    }
}
