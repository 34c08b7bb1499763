//! Issue 35 item 4: the store's order webhooks, replayed and late, over real HTTP on loopback
//! as an attacker holding copies of signed requests would send them. Only the body is signed:
//! the delivery id and the topic are whatever the sender writes. A copy of a delivery, a copy
//! under a fresh delivery id or another topic, and a body older than the order's state all
//! answer 200 (the store must stop retrying) and change nothing: `get_order` does not roll
//! back and the agent's webhook hears each state once, in order.

use std::time::Duration;

use serde_json::{Value, json};

use crate::order_webhooks::{agent, config, key_file, wait_for};
use crate::shopify_checkout::{hmac_base64, shopify_order};
use crate::support::TestBridge;
use crate::support::shopify_standin::{EXPRESS, MUG_VARIANT, Standin};

const SECRET: &str = "shpss_replay_secret";

struct Shop {
    bridge: TestBridge,
    client: reqwest::Client,
}

impl Shop {
    /// Sends a body signed with the store's secret, under `delivery` and `topic`.
    async fn deliver(&self, body: &Value, delivery: &str, topic: &str) -> u16 {
        let body = body.to_string().into_bytes();
        self.client
            .post(format!("{}/webhooks/shopify/orders", self.bridge.base_url))
            .header("x-shopify-hmac-sha256", hmac_base64(SECRET, &body))
            .header("x-shopify-webhook-id", delivery)
            .header("x-shopify-topic", topic)
            .header("content-type", "application/json")
            .body(body)
            .send()
            .await
            .unwrap()
            .status()
            .as_u16()
    }
}

/// An announced event's order, as `get_order` answers it.
fn announced_order(body: &[u8]) -> Value {
    let mut event: Value = serde_json::from_slice(body).unwrap();
    let object = event.as_object_mut().unwrap();
    object.remove("event_id");
    object.remove("created_time");
    event
}

#[tokio::test]
async fn replayed_late_and_retitled_order_webhooks_change_nothing_and_announce_nothing() {
    let (agent_url, hook) = agent(0).await;
    let key = key_file(false);
    let standin = Standin::start();
    // One delivery at a time, so the events reach the agent in the order they were queued.
    let bridge = TestBridge::start(&format!(
        "{}{}",
        standin.config(&format!("orders_webhook_secret = \"{SECRET}\"")),
        config(
            &key,
            "max_concurrent_deliveries = 1\nmax_concurrent_per_host = 1\n"
        )
    ))
    .await;
    let profile = format!("{agent_url}/with-hook");
    let meta = |key: Option<String>| match key {
        Some(key) => json!({"ucp-agent": {"profile": profile}, "idempotency-key": key}),
        None => json!({"ucp-agent": {"profile": profile}}),
    };
    let fresh = || Some(uuid::Uuid::new_v4().to_string());
    let created = bridge
        .call(
            "create_checkout",
            json!({"meta": meta(fresh()), "checkout": {
                "line_items": [{"item": {"id": format!("gid://shopify/ProductVariant/{MUG_VARIANT}")}, "quantity": 1}],
                "buyer": {"email": "ana@example.com"},
                "fulfillment": {"methods": [{"type": "shipping", "destinations": [{
                    "street_address": "350 5th Ave", "address_locality": "New York",
                    "address_region": "NY", "postal_code": "10118", "address_country": "US"}],
                    "groups": [{"selected_option_id": EXPRESS}]}]}
            }}),
        )
        .await;
    let id = created["id"].as_str().unwrap().to_owned();
    let handed = bridge
        .call(
            "complete_checkout",
            json!({"meta": meta(fresh()), "id": id, "checkout": {}}),
        )
        .await;
    assert_eq!(handed["status"], "requires_escalation", "{handed}");
    let token = id
        .trim_start_matches("gid://shopify/Cart/")
        .split('?')
        .next()
        .unwrap()
        .to_owned();
    let shop = Shop {
        bridge,
        client: reqwest::Client::new(),
    };

    // The order as placed (10:00), paid a minute later, then cancelled the next day.
    let placed = shopify_order(&token, &handed);
    let mut paid = shopify_order("", &handed);
    paid["updated_at"] = json!("2026-12-05T10:01:00-05:00");
    let mut cancelled = shopify_order("", &handed);
    cancelled["cancelled_at"] = json!("2026-12-06T09:00:00-05:00");
    cancelled["updated_at"] = json!("2026-12-06T09:00:00-05:00");

    assert_eq!(shop.deliver(&placed, "d-1", "orders/create").await, 200);
    let received = wait_for(&hook, 1, Duration::from_secs(10)).await;
    assert_eq!(received.len(), 1, "the order is announced");
    let checkout = shop
        .bridge
        .call("get_checkout", json!({"meta": meta(None), "id": id}))
        .await;
    let order_id = checkout["order"]["id"].as_str().unwrap().to_owned();
    let read = || async {
        shop.bridge
            .call("get_order", json!({"meta": meta(None), "id": order_id}))
            .await
    };
    let as_placed = read().await;
    assert_eq!(as_placed["line_items"][0]["status"], "processing");

    // The same delivery again (a replayed copy, or the store's own retry), the same body under
    // a delivery id never used, and under another topic: 200, nothing changes.
    assert_eq!(shop.deliver(&placed, "d-1", "orders/create").await, 200);
    assert_eq!(
        shop.deliver(&placed, "d-forged", "orders/create").await,
        200
    );
    assert_eq!(
        shop.deliver(&placed, "d-forged-2", "orders/cancelled")
            .await,
        200
    );
    assert_eq!(read().await, as_placed);

    assert_eq!(
        shop.deliver(&cancelled, "d-2", "orders/cancelled").await,
        200
    );
    let as_cancelled = read().await;
    assert_eq!(as_cancelled["line_items"][0]["status"], "removed");

    // Late bodies (the placed and the paid state, older than the cancellation) under fresh
    // delivery ids and any topic: the order is not rolled back.
    for (body, delivery, topic) in [
        (&placed, "d-late-1", "orders/create"),
        (&paid, "d-late-2", "orders/paid"),
        (&placed, "d-1", "orders/updated"),
    ] {
        assert_eq!(shop.deliver(body, delivery, topic).await, 200, "{delivery}");
        assert_eq!(
            read().await,
            as_cancelled,
            "{delivery} rolled the order back"
        );
    }
    // The cancellation replayed: nothing either.
    assert_eq!(
        shop.deliver(&cancelled, "d-2", "orders/cancelled").await,
        200
    );
    assert_eq!(shop.deliver(&cancelled, "d-3", "orders/updated").await, 200);

    // A real later change is applied and announced; by the time its event arrives every
    // event queued before it has arrived too (one delivery at a time): exactly three.
    let mut refunded = cancelled.clone();
    refunded["financial_status"] = json!("refunded");
    refunded["shipping_lines"][0]["title"] = json!("Express (refunded)");
    refunded["updated_at"] = json!("2026-12-07T08:00:00-05:00");
    assert_eq!(shop.deliver(&refunded, "d-4", "orders/updated").await, 200);
    let as_refunded = read().await;
    assert_ne!(as_refunded, as_cancelled);
    let received = wait_for(&hook, 3, Duration::from_secs(10)).await;
    let announced: Vec<Value> = received
        .iter()
        .map(|request| announced_order(&request.body))
        .collect();
    assert_eq!(announced, [as_placed, as_cancelled, as_refunded]);
    let _ = std::fs::remove_file(key);
}

/// A signed body that is no order (a product's, sent to the order route under an order
/// topic), one that names no `updated_at`, and one that is not JSON: nothing is kept; the
/// first two answer 200 so the store does not retry them, the last 400.
#[tokio::test]
async fn signed_bodies_that_are_no_orderable_order_change_nothing() {
    let standin = Standin::start();
    let bridge =
        TestBridge::start(&standin.config(&format!("orders_webhook_secret = \"{SECRET}\""))).await;
    let shop = Shop {
        bridge,
        client: reqwest::Client::new(),
    };
    let product = json!({"id": 632910392_u64, "admin_graphql_api_id": "gid://shopify/Product/632910392",
                         "title": "Mug", "updated_at": "2026-12-05T10:00:00-05:00"});
    assert_eq!(shop.deliver(&product, "p-1", "orders/create").await, 200);
    let unknown = shop
        .bridge
        .call(
            "get_order",
            json!({"meta": crate::support::meta(), "id": "gid://shopify/Product/632910392"}),
        )
        .await;
    assert_eq!(unknown["messages"][0]["code"], "not_found", "{unknown}");
    let timeless = json!({"id": 820982911946154508_u64, "cart_token": "c"});
    assert_eq!(shop.deliver(&timeless, "p-2", "orders/create").await, 200);
    let junk = b"{\"id\": 1".to_vec();
    let bad = shop
        .client
        .post(format!("{}/webhooks/shopify/orders", shop.bridge.base_url))
        .header("x-shopify-hmac-sha256", hmac_base64(SECRET, &junk))
        .header("x-shopify-webhook-id", "p-3")
        .body(junk)
        .send()
        .await
        .unwrap();
    assert_eq!(bad.status(), 400);
}
