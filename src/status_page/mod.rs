//! The merchant page at `GET /`: what agents see of this store (platform, protocols, the MCP
//! endpoint and discovery URL), whether the store answers, the calls and refusals since
//! start, and a playground that calls the real MCP endpoint from the browser, in English or
//! Brazilian Portuguese as the browser asks (`words`). One HTML page
//! rendered on the server with a little inline script; nothing is loaded from elsewhere, and
//! a strict Content-Security-Policy admits exactly the page's own script and style.
//!
//! Its configuration is one key, `[server] status_page` (on by default). When the MCP
//! endpoint takes bearer tokens the page does too: as `Authorization: Bearer`, or as the
//! password of HTTP Basic so a browser can ask for it.

mod render;
mod words;

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use base64::Engine;
use serde::Deserialize;
use sha2::{Digest, Sha256};

use crate::access::Access;
use crate::pipeline::activity::Activity;
use crate::platform::SharedPlatform;

const SCRIPT: &str = include_str!("page.js");
const STYLE: &str = include_str!("page.css");
/// How long the page waits for the store's readiness check before calling it unreachable.
const HEALTH_TIMEOUT: Duration = Duration::from_secs(3);
/// A readiness answer is reused this long, so page views (the page may be public) cannot
/// turn into a stream of calls against the store's budget.
const HEALTH_REUSE: Duration = Duration::from_secs(10);

/// `[server] status_page`: whether `GET /` serves the merchant page (else 404).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(transparent)]
pub struct StatusPageSetting {
    pub enabled: bool,
}

impl Default for StatusPageSetting {
    fn default() -> Self {
        Self { enabled: true }
    }
}

/// One namespace's door, as the page lists it.
#[derive(Debug, Clone)]
pub struct Door {
    pub service: &'static str,
    pub version: &'static str,
    /// `None` when `[server] transports` mounts no MCP endpoint.
    pub mcp_url: Option<String>,
    /// The MCP endpoint's path, which the playground posts to (same origin as the page).
    pub mcp_path: Option<String>,
    /// The REST binding's base URL, when `[server] transports` serves REST.
    pub rest_url: Option<String>,
    pub profile_url: String,
}

/// Everything the page reads, handed over by the server when it mounts the page.
pub struct PageContext {
    pub platform: SharedPlatform,
    pub activity: Arc<Activity>,
    pub access: Access,
    pub bearer_required: bool,
    /// Served namespaces, the primary one first.
    pub doors: Vec<Door>,
    pub default_profile: Option<String>,
    pub negotiation: bool,
}

#[derive(Clone)]
struct PageState {
    context: Arc<PageContext>,
    csp: HeaderValue,
    /// The last readiness answer; held while one is asked, so concurrent views share it.
    health: Arc<tokio::sync::Mutex<Option<(Instant, render::Health)>>>,
}

fn source_hash(source: &str) -> String {
    let digest = Sha256::digest(source.as_bytes());
    format!(
        "'sha256-{}'",
        base64::engine::general_purpose::STANDARD.encode(digest)
    )
}

/// The policy admits the page's own script and style by hash, fetches to its own origin
/// only (the MCP endpoint), and product images over https; nothing else, no framing.
fn content_security_policy() -> String {
    format!(
        "default-src 'none'; script-src {}; style-src {}; img-src https: data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
        source_hash(SCRIPT),
        source_hash(STYLE)
    )
}

/// The page's routes, or none (so `GET /` falls through to 404) when it is off.
pub fn routes(setting: StatusPageSetting, context: PageContext) -> Router {
    if !setting.enabled {
        return Router::new();
    }
    let csp = HeaderValue::from_str(&content_security_policy())
        .unwrap_or_else(|_| HeaderValue::from_static("default-src 'none'"));
    Router::new().route("/", get(page)).with_state(PageState {
        context: Arc::new(context),
        csp,
        health: Arc::default(),
    })
}

/// The token a request presents: `Bearer TOKEN`, or Basic with TOKEN as the password.
fn presented_token(headers: &HeaderMap) -> Option<String> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, rest) = value.split_once(' ')?;
    if scheme.eq_ignore_ascii_case("bearer") {
        return Some(rest.trim().to_owned());
    }
    if scheme.eq_ignore_ascii_case("basic") {
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(rest.trim())
            .ok()?;
        let decoded = String::from_utf8(decoded).ok()?;
        let (_, password) = decoded.split_once(':')?;
        return Some(password.to_owned());
    }
    None
}

fn unauthorized() -> Response {
    let mut response = (
        StatusCode::UNAUTHORIZED,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/plain; charset=utf-8"),
        )],
        "A bearer token is required: send Authorization: Bearer TOKEN, or give the token as the password when the browser asks.\n",
    )
        .into_response();
    let headers = response.headers_mut();
    headers.append(
        header::WWW_AUTHENTICATE,
        HeaderValue::from_static("Basic realm=\"bcp-bridge\", charset=\"UTF-8\""),
    );
    headers.append(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    response
}

async fn health(state: &PageState) -> render::Health {
    let mut last = state.health.lock().await;
    if let Some((at, health)) = *last
        && at.elapsed() < HEALTH_REUSE
    {
        return health;
    }
    let ready = tokio::time::timeout(HEALTH_TIMEOUT, state.context.platform.health.ready()).await;
    let health = match ready {
        Ok(Ok(())) => render::Health::Ready,
        Ok(Err(error)) => {
            tracing::warn!(%error, "merchant page: store readiness check failed");
            render::Health::Failing
        }
        Err(_) => render::Health::TimedOut,
    };
    *last = Some((Instant::now(), health));
    health
}

async fn page(State(state): State<PageState>, request: Request) -> Response {
    let context = &state.context;
    if context.bearer_required {
        let token = presented_token(request.headers());
        let authorization = token.map(|token| format!("Bearer {token}"));
        if context
            .access
            .check_bearer(authorization.as_deref())
            .is_err()
        {
            tracing::info!(
                outcome = "unauthorized",
                "merchant page without an accepted token"
            );
            return unauthorized();
        }
    }
    let language = words::Language::from_accept_language(
        request
            .headers()
            .get(header::ACCEPT_LANGUAGE)
            .and_then(|value| value.to_str().ok()),
    );
    let health = health(&state).await;
    let words = language.words();
    let html = render::page(context, words, health, SCRIPT, STYLE);
    let mut response = (
        StatusCode::OK,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/html; charset=utf-8"),
        )],
        html,
    )
        .into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_LANGUAGE,
        HeaderValue::from_static(words.lang),
    );
    headers.insert(header::VARY, HeaderValue::from_static("Accept-Language"));
    headers.insert(header::CONTENT_SECURITY_POLICY, state.csp.clone());
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    response
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn basic_and_bearer_present_the_same_token() {
        let mut headers = HeaderMap::new();
        headers.insert(
            header::AUTHORIZATION,
            HeaderValue::from_static("Bearer s3cret"),
        );
        assert_eq!(presented_token(&headers).as_deref(), Some("s3cret"));
        let basic = base64::engine::general_purpose::STANDARD.encode("merchant:s3cret");
        headers.insert(
            header::AUTHORIZATION,
            HeaderValue::from_str(&format!("Basic {basic}")).unwrap(),
        );
        assert_eq!(presented_token(&headers).as_deref(), Some("s3cret"));
        headers.insert(header::AUTHORIZATION, HeaderValue::from_static("Digest x"));
        assert_eq!(presented_token(&headers), None);
    }

    #[test]
    fn the_policy_names_the_page_script_by_hash_and_allows_no_inline_code() {
        let policy = content_security_policy();
        assert!(policy.contains(&source_hash(SCRIPT)));
        assert!(policy.contains(&source_hash(STYLE)));
        assert!(!policy.contains("unsafe-inline"));
        assert!(!policy.contains("unsafe-eval"));
    }
}
