//! Writers of one cart spread over three replicas take turns: each answer is exactly its own
//! lines, and the cart ends as exactly one writer's request.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use super::{Replicas, config, meta};
use crate::support::redis::RedisServer;
use crate::support::values::{line, lines};
use crate::support::woo_standin::{Fault, WooStandin};

const WRITERS: usize = 9;
/// Products the stand-in adds; a writer asks for 30 of them, more than one batch holds, so
/// one replacement is several requests that unserialised writers would interleave.
pub const FIRST: u64 = 1000;
pub const POOL: u64 = 60;
const LINES: u64 = 30;

pub fn line_set(n: usize) -> BTreeMap<String, u64> {
    (0..LINES)
        .map(|k| {
            let id = FIRST + (n as u64 * 5 + k) % POOL;
            (id.to_string(), 1 + (n % 3) as u64)
        })
        .collect()
}

pub fn request_lines(set: &BTreeMap<String, u64>) -> Value {
    Value::Array(
        set.iter()
            .map(|(id, quantity)| line(id, *quantity as u32))
            .collect(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs redis-server: cargo test -- --include-ignored with redis-server on the PATH (.ci/run installs it)"]
async fn concurrent_update_cart_calls_spread_across_replicas_leave_an_exact_cart() {
    let redis = RedisServer::run(None);
    let woo = WooStandin::start().await;
    woo.add_simple_products(FIRST, POOL);
    let replicas = Arc::new(Replicas::start(
        &config(&woo, &redis, "").replace("timeout_ms = 400", "timeout_ms = 5000"),
    ));
    let created = replicas
        .call(
            0,
            "create_cart",
            json!({"meta": meta(), "cart": {"line_items": request_lines(&line_set(WRITERS))}}),
        )
        .await;
    let id = created["id"].as_str().unwrap().to_owned();
    // Slow store writes widen the window in which unserialised writers would interleave.
    woo.set_write_fault(Fault::Slow(Duration::from_millis(15)));
    let mut writers = Vec::new();
    for n in 0..WRITERS {
        let (replicas, id, wanted) = (replicas.clone(), id.clone(), line_set(n));
        writers.push(tokio::spawn(async move {
            let answer = replicas
                .call(
                    n % 3,
                    "update_cart",
                    json!({"meta": meta(), "id": id, "cart": {"line_items": request_lines(&wanted)}}),
                )
                .await;
            (wanted, answer)
        }));
    }
    let mut requested = Vec::new();
    for writer in writers {
        let (wanted, answer) = writer.await.unwrap();
        let got: BTreeMap<String, u64> = lines(&answer).into_iter().collect();
        assert_eq!(got, wanted, "an answer mixed in another replica's writes");
        requested.push(wanted);
    }
    woo.set_write_fault(Fault::None);
    for index in 0..3 {
        let stored = replicas
            .call(index, "get_cart", json!({"meta": meta(), "id": id}))
            .await;
        let stored: BTreeMap<String, u64> = lines(&stored).into_iter().collect();
        assert!(
            requested.contains(&stored),
            "replica {index} sees {stored:?}, which no writer asked for"
        );
    }
    assert!(
        super::redis_keys(&redis, "bcp:cart-lock:*")
            .await
            .is_empty(),
        "every lock was released"
    );
}
