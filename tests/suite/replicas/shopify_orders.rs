//! Issue 36 item 4, Shopify: the checkouts the bridge created and handed off, and the orders
//! Shopify reports for them, are kept in the shared Redis. Three bridges on one real
//! `redis-server` in front of the Shopify stand-in, each built on its own (nothing in memory
//! shared): a checkout handed off through one, its order webhook reaching a second, and the
//! order read through the third; the agent hears of the order once, from the replica the
//! webhook reached, though that replica never saw the hand-off.

use std::time::Duration;

use serde_json::{Value, json};

use crate::order_webhooks::{agent, config, key_file, wait_for};
use crate::support::TestBridge;
use crate::support::redis::RedisServer;
use crate::support::shopify_orders::{
    OrderWebhooks, cart_token, mug_shipped_express_to_new_york, shopify_order,
};
use crate::support::shopify_standin::Standin;

const SECRET: &str = "shpss_replicas_handoffs";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs redis-server: cargo test -- --include-ignored with redis-server on the PATH (.ci/run installs it)"]
async fn issue_36_item_4_a_shopify_hand_off_and_its_order_are_known_on_every_replica() {
    let redis = RedisServer::run(None);
    let (agent_url, hook) = agent(0).await;
    let key = key_file(false);
    let standin = Standin::start();
    let text = format!(
        "{}{}",
        standin.config(&format!("orders_webhook_secret = \"{SECRET}\"")),
        config(&key, &format!("\n[redis]\nurl = \"{}\"\n", redis.url(None)))
    );
    let mut replicas = Vec::new();
    for _ in 0..3 {
        replicas.push(TestBridge::start(&text).await);
    }
    let profile = format!("{agent_url}/with-hook");
    let meta = |key: bool| match key {
        true => {
            json!({"ucp-agent": {"profile": profile}, "idempotency-key": uuid::Uuid::new_v4().to_string()})
        }
        false => json!({"ucp-agent": {"profile": profile}}),
    };
    let created = replicas[0]
        .call(
            "create_checkout",
            json!({"meta": meta(true), "checkout": mug_shipped_express_to_new_york()}),
        )
        .await;
    let id = created["id"].as_str().unwrap().to_owned();
    let handed = replicas[0]
        .call(
            "complete_checkout",
            json!({"meta": meta(true), "id": id, "checkout": {}}),
        )
        .await;
    assert_eq!(handed["status"], "requires_escalation", "{handed}");

    // Shopify's webhook reaches replica 1, which neither created nor handed off the checkout.
    let token = cart_token(&id);
    let order = shopify_order(&token, &handed);
    let status = OrderWebhooks::to(&replicas[1].base_url, SECRET)
        .deliver(&order, "orders/create", "delivery-1")
        .await;
    assert_eq!(status, 200);

    // The hand-off made on replica 0 is announced by replica 1, once.
    let received = wait_for(&hook, 1, Duration::from_secs(10)).await;
    assert_eq!(received.len(), 1, "{received:?}");
    let mut event: Value = serde_json::from_slice(&received[0].body).unwrap();
    let object = event.as_object_mut().unwrap();
    object.remove("event_id");
    object.remove("created_time");
    assert_eq!(event["checkout_id"], json!(id));

    // Replica 2 saw neither: the checkout answers completed with its order, and the order
    // reads as the event carried it.
    let checkout = replicas[2]
        .call("get_checkout", json!({"meta": meta(false), "id": id}))
        .await;
    assert_eq!(checkout["status"], "completed", "{checkout}");
    let handle = event["id"].as_str().unwrap().to_owned();
    assert_eq!(checkout["order"]["id"], json!(handle), "{checkout}");
    for replica in &replicas {
        let order = replica
            .call("get_order", json!({"meta": meta(false), "id": handle}))
            .await;
        assert_eq!(order, event);
    }
    // What Redis holds for Shopify names carts and orders by hashes of their ids only.
    let client = redis::Client::open(redis.url(None)).unwrap();
    let mut connection = client.get_multiplexed_async_connection().await.unwrap();
    let keys: Vec<String> = redis::cmd("KEYS")
        .arg("bcp:shopify-*")
        .query_async(&mut connection)
        .await
        .unwrap();
    assert!(keys.len() >= 3, "{keys:?}");
    for name in &keys {
        assert!(!name.contains(&token), "{name}");
        assert!(!name.contains("820982911946154508"), "{name}");
    }
    // Every queued delivery is over: the event went out once, from one replica.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let queued: usize = redis::cmd("ZCARD")
            .arg("bcp:order-events:due")
            .query_async(&mut connection)
            .await
            .unwrap();
        if queued == 0 {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the queue never emptied"
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert_eq!(hook.received().len(), 1, "announced once");
    let _ = std::fs::remove_file(key);
}
