//! Issue 36 item 4: order-event deliveries wait in Redis, not in a replica's memory. Real
//! bridge processes (the embedded sample store places the orders) share a real
//! `redis-server`; the agent's webhook is a receiver on loopback that holds its answers
//! until the test opens it and counts, by event id (`Webhook-Id`), the deliveries it
//! acknowledged and which replica sent each: each replica signs under its own `key_id`
//! (the `UCP-Agent` profile names the replica the order was placed through, whoever sends).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::{get, post};
use tokio::sync::watch;

use crate::order_webhooks::{agent_profile, key_file, place_order_through};
use crate::support::binary::Running;
use crate::support::redis::RedisServer;

/// While closed, the webhook answers nothing (`Hang`) or 503 (`Refuse`).
#[derive(Clone, Copy)]
enum Closed {
    Hang,
    Refuse,
}

#[derive(Clone)]
struct Receiver {
    open: watch::Sender<bool>,
    closed: Closed,
    /// Attempts seen while closed: (event id, the signature's keyid).
    attempts: Arc<Mutex<Vec<(String, String)>>>,
    /// Deliveries acknowledged with 200: (event id, the signature's keyid).
    delivered: Arc<Mutex<Vec<(String, String)>>>,
    webhook: Arc<Mutex<String>>,
}

fn header_text(headers: &HeaderMap, name: &str) -> String {
    headers
        .get(name)
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default()
        .to_owned()
}

/// The `keyid` of the request's signature: which replica signed it.
fn keyid(headers: &HeaderMap) -> String {
    let input = header_text(headers, "signature-input");
    input
        .split(';')
        .find_map(|parameter| parameter.strip_prefix("keyid="))
        .unwrap_or_default()
        .trim_matches('"')
        .to_owned()
}

impl Receiver {
    async fn start(closed: Closed) -> (String, Self) {
        let receiver = Self {
            open: watch::channel(false).0,
            closed,
            attempts: Arc::default(),
            delivered: Arc::default(),
            webhook: Arc::default(),
        };
        let app = Router::new()
            .route(
                "/with-hook",
                get(|State(receiver): State<Receiver>| async move {
                    let url = receiver.webhook.lock().unwrap().clone();
                    (
                        [(header::CONTENT_TYPE, "application/json")],
                        agent_profile(Some(&url)).to_string(),
                    )
                }),
            )
            .route(
                "/hook",
                post(
                    |State(receiver): State<Receiver>, headers: HeaderMap| async move {
                        let seen = (header_text(&headers, "webhook-id"), keyid(&headers));
                        if !*receiver.open.borrow() {
                            receiver.attempts.lock().unwrap().push(seen);
                            if let Closed::Hang = receiver.closed {
                                std::future::pending::<()>().await;
                            }
                            return (
                                StatusCode::SERVICE_UNAVAILABLE,
                                [(header::RETRY_AFTER, "1")],
                            )
                                .into_response();
                        }
                        receiver.delivered.lock().unwrap().push(seen);
                        (StatusCode::OK, r#"{"ucp":{"version":"2026-08-25"}}"#).into_response()
                    },
                ),
            )
            .with_state(receiver.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        *receiver.webhook.lock().unwrap() = format!("http://{addr}/hook");
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        (format!("http://{addr}/with-hook"), receiver)
    }

    fn attempts(&self) -> Vec<(String, String)> {
        self.attempts.lock().unwrap().clone()
    }

    fn delivered(&self) -> Vec<(String, String)> {
        self.delivered.lock().unwrap().clone()
    }
}

/// One bridge process, signing under `name`.
struct Bridge {
    process: Running,
    endpoint: String,
    name: &'static str,
}

impl Bridge {
    fn start(redis: &RedisServer, key: &std::path::Path, name: &'static str) -> Self {
        let config = config_file(redis, key, name);
        let mut process = Running::serve(&config);
        let endpoint = process.endpoint();
        let _ = std::fs::remove_file(config);
        Self {
            process,
            endpoint,
            name,
        }
    }

    /// Whether this bridge signed a request with `keyid`.
    fn sent(&self, keyid: &str) -> bool {
        keyid == self.name
    }

    async fn place_order(&self, profile: &str) -> String {
        place_order_through(
            async |tool, arguments| {
                crate::support::tool_call_at(&self.endpoint, tool, arguments).await
            },
            profile,
        )
        .await
    }
}

/// A bridge's config: order webhooks on, signed under `name`, their queue in `redis`,
/// claims lapsing after a second.
fn config_file(redis: &RedisServer, key: &std::path::Path, name: &str) -> std::path::PathBuf {
    let text = crate::order_webhooks::config(
        key,
        &format!(
            "key_id = \"{name}\"\nclaim_timeout_ms = 1000\n\n[redis]\nurl = \"{}\"\n",
            redis.url(None)
        ),
    );
    let path = std::env::temp_dir().join(format!("bcp-event-queue-{}.toml", uuid::Uuid::new_v4()));
    std::fs::write(&path, text).unwrap();
    path
}

async fn wait_until(what: &str, within: Duration, done: impl Fn() -> bool) {
    let deadline = tokio::time::Instant::now() + within;
    while !done() {
        assert!(tokio::time::Instant::now() < deadline, "{what}");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// How many events the shared queue holds (queued, claimed or waiting to retry). A Redis just
/// restarted answers `LOADING` while it reads its file back: asked again until it answers.
async fn queued(redis: &RedisServer) -> usize {
    let client = redis::Client::open(redis.url(None)).unwrap();
    let mut connection = client.get_multiplexed_async_connection().await.unwrap();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let answer: redis::RedisResult<usize> = redis::cmd("ZCARD")
            .arg("bcp:order-events:due")
            .query_async(&mut connection)
            .await;
        match answer {
            Ok(count) => return count,
            Err(error) if error.kind() == redis::ErrorKind::BusyLoadingError => {
                assert!(tokio::time::Instant::now() < deadline, "{error}");
                tokio::time::sleep(Duration::from_millis(25)).await;
            }
            Err(error) => panic!("{error}"),
        }
    }
}

async fn wait_for_empty_queue(redis: &RedisServer) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while queued(redis).await > 0 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the queue never emptied"
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// Every event in `events` acknowledged exactly once.
fn once_each(delivered: &[(String, String)], events: &[String]) {
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for (id, _) in delivered {
        *counts.entry(id.as_str()).or_default() += 1;
    }
    for id in events {
        assert_eq!(counts.get(id.as_str()), Some(&1), "{id}: {delivered:?}");
    }
    assert_eq!(counts.len(), events.len(), "{delivered:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs redis-server: cargo test -- --include-ignored with redis-server on the PATH (.ci/run installs it)"]
async fn issue_36_item_4_a_replica_killed_holding_deliveries_leaves_them_to_another_once_each() {
    let redis = RedisServer::run(None);
    let (profile, receiver) = Receiver::start(Closed::Hang).await;
    let key = key_file(false);
    let mut doomed = Bridge::start(&redis, &key, "doomed");
    let survivor = Bridge::start(&redis, &key, "survivor");
    for _ in 0..3 {
        doomed.place_order(&profile).await;
    }
    // Each event is claimed and under way (the webhook does not answer yet).
    wait_until("three events attempted", Duration::from_secs(15), || {
        let mut ids: Vec<String> = receiver.attempts().into_iter().map(|(id, _)| id).collect();
        ids.sort();
        ids.dedup();
        ids.len() == 3
    })
    .await;
    let mut events: Vec<String> = receiver.attempts().into_iter().map(|(id, _)| id).collect();
    events.sort();
    events.dedup();
    let held_by_doomed: Vec<String> = receiver
        .attempts()
        .into_iter()
        .filter(|(_, sender)| doomed.sent(sender))
        .map(|(id, _)| id)
        .collect();
    assert!(
        !held_by_doomed.is_empty(),
        "the replica that placed the orders claimed none of them: {:?}",
        receiver.attempts()
    );
    assert_eq!(
        queued(&redis).await,
        3,
        "the claimed events are still queued"
    );

    doomed.process.child.kill().unwrap();
    doomed.process.child.wait().unwrap();
    receiver.open.send_replace(true);

    wait_until("every event delivered", Duration::from_secs(30), || {
        receiver.delivered().len() >= 3
    })
    .await;
    wait_for_empty_queue(&redis).await;
    let delivered = receiver.delivered();
    once_each(&delivered, &events);
    // What the dead replica had claimed, the live one sent once its claims lapsed.
    for id in &held_by_doomed {
        let (_, sender) = delivered.iter().find(|(event, _)| event == id).unwrap();
        assert!(survivor.sent(sender), "{id} sent by {sender}");
    }
    let _ = std::fs::remove_file(key);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs redis-server: cargo test -- --include-ignored with redis-server on the PATH (.ci/run installs it)"]
async fn issue_36_item_4_queued_deliveries_survive_a_restart_of_the_bridge_and_of_redis() {
    let mut redis = RedisServer::run_persistent();
    let (profile, receiver) = Receiver::start(Closed::Refuse).await;
    let key = key_file(true);
    let mut first = Bridge::start(&redis, &key, "first");
    for _ in 0..2 {
        first.place_order(&profile).await;
    }
    // Both were tried and refused (503): they wait in Redis for their retry.
    wait_until("both events attempted", Duration::from_secs(15), || {
        let mut ids: Vec<String> = receiver.attempts().into_iter().map(|(id, _)| id).collect();
        ids.sort();
        ids.dedup();
        ids.len() == 2
    })
    .await;
    let mut events: Vec<String> = receiver.attempts().into_iter().map(|(id, _)| id).collect();
    events.sort();
    events.dedup();
    first.process.child.kill().unwrap();
    first.process.child.wait().unwrap();
    assert_eq!(queued(&redis).await, 2);
    redis.restart();
    assert_eq!(
        queued(&redis).await,
        2,
        "the queue survives Redis's restart"
    );
    receiver.open.send_replace(true);

    let second = Bridge::start(&redis, &key, "second");
    wait_until("both events delivered", Duration::from_secs(30), || {
        receiver.delivered().len() >= 2
    })
    .await;
    wait_for_empty_queue(&redis).await;
    let delivered = receiver.delivered();
    once_each(&delivered, &events);
    assert!(
        delivered.iter().all(|(_, sender)| second.sent(sender)),
        "{delivered:?}"
    );
    let _ = std::fs::remove_file(key);
}

/// Issue 36 item 4: the event is in the shared queue before the completion answers, so a
/// replica killed the moment it answered loses nothing; another replica delivers it, once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs redis-server: cargo test -- --include-ignored with redis-server on the PATH (.ci/run installs it)"]
async fn issue_36_item_4_an_event_is_queued_before_the_completion_answers() {
    let redis = RedisServer::run(None);
    let (profile, receiver) = Receiver::start(Closed::Refuse).await;
    let key = key_file(false);
    let mut doomed = Bridge::start(&redis, &key, "doomed");
    doomed.place_order(&profile).await;
    // Killed as soon as the completion answered: no task of it runs afterwards.
    doomed.process.child.kill().unwrap();
    doomed.process.child.wait().unwrap();
    assert_eq!(
        queued(&redis).await,
        1,
        "the event was queued before the answer"
    );
    receiver.open.send_replace(true);
    let survivor = Bridge::start(&redis, &key, "survivor");
    wait_until("the event delivered", Duration::from_secs(30), || {
        !receiver.delivered().is_empty()
    })
    .await;
    wait_for_empty_queue(&redis).await;
    let delivered = receiver.delivered();
    assert_eq!(delivered.len(), 1, "{delivered:?}");
    assert!(
        receiver
            .attempts()
            .iter()
            .chain(&delivered)
            .all(|(id, _)| *id == delivered[0].0),
        "one event"
    );
    assert!(survivor.sent(&delivered[0].1), "{delivered:?}");
    let _ = std::fs::remove_file(key);
}
