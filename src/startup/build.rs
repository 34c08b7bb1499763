//! The build phase: everything the running bridge is made of (the shared Redis, the store
//! adapter and its decorators, one brain, profile and MCP endpoint per namespace, the probes
//! and the merchant page), put together once from a checked configuration.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::routing::get;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;
use url::Url;

use super::StartError;
use super::configure::BridgeConfig;
use super::routes::{self, MetricsDoor, WebState};
use super::server_config::Transport;
use crate::access::Access;
use crate::access::hosts::Hosts;
use crate::brain::Brain;
use crate::brain::checkout::CheckoutBrain;
use crate::brain::checkout::handles::OrderHandles;
use crate::discovery::{self, Binding};
use crate::inbound::limits::CallLimits;
use crate::inbound_webhooks::invalidations::Invalidations;
use crate::mcp::BcpMcp;
use crate::mcp::direct::Direct;
use crate::mcp::http::{Front, mcp_front};
use crate::mcp::shared_service::SharedService;
use crate::mcp::token::require_token;
use crate::negotiation::{Negotiator, ProfileClient};
use crate::order_webhooks::OrderWebhooks;
use crate::pipeline::activity::Activity;
use crate::pipeline::answer_cache::AnswerCache;
use crate::pipeline::tool_table::ToolTable;
use crate::pipeline::tools::{DECLARED, Declaration};
use crate::pipeline::{Pipeline, Steps};
use crate::platform::cache::CachedCatalog;
use crate::platform::{self, SharedPlatform};
use crate::protocol::Namespace;
use crate::replicas::Shared;
use crate::rest::{self, RestFront};
use crate::signatures::SignatureCheck;
use crate::status_page::{self, Door, PageContext};

/// Everything the running bridge is made of, built once at start-up.
pub struct Bridge {
    pub router: Router,
    pub base_url: String,
    /// The primary namespace's MCP endpoint; `None` when `server.transports` mounts no MCP.
    pub mcp_url: Option<String>,
    pub platform: SharedPlatform,
    /// One per namespace served (`server.protocol`), the primary one first.
    pub endpoints: Vec<Endpoint>,
}

/// Where one namespace is served.
#[derive(Debug, Clone)]
pub struct Endpoint {
    pub service: &'static str,
    pub version: &'static str,
    /// `None` when `server.transports` mounts no MCP endpoint.
    pub mcp_url: Option<String>,
    /// The REST binding's base URL, when `server.transports` serves REST.
    pub rest_url: Option<String>,
    pub profile_url: String,
}

/// What every namespace's door shares: one store, one inbound budget, one key cache.
struct Common {
    base_url: String,
    shutdown: CancellationToken,
    shared: Option<Shared>,
    platform: SharedPlatform,
    cache: Option<Arc<CachedCatalog>>,
    /// One answer cache (one byte bound) for every namespace; keys name the namespace.
    answers: Option<Arc<AnswerCache>>,
    limits: Arc<CallLimits>,
    signatures: Arc<SignatureCheck>,
    /// The one fetcher of agent profiles (negotiation and signature keys share documents).
    profiles: ProfileClient,
    activity: Arc<Activity>,
    /// The tools every door may serve (each serves those its store supports).
    tools: Vec<&'static Declaration>,
    /// The Host and Origin rules of every agent endpoint.
    hosts: Arc<Hosts>,
    reserved_checkout_params: &'static [&'static str],
    /// The checkout rules, when the platform implements the checkout port.
    checkouts: Option<Arc<CheckoutBrain>>,
    /// `[order_webhooks]`: the sender of placed orders' events, when enabled and the store
    /// places orders.
    order_events: Option<Arc<OrderWebhooks>>,
    /// The bridge's public signing keys (JWK), published in every profile.
    keys: Vec<serde_json::Value>,
}

/// Builds the whole application for a listener bound at `bound`.
pub async fn build(
    config: &BridgeConfig,
    bound: SocketAddr,
    shutdown: CancellationToken,
) -> Result<Bridge, StartError> {
    build_with_tools(config, bound, shutdown, &DECLARED).await
}

/// [`build`], serving `tools` instead of the bridge's own declarations.
pub async fn build_with_tools(
    config: &BridgeConfig,
    bound: SocketAddr,
    shutdown: CancellationToken,
    tools: &[&'static Declaration],
) -> Result<Bridge, StartError> {
    crate::prometheus::install();
    let common = Common::connect(config, config.server.base_url(bound), shutdown, tools).await?;
    let mut router = Router::new();
    let mut endpoints = Vec::new();
    let mut doors = Vec::new();
    // Each namespace gets its own brain, profile and MCP endpoint over the one platform, so
    // every answer speaks the namespace of the door it came through.
    for namespace in config.server.protocol.namespaces() {
        let (routes, door) = namespace_routes(config, &common, namespace)?;
        router = router.merge(routes);
        endpoints.push(Endpoint {
            service: door.service,
            version: door.version,
            mcp_url: door.mcp_url.clone(),
            rest_url: door.rest_url.clone(),
            profile_url: door.profile_url.clone(),
        });
        doors.push(door);
    }
    let router = router
        .merge(shared_routes(config, &common, doors))
        .fallback(routes::not_found);
    let mcp_url = endpoints
        .first()
        .and_then(|endpoint| endpoint.mcp_url.clone());
    Ok(Bridge {
        router,
        mcp_url,
        base_url: common.base_url,
        platform: common.platform,
        endpoints,
    })
}

impl Common {
    async fn connect(
        config: &BridgeConfig,
        base_url: String,
        shutdown: CancellationToken,
        tools: &[&'static Declaration],
    ) -> Result<Self, StartError> {
        // `[redis]`: what replicas share; `None` keeps everything in this process.
        let shared = config.redis.connect().map_err(StartError::Redis)?;
        let platform = config
            .build_platform_shared(base_url.clone(), shared.as_ref())
            .await
            .map_err(StartError::Store)?;
        // Cart and checkout writes of one id take turns on the same locks (and leases).
        let write_locks = Arc::new(platform::serial::KeyedLocks::default());
        let platform = platform::serial::wrap_with(platform, shared.clone(), write_locks.clone());
        let (platform, cache) = platform::cache::wrap(platform, &config.cache);
        // One inbound budget per agent across every namespace it may use (and every replica).
        let limits = Arc::new(
            CallLimits::new(
                Duration::from_millis(config.server.request_timeout_ms),
                &config.inbound,
            )
            .across_replicas(&config.inbound, shared.as_ref()),
        );
        let profiles = ProfileClient::new(&config.negotiation);
        let (hosts, origins) = host_policy(config, &base_url);
        let reserved_checkout_params = crate::registry::factory(config.platform_name())
            .map_or(&[][..], |factory| factory.reserved_checkout_params);
        // One set of checkout rules (and completion ledger) for every namespace.
        let mut pix = super::pix::flow(config, shared.as_ref())?;
        let checkouts = platform.checkout.clone().map(|port| {
            let handles = match &shared {
                Some(shared) => OrderHandles::shared(shared.link.clone()),
                None => OrderHandles::local(),
            };
            let writes = platform::exclusive::Exclusive::new(write_locks, shared.clone());
            let link = shared.as_ref().map(|shared| shared.link.clone());
            let mut brain = CheckoutBrain::new(port)
                .with_handles(handles)
                .with_writes(writes, link);
            if let Some((flow, api)) = pix.take() {
                brain = brain.with_pix(flow);
                let brain = Arc::new(brain);
                super::pix::start(&brain, api, &base_url);
                return brain;
            }
            Arc::new(brain)
        });
        if pix.is_some() {
            tracing::warn!(
                "[pix] is set but Pix is not offered: this store takes no orders through the bridge"
            );
        }
        let (order_events, keys) = match config
            .order_webhooks
            .start(&config.negotiation, &base_url, shared.as_ref())
            .map_err(StartError::OrderWebhooks)?
        {
            Some((sender, keys)) => (Some(sender), keys),
            None => (None, Vec::new()),
        };
        Ok(Self {
            checkouts,
            order_events,
            keys,
            base_url,
            shutdown,
            shared,
            platform,
            answers: cache
                .clone()
                .filter(|_| config.cache.answers)
                .map(|catalog| Arc::new(AnswerCache::new(catalog, config.cache.answer_bytes))),
            cache,
            limits,
            // One key cache for every namespace: an agent's keys do not depend on the door.
            signatures: Arc::new(SignatureCheck::new(&config.signatures, profiles.clone())),
            profiles,
            activity: Arc::new(Activity::new(
                tools
                    .iter()
                    .map(|declared| declared.name.as_str())
                    .collect(),
            )),
            tools: tools.to_vec(),
            hosts: Arc::new(Hosts::new(&hosts, &origins)),
            reserved_checkout_params,
        })
    }

    fn web(&self, profiles: Vec<(&'static str, String)>) -> WebState {
        WebState {
            profiles: Arc::new(profiles),
            platform: self.platform.clone(),
            shared: self.shared.clone(),
        }
    }
}

/// One namespace's MCP endpoint and discovery profiles, and the door the merchant page shows.
fn namespace_routes(
    config: &BridgeConfig,
    common: &Common,
    namespace: &'static Namespace,
) -> Result<(Router, Door), StartError> {
    let base_url = &common.base_url;
    let mcp_path = config.server.mcp_path_for(namespace).to_owned();
    let rest_path = config.server.rest_path_for(namespace).to_owned();
    let tools = ToolTable::serving(
        &common.tools,
        &config.limits,
        common.platform.info().capabilities,
        common.checkouts.is_some(),
        common
            .checkouts
            .as_ref()
            .is_some_and(|checkouts| checkouts.port().reads_orders()),
    )
    .map_err(StartError::Schemas)?;
    // UCP's buyer has no taxpayer_id: only the BCP door publishes BCP's fiscal identity.
    let bcp = crate::brain::fiscal::is_bcp(namespace);
    let tools = if bcp {
        tools
    } else {
        tools.without_taxpayer_id().map_err(StartError::Schemas)?
    };
    let capabilities = tools.capabilities();
    let mut bindings = Vec::new();
    if config.server.serves(Transport::Mcp) {
        bindings.push(Binding {
            transport: "mcp",
            path: &mcp_path,
        });
    }
    if config.server.serves(Transport::Rest) {
        bindings.push(Binding {
            transport: "rest",
            path: &rest_path,
        });
    }
    let handlers: Vec<&str> = common.checkouts.as_ref().map_or(Vec::new(), |checkouts| {
        checkouts
            .port()
            .handlers()
            .iter()
            .map(|handler| handler.id.as_str())
            .collect()
    });
    let mut profiles = Vec::new();
    for version in std::iter::once(&namespace.version).chain(namespace.supported_versions) {
        let mut profile = discovery::profile(
            namespace,
            version,
            base_url,
            &bindings,
            &capabilities,
            &common.keys,
            &handlers,
        );
        // BCP's Pix handler, under its own name and only through the BCP door.
        if let Some(pix) = common
            .checkouts
            .as_ref()
            .and_then(|checkouts| checkouts.pix())
            && bcp
        {
            crate::protocol::envelope::declare_pix(
                &mut profile.ucp.payment_handlers,
                pix.handler_id(),
                version,
            );
        }
        discovery::brazil::declare(
            &mut profile,
            namespace,
            version,
            &capabilities,
            config.seller.is_some(),
            config.returns.as_ref(),
            common
                .checkouts
                .as_ref()
                .is_some_and(|checkouts| checkouts.port().reads_invoices()),
        );
        profiles.push((
            *version,
            serde_json::to_string(&profile).unwrap_or_default(),
        ));
    }
    let brain = Brain::new(
        common.platform.clone(),
        namespace.clone(),
        config.limits.clone(),
        &config.cart,
    )
    .with_reserved_checkout_params(common.reserved_checkout_params);
    let brain = if bcp {
        brain.with_fiscal(crate::brain::fiscal::Fiscal::new(config.seller.as_ref()))
    } else {
        brain
    };
    let brain = match &common.checkouts {
        Some(checkouts) => brain.with_checkout(checkouts.clone()),
        None => brain,
    };
    let brain = match &common.order_events {
        Some(events) => brain.with_order_events(events.clone()),
        None => brain,
    };
    // Any replica the store's order webhook reaches announces a hand-off made through this
    // namespace, as this namespace renders it.
    if let (Some(checkouts), Some(announcer)) = (&common.checkouts, brain.handoff_announcer()) {
        checkouts.announce_through(namespace.service, announcer);
    }
    let idempotency = crate::idempotency::Idempotency::new(
        &config.idempotency,
        crate::idempotency::build_store(&config.idempotency, common.shared.as_ref())
            .map_err(StartError::Idempotency)?,
    );
    let pipeline = Arc::new(Pipeline::new(Steps {
        signatures: common.signatures.clone(),
        agents: config.agents.clone(),
        limits: common.limits.clone(),
        tools,
        access: Access::new(&config.access),
        negotiator: Negotiator::new(&config.negotiation, namespace, &common.profiles),
        idempotency,
        answers: common.answers.clone(),
        brain,
        activity: common.activity.clone(),
    }));
    let mut served = Router::new();
    if config.server.serves(Transport::Rest) {
        let front = RestFront {
            pipeline: pipeline.clone(),
            access: Access::new(&config.access),
            hosts: common.hosts.clone(),
            body_limit: config.limits.max_body_bytes,
            default_profile: config.agents.default_profile.is_some(),
            version: namespace.release(None).version,
        };
        served = served.merge(rest::routes(front, &rest_path));
    }
    if config.server.serves(Transport::Mcp) {
        served = served.merge(mcp_routes(config, common, &mcp_path, pipeline));
    }
    let mut discovery = Router::new();
    for path in namespace.profile_paths {
        discovery = discovery.route(path, get(routes::current_profile)).route(
            &format!("{path}/{{version}}"),
            get(routes::versioned_profile),
        );
    }
    let mcp = config.server.serves(Transport::Mcp);
    let door = Door {
        service: namespace.service,
        version: namespace.version,
        mcp_url: mcp.then(|| format!("{base_url}{mcp_path}")),
        mcp_path: mcp.then_some(mcp_path),
        rest_url: config
            .server
            .serves(Transport::Rest)
            .then(|| format!("{base_url}{rest_path}")),
        profile_url: format!("{base_url}{}", namespace.profile_paths[0]),
    };
    Ok((
        discovery.with_state(common.web(profiles)).merge(served),
        door,
    ))
}

/// The MCP endpoint at `mcp_path`: bearer check, then the front, then rmcp or the direct path.
fn mcp_routes(
    config: &BridgeConfig,
    common: &Common,
    mcp_path: &str,
    pipeline: Arc<Pipeline>,
) -> Router {
    let mcp_config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .with_sse_keep_alive(None)
        // The front admits Host and Origin for every request before rmcp sees it.
        .disable_allowed_hosts()
        .disable_allowed_origins()
        .with_max_request_body_bytes(config.limits.max_body_bytes)
        .with_cancellation_token(common.shutdown.clone());
    let direct = Arc::new(Direct::new(pipeline.clone()));
    let rmcp_pipeline = pipeline.clone();
    let service = StreamableHttpService::new(
        move || Ok(BcpMcp::new(rmcp_pipeline.clone())),
        LocalSessionManager::default().into(),
        mcp_config,
    );
    Router::new()
        .route_service(mcp_path, SharedService::new(service))
        .layer(axum::middleware::from_fn_with_state(
            Front {
                body_limit: config.limits.max_body_bytes,
                hosts: common.hosts.clone(),
                pipeline,
                direct,
            },
            mcp_front,
        ))
        // Outermost: requests without an accepted token never reach body parsing.
        .layer(axum::middleware::from_fn_with_state(
            Access::new(&config.access),
            require_token,
        ))
}

/// What every namespace shares: probes, metrics (behind their door), the merchant page,
/// cache webhooks.
fn shared_routes(config: &BridgeConfig, common: &Common, doors: Vec<Door>) -> Router {
    let metrics = Router::new()
        .route("/metrics", get(crate::prometheus::render))
        .route_layer(axum::middleware::from_fn_with_state(
            MetricsDoor {
                access: Access::new(&config.access),
                hosts: common.hosts.clone(),
            },
            routes::metrics_door,
        ));
    Router::new()
        .route("/healthz", get(|| async { "ok" }))
        .route("/readyz", get(routes::ready))
        .with_state(common.web(Vec::new()))
        .merge(metrics)
        .merge(status_page::routes(
            config.server.status_page,
            PageContext {
                platform: common.platform.clone(),
                activity: common.activity.clone(),
                access: Access::new(&config.access),
                bearer_required: !config.access.bearer_token_sha256.is_empty(),
                doors,
                default_profile: config.agents.default_profile.clone(),
                negotiation: config.negotiation.enabled,
            },
        ))
        .merge(crate::inbound_webhooks::shared_routes(
            common
                .cache
                .clone()
                .map(|cache| Invalidations::new(cache, common.shared.clone())),
            config.cache.webhook_secret.as_ref(),
        ))
        .merge(super::pix::routes(common.checkouts.as_ref()))
        .merge(match &common.checkouts {
            Some(checkouts) => {
                let rules = checkouts.clone();
                let arrived: crate::inbound_webhooks::OrderArrived = Arc::new(move |order| {
                    let rules = rules.clone();
                    Box::pin(async move { rules.order_arrived(&order).await })
                });
                crate::inbound_webhooks::order_routes(
                    checkouts.port().order_feed(),
                    arrived,
                    common.shared.clone(),
                )
            }
            None => Router::new(),
        })
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
