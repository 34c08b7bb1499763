//! The HTTP application: MCP endpoint, discovery profiles, health probes, the merchant page.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::{Path, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;
use url::Url;

use crate::access::Access;
use crate::brain::Brain;
use crate::config::{BridgeConfig, ConfigError};
use crate::discovery;
use crate::gate::Gate;
use crate::hardening::guard::CallGuard;
use crate::hardening::invalidations::Invalidations;
use crate::mcp::bearer::require_bearer;
use crate::mcp::direct::Direct;
use crate::mcp::http::{Front, mcp_front};
use crate::mcp::shared_service::SharedService;
use crate::mcp::tools::ToolTable;
use crate::mcp::{BcpMcp, McpState};
use crate::observability::activity::Activity;
use crate::platform::{self, SharedPlatform};
use crate::replicas::Shared;
use crate::settings::ConfigProblem;
use crate::signatures::SignatureCheck;
use crate::status_page::{self, Door, PageContext};

#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("cannot build the tool schemas: {0}")]
    Schemas(String),
}

/// Everything the running bridge is made of, built once at start-up.
pub struct Bridge {
    pub router: Router,
    pub base_url: String,
    pub mcp_url: String,
    pub platform: SharedPlatform,
    /// One per namespace served (`server.protocol`), the primary one first.
    pub endpoints: Vec<Endpoint>,
}

/// Where one namespace is served.
#[derive(Debug, Clone)]
pub struct Endpoint {
    pub service: &'static str,
    pub version: &'static str,
    pub mcp_url: String,
    pub profile_url: String,
}

#[derive(Clone)]
struct WebState {
    profiles: Arc<Vec<(&'static str, String)>>,
    platform: SharedPlatform,
    shared: Option<Shared>,
}

fn loopback(host: &str) -> bool {
    matches!(host, "localhost" | "127.0.0.1" | "::1" | "[::1]")
}

/// Hosts and origins accepted on the MCP endpoint: the public base URL's, plus loopback
/// names when the bridge is published on loopback, plus configured extras.
fn host_policy(config: &BridgeConfig, base_url: &str) -> (Vec<String>, Vec<String>) {
    let mut hosts = config.server.allowed_hosts.clone();
    let mut origins = config.server.allowed_origins.clone();
    if let Ok(url) = Url::parse(base_url)
        && let Some(host) = url.host_str()
    {
        hosts.push(host.to_owned());
        if let Some(port) = url.port_or_known_default() {
            hosts.push(format!("{host}:{port}"));
            origins.push(format!("{}://{host}:{port}", url.scheme()));
        }
        if loopback(host) {
            for name in ["localhost", "127.0.0.1", "::1", "[::1]"] {
                hosts.push(name.to_owned());
                if let Some(port) = url.port_or_known_default() {
                    hosts.push(format!("{name}:{port}"));
                    origins.push(format!("{}://{name}:{port}", url.scheme()));
                }
            }
        }
    }
    hosts.dedup();
    origins.dedup();
    (hosts, origins)
}

/// Builds the whole application for a listener bound at `bound`.
pub fn build(
    config: &BridgeConfig,
    bound: SocketAddr,
    shutdown: CancellationToken,
) -> Result<Bridge, StartError> {
    let base_url = config.server.base_url(bound);
    crate::observability::install();
    // `[redis]`: what replicas share; `None` keeps everything in this process.
    let shared = config
        .redis
        .connect()
        .map_err(|problem| ConfigError::Invalid(vec![problem]))?;
    let platform = config
        .build_platform_shared(base_url.clone(), shared.as_ref())
        .map_err(ConfigError::Invalid)?;
    let platform = platform::serial::wrap_shared(platform, shared.clone());
    let (platform, cache) = platform::cache::wrap(platform, &config.cache);
    // One inbound budget per agent across every namespace it may use (and every replica).
    let guard = Arc::new(
        CallGuard::new(
            Duration::from_millis(config.server.request_timeout_ms),
            &config.inbound,
        )
        .across_replicas(&config.inbound, shared.as_ref()),
    );
    let (hosts, origins) = host_policy(config, &base_url);
    let namespaces = config.server.protocol.namespaces();
    if namespaces.len() > 1 && config.server.mcp_path == config.server.ucp_mcp_path {
        // Reachable when `--protocol both` overrides a file checked for one namespace.
        return Err(ConfigError::Invalid(vec![ConfigProblem::new(
            "server.ucp_mcp_path",
            "must differ from server.mcp_path to serve both namespaces",
        )])
        .into());
    }
    let mut router = Router::new();
    let mut endpoints = Vec::new();
    let reserved_checkout_params = crate::registry::factory(config.platform_name())
        .map_or(&[][..], |factory| factory.reserved_checkout_params);
    // One key cache for every namespace: an agent's keys do not depend on the door.
    let signatures = Arc::new(SignatureCheck::new(&config.signatures, &config.negotiation));
    let mut doors = Vec::new();
    let activity = Arc::new(Activity::new());
    // Each namespace gets its own brain, profile and MCP endpoint over the one platform, so
    // every answer speaks the namespace of the door it came through.
    for namespace in namespaces {
        let mcp_path = config.server.mcp_path_for(namespace).to_owned();
        let tools = ToolTable::new(&config.limits, platform.info().capabilities)
            .map_err(StartError::Schemas)?;
        let capabilities = tools.capabilities();
        let mut profiles = Vec::new();
        for version in std::iter::once(&namespace.version).chain(namespace.supported_versions) {
            let profile =
                discovery::profile(namespace, version, &base_url, &mcp_path, &capabilities);
            profiles.push((
                *version,
                serde_json::to_string(&profile).unwrap_or_default(),
            ));
        }
        let brain = Brain::new(
            platform.clone(),
            namespace.clone(),
            config.limits.clone(),
            &config.cart,
        )
        .with_reserved_checkout_params(reserved_checkout_params);
        let gate = Gate::new(
            &config.access,
            &config.negotiation,
            &config.idempotency,
            shared.as_ref(),
            namespace,
        )
        .map_err(|problem| ConfigError::Invalid(vec![problem]))?;
        let state = Arc::new(McpState {
            brain,
            tools,
            guard: guard.clone(),
            gate,
            agents: config.agents.clone(),
            activity: activity.clone(),
        });
        let mcp_config = StreamableHttpServerConfig::default()
            .with_legacy_session_mode(false)
            .with_json_response(true)
            .with_sse_keep_alive(None)
            .with_allowed_hosts(hosts.clone())
            .with_allowed_origins(origins.clone())
            .with_max_request_body_bytes(config.limits.max_body_bytes)
            .with_cancellation_token(shutdown.clone());
        let direct = Arc::new(Direct::new(BcpMcp::new(state.clone()), &hosts));
        let service = StreamableHttpService::new(
            move || Ok(BcpMcp::new(state.clone())),
            LocalSessionManager::default().into(),
            mcp_config,
        );
        let mcp = Router::new()
            .route_service(&mcp_path, SharedService::new(service))
            .layer(axum::middleware::from_fn_with_state(
                Front {
                    body_limit: config.limits.max_body_bytes,
                    signatures: signatures.clone(),
                    direct: Some(direct),
                },
                mcp_front,
            ));
        // Outermost: requests without an accepted token never reach body parsing.
        let mcp = mcp.layer(axum::middleware::from_fn_with_state(
            Access::new(&config.access),
            require_bearer,
        ));
        let web = WebState {
            profiles: Arc::new(profiles),
            platform: platform.clone(),
            shared: shared.clone(),
        };
        let mut discovery = Router::new();
        for path in namespace.profile_paths {
            discovery = discovery
                .route(path, get(current_profile))
                .route(&format!("{path}/{{version}}"), get(versioned_profile));
        }
        router = router.merge(discovery.with_state(web)).merge(mcp);
        doors.push(Door {
            service: namespace.service,
            version: namespace.version,
            mcp_url: format!("{base_url}{mcp_path}"),
            mcp_path: mcp_path.clone(),
            profile_url: format!("{base_url}{}", namespace.profile_paths[0]),
        });
        endpoints.push(Endpoint {
            service: namespace.service,
            version: namespace.version,
            mcp_url: format!("{base_url}{mcp_path}"),
            profile_url: format!("{base_url}{}", namespace.profile_paths[0]),
        });
    }
    let web = WebState {
        profiles: Arc::new(Vec::new()),
        platform: platform.clone(),
        shared: shared.clone(),
    };
    let router = router
        .merge(
            Router::new()
                .route("/healthz", get(|| async { "ok" }))
                .route("/readyz", get(ready))
                .route("/metrics", get(crate::observability::render))
                .with_state(web),
        )
        .merge(status_page::routes(
            config.server.status_page,
            PageContext {
                platform: platform.clone(),
                activity,
                access: Access::new(&config.access),
                bearer_required: !config.access.bearer_token_sha256.is_empty(),
                doors,
                default_profile: config.agents.default_profile.clone(),
                negotiation: config.negotiation.enabled,
            },
        ))
        .merge(crate::hardening::webhooks::shared_routes(
            cache.map(|cache| Invalidations::new(cache, shared.clone())),
            config.cache.webhook_secret.as_ref(),
        ))
        .fallback(not_found);

    let mcp_url = endpoints
        .first()
        .map(|endpoint| endpoint.mcp_url.clone())
        .unwrap_or_default();
    Ok(Bridge {
        router,
        mcp_url,
        base_url,
        platform,
        endpoints,
    })
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

async fn current_profile(State(web): State<WebState>) -> Response {
    match web.profiles.first() {
        Some((_, body)) => profile_response(body),
        None => not_found().await,
    }
}

async fn versioned_profile(State(web): State<WebState>, Path(version): Path<String>) -> Response {
    match web.profiles.iter().find(|(known, _)| *known == version) {
        Some((_, body)) => profile_response(body),
        None => not_found().await,
    }
}

async fn ready(State(web): State<WebState>) -> Response {
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
    crate::observability::redis_up(up);
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

async fn not_found() -> Response {
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
