//! Issue 36 item 4: a checkout is shared by the replicas as a cart is. Three real bridges on one
//! real Redis in front of the WooCommerce stand-in: a checkout written through one replica
//! is read, completed and its order read through the others and after a restart; concurrent
//! updates spread over replicas take turns and leave one requested state; two completions
//! racing on two replicas place one order; without Redis, checkout writes fail closed.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

use super::{PROFILE, Replicas, config, meta};
use crate::support::redis::RedisServer;
use crate::support::values::{amount, codes, line, sao_paulo};
use crate::support::woo_standin::{COUPON, Fault, WooStandin};

const PLACE_WITH: &str = "[checkout]\nplace_with = [\"cod\"]\n";

fn keyed() -> Value {
    json!({"ucp-agent": {"profile": PROFILE}, "idempotency-key": uuid::Uuid::new_v4().to_string()})
}

fn placements(woo: &WooStandin) -> usize {
    woo.requests()
        .iter()
        .filter(|request| request.starts_with("POST") && request.ends_with("/checkout"))
        .count()
}

async fn create(replicas: &Replicas, index: usize) -> String {
    let created = replicas
        .call(
            index,
            "create_checkout",
            json!({"meta": keyed(), "checkout": {"line_items": [line("16", 1)]}}),
        )
        .await;
    created["id"].as_str().unwrap().to_owned()
}

/// The checkout, addressed through `addressed_on` and its option chosen through `chosen_on`.
async fn ready(replicas: &Replicas, id: &str, addressed_on: usize, chosen_on: usize) -> Value {
    let addressed = replicas
        .call(
            addressed_on,
            "update_checkout",
            json!({"meta": keyed(), "id": id, "checkout": {
                "buyer": {"email": "ana@example.com"},
                "fulfillment": {"methods": [{"type": "shipping", "destinations": [sao_paulo()]}]}}}),
        )
        .await;
    let method = &addressed["fulfillment"]["methods"][0];
    let ready = replicas
        .call(
            chosen_on,
            "update_checkout",
            json!({"meta": keyed(), "id": id, "checkout": {"fulfillment": {"methods": [{
                "id": method["id"], "groups": [{"id": method["groups"][0]["id"], "selected_option_id": "flat_rate:1"}]}]}}}),
        )
        .await;
    assert_eq!(ready["status"], "ready_for_complete", "{ready}");
    assert_eq!(ready["buyer"]["email"], "ana@example.com", "{ready}");
    ready
}

fn payment() -> Value {
    json!({"payment": {"instruments": [{"handler_id": "cod"}]}})
}

/// Issue 36 item 4: `get_order` on another replica, and on a restarted bridge.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs redis-server: cargo test -- --include-ignored with redis-server on the PATH (.ci/run installs it)"]
async fn a_checkout_written_on_one_replica_completes_on_another_and_its_order_reads_everywhere() {
    let redis = RedisServer::run(None);
    let woo = WooStandin::start().await;
    let text = config(&woo, &redis, PLACE_WITH);
    let replicas = Replicas::start(&text);
    let id = create(&replicas, 0).await;
    ready(&replicas, &id, 1, 2).await;
    let completion = keyed();
    let completed = replicas
        .call(
            0,
            "complete_checkout",
            json!({"meta": completion, "id": id, "checkout": payment()}),
        )
        .await;
    assert_eq!(completed["status"], "completed", "{completed}");
    let order_id = completed["order"]["id"].as_str().unwrap().to_owned();
    for index in 0..3 {
        let order = replicas
            .call(index, "get_order", json!({"meta": meta(), "id": order_id}))
            .await;
        assert_eq!(order["id"], json!(order_id), "replica {index}: {order}");
        let read = replicas
            .call(index, "get_checkout", json!({"meta": meta(), "id": id}))
            .await;
        assert_eq!(read["status"], "completed", "replica {index}: {read}");
        assert_eq!(read["order"]["id"], json!(order_id), "replica {index}");
    }
    // Issue 36 item 2 across replicas: the same key replayed elsewhere answers its order; a
    // new key and every other write are refused as immutable.
    let replay = replicas
        .call(
            2,
            "complete_checkout",
            json!({"meta": completion, "id": id, "checkout": payment()}),
        )
        .await;
    assert_eq!(replay["order"]["id"], json!(order_id), "{replay}");
    let other = replicas
        .call(
            1,
            "complete_checkout",
            json!({"meta": keyed(), "id": id, "checkout": payment()}),
        )
        .await;
    assert_eq!(codes(&other)[0], "checkout_immutable", "{other}");
    let cancel = replicas
        .call(2, "cancel_checkout", json!({"meta": keyed(), "id": id}))
        .await;
    assert_eq!(cancel["status"], "completed", "{cancel}");
    assert_eq!(codes(&cancel)[0], "checkout_immutable", "{cancel}");
    assert_eq!(placements(&woo), 1, "one order placed");
    // What Redis holds for the order names no buyer: only the access record carries the
    // billing email the store needs to read a guest order back.
    assert_eq!(super::redis_keys(&redis, "bcp:woo-order:*").await.len(), 1);
    assert!(
        super::redis_keys(&redis, "bcp:cart-lock:*")
            .await
            .is_empty(),
        "every lease was released"
    );

    drop(replicas);
    let restarted = Replicas::start(&text);
    let order = restarted
        .call(1, "get_order", json!({"meta": meta(), "id": order_id}))
        .await;
    assert_eq!(order["id"], json!(order_id), "after a restart: {order}");
    let read = restarted
        .call(2, "get_checkout", json!({"meta": meta(), "id": id}))
        .await;
    assert_eq!(read["status"], "completed", "after a restart: {read}");
}

/// Issue 36 items 2 and 4: a checkout canceled through one replica is canceled on every one
/// (the store forgot it), and no replica writes to it again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs redis-server: cargo test -- --include-ignored with redis-server on the PATH (.ci/run installs it)"]
async fn a_checkout_canceled_on_one_replica_is_immutable_on_every_replica() {
    let redis = RedisServer::run(None);
    let woo = WooStandin::start().await;
    let replicas = Replicas::start(&config(&woo, &redis, PLACE_WITH));
    let id = create(&replicas, 0).await;
    ready(&replicas, &id, 0, 0).await;
    let canceled = replicas
        .call(1, "cancel_checkout", json!({"meta": keyed(), "id": id}))
        .await;
    assert_eq!(canceled["status"], "canceled", "{canceled}");
    for index in 0..3 {
        let read = replicas
            .call(index, "get_checkout", json!({"meta": meta(), "id": id}))
            .await;
        assert_eq!(read["status"], "canceled", "replica {index}: {read}");
        let completed = replicas
            .call(
                index,
                "complete_checkout",
                json!({"meta": keyed(), "id": id, "checkout": payment()}),
            )
            .await;
        assert_eq!(completed["status"], "canceled", "replica {index}");
        assert_eq!(codes(&completed)[0], "checkout_immutable", "{completed}");
    }
    assert_eq!(placements(&woo), 0, "nothing placed");
}

/// Issue 36 item 4: updates of one checkout spread over three replicas take turns, so every
/// answer is its own request and the checkout ends as exactly one of them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs redis-server: cargo test -- --include-ignored with redis-server on the PATH (.ci/run installs it)"]
async fn concurrent_checkout_updates_spread_over_replicas_leave_one_requested_state() {
    const WRITERS: usize = 6;
    let redis = RedisServer::run(None);
    let woo = WooStandin::start().await;
    let replicas = Arc::new(Replicas::start(
        &config(&woo, &redis, PLACE_WITH).replace("timeout_ms = 400", "timeout_ms = 5000"),
    ));
    let id = create(&replicas, 0).await;
    ready(&replicas, &id, 0, 0).await;
    // Each writer asks for its own email, street and coupon set: an update is several store
    // writes (the customer, then the coupons), which unserialised writers would interleave.
    let wanted = |n: usize| {
        (
            format!("writer{n}@example.com"),
            format!("Rua Augusta, {}", 100 + n),
            n.is_multiple_of(2),
        )
    };
    woo.set_write_fault(Fault::Slow(Duration::from_millis(15)));
    let mut writers = Vec::new();
    for n in 0..WRITERS {
        let (replicas, id) = (replicas.clone(), id.clone());
        let (email, street, coupon) = wanted(n);
        writers.push(tokio::spawn(async move {
            let mut destination = sao_paulo();
            destination["street_address"] = json!(street);
            let codes: Vec<&str> = if coupon { vec![COUPON] } else { Vec::new() };
            let answer = replicas
                .call(
                    n % 3,
                    "update_checkout",
                    json!({"meta": keyed(), "id": id, "checkout": {
                        "buyer": {"email": email},
                        "fulfillment": {"methods": [{"type": "shipping", "destinations": [destination]}]},
                        "discounts": {"codes": codes}}}),
                )
                .await;
            (n, answer)
        }));
    }
    let state = |answer: &Value| {
        (
            answer["buyer"]["email"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
            answer["fulfillment"]["methods"][0]["destinations"][0]["street_address"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
            amount(answer, "discount").is_some_and(|discount| discount != 0),
        )
    };
    let mut requested = BTreeSet::new();
    for writer in writers {
        let (n, answer) = writer.await.unwrap();
        assert_eq!(
            state(&answer),
            wanted(n),
            "an answer mixed in another write: {answer}"
        );
        requested.insert(wanted(n));
    }
    woo.set_write_fault(Fault::None);
    let mut seen = BTreeSet::new();
    for index in 0..3 {
        let read = replicas
            .call(index, "get_checkout", json!({"meta": meta(), "id": id}))
            .await;
        assert!(
            requested.contains(&state(&read)),
            "replica {index} reads {:?}, which no writer asked for",
            state(&read)
        );
        seen.insert(state(&read));
    }
    assert_eq!(seen.len(), 1, "the replicas disagree: {seen:?}");
    assert!(
        super::redis_keys(&redis, "bcp:cart-lock:*")
            .await
            .is_empty(),
        "every lease was released"
    );
}

/// Issue 36 item 4: two completions under different keys racing on two replicas place one
/// order; the other is told the checkout is being (or was) completed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs redis-server: cargo test -- --include-ignored with redis-server on the PATH (.ci/run installs it)"]
async fn a_complete_racing_on_two_replicas_places_once() {
    let redis = RedisServer::run(None);
    let woo = WooStandin::start().await;
    let replicas = Arc::new(Replicas::start(
        &config(&woo, &redis, PLACE_WITH).replace("timeout_ms = 400", "timeout_ms = 5000"),
    ));
    let id = create(&replicas, 0).await;
    ready(&replicas, &id, 1, 2).await;
    woo.set_write_fault(Fault::Slow(Duration::from_millis(50)));
    let racers: Vec<_> = (0..2)
        .map(|index| {
            let (replicas, id) = (replicas.clone(), id.clone());
            tokio::spawn(async move {
                replicas
                    .call(
                        index,
                        "complete_checkout",
                        json!({"meta": keyed(), "id": id, "checkout": payment()}),
                    )
                    .await
            })
        })
        .collect();
    let mut completed = 0;
    for racer in racers {
        let answer = racer.await.unwrap();
        if answer["status"] == "completed" && codes(&answer).is_empty() {
            completed += 1;
        } else {
            let code = codes(&answer)[0].clone();
            assert!(
                code == "checkout_complete_in_progress" || code == "checkout_immutable",
                "{answer}"
            );
        }
    }
    woo.set_write_fault(Fault::None);
    assert_eq!(completed, 1, "exactly one completion placed the order");
    assert_eq!(placements(&woo), 1, "one order reached the store");
}

/// Issue 36 item 4: without Redis, checkout writes are refused as cart writes are (503, a
/// retriable error), and nothing reaches the store.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs redis-server: cargo test -- --include-ignored with redis-server on the PATH (.ci/run installs it)"]
async fn without_redis_checkout_writes_fail_closed() {
    let mut redis = RedisServer::run(None);
    let woo = WooStandin::start().await;
    let replicas = Replicas::start(&config(&woo, &redis, PLACE_WITH));
    let id = create(&replicas, 0).await;
    ready(&replicas, &id, 1, 2).await;
    redis.stop();
    woo.clear_requests();
    for (tool, checkout) in [
        (
            "update_checkout",
            json!({"buyer": {"email": "bia@example.com"}}),
        ),
        ("complete_checkout", payment()),
    ] {
        // The update carries no idempotency key, so what refuses it is the checkout's lease,
        // not the (also fail-closed) idempotency layer.
        let meta = if tool == "update_checkout" {
            meta()
        } else {
            keyed()
        };
        let (status, reply) = replicas
            .call_raw(
                1,
                tool,
                json!({"meta": meta, "id": id, "checkout": checkout}),
            )
            .await;
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{tool}: {reply}");
        assert_eq!(reply["error"]["code"], -32000, "{reply}");
        assert!(reply["error"]["data"]["retry_after"].as_u64().unwrap() >= 1);
    }
    let (status, reply) = replicas
        .call_raw(2, "cancel_checkout", json!({"meta": keyed(), "id": id}))
        .await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "cancel: {reply}");
    assert!(
        woo.requests()
            .iter()
            .all(|request| request.starts_with("GET")),
        "a write reached the store: {:?}",
        woo.requests()
    );
}
