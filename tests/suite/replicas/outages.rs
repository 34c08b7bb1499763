//! What losing a part does: without Redis, reads go on (within each replica's share of the
//! budget) and cart writes are refused with a clear error; a replica killed while writing
//! holds its cart no longer than its lease.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;

use super::carts::request_lines;
use super::{Replicas, config, meta, redis_keys};
use crate::support::redis::RedisServer;
use crate::support::woo_standin::{Fault, WooStandin};

fn one_line(id: u64, quantity: u64) -> BTreeMap<String, u64> {
    BTreeMap::from([(id.to_string(), quantity)])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs redis-server: cargo test -- --include-ignored with redis-server on the PATH (.ci/run installs it)"]
async fn killing_redis_keeps_reads_working_and_fails_cart_writes_closed() {
    let mut redis = RedisServer::run(None);
    let woo = WooStandin::start().await;
    let replicas = Replicas::start(&config(&woo, &redis, "[cache]\nenabled = false\n"));
    let created = replicas
        .call(
            0,
            "create_cart",
            json!({"meta": meta(), "cart": {"line_items": request_lines(&one_line(30, 1))}}),
        )
        .await;
    let id = created["id"].as_str().unwrap().to_owned();
    replicas
        .call(
            1,
            "update_cart",
            json!({"meta": meta(), "id": id, "cart": {"line_items": request_lines(&one_line(31, 2))}}),
        )
        .await;

    redis.stop();
    woo.clear_requests();
    for index in 0..3 {
        let product = replicas
            .call(
                index,
                "get_product",
                json!({"meta": meta(), "catalog": {"id": "30"}}),
            )
            .await;
        assert_eq!(product["product"]["id"], "30");
        let cart = replicas
            .call(index, "get_cart", json!({"meta": meta(), "id": id}))
            .await;
        assert_eq!(
            crate::support::values::lines(&cart),
            vec![("31".to_owned(), 2)]
        );
        let (status, reply) = replicas
            .call_raw(
                index,
                "update_cart",
                json!({"meta": meta(), "id": id, "cart": {"line_items": request_lines(&one_line(32, 1))}}),
            )
            .await;
        assert_eq!(status, 503, "replica {index}: {reply}");
        assert_eq!(reply["error"]["code"], -32000);
        let message = reply["error"]["message"].as_str().unwrap();
        assert!(
            message.contains("Cart writes are paused") && message.contains("Redis"),
            "{message}"
        );
        assert!(reply["error"]["data"]["retry_after"].as_u64().unwrap() >= 1);
        let (status, body) = replicas.get(index, "/readyz").await;
        assert_eq!(status, 200, "reads still work: stay in rotation");
        assert!(
            body.contains("degraded") && body.contains("local share (1/3"),
            "{body}"
        );
        let (_, metrics) = replicas.get(index, "/metrics").await;
        assert!(metrics.contains("bcp_redis_up 0"), "{metrics}");
        assert!(
            metrics.contains("bcp_upstream_budget_local_share_total"),
            "{metrics}"
        );
    }
    let writes: Vec<String> = woo
        .requests()
        .into_iter()
        .filter(|request| !request.starts_with("GET "))
        .collect();
    assert!(
        writes.is_empty(),
        "a refused write reached the store: {writes:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs redis-server: cargo test -- --include-ignored with redis-server on the PATH (.ci/run installs it)"]
async fn a_replica_killed_mid_write_holds_its_cart_no_longer_than_its_lease() {
    let redis = RedisServer::run(None);
    let woo = WooStandin::start().await;
    let replicas = Arc::new(Replicas::start(
        &config(&woo, &redis, "").replace("timeout_ms = 400", "timeout_ms = 8000"),
    ));
    let created = replicas
        .call(
            0,
            "create_cart",
            json!({"meta": meta(), "cart": {"line_items": request_lines(&one_line(30, 1))}}),
        )
        .await;
    let id = created["id"].as_str().unwrap().to_owned();

    woo.set_write_fault(Fault::Slow(Duration::from_secs(6)));
    let stuck = {
        let (replicas, id) = (replicas.clone(), id.clone());
        tokio::spawn(async move {
            replicas
                .call_raw(
                    0,
                    "update_cart",
                    json!({"meta": meta(), "id": id, "cart": {"line_items": request_lines(&one_line(31, 1))}}),
                )
                .await
        })
    };
    let deadline = Instant::now() + Duration::from_secs(3);
    while redis_keys(&redis, "bcp:cart-lock:*").await.is_empty() {
        assert!(Instant::now() < deadline, "replica 0 never took the lock");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // Held past one lease: the holder renews it while it writes.
    tokio::time::sleep(Duration::from_millis(2000)).await;
    assert_eq!(redis_keys(&redis, "bcp:cart-lock:*").await.len(), 1);

    let pid = replicas.replicas[0].process.child.id();
    let killed = std::process::Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let died = Instant::now();
    woo.set_write_fault(Fault::None);
    let answer = replicas
        .call(
            1,
            "update_cart",
            json!({"meta": meta(), "id": id, "cart": {"line_items": request_lines(&one_line(32, 3))}}),
        )
        .await;
    let waited = died.elapsed();
    assert_eq!(
        crate::support::values::lines(&answer),
        vec![("32".to_owned(), 3)]
    );
    // The dead replica's lock ended with its lease (1.5 s), not with its held write (6 s)
    // nor the store timeout (8 s): a bound only a lock outliving its lease reaches.
    assert!(
        waited < Duration::from_secs(5),
        "the next write waited {waited:?}"
    );
    assert!(redis_keys(&redis, "bcp:cart-lock:*").await.is_empty());
    stuck.abort();
}
