//! The bridge's own HTTP answers beside the MCP endpoints: discovery profiles, health and
//! readiness probes, the door of `/metrics`, and the JSON 404.

use std::sync::Arc;

use axum::extract::{Path, Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::access::Access;
use crate::access::hosts::Hosts;
use crate::platform::SharedPlatform;
use crate::replicas::Shared;

/// What the probes and one namespace's profile routes answer from.
#[derive(Clone)]
pub(super) struct WebState {
    /// `(version, profile JSON)`, the current version first.
    pub profiles: Arc<Vec<(&'static str, String)>>,
    pub platform: SharedPlatform,
    pub shared: Option<Shared>,
}

fn profile_response(body: &str) -> Response {
    (
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            ),
            // UCP asks profiles to be cacheable publicly for at least a minute.
            (
                header::CACHE_CONTROL,
                HeaderValue::from_static("public, max-age=300"),
            ),
        ],
        body.to_owned(),
    )
        .into_response()
}

pub(super) async fn current_profile(State(web): State<WebState>) -> Response {
    match web.profiles.first() {
        Some((_, body)) => profile_response(body),
        None => not_found().await,
    }
}

pub(super) async fn versioned_profile(
    State(web): State<WebState>,
    Path(version): Path<String>,
) -> Response {
    match web.profiles.iter().find(|(known, _)| *known == version) {
        Some((_, body)) => profile_response(body),
        None => not_found().await,
    }
}

pub(super) async fn ready(State(web): State<WebState>) -> Response {
    match web.platform.health.ready().await {
        Ok(()) => match &web.shared {
            None => (StatusCode::OK, "ready").into_response(),
            Some(shared) => shared_readiness(shared).await,
        },
        Err(error @ crate::platform::PlatformError::Full { .. }) => {
            tracing::warn!(%error, "not ready");
            (
                StatusCode::SERVICE_UNAVAILABLE,
                format!("not ready: {error}"),
            )
                .into_response()
        }
        Err(error) => {
            tracing::warn!(%error, "readiness check failed");
            (StatusCode::SERVICE_UNAVAILABLE, "store unreachable").into_response()
        }
    }
}

/// Ready either way: without Redis this replica still serves reads within its share of the
/// upstream budget, so taking every replica out of rotation would turn a Redis outage into a
/// full one. The body says what is degraded.
async fn shared_readiness(shared: &Shared) -> Response {
    let up = shared.link.ping().await.is_ok();
    crate::prometheus::redis_up(up);
    if up {
        return (StatusCode::OK, "ready").into_response();
    }
    tracing::warn!("ready, degraded: the shared Redis is unreachable");
    (
        StatusCode::OK,
        format!(
            "ready (degraded): the shared Redis is unreachable; the upstream budget falls back to this replica's local share (1/{} of it), cart writes are refused, webhook invalidations reach this replica only",
            shared.replicas
        ),
    )
        .into_response()
}

/// Who may read `/metrics`: the agent endpoints' Host rule (an IP address as `Host` also
/// passes, see `Hosts::check_scrape`) and, when `[access]` sets bearer tokens, one of them.
/// The counts tell an outsider what the shop sells and how, so they are not public; the
/// probes (`/healthz`, `/readyz`) stay open for orchestrators that send no token.
#[derive(Clone)]
pub(super) struct MetricsDoor {
    pub access: Access,
    pub hosts: Arc<Hosts>,
}

fn plain(status: StatusCode, text: &'static str) -> Response {
    (
        status,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/plain; charset=utf-8"),
        )],
        text,
    )
        .into_response()
}

pub(super) async fn metrics_door(
    State(door): State<MetricsDoor>,
    request: Request,
    next: Next,
) -> Response {
    let (parts, body) = request.into_parts();
    if let Err(foreign) = door.hosts.check_scrape(&parts) {
        tracing::info!(outcome = "forbidden", %foreign, "metrics request refused");
        return plain(StatusCode::FORBIDDEN, "Forbidden\n");
    }
    let authorization = parts
        .headers
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok());
    if door.access.check_bearer(authorization).is_err() {
        tracing::info!(
            outcome = "unauthorized",
            "metrics request without an accepted token"
        );
        let challenge = if authorization.is_some() {
            "Bearer error=\"invalid_token\""
        } else {
            "Bearer"
        };
        let mut response = plain(
            StatusCode::UNAUTHORIZED,
            "A bearer token is required: send Authorization: Bearer TOKEN.\n",
        );
        response.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            HeaderValue::from_static(challenge),
        );
        return response;
    }
    next.run(Request::from_parts(parts, body)).await
}

pub(super) async fn not_found() -> Response {
    (
        StatusCode::NOT_FOUND,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        r#"{"error":"not found"}"#,
    )
        .into_response()
}
