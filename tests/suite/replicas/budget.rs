//! The store's budget holds for all replicas together, counted where it matters: at the store.
//! The per-agent inbound budget is shared the same way.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;

use super::{Replicas, config, meta};
use crate::support::redis::RedisServer;
use crate::support::woo_standin::WooStandin;

const PER_SECOND: u64 = 10;
const BURST: u64 = 5;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs redis-server: cargo test -- --include-ignored with redis-server on the PATH (.ci/run installs it)"]
async fn three_replicas_under_load_stay_within_one_upstream_budget() {
    let redis = RedisServer::run(None);
    let woo = WooStandin::start().await;
    // `replicas = 1`: each replica's local share would be the whole budget, so only the shared
    // one can keep the sum within it.
    let replicas = Arc::new(Replicas::start(
        &config(
            &woo,
            &redis,
            &format!(
                "[cache]\nenabled = false\n\n[upstream]\nrequests_per_second = {PER_SECOND}\nburst = {BURST}\nmax_wait_ms = 300\n"
            ),
        )
        .replace("replicas = 3", "replicas = 1"),
    ));
    woo.clear_requests();
    let started = Instant::now();
    let load = Duration::from_secs(3);
    let mut callers = Vec::new();
    for caller in 0..12 {
        let replicas = replicas.clone();
        callers.push(tokio::spawn(async move {
            let (mut answered, mut refused) = (0u32, 0u32);
            while started.elapsed() < load {
                let (_, reply) = replicas
                    .call_raw(
                        caller % 3,
                        "get_product",
                        json!({"meta": meta(), "catalog": {"id": "30"}}),
                    )
                    .await;
                answered += u32::from(reply.get("result").is_some());
                refused += u32::from(reply.get("error").is_some());
            }
            (answered, refused)
        }));
    }
    let (mut answered, mut refused) = (0, 0);
    for caller in callers {
        let (by_caller, refused_by_caller) = caller.await.unwrap();
        answered += by_caller;
        refused += refused_by_caller;
    }
    let elapsed = started.elapsed().as_secs_f64();
    let sent = woo.requests().len() as f64;
    // GCRA: the burst at once, then one request per 1/PER_SECOND s, for all replicas together.
    let allowed = BURST as f64 + PER_SECOND as f64 * elapsed + 1.0;
    assert!(
        sent <= allowed,
        "the store got {sent} requests in {elapsed:.2} s; one budget allows {allowed:.0}"
    );
    // The load really was above the budget (three local budgets would have let ~3x through):
    // calls were refused for it, rather than a throughput floor that a busy machine misses.
    assert!(
        refused > 0,
        "no call was refused: the load did not reach the budget ({sent} requests in {elapsed:.2} s)"
    );
    assert!(answered > 0);
    for index in 0..3 {
        let (_, metrics) = replicas.get(index, "/metrics").await;
        assert!(
            metrics.contains("bcp_upstream_budget_shared{store=\"woocommerce\"} 1"),
            "replica {index} drew on the shared budget: {metrics}"
        );
        assert!(!metrics.contains("bcp_upstream_budget_local_share_total"));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs redis-server: cargo test -- --include-ignored with redis-server on the PATH (.ci/run installs it)"]
async fn an_agents_inbound_budget_is_shared_by_the_replicas() {
    let redis = RedisServer::run(None);
    let woo = WooStandin::start().await;
    let replicas = Replicas::start(&config(
        &woo,
        &redis,
        "[inbound]\nper_agent_per_minute = 4\n",
    ));
    let call = json!({"meta": meta(), "catalog": {"id": "30"}});
    for n in 0..4 {
        replicas.call(n % 3, "get_product", call.clone()).await;
    }
    // Each replica has seen at most two calls, yet the agent's fifth is refused everywhere.
    for index in 0..3 {
        let (status, reply) = replicas.call_raw(index, "get_product", call.clone()).await;
        assert_eq!(status, 429, "replica {index}: {reply}");
        assert!(reply["error"]["data"]["retry_after"].as_u64().unwrap() >= 1);
    }
}
