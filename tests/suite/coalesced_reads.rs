//! Issue 39 item 1: identical reads in flight share one store request, with the search cache
//! off (the default). The bridge is a real process (its `/metrics` its own) in front of the
//! WooCommerce stand-in through a gate that counts the store's searches and holds them until
//! the test opens it; the test waits on the bridge's count of reads that joined one under
//! way, never on time.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, Method, Response, Uri};
use serde_json::{Value, json};
use tokio::sync::watch;

use crate::support::binary::Running;
use crate::support::woo_standin::WooStandin;

/// Between the bridge and the stand-in: counts product searches, holds them while closed.
#[derive(Clone)]
struct Gate {
    open: watch::Sender<bool>,
    searches: Arc<AtomicUsize>,
    store: String,
    client: reqwest::Client,
    /// Searches the store has answered.
    answered: Arc<Mutex<usize>>,
}

fn is_search(uri: &Uri) -> bool {
    uri.path().ends_with("/products") && uri.query().is_some_and(|query| query.contains("search="))
}

async fn forward(
    State(gate): State<Gate>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response<Body> {
    let search = is_search(&uri);
    if search {
        gate.searches.fetch_add(1, Ordering::SeqCst);
        let mut open = gate.open.subscribe();
        open.wait_for(|open| *open).await.unwrap();
    }
    let mut request = gate
        .client
        .request(method, format!("{}{uri}", gate.store))
        .body(body);
    for (name, value) in &headers {
        if name != "host" {
            request = request.header(name, value);
        }
    }
    let answer = request.send().await.unwrap();
    let mut response = Response::builder().status(answer.status());
    for (name, value) in answer.headers() {
        response = response.header(name, value);
    }
    let body = answer.bytes().await.unwrap();
    if search {
        *gate.answered.lock().unwrap() += 1;
    }
    response.body(Body::from(body)).unwrap()
}

impl Gate {
    async fn start(store: &str) -> (String, Self) {
        let gate = Self {
            open: watch::channel(false).0,
            searches: Arc::default(),
            store: store.trim_end_matches('/').to_owned(),
            client: reqwest::Client::new(),
            answered: Arc::default(),
        };
        let app = Router::new().fallback(forward).with_state(gate.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        (format!("http://{addr}"), gate)
    }

    fn searches(&self) -> usize {
        self.searches.load(Ordering::SeqCst)
    }
}

struct Bridge {
    _process: Running,
    endpoint: String,
    base_url: String,
    client: reqwest::Client,
}

impl Bridge {
    async fn search(&self, query: &str) -> Value {
        self.client
            .post(&self.endpoint)
            .header("accept", "application/json")
            .json(
                &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
                "name": "search_catalog",
                "arguments": {"meta": crate::support::meta(), "catalog": {"query": query}}}}),
            )
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    }

    /// `bcp_store_reads_shared_total{read="search"}`: searches that joined one under way.
    async fn shared_searches(&self) -> u64 {
        let text = self
            .client
            .get(format!("{}/metrics", self.base_url))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        text.lines()
            .find(|line| line.starts_with("bcp_store_reads_shared_total{read=\"search\"}"))
            .and_then(|line| line.rsplit(' ').next())
            .map_or(0, |count| count.parse().unwrap())
    }

    async fn wait_for_shared(&self, count: u64) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
        while self.shared_searches().await < count {
            assert!(
                tokio::time::Instant::now() < deadline,
                "{count} searches never joined ({} did)",
                self.shared_searches().await
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

async fn wait_until(what: &str, done: impl Fn() -> bool) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while !done() {
        assert!(tokio::time::Instant::now() < deadline, "{what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn issue_39_item_1_identical_searches_in_flight_cost_one_store_request_each_within_its_deadline()
 {
    let woo = WooStandin::start().await;
    let (gate_url, gate) = Gate::start(&woo.base_url).await;
    // The search cache stays off (the default); a call's deadline is two seconds, and the
    // store may take ten to answer one request.
    let config = format!(
        "{}\n[server]\nrequest_timeout_ms = 2000\n[negotiation]\nenabled = false\n[cache]\nsearch = false\n",
        woo.config("")
            .replace(&woo.base_url, &gate_url)
            .replace("timeout_ms = 400", "timeout_ms = 10000")
    );
    let path = std::env::temp_dir().join(format!("bcp-coalesce-{}.toml", uuid::Uuid::new_v4()));
    std::fs::write(&path, config).unwrap();
    let mut process = Running::serve(&path);
    let endpoint = process.endpoint();
    let _ = std::fs::remove_file(&path);
    let bridge = Arc::new(Bridge {
        base_url: endpoint.trim_end_matches("/bcp/mcp").to_owned(),
        endpoint,
        _process: process,
        client: reqwest::Client::new(),
    });

    // 50 agents ask the same search at once: one store request, every one answered by it.
    let calls: Vec<_> = (0..50)
        .map(|_| {
            let bridge = bridge.clone();
            tokio::spawn(async move { bridge.search("tee").await })
        })
        .collect();
    bridge.wait_for_shared(49).await;
    assert_eq!(gate.searches(), 1);
    gate.open.send_replace(true);
    let mut answers = Vec::new();
    for call in calls {
        let reply = call.await.unwrap();
        assert!(reply.get("error").is_none(), "{reply}");
        answers.push(reply["result"]["structuredContent"]["products"].clone());
    }
    assert!(answers.iter().all(|answer| *answer == answers[0]));
    assert!(!answers[0].as_array().unwrap().is_empty(), "{}", answers[0]);
    assert_eq!(
        gate.searches(),
        1,
        "one store request for 50 identical searches"
    );

    // Asked again after that answer: the store is asked again (nothing was kept), and this
    // time the first caller's deadline passes while the store holds the search.
    gate.open.send_replace(false);
    let late = {
        let bridge = bridge.clone();
        tokio::spawn(async move { bridge.search("tee").await })
    };
    wait_until("the second store search", || gate.searches() == 2).await;
    let timed_out = late.await.unwrap();
    assert!(
        timed_out.get("result").is_none() && timed_out["error"].is_object(),
        "answered at its deadline: {timed_out}"
    );
    assert_eq!(
        *gate.answered.lock().unwrap(),
        1,
        "the store still holds it"
    );
    // Others asking now share the same store request, still under way, each within its own
    // deadline, and get its answer.
    let calls: Vec<_> = (0..10)
        .map(|_| {
            let bridge = bridge.clone();
            tokio::spawn(async move { bridge.search("tee").await })
        })
        .collect();
    bridge.wait_for_shared(49 + 10).await;
    gate.open.send_replace(true);
    for call in calls {
        let reply = call.await.unwrap();
        assert!(reply.get("error").is_none(), "{reply}");
        assert_eq!(reply["result"]["structuredContent"]["products"], answers[0]);
    }
    assert_eq!(gate.searches(), 2);
}
