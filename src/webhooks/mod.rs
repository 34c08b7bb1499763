//! The store's webhooks. Product webhooks drop a product from the cache at once: `POST
//! /webhooks/shopify` (`X-Shopify-Hmac-Sha256`) and `POST /webhooks/woocommerce`
//! (`X-WC-Webhook-Signature`), both base64 HMAC-SHA256 of the raw body with the configured
//! secret; with `[redis]` the drop reaches every replica, whichever one the webhook reached.
//! Order webhooks (`POST /webhooks/{platform}/orders`) go to the platform's order feed, for a
//! store where the buyer places the order on its own page (Shopify).

pub mod invalidations;

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

use self::invalidations::Invalidations;
use crate::model::checkout::Order;
use crate::platform::PlatformError;
use crate::platform::cache::CachedCatalog;
use crate::platform::checkout::OrderFeed;
use crate::settings::Secret;

type HmacSha256 = hmac::Hmac<sha2::Sha256>;

#[derive(Clone)]
struct Hooks {
    cache: Invalidations,
    secret: Secret,
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
    let Ok(payload) = serde_json::from_slice::<Value>(&body) else {
        return StatusCode::BAD_REQUEST;
    };
    let ids: Vec<String> = ["admin_graphql_api_id", "id"]
        .iter()
        .filter_map(|key| payload.get(*key).and_then(id_of))
        .collect();
    if ids.is_empty() {
        return StatusCode::BAD_REQUEST;
    }
    hooks.cache.product_changed(&ids).await;
    StatusCode::OK
}

async fn woocommerce(State(hooks): State<Hooks>, headers: HeaderMap, body: Bytes) -> StatusCode {
    if !verified(&hooks, &headers, "x-wc-webhook-signature", &body) {
        return StatusCode::UNAUTHORIZED;
    }
    // WooCommerce's delivery test when a webhook is created is a form body, not JSON.
    let Ok(payload) = serde_json::from_slice::<Value>(&body) else {
        return StatusCode::OK;
    };
    match payload.get("id").and_then(id_of) {
        Some(id) => {
            hooks.cache.product_changed(&[id]).await;
            StatusCode::OK
        }
        None => StatusCode::BAD_REQUEST,
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
}

/// `POST /webhooks/{platform}/orders`, when the platform has an order feed configured.
pub fn order_routes(feed: Option<Arc<dyn OrderFeed>>, arrived: OrderArrived) -> Router {
    let Some(feed) = feed else {
        return Router::new();
    };
    let path = format!("/webhooks/{}/orders", feed.route().platform);
    Router::new()
        .route(&path, post(orders))
        .with_state(Orders { feed, arrived })
}

async fn orders(
    State(Orders { feed, arrived }): State<Orders>,
    headers: HeaderMap,
    body: Bytes,
) -> StatusCode {
    let route = feed.route();
    let header = |name: &str| headers.get(name).and_then(|value| value.to_str().ok());
    if !signature_valid(feed.secret(), &body, header(route.signature_header)) {
        tracing::warn!(
            header = route.signature_header,
            "order webhook refused: bad or missing signature"
        );
        return StatusCode::UNAUTHORIZED;
    }
    // The topic is the store's, signed; the body is the buyer's order and is never logged.
    let topic = header(route.topic_header).unwrap_or_default();
    match feed.received(topic, &body).await {
        Ok(kept) => {
            tracing::info!(topic, kept = kept.is_some(), "order webhook");
            if let Some(order) = kept {
                arrived(order).await;
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
