//! Issue 35 item 4: one agent's webhook cannot stop the order events of others. Attempts run
//! under a per-host bound and a global one, and no permit is held while an event waits to be
//! retried. Over real HTTP on loopback: agents on two loopback addresses (two hosts), one
//! whose webhook never answers, or answers 503 with a long `Retry-After`.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::Router;
use axum::routing::post;

use crate::order_webhooks::{agent, key_file, place_order, wait_for};
use crate::support::TestBridge;

/// As `order_webhooks::config`, with a second loopback host allowed for agents' webhooks.
fn config(key: &std::path::Path, order_webhooks: &str) -> String {
    format!(
        "[server]\nprotocol = \"ucp\"\n\
         [negotiation]\nenabled = true\nallow_http_hosts = [\"127.0.0.1\", \"127.0.0.2\"]\nallow_private_hosts = [\"127.0.0.1\", \"127.0.0.2\"]\ntimeout_ms = 2000\n\
         [order_webhooks]\nenabled = true\nkey_file = {:?}\ninitial_backoff_ms = 50\n{order_webhooks}",
        key.display().to_string()
    )
}

/// A webhook on 127.0.0.2 that takes each request and never answers: its URL, and how many
/// requests it has taken.
async fn hanging_webhook() -> (String, Arc<AtomicUsize>) {
    let taken = Arc::new(AtomicUsize::new(0));
    let counted = taken.clone();
    let app = Router::new().route(
        "/hang",
        post(move || {
            let counted = counted.clone();
            async move {
                counted.fetch_add(1, Ordering::SeqCst);
                std::future::pending::<()>().await;
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.2:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (format!("http://{addr}/hang"), taken)
}

async fn wait_until(what: &str, done: impl Fn() -> bool) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
    while !done() {
        assert!(tokio::time::Instant::now() < deadline, "{what}");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// Two attempts may run at once, each attempt may take a minute: with the permits held per
/// delivery, the hanging agent's first two events held both for minutes and the other
/// agent's event waited. Its host gets one of the two at a time; the other agent's event is
/// delivered while the hanging ones are still under way.
#[tokio::test]
async fn a_hanging_agent_webhook_does_not_hold_up_another_agents_events() {
    let (slow_agent, slow) = agent(0).await;
    let (hang_url, taken) = hanging_webhook().await;
    *slow.webhook.lock().unwrap() = hang_url;
    let (good_agent, good) = agent(0).await;
    let key = key_file(false);
    let bridge = TestBridge::start(&config(
        &key,
        "timeout_ms = 60000\nmax_backoff_secs = 60\nmax_concurrent_deliveries = 2\nmax_concurrent_per_host = 1\n",
    ))
    .await;
    for _ in 0..3 {
        place_order(&bridge, &format!("{slow_agent}/with-hook")).await;
    }
    wait_until("the hanging webhook was reached", || {
        taken.load(Ordering::SeqCst) >= 1
    })
    .await;
    place_order(&bridge, &format!("{good_agent}/with-hook")).await;
    let received = wait_for(&good, 1, Duration::from_secs(15)).await;
    assert_eq!(received.len(), 1, "the other agent's event was held up");
    assert_eq!(
        taken.load(Ordering::SeqCst),
        1,
        "the hanging host never had more than its one attempt at a time"
    );
    let _ = std::fs::remove_file(key);
}

/// One attempt at a time in all; the first agent's webhook answers 503 with `Retry-After:
/// 60`. While that event waits a minute for its retry it holds no permit, so the next event
/// (another agent's, on the same host) is delivered at once.
#[tokio::test]
async fn an_event_waiting_to_retry_holds_no_permit() {
    let (failing_agent, failing) = agent(1).await;
    *failing.retry_after_secs.lock().unwrap() = Some(60);
    let (good_agent, good) = agent(0).await;
    let key = key_file(false);
    let bridge = TestBridge::start(&config(
        &key,
        "timeout_ms = 5000\nmax_backoff_secs = 60\nmax_concurrent_deliveries = 1\nmax_concurrent_per_host = 1\n",
    ))
    .await;
    place_order(&bridge, &format!("{failing_agent}/with-hook")).await;
    let refused = wait_for(&failing, 1, Duration::from_secs(15)).await;
    assert_eq!(refused.len(), 1, "the first attempt was made (and got 503)");
    place_order(&bridge, &format!("{good_agent}/with-hook")).await;
    let received = wait_for(&good, 1, Duration::from_secs(15)).await;
    assert_eq!(
        received.len(),
        1,
        "the event was held up by one waiting to retry"
    );
    assert_eq!(
        failing.received().len(),
        1,
        "its retry is still a minute away"
    );
    let _ = std::fs::remove_file(key);
}
