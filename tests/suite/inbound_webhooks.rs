//! Issue 35 item 4: the store's order webhooks, replayed and late, over real HTTP on loopback
//! as an attacker holding copies of signed requests would send them. Only the body is signed:
//! the delivery id and the topic are whatever the sender writes. A copy of a delivery, a copy
//! under a fresh delivery id or another topic, and a body older than the order's state all
//! answer 200 (the store must stop retrying) and change nothing: `get_order` does not roll
//! back and the agent's webhook hears each state once, in order.

use std::time::Duration;

use serde_json::{Value, json};

use crate::order_webhooks::{ShopifyHandOff, wait_for};
use crate::support::TestBridge;
use crate::support::shopify_orders::{OrderWebhooks, cart_token, shopify_order};
use crate::support::shopify_standin::Standin;

const SECRET: &str = "shpss_replay_secret";

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
    // One delivery at a time, so the events reach the agent in the order they were queued.
    let handoff = ShopifyHandOff::start(
        SECRET,
        "max_concurrent_deliveries = 1\nmax_concurrent_per_host = 1\n",
    )
    .await;
    let (bridge, hook, id, handed) = (&handoff.bridge, &handoff.hook, &handoff.id, &handoff.handed);
    let shop = OrderWebhooks::to(&bridge.base_url, SECRET);

    // The order as placed (10:00), paid a minute later, then cancelled the next day.
    let placed = shopify_order(&cart_token(id), handed);
    let mut paid = shopify_order("", handed);
    paid["updated_at"] = json!("2026-12-05T10:01:00-05:00");
    let mut cancelled = shopify_order("", handed);
    cancelled["cancelled_at"] = json!("2026-12-06T09:00:00-05:00");
    cancelled["updated_at"] = json!("2026-12-06T09:00:00-05:00");

    assert_eq!(shop.deliver(&placed, "orders/create", "d-1").await, 200);
    let received = wait_for(hook, 1, Duration::from_secs(10)).await;
    assert_eq!(received.len(), 1, "the order is announced");
    let checkout = bridge
        .call("get_checkout", json!({"meta": handoff.meta(), "id": id}))
        .await;
    let order_id = checkout["order"]["id"].as_str().unwrap().to_owned();
    let read = || async {
        bridge
            .call("get_order", json!({"meta": handoff.meta(), "id": order_id}))
            .await
    };
    let as_placed = read().await;
    assert_eq!(as_placed["line_items"][0]["status"], "processing");

    // The same delivery again (a replayed copy, or the store's own retry), the same body under
    // a delivery id never used, and under another topic: 200, nothing changes.
    assert_eq!(shop.deliver(&placed, "orders/create", "d-1").await, 200);
    assert_eq!(
        shop.deliver(&placed, "orders/create", "d-forged").await,
        200
    );
    assert_eq!(
        shop.deliver(&placed, "orders/cancelled", "d-forged-2")
            .await,
        200
    );
    assert_eq!(read().await, as_placed);

    assert_eq!(
        shop.deliver(&cancelled, "orders/cancelled", "d-2").await,
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
        assert_eq!(shop.deliver(body, topic, delivery).await, 200, "{delivery}");
        assert_eq!(
            read().await,
            as_cancelled,
            "{delivery} rolled the order back"
        );
    }
    // The cancellation replayed: nothing either.
    assert_eq!(
        shop.deliver(&cancelled, "orders/cancelled", "d-2").await,
        200
    );
    assert_eq!(shop.deliver(&cancelled, "orders/updated", "d-3").await, 200);

    // A real later change is applied and announced; by the time its event arrives every
    // event queued before it has arrived too (one delivery at a time): exactly three.
    let mut refunded = cancelled.clone();
    refunded["financial_status"] = json!("refunded");
    refunded["shipping_lines"][0]["title"] = json!("Express (refunded)");
    refunded["updated_at"] = json!("2026-12-07T08:00:00-05:00");
    assert_eq!(shop.deliver(&refunded, "orders/updated", "d-4").await, 200);
    let as_refunded = read().await;
    assert_ne!(as_refunded, as_cancelled);
    let received = wait_for(hook, 3, Duration::from_secs(10)).await;
    let announced: Vec<Value> = received
        .iter()
        .map(|request| announced_order(&request.body))
        .collect();
    assert_eq!(announced, [as_placed, as_cancelled, as_refunded]);
}

/// A signed body that is no order (a product's, sent to the order route under an order
/// topic), one that names no `updated_at`, and one that is not JSON: nothing is kept; the
/// first two answer 200 so the store does not retry them, the last 400.
#[tokio::test]
async fn signed_bodies_that_are_no_orderable_order_change_nothing() {
    let standin = Standin::start();
    let bridge =
        TestBridge::start(&standin.config(&format!("orders_webhook_secret = \"{SECRET}\""))).await;
    let shop = OrderWebhooks::to(&bridge.base_url, SECRET);
    let product = json!({"id": 632910392_u64, "admin_graphql_api_id": "gid://shopify/Product/632910392",
                         "title": "Mug", "updated_at": "2026-12-05T10:00:00-05:00"});
    assert_eq!(shop.deliver(&product, "orders/create", "p-1").await, 200);
    let unknown = bridge
        .call(
            "get_order",
            json!({"meta": crate::support::meta(), "id": "gid://shopify/Product/632910392"}),
        )
        .await;
    assert_eq!(unknown["messages"][0]["code"], "not_found", "{unknown}");
    let timeless = json!({"id": 820982911946154508_u64, "cart_token": "c"});
    assert_eq!(shop.deliver(&timeless, "orders/create", "p-2").await, 200);
    let bad = shop.deliver_raw(b"{\"id\": 1", None, Some("p-3")).await;
    assert_eq!(bad, 400);
}
