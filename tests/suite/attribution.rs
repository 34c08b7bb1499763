//! The agent's `attribution` reaches the store: as a Shopify cart attribute on cartCreate,
//! and on both platforms as landing-URL parameters of `continue_url` (what WooCommerce's
//! order attribution and Shopify's landing-page UTMs read), never over the store's own keys.
//! SAE-009: attribution arrives inbound on cart requests.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::support::shopify_standin::{MUG_VARIANT, Standin};
use crate::support::values::line;
use crate::support::woo_standin::WooStandin;
use crate::support::{TestBridge, meta_with_fresh_key};

fn attribution() -> Value {
    json!({
        "campaign_source": "agent-x",
        "campaign_medium": "ai_agent",
        "utm_campaign": "spring_2026",
        "gclid": "EAIaIQ",
        // The store's own checkout keys are never the agent's to set.
        "key": "hijack",
        "session": "hijack",
        "coupon": "FREE100",
        "products": "1:99",
        "discount": "FREE100"
    })
}

fn query(url: &str) -> BTreeMap<String, Vec<String>> {
    let mut pairs: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (key, value) in url::Url::parse(url).unwrap().query_pairs() {
        pairs
            .entry(key.into_owned())
            .or_default()
            .push(value.into_owned());
    }
    pairs
}

fn assert_utm(pairs: &BTreeMap<String, Vec<String>>) {
    assert_eq!(pairs["utm_source"], ["agent-x"], "{pairs:?}");
    assert_eq!(pairs["utm_medium"], ["ai_agent"], "{pairs:?}");
    assert_eq!(pairs["utm_campaign"], ["spring_2026"], "{pairs:?}");
    assert_eq!(pairs["gclid"], ["EAIaIQ"], "{pairs:?}");
    assert!(!pairs.contains_key("coupon"), "{pairs:?}");
    assert!(!pairs.contains_key("discount"), "{pairs:?}");
}

#[tokio::test]
async fn shopify_gets_the_attribution_as_cart_attribute_and_on_the_checkout_url() {
    let standin = Standin::start();
    let bridge = TestBridge::start(&standin.config("")).await;
    let created = bridge
        .call(
            "create_cart",
            json!({"meta": meta_with_fresh_key(), "cart": {
                "line_items": [line(&format!("gid://shopify/ProductVariant/{MUG_VARIANT}"), 1)],
                "attribution": attribution()}}),
        )
        .await;
    // The upstream cartCreate carried it as a cart attribute (it becomes an order attribute).
    let create = standin
        .bodies()
        .into_iter()
        .find(|body| body.contains("cartCreate"))
        .unwrap();
    let sent: Value = serde_json::from_str(&create).unwrap();
    let attributes = &sent["variables"]["input"]["attributes"];
    assert_eq!(attributes[0]["key"], "_bcp_attribution", "{sent}");
    let value: Value = serde_json::from_str(attributes[0]["value"].as_str().unwrap()).unwrap();
    assert_eq!(value["campaign_source"], "agent-x");
    let id = created["id"].as_str().unwrap();
    assert!(
        standin
            .cart_attributes(id)
            .iter()
            .any(|(key, _)| key == "_bcp_attribution")
    );
    // The checkout URL keeps its own `key` and gains the landing parameters.
    let url = created["continue_url"].as_str().unwrap();
    let pairs = query(url);
    assert_eq!(pairs["key"].len(), 1, "{url}");
    assert_ne!(pairs["key"], ["hijack"], "{url}");
    assert_utm(&pairs);
}

#[tokio::test]
async fn woocommerce_gets_the_attribution_as_utm_parameters_of_the_landing_url() {
    for checkout in ["session", "link"] {
        let woo = WooStandin::start().await;
        let bridge = TestBridge::start(&woo.config(&format!("checkout = \"{checkout}\""))).await;
        let created = bridge
            .call(
                "create_cart",
                json!({"meta": meta_with_fresh_key(), "cart": {
                    "line_items": [{"item": {"id": "MUG-1"}, "quantity": 1}],
                    "attribution": attribution()}}),
            )
            .await;
        let url = created["continue_url"].as_str().unwrap();
        let pairs = query(url);
        assert_utm(&pairs);
        match checkout {
            "session" => assert_ne!(pairs["session"], ["hijack"], "{url}"),
            _ => assert!(!pairs.contains_key("session"), "{url}"),
        }
        match pairs.get("products") {
            Some(products) => assert_ne!(products, &["1:99"], "{url}"),
            None => assert_eq!(checkout, "session", "{url}"),
        }
        // A call without attribution leaves the URL as the store made it.
        let id = created["id"].as_str().unwrap();
        let got = bridge
            .call("get_cart", json!({"meta": meta_with_fresh_key(), "id": id}))
            .await;
        let plain = query(got["continue_url"].as_str().unwrap());
        assert!(!plain.contains_key("utm_source"), "{plain:?}");
    }
}
