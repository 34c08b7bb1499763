//! Fenced cart writes (issue 27 item 2): a replica paused past its lease in the middle of a
//! multi-request write sends nothing more once another replica has taken the cart; the
//! other's set wins cleanly, the paused one answers a retriable refusal, and its retry with
//! the same idempotency key converges on what it asked for.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::carts::{FIRST, POOL, line_set, request_lines};
use super::{Replicas, config, meta};
use crate::support::redis::RedisServer;
use crate::support::values::lines;
use crate::support::woo_standin::{Fault, WooStandin};

pub fn keyed(key: &str) -> Value {
    let mut meta = meta();
    meta["idempotency-key"] = json!(key);
    meta
}

pub fn set_of(answer: &Value) -> BTreeMap<String, u64> {
    lines(answer).into_iter().collect()
}

pub fn signal(replicas: &Replicas, index: usize, signal: &str) {
    let pid = replicas.replicas[index].process.child.id();
    let sent = std::process::Command::new("kill")
        .args([format!("-{signal}"), pid.to_string()])
        .status()
        .unwrap();
    assert!(sent.success(), "kill -{signal} {pid}");
}

/// Waits until the stand-in has received `count` writes.
pub async fn writes_reach(woo: &WooStandin, count: usize) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while woo
        .requests()
        .iter()
        .filter(|request| !request.starts_with("GET "))
        .count()
        < count
    {
        assert!(Instant::now() < deadline, "the store never got the write");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

pub fn writes(woo: &WooStandin) -> usize {
    woo.requests()
        .iter()
        .filter(|request| !request.starts_with("GET "))
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs redis-server: cargo test -- --include-ignored with redis-server on the PATH (.ci/run installs it)"]
async fn a_holder_paused_past_its_lease_sends_nothing_more_and_the_next_writer_wins() {
    let redis = RedisServer::run(None);
    let woo = WooStandin::start().await;
    woo.add_simple_products(FIRST, POOL);
    let replicas = Arc::new(Replicas::start(
        &config(&woo, &redis, "[cache]\nenabled = false\n")
            .replace("timeout_ms = 400", "timeout_ms = 8000"),
    ));
    let (before, first, second) = (line_set(2), line_set(0), line_set(1));
    let created = replicas
        .call(
            0,
            "create_cart",
            json!({"meta": meta(), "cart": {"line_items": request_lines(&before)}}),
        )
        .await;
    let id = created["id"].as_str().unwrap().to_owned();

    // Replica 0's replacement takes two batches (30 lines); the store holds the first for
    // 2 s, during which replica 0 is stopped: it is paused mid-write, holding the lease.
    woo.clear_requests();
    woo.fault_one_write(0, Fault::Slow(Duration::from_secs(2)));
    let paused = {
        let (replicas, id, wanted) = (replicas.clone(), id.clone(), first.clone());
        tokio::spawn(async move {
            replicas
                .call_raw(
                    0,
                    "update_cart",
                    json!({"meta": keyed("fence-first"), "id": id, "cart": {"line_items": request_lines(&wanted)}}),
                )
                .await
        })
    };
    writes_reach(&woo, 1).await;
    signal(&replicas, 0, "STOP");
    // Past the lease (1.5 s) and past the store applying the held batch.
    tokio::time::sleep(Duration::from_millis(2600)).await;

    let answer = replicas
        .call(
            1,
            "update_cart",
            json!({"meta": keyed("fence-second"), "id": id, "cart": {"line_items": request_lines(&second)}}),
        )
        .await;
    assert_eq!(set_of(&answer), second);
    let sent_before_waking = writes(&woo);

    signal(&replicas, 0, "CONT");
    let (status, reply) = paused.await.unwrap();
    assert_eq!(status, 503, "{reply}");
    let message = reply["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("another replica took over this cart's write"),
        "{message}"
    );
    assert!(reply["error"]["data"]["retry_after"].as_u64().unwrap() >= 1);
    assert_eq!(
        writes(&woo),
        sent_before_waking,
        "the paused holder sent a write after waking"
    );
    for index in 0..3 {
        let stored = replicas
            .call(index, "get_cart", json!({"meta": meta(), "id": id}))
            .await;
        assert_eq!(
            set_of(&stored),
            second,
            "replica {index}: the second set won"
        );
    }

    // The refusal was not recorded as the key's answer: the retry runs and converges.
    let retried = replicas
        .call(
            0,
            "update_cart",
            json!({"meta": keyed("fence-first"), "id": id, "cart": {"line_items": request_lines(&first)}}),
        )
        .await;
    assert_eq!(set_of(&retried), first);
    let stored = replicas
        .call(2, "get_cart", json!({"meta": meta(), "id": id}))
        .await;
    assert_eq!(set_of(&stored), first);
}
