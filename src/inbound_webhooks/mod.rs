//! The store's webhooks. Product webhooks drop a product from the cache at once: `POST
//! /webhooks/shopify` (`X-Shopify-Hmac-Sha256`) and `POST /webhooks/woocommerce`
//! (`X-WC-Webhook-Signature`), both base64 HMAC-SHA256 of the raw body with the configured
//! secret; with `[redis]` the drop reaches every replica, whichever one the webhook reached.
//! Order webhooks (`POST /webhooks/{platform}/orders`) go to the platform's order feed, for a
//! store where the buyer places the order on its own page (Shopify).
//!
//! Only the raw body is signed. Every webhook is taken once per delivery id and body
//! (`replays`); an order webhook also changes the order only when its body's `updated_at` is
//! newer than the state last applied (`versions`), so a late or copied body neither rolls an
//! order back nor announces it again. Product webhooks are not ordered: dropping a product
//! from the cache holds no state (the next read asks the store), and a store may report a
//! stock change without moving the product's `updated_at`.

pub mod invalidations;
pub mod pix;
mod replays;
mod versions;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use base64::Engine;
use hmac::{KeyInit, Mac};
use secrecy::ExposeSecret;
use serde_json::Value;
use tokio::sync::Mutex;

use self::invalidations::Invalidations;
use self::replays::{Replays, delivery_key};
use self::versions::Versions;
use crate::model::checkout::Order;
use crate::platform::PlatformError;
use crate::platform::cache::CachedCatalog;
use crate::platform::checkout::{OrderFeed, Version};
use crate::replicas::Shared;
use crate::settings::Secret;

type HmacSha256 = hmac::Hmac<sha2::Sha256>;

#[derive(Clone)]
struct Hooks {
    cache: Invalidations,
    secret: Secret,
    replays: Replays,
}

/// The routes, or an empty router when there is no cache or no secret.
pub fn routes(cache: Option<Arc<CachedCatalog>>, secret: Option<&Secret>) -> Router {
    shared_routes(cache.map(|cache| Invalidations::new(cache, None)), secret)
}

/// `routes` whose invalidations reach every replica (see `invalidations`).
pub fn shared_routes(cache: Option<Invalidations>, secret: Option<&Secret>) -> Router {
    let (Some(cache), Some(secret)) = (cache, secret) else {
        return Router::new();
    };
    Router::new()
        .route("/webhooks/shopify", post(shopify))
        .route("/webhooks/woocommerce", post(woocommerce))
        .with_state(Hooks {
            replays: Replays::new(cache.shared().cloned()),
            cache,
            secret: secret.clone(),
        })
}

/// Constant-time check of a base64 HMAC-SHA256 signature of `body`.
pub fn signature_valid(secret: &Secret, body: &[u8], signature: Option<&str>) -> bool {
    let Some(signature) = signature else {
        return false;
    };
    let Ok(expected) = base64::engine::general_purpose::STANDARD.decode(signature.trim()) else {
        return false;
    };
    let Ok(mut mac) = HmacSha256::new_from_slice(secret.0.expose_secret().as_bytes()) else {
        return false;
    };
    mac.update(body);
    mac.verify_slice(&expected).is_ok()
}

fn verified(hooks: &Hooks, headers: &HeaderMap, header: &str, body: &[u8]) -> bool {
    let signature = headers.get(header).and_then(|value| value.to_str().ok());
    let valid = signature_valid(&hooks.secret, body, signature);
    if !valid {
        tracing::warn!(header, "webhook refused: bad or missing signature");
    }
    valid
}

/// The store's delivery id of a request, when it sent one.
fn delivery<'a>(headers: &'a HeaderMap, header: &str) -> Option<&'a str> {
    headers
        .get(header)
        .and_then(|value| value.to_str().ok())
        .filter(|id| !id.is_empty())
}

/// A header an outsider may have written, as a log may show it: short plain words or nothing.
fn loggable(text: &str) -> &str {
    let plain = text.len() <= 64
        && text
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || b"/._-".contains(&byte));
    if plain { text } else { "" }
}

/// Takes a signed product webhook once per delivery id and body; `None` for a repeat.
async fn first_product_delivery(
    hooks: &Hooks,
    headers: &HeaderMap,
    route: &str,
    header: &str,
    body: &[u8],
) -> Option<Option<replays::DeliveryKey>> {
    let Some(id) = delivery(headers, header) else {
        return Some(None);
    };
    let key = delivery_key(route, id, body);
    if hooks.replays.first(&key).await {
        Some(Some(key))
    } else {
        tracing::info!(route, "product webhook already taken: ignored");
        None
    }
}

/// A taken delivery whose body was refused is forgotten, so a corrected retry is taken.
async fn refused(hooks: &Hooks, key: Option<replays::DeliveryKey>) -> StatusCode {
    if let Some(key) = key {
        hooks.replays.forget(&key).await;
    }
    StatusCode::BAD_REQUEST
}

fn id_of(value: &Value) -> Option<String> {
    match value {
        Value::String(text) if !text.is_empty() => Some(text.clone()),
        Value::Number(number) => Some(number.to_string()),
        _ => None,
    }
}

async fn shopify(State(hooks): State<Hooks>, headers: HeaderMap, body: Bytes) -> StatusCode {
    if !verified(&hooks, &headers, "x-shopify-hmac-sha256", &body) {
        return StatusCode::UNAUTHORIZED;
    }
    let Some(key) = first_product_delivery(
        &hooks,
        &headers,
        "shopify-products",
        "x-shopify-webhook-id",
        &body,
    )
    .await
    else {
        return StatusCode::OK;
    };
    let Ok(payload) = serde_json::from_slice::<Value>(&body) else {
        return refused(&hooks, key).await;
    };
    let ids: Vec<String> = ["admin_graphql_api_id", "id"]
        .iter()
        .filter_map(|key| payload.get(*key).and_then(id_of))
        .collect();
    if ids.is_empty() {
        return refused(&hooks, key).await;
    }
    hooks.cache.product_changed(&ids).await;
    StatusCode::OK
}

async fn woocommerce(State(hooks): State<Hooks>, headers: HeaderMap, body: Bytes) -> StatusCode {
    if !verified(&hooks, &headers, "x-wc-webhook-signature", &body) {
        return StatusCode::UNAUTHORIZED;
    }
    let Some(key) = first_product_delivery(
        &hooks,
        &headers,
        "woocommerce-products",
        "x-wc-webhook-delivery-id",
        &body,
    )
    .await
    else {
        return StatusCode::OK;
    };
    // WooCommerce's delivery test when a webhook is created is a form body, not JSON.
    let Ok(payload) = serde_json::from_slice::<Value>(&body) else {
        return StatusCode::OK;
    };
    match payload.get("id").and_then(id_of) {
        Some(id) => {
            hooks.cache.product_changed(&[id]).await;
            StatusCode::OK
        }
        None => refused(&hooks, key).await,
    }
}

/// What to do with an order the store reported for a checkout the bridge handed off (the
/// checkout rules announce it to the agent's webhook).
pub type OrderArrived =
    Arc<dyn Fn(Order) -> Pin<Box<dyn Future<Output = ()> + Send>> + Send + Sync>;

#[derive(Clone)]
struct Orders {
    feed: Arc<dyn OrderFeed>,
    arrived: OrderArrived,
    replays: Replays,
    versions: Versions,
    /// One body at a time from the ordering check to the recorded version, so two bodies of
    /// one order cannot both pass the check and land in the wrong order. Order webhooks are
    /// few, and only signed ones wait here.
    applying: Arc<Mutex<()>>,
}

/// `POST /webhooks/{platform}/orders`, when the platform has an order feed configured; with
/// `shared`, deliveries and versions are shared with the other replicas.
pub fn order_routes(
    feed: Option<Arc<dyn OrderFeed>>,
    arrived: OrderArrived,
    shared: Option<Shared>,
) -> Router {
    let Some(feed) = feed else {
        return Router::new();
    };
    let platform = feed.route().platform;
    let path = format!("/webhooks/{platform}/orders");
    Router::new().route(&path, post(orders)).with_state(Orders {
        feed,
        arrived,
        replays: Replays::new(shared.clone()),
        versions: Versions::new(platform, shared),
        applying: Arc::new(Mutex::new(())),
    })
}

async fn orders(State(orders): State<Orders>, headers: HeaderMap, body: Bytes) -> StatusCode {
    let route = orders.feed.route();
    let header = |name: &str| headers.get(name).and_then(|value| value.to_str().ok());
    if !signature_valid(orders.feed.secret(), &body, header(route.signature_header)) {
        tracing::warn!(
            header = route.signature_header,
            "order webhook refused: bad or missing signature"
        );
        return StatusCode::UNAUTHORIZED;
    }
    // The topic header is not signed (only the body is): it is logged, never acted on. The
    // body is the buyer's order and is never logged.
    let topic = loggable(header(route.topic_header).unwrap_or_default());
    let version = match orders.feed.version(&body) {
        Ok(Some(version)) => version,
        Ok(None) => {
            tracing::info!(
                topic,
                "order webhook names no order or no updated_at: ignored"
            );
            return StatusCode::OK;
        }
        Err(_) => {
            tracing::warn!(topic, "order webhook refused: not an order");
            return StatusCode::BAD_REQUEST;
        }
    };
    let key = delivery(&headers, route.delivery_header)
        .map(|id| delivery_key(&format!("{}-orders", route.platform), id, &body));
    if let Some(key) = &key
        && !orders.replays.first(key).await
    {
        tracing::info!(topic, "order webhook already taken: ignored");
        return StatusCode::OK;
    }
    let outcome = apply(&orders, topic, &version, &body).await;
    if outcome != StatusCode::OK
        && let Some(key) = &key
    {
        orders.replays.forget(key).await;
    }
    outcome
}

/// Applies a signed order body newer than any state applied before, and announces it.
async fn apply(orders: &Orders, topic: &str, version: &Version, body: &[u8]) -> StatusCode {
    // Held through the announcement too, so announcements leave in the order applied.
    let _applying = orders.applying.lock().await;
    if orders.versions.stale(version).await {
        tracing::info!(
            topic,
            "order webhook no newer than the order's state: ignored"
        );
        return StatusCode::OK;
    }
    match orders.feed.received(topic, body).await {
        Ok(kept) => {
            tracing::info!(topic, kept = kept.is_some(), "order webhook");
            if let Some(order) = kept
                && orders.versions.applied(version).await
            {
                (orders.arrived)(order).await;
            }
            StatusCode::OK
        }
        Err(PlatformError::InvalidInput(_)) => {
            tracing::warn!(topic, "order webhook refused: not an order");
            StatusCode::BAD_REQUEST
        }
        Err(error) => {
            tracing::warn!(topic, %error, "order webhook failed");
            StatusCode::INTERNAL_SERVER_ERROR
        }
    }
}
