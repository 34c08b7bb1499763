//! Shopify's order webhooks as Shopify sends them, for every test that hands a checkout off to
//! Shopify's page and reports the order back (one bridge or several replicas): the checkout
//! that hands off at once, the order body Shopify posts for it, and the signed delivery.

use reqwest::StatusCode;
use serde_json::{Value, json};

use super::shopify_standin::{EXPRESS, MUG_VARIANT};
use super::store_webhooks::hmac_base64;
use super::values::amount;

/// `create_checkout`'s `checkout`: one mug for a buyer in New York with Express selected, so
/// that `complete_checkout` hands off to Shopify's page at once.
pub fn mug_shipped_express_to_new_york() -> Value {
    json!({
        "line_items": [{"item": {"id": format!("gid://shopify/ProductVariant/{MUG_VARIANT}")}, "quantity": 1}],
        "buyer": {"email": "ana@example.com"},
        "fulfillment": {"methods": [{"type": "shipping", "destinations": [{
            "street_address": "350 5th Ave", "address_locality": "New York",
            "address_region": "NY", "postal_code": "10118", "address_country": "US"}],
            "groups": [{"selected_option_id": EXPRESS}]}]}
    })
}

/// The `cart_token` Shopify's order names for the checkout the bridge answered as `checkout_id`
/// (its cart id, without the `?key=` part).
pub fn cart_token(checkout_id: &str) -> String {
    let cart = checkout_id.trim_start_matches("gid://shopify/Cart/");
    cart.split('?').next().unwrap_or(cart).to_owned()
}

/// Shopify's `orders/create` body (its REST order, trimmed to what a real one always has)
/// for the checkout's lines as the buyer paid them on Shopify's page.
pub fn shopify_order(cart_token: &str, checkout: &Value) -> Value {
    let lines: Vec<Value> = checkout["line_items"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
        .map(|(index, line)| {
            let variant = line["item"]["id"].as_str().unwrap();
            let number: u64 = variant.rsplit('/').next().unwrap().parse().unwrap();
            let price = line["item"]["price"].as_i64().unwrap();
            json!({
                "id": 466157049 + index as u64,
                "admin_graphql_api_id": format!("gid://shopify/LineItem/{}", 466157049 + index as u64),
                "variant_id": number, "product_id": 632910392, "sku": null,
                "name": line["item"]["title"], "title": line["item"]["title"],
                "quantity": line["quantity"], "price": format!("{}.{:02}", price / 100, price % 100),
                "total_discount": "0.00", "fulfillment_status": null
            })
        })
        .collect();
    let money = |cents: i64| format!("{}.{:02}", cents / 100, cents % 100);
    let amount = |kind: &str| amount(checkout, kind).unwrap_or(0);
    json!({
        "id": 820982911946154508_u64,
        "admin_graphql_api_id": "gid://shopify/Order/820982911946154508",
        "name": "#1001", "confirmed": true,
        "cart_token": cart_token, "checkout_token": "bd5a8aa1ecd019dd3520ff791ee3a24c",
        "order_status_url": "https://standin-shop.myshopify.com/548380009/orders/123456abcd/authenticate?key=abcdefg",
        "currency": "USD", "presentment_currency": "USD",
        "financial_status": "paid", "fulfillment_status": null, "cancelled_at": null,
        "created_at": "2026-12-05T10:00:00-05:00", "updated_at": "2026-12-05T10:00:00-05:00",
        "email": "ana@example.com", "contact_email": "ana@example.com",
        "current_subtotal_price": money(amount("subtotal")),
        "current_total_discounts": "0.00", "current_total_tax": "0.00",
        "current_total_price": money(amount("total")),
        "total_shipping_price_set": {
            "shop_money": {"amount": money(amount("fulfillment")), "currency_code": "USD"},
            "presentment_money": {"amount": money(amount("fulfillment")), "currency_code": "USD"}
        },
        "shipping_lines": [{"title": "Express", "price": money(amount("fulfillment")), "code": "Express"}],
        "discount_codes": [],
        "line_items": lines,
        "shipping_address": {"first_name": "Ana", "last_name": "Souza", "address1": "350 5th Ave",
                             "city": "New York", "province_code": "NY", "zip": "10118", "country_code": "US"}
    })
}

/// The shop's side of `/webhooks/shopify/orders` on one bridge: every delivery signed with
/// `secret` (a wrong secret is how a test forges one).
pub struct OrderWebhooks {
    url: String,
    secret: String,
    client: reqwest::Client,
}

impl OrderWebhooks {
    /// Deliveries to the bridge at `base_url`, signed with `secret`.
    pub fn to(base_url: &str, secret: &str) -> Self {
        Self {
            url: format!("{base_url}/webhooks/shopify/orders"),
            secret: secret.to_owned(),
            client: reqwest::Client::new(),
        }
    }

    /// Posts `order` as Shopify does: signed, under `topic` and the delivery id `delivery`
    /// (`x-shopify-webhook-id`).
    pub async fn deliver(&self, order: &Value, topic: &str, delivery: &str) -> StatusCode {
        self.deliver_raw(order.to_string().as_bytes(), Some(topic), Some(delivery))
            .await
    }

    /// Posts `body` (any bytes), signed, with the topic and delivery id given; a header left
    /// out is left out of the request, as a forger or a test of one header may leave it.
    pub async fn deliver_raw(
        &self,
        body: &[u8],
        topic: Option<&str>,
        delivery: Option<&str>,
    ) -> StatusCode {
        let mut request = self
            .client
            .post(&self.url)
            .header("x-shopify-hmac-sha256", hmac_base64(&self.secret, body))
            .header("content-type", "application/json");
        if let Some(topic) = topic {
            request = request.header("x-shopify-topic", topic);
        }
        if let Some(delivery) = delivery {
            request = request.header("x-shopify-webhook-id", delivery);
        }
        request.body(body.to_vec()).send().await.unwrap().status()
    }
}
