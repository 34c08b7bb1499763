//! Chaos with nothing lost (issue 27 item 3), against real processes: a replica killed with
//! `kill -9` mid-`update_cart`, the store failing in the middle of a multi-request
//! replacement, `redis-server` restarted (with its append-only file, as in production) under
//! a load of writers. Afterwards every replica reads the cart as exactly the set before or the set
//! asked for (never a mix), and the agent's retry with the same idempotency key converges on
//! the set asked for.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;

use super::carts::{FIRST, POOL, line_set, request_lines};
use super::fencing::{keyed, set_of, signal, writes_reach};
use super::{Replicas, config, meta, redis_keys};
use crate::support::redis::RedisServer;
use crate::support::woo_standin::{Fault, WooStandin};

/// Replicas in front of a stand-in with 60 extra products, and a cart of `before` (30
/// lines: every replacement takes two batches).
async fn stage(
    redis: &RedisServer,
    store_timeout_ms: u32,
) -> (WooStandin, Arc<Replicas>, String, BTreeMap<String, u64>) {
    let woo = WooStandin::start().await;
    woo.add_simple_products(FIRST, POOL);
    let replicas = Arc::new(Replicas::start(
        &config(
            &woo,
            redis,
            "[cache]\nenabled = false\n\n[idempotency]\nlock_secs = 3\n",
        )
        .replace(
            "timeout_ms = 400",
            &format!("timeout_ms = {store_timeout_ms}"),
        ),
    ));
    let before = line_set(2);
    let created = replicas
        .call(
            0,
            "create_cart",
            json!({"meta": meta(), "cart": {"line_items": request_lines(&before)}}),
        )
        .await;
    let id = created["id"].as_str().unwrap().to_owned();
    (woo, replicas, id, before)
}

/// Every replica reads the cart as `before` or `wanted`, all the same one; answers it.
async fn whole_everywhere(
    replicas: &Replicas,
    id: &str,
    before: &BTreeMap<String, u64>,
    wanted: &BTreeMap<String, u64>,
) -> BTreeMap<String, u64> {
    let mut seen = Vec::new();
    for index in 0..replicas.replicas.len() {
        let stored = set_of(
            &replicas
                .call(index, "get_cart", json!({"meta": meta(), "id": id}))
                .await,
        );
        assert!(
            &stored == before || &stored == wanted,
            "replica {index} reads a mix: {} lines, neither the set before nor the one asked for",
            stored.len()
        );
        seen.push(stored);
    }
    seen.dedup();
    assert_eq!(seen.len(), 1, "replicas disagree");
    seen.remove(0)
}

/// The agent's retry with the same key, on another replica, lands exactly `wanted`.
async fn retry_converges(
    replicas: &Replicas,
    index: usize,
    id: &str,
    key: &str,
    wanted: &BTreeMap<String, u64>,
) {
    let retried = replicas
        .call(
            index,
            "update_cart",
            json!({"meta": keyed(key), "id": id, "cart": {"line_items": request_lines(wanted)}}),
        )
        .await;
    assert_eq!(&set_of(&retried), wanted);
    let stored = replicas
        .call(index, "get_cart", json!({"meta": meta(), "id": id}))
        .await;
    assert_eq!(&set_of(&stored), wanted);
}

async fn store_fails_between_batches(fault: Fault, store_timeout_ms: u32, settle: Duration) {
    let redis = RedisServer::run(None);
    let (woo, replicas, id, before) = stage(&redis, store_timeout_ms).await;
    let wanted = line_set(0);
    woo.clear_requests();
    // The replacement's first batch (read, empty, 23 adds) goes through; the second fails.
    woo.fault_one_write(1, fault);
    let (status, reply) = replicas
        .call_raw(
            0,
            "update_cart",
            json!({"meta": keyed("chaos-store"), "id": id, "cart": {"line_items": request_lines(&wanted)}}),
        )
        .await;
    assert_eq!(status, 503, "{reply}");
    assert!(reply["error"]["data"]["retry_after"].as_u64().unwrap() >= 1);
    // A timed-out request may still land in the store: let it, before reading.
    tokio::time::sleep(settle).await;
    whole_everywhere(&replicas, &id, &before, &wanted).await;
    assert!(redis_keys(&redis, "bcp:cart-intent:*").await.is_empty());
    retry_converges(&replicas, 2, &id, "chaos-store", &wanted).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs redis-server: cargo test -- --include-ignored with redis-server on the PATH (.ci/run installs it)"]
async fn the_store_answering_5xx_mid_replacement_leaves_no_mix_and_the_retry_converges() {
    store_fails_between_batches(Fault::ServerError, 5000, Duration::ZERO).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs redis-server: cargo test -- --include-ignored with redis-server on the PATH (.ci/run installs it)"]
async fn the_store_timing_out_mid_replacement_leaves_no_mix_and_the_retry_converges() {
    store_fails_between_batches(
        Fault::Slow(Duration::from_millis(1500)),
        800,
        Duration::from_millis(1200),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs redis-server: cargo test -- --include-ignored with redis-server on the PATH (.ci/run installs it)"]
async fn a_replica_killed_mid_update_cart_leaves_no_mix_and_the_retry_converges() {
    let redis = RedisServer::run(None);
    let (woo, replicas, id, before) = stage(&redis, 8000).await;
    let wanted = line_set(0);
    woo.clear_requests();
    // The first batch lands; the second is held by the store while replica 0 is killed.
    woo.fault_one_write(1, Fault::Slow(Duration::from_secs(2)));
    let dying = {
        let (replicas, id, wanted) = (replicas.clone(), id.clone(), wanted.clone());
        tokio::spawn(async move {
            replicas
                .call_raw(
                    0,
                    "update_cart",
                    json!({"meta": keyed("chaos-kill"), "id": id, "cart": {"line_items": request_lines(&wanted)}}),
                )
                .await
        })
    };
    writes_reach(&woo, 2).await;
    signal(&replicas, 0, "KILL");
    dying.abort();
    // Past the held request (whatever the store does with it) and the dead replica's lease.
    tokio::time::sleep(Duration::from_millis(2300)).await;
    for index in 1..3 {
        let stored = set_of(
            &replicas
                .call(index, "get_cart", json!({"meta": meta(), "id": id}))
                .await,
        );
        assert!(
            stored == before || stored == wanted,
            "replica {index} reads a mix of {} lines",
            stored.len()
        );
    }
    assert!(redis_keys(&redis, "bcp:cart-intent:*").await.is_empty());
    retry_converges(&replicas, 1, &id, "chaos-kill", &wanted).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs redis-server: cargo test -- --include-ignored with redis-server on the PATH (.ci/run installs it)"]
async fn redis_restarted_under_load_refuses_writes_retriably_and_every_retry_converges() {
    let mut redis = RedisServer::run_persistent();
    let (woo, replicas, id, before) = stage(&redis, 5000).await;
    // Slow store writes keep replacements in flight when Redis goes.
    woo.set_write_fault(Fault::Slow(Duration::from_millis(20)));
    let running = Arc::new(std::sync::atomic::AtomicBool::new(true));
    let mut writers = Vec::new();
    for writer in 0..3usize {
        let (replicas, id, running) = (replicas.clone(), id.clone(), running.clone());
        writers.push(tokio::spawn(async move {
            let (mut answered, mut refused) = (Vec::new(), Vec::new());
            let mut n = 0;
            while running.load(std::sync::atomic::Ordering::SeqCst) {
                let wanted = line_set(writer * 3 + n % 3);
                let key = format!("restart-{writer}-{n}");
                let (status, reply) = replicas
                    .call_raw(
                        writer,
                        "update_cart",
                        json!({"meta": keyed(&key), "id": id, "cart": {"line_items": request_lines(&wanted)}}),
                    )
                    .await;
                if status == 200 && reply.get("error").is_none() {
                    let got = set_of(&reply["result"]["structuredContent"]);
                    assert_eq!(got, wanted, "writer {writer}: an answer that is not its set");
                    answered.push(wanted);
                } else {
                    assert_eq!(status, 503, "writer {writer}: {reply}");
                    assert!(reply["error"]["data"]["retry_after"].as_u64().unwrap() >= 1);
                    refused.push((key, wanted));
                    tokio::time::sleep(Duration::from_millis(250)).await;
                }
                n += 1;
            }
            (answered, refused)
        }));
    }
    tokio::time::sleep(Duration::from_millis(600)).await;
    redis.stop();
    tokio::time::sleep(Duration::from_millis(1200)).await;
    redis.restart();
    tokio::time::sleep(Duration::from_millis(1500)).await;
    running.store(false, std::sync::atomic::Ordering::SeqCst);
    let (mut answered, mut refused) = (Vec::new(), Vec::new());
    for writer in writers {
        let (ok, no) = writer.await.unwrap();
        answered.extend(ok);
        refused.extend(no);
    }
    assert!(
        !refused.is_empty(),
        "no write was refused while Redis was away"
    );
    assert!(
        !answered.is_empty(),
        "no write went through around the restart"
    );
    woo.set_write_fault(Fault::None);

    // Whatever the restart cut, the cart reads whole: the set before or one asked for.
    let mut asked: Vec<BTreeMap<String, u64>> = answered.clone();
    asked.extend(refused.iter().map(|(_, wanted)| wanted.clone()));
    asked.push(before);
    let mut seen = Vec::new();
    for index in 0..3 {
        let stored = set_of(
            &replicas
                .call(index, "get_cart", json!({"meta": meta(), "id": id}))
                .await,
        );
        assert!(
            asked.contains(&stored),
            "replica {index} reads a mix of {} lines",
            stored.len()
        );
        seen.push(stored);
    }
    seen.dedup();
    assert_eq!(seen.len(), 1, "replicas disagree");

    // Every refused write, retried with its key, converges on its set.
    for (n, (key, wanted)) in refused.iter().enumerate() {
        retry_converges(&replicas, n % 3, &id, key, wanted).await;
    }
}
