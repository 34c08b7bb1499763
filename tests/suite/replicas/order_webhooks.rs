//! Issue 35 item 4, across replicas: a Shopify order webhook older than the state another
//! replica applied changes nothing on the replica it reaches, since each order's last applied
//! `updated_at` is kept in the shared Redis.

use serde_json::{Value, json};

use super::{PROFILE, Replicas, meta};
use crate::support::redis::RedisServer;
use crate::support::shopify_orders::{
    OrderWebhooks, cart_token, mug_shipped_express_to_new_york, shopify_order,
};
use crate::support::shopify_standin::Standin;

const SECRET: &str = "shpss_replicas_orders";

/// Shopify's `orders/updated` with `body` to replica `index`.
async fn deliver(replicas: &Replicas, index: usize, body: &Value, delivery: &str) -> u16 {
    OrderWebhooks::to(&replicas.replicas[index].base_url, SECRET)
        .deliver(body, "orders/updated", delivery)
        .await
        .as_u16()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs redis-server: cargo test -- --include-ignored with redis-server on the PATH (.ci/run installs it)"]
async fn a_late_order_webhook_to_another_replica_does_not_roll_the_order_back() {
    let redis = RedisServer::run(None);
    let standin = Standin::start();
    let replicas = Replicas::start(&format!(
        "{}\n[negotiation]\nenabled = false\n\n[redis]\nurl = \"{}\"\nreplicas = 3\n",
        standin.config(&format!("orders_webhook_secret = \"{SECRET}\"")),
        redis.url(None)
    ));
    let keyed = || json!({"ucp-agent": {"profile": PROFILE}, "idempotency-key": uuid::Uuid::new_v4().to_string()});
    let created = replicas
        .call(
            0,
            "create_checkout",
            json!({"meta": keyed(), "checkout": mug_shipped_express_to_new_york()}),
        )
        .await;
    let id = created["id"].as_str().unwrap().to_owned();
    let handed = replicas
        .call(
            0,
            "complete_checkout",
            json!({"meta": keyed(), "id": id, "checkout": {}}),
        )
        .await;
    assert_eq!(handed["status"], "requires_escalation", "{handed}");
    let status = |index: usize| {
        let id = id.clone();
        let replicas = &replicas;
        async move {
            replicas
                .call(index, "get_checkout", json!({"meta": meta(), "id": id}))
                .await["status"]
                .clone()
        }
    };
    // The agent's completion retried through replica 1 hands the checkout off there too.
    let again = replicas
        .call(
            1,
            "complete_checkout",
            json!({"meta": keyed(), "id": id, "checkout": {}}),
        )
        .await;
    assert_eq!(again["status"], "requires_escalation", "{again}");
    let placed = shopify_order(&cart_token(&id), &handed);
    let mut cancelled = placed.clone();
    cancelled["cancelled_at"] = json!("2026-12-06T09:00:00-05:00");
    cancelled["updated_at"] = json!("2026-12-06T09:00:00-05:00");

    assert_eq!(deliver(&replicas, 0, &cancelled, "d-1").await, 200);
    assert_eq!(status(0).await, "completed");
    // Issue 36 item 4: the order is kept in the shared Redis, so replica 1 reads it as
    // replica 0 applied it (canceled: its line removed).
    let line_status = |index: usize| {
        let id = id.clone();
        let replicas = &replicas;
        async move {
            let checkout = replicas
                .call(index, "get_checkout", json!({"meta": meta(), "id": id}))
                .await;
            let handle = checkout["order"]["id"].clone();
            let order = replicas
                .call(index, "get_order", json!({"meta": meta(), "id": handle}))
                .await;
            order["line_items"][0]["status"].clone()
        }
    };
    assert_eq!(status(1).await, "completed");
    assert_eq!(line_status(1).await, "removed");
    // The placed state (older) reaches replica 1, then the cancellation's delivery replayed:
    // neither is applied there, so nothing rolls back.
    assert_eq!(deliver(&replicas, 1, &placed, "d-0").await, 200);
    assert_eq!(line_status(1).await, "removed", "rolled back on replica 1");
    assert_eq!(line_status(2).await, "removed", "rolled back on replica 2");
    assert_eq!(deliver(&replicas, 1, &cancelled, "d-1").await, 200);
    assert_eq!(line_status(1).await, "removed");
    // A newer state is applied wherever it arrives, and read everywhere.
    let mut refunded = cancelled.clone();
    refunded["financial_status"] = json!("refunded");
    refunded["updated_at"] = json!("2026-12-07T08:00:00-05:00");
    assert_eq!(deliver(&replicas, 1, &refunded, "d-2").await, 200);
    assert_eq!(status(1).await, "completed");
    assert_eq!(status(2).await, "completed");
}
