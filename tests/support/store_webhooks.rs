//! The stores' signed webhooks as the stores send them. Each store signs the body alone with
//! HMAC-SHA256 under the secret it shares with the bridge, in base64: Shopify in
//! `x-shopify-hmac-sha256`, WooCommerce in `x-wc-webhook-signature`. Shopify's order webhooks
//! have their own helper (`shopify_orders`).

use base64::Engine;
use hmac::{KeyInit, Mac};
use reqwest::StatusCode;

/// A store's webhook signature: the body's HMAC-SHA256 under `secret`, in base64.
pub fn hmac_base64(secret: &str, body: &[u8]) -> String {
    let mut mac = hmac::Hmac::<sha2::Sha256>::new_from_slice(secret.as_bytes()).unwrap();
    mac.update(body);
    base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes())
}

/// WooCommerce's product webhook with `body` to the bridge at `base_url`, signed with `secret`,
/// under the delivery id `delivery` (`x-wc-webhook-delivery-id`) when given.
pub async fn woo_product_webhook(
    base_url: &str,
    secret: &str,
    body: &str,
    delivery: Option<&str>,
) -> StatusCode {
    let mut request = reqwest::Client::new()
        .post(format!("{base_url}/webhooks/woocommerce"))
        .header(
            "x-wc-webhook-signature",
            hmac_base64(secret, body.as_bytes()),
        )
        .header("content-type", "application/json");
    if let Some(delivery) = delivery {
        request = request.header("x-wc-webhook-delivery-id", delivery);
    }
    request.body(body.to_owned()).send().await.unwrap().status()
}
