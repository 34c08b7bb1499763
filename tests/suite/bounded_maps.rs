//! Issue 35 item 2, driven as an attacker over real HTTP: what the bridge keeps per checkout
//! is kept only for ids the store answered for, and a cart id without its key opens nothing
//! the key guards.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Value, json};

use crate::shopify_checkout::{new_york, select, update};
use crate::support::shopify_orders::{OrderWebhooks, shopify_order};
use crate::support::shopify_standin::{EXPRESS, MUG_VARIANT, Standin};
use crate::support::values::{key, sao_paulo};
use crate::support::woo_standin::WooStandin;
use crate::support::{TestBridge, meta, meta_with_key};

/// A checkout id as the WooCommerce adapter spells one, around a Cart-Token the store never
/// issued (right shape, made-up session, no valid signature).
fn forged_woo_id(index: usize) -> String {
    let part = |value: Value| URL_SAFE_NO_PAD.encode(value.to_string());
    let token = format!(
        "{}.{}.{}",
        part(json!({"typ": "JWT", "alg": "HS256"})),
        part(json!({"user_id": format!("t_forged{index}"), "exp": 4_102_444_800_u64})),
        URL_SAFE_NO_PAD.encode(format!("not-a-signature-{index}")),
    );
    format!("wcc1_{}", URL_SAFE_NO_PAD.encode(token))
}

fn code(reply: &Value) -> &str {
    reply["messages"][0]["code"].as_str().unwrap_or_default()
}

/// Issue 35 item 2: forged checkout ids (and carts) get nothing kept for them — each is
/// unknown before and after the attempt — and a real buyer's purchase goes through beside
/// the flood.
#[tokio::test]
async fn forged_woocommerce_checkout_ids_keep_nothing_and_a_real_buyer_completes() {
    let woo = WooStandin::start().await;
    let bridge = TestBridge::start(&woo.config("\n[checkout]\nplace_with = [\"cod\"]")).await;
    let buyer = bridge
        .call(
            "create_checkout",
            json!({"meta": meta_with_key(&key()), "checkout": {
                "line_items": [{"item": {"id": "16"}, "quantity": 1}],
                "buyer": {"email": "ana@example.com"}}}),
        )
        .await;
    let id = buyer["id"].as_str().unwrap().to_owned();
    for index in 0..60 {
        let forged = forged_woo_id(index);
        // Converting a cart the store never made: refused, no checkout answered.
        let converted = bridge
            .call(
                "create_checkout",
                json!({"meta": meta_with_key(&key()), "checkout": {"cart_id": forged}}),
            )
            .await;
        assert!(converted.get("id").is_none(), "{converted}");
        let named = bridge
            .call(
                "update_checkout",
                json!({"meta": meta_with_key(&key()), "id": forged, "checkout": {
                    "buyer": {"email": format!("flood{index}@example.com")},
                    "fulfillment": {"methods": [{"type": "shipping", "destinations": [sao_paulo()]}]}}}),
            )
            .await;
        assert_eq!(code(&named), "not_found", "{named}");
        // Nothing was kept under the forged id: it reads as unknown, not as an empty checkout.
        let read = bridge
            .call("get_checkout", json!({"meta": meta(), "id": forged}))
            .await;
        assert_eq!(code(&read), "not_found", "{read}");
        assert!(!read.to_string().contains("flood"), "{read}");
    }
    let addressed = update_woo(
        &bridge,
        &id,
        json!({"fulfillment": {"methods": [{"type": "shipping", "destinations": [sao_paulo()]}]}}),
    )
    .await;
    let method = &addressed["fulfillment"]["methods"][0];
    let ready = update_woo(
        &bridge,
        &id,
        json!({"fulfillment": {"methods": [{"id": method["id"], "groups": [{"id": method["groups"][0]["id"], "selected_option_id": "flat_rate:1"}]}]}}),
    )
    .await;
    assert_eq!(ready["status"], "ready_for_complete", "{ready}");
    let completed = bridge
        .call(
            "complete_checkout",
            json!({"meta": meta_with_key(&key()), "id": id, "checkout": {
                "payment": {"instruments": [{"handler_id": "cod"}]}}}),
        )
        .await;
    assert_eq!(completed["status"], "completed", "{completed}");
    let order_id = completed["order"]["id"].as_str().unwrap();
    // Found through its index, not a scan of every checkout.
    let order = bridge
        .call("get_order", json!({"meta": meta(), "id": order_id}))
        .await;
    assert_eq!(order["id"], json!(order_id), "{order}");
}

async fn update_woo(bridge: &TestBridge, id: &str, checkout: Value) -> Value {
    bridge
        .call(
            "update_checkout",
            json!({"meta": meta_with_key(&key()), "id": id, "checkout": checkout}),
        )
        .await
}

/// Issue 35: Shopify serves a cart only with its `?key=`; once its order came back by
/// webhook, the same cart id without the key (or with another) reads no order and completes
/// nothing, while the id with the key reads it.
#[tokio::test]
async fn a_shopify_cart_id_without_its_key_does_not_read_the_placed_order() {
    const SECRET: &str = "shpss_test_orders_secret";
    let standin = Standin::start();
    let bridge =
        TestBridge::start(&standin.config(&format!("orders_webhook_secret = \"{SECRET}\""))).await;
    let created = bridge
        .call(
            "create_checkout",
            json!({"meta": meta_with_key(&key()), "checkout": {
                "line_items": [{"item": {"id": format!("gid://shopify/ProductVariant/{MUG_VARIANT}")}, "quantity": 2}],
                "buyer": {"email": "ana@example.com"}}}),
        )
        .await;
    let id = created["id"].as_str().unwrap().to_owned();
    let (keyless, _) = id.split_once("?key=").unwrap();
    let addressed = update(
        &bridge,
        &id,
        json!({"fulfillment": {"methods": [{"type": "shipping", "destinations": [new_york()]}]}}),
    )
    .await;
    let ready = update(&bridge, &id, select(&addressed, EXPRESS)).await;
    let handed = bridge
        .call(
            "complete_checkout",
            json!({"meta": meta_with_key(&key()), "id": id, "checkout": {}}),
        )
        .await;
    assert_eq!(handed["status"], "requires_escalation", "{handed}");
    let token = keyless.trim_start_matches("gid://shopify/Cart/");
    let order = shopify_order(token, &ready).to_string();
    let hook = OrderWebhooks::to(&bridge.base_url, SECRET)
        .deliver_raw(order.as_bytes(), Some("orders/create"), None)
        .await;
    assert_eq!(hook, 200);
    let owner = bridge
        .call("get_checkout", json!({"meta": meta(), "id": id}))
        .await;
    assert_eq!(owner["status"], "completed", "{owner}");
    for other in [keyless.to_owned(), format!("{keyless}?key=guessed")] {
        let read = bridge
            .call("get_checkout", json!({"meta": meta(), "id": other}))
            .await;
        assert_ne!(read["status"], "completed", "{other}: {read}");
        assert!(read.get("order").is_none(), "{other}: {read}");
        assert!(!read.to_string().contains("350 5th Ave"), "{other}: {read}");
        let completed = bridge
            .call(
                "complete_checkout",
                json!({"meta": meta_with_key(&key()), "id": other, "checkout": {}}),
            )
            .await;
        assert!(completed.get("order").is_none(), "{other}: {completed}");
    }
}
