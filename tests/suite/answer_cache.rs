//! The answer cache (`[cache] answers`): real bridge processes in front of the WooCommerce
//! stand-in, over loopback HTTP, each with its own `/metrics`. A repeated catalog read is
//! answered from the cache byte for byte, and never outlives the product-cache entries it was
//! built from: a webhook or a TTL expiry shows the new price on the very next call. (Fan-out
//! from another replica: tests/suite/replicas/invalidation.rs.)

use std::net::SocketAddr;
use std::path::PathBuf;

use axum::Router;
use axum::routing::get;
use serde_json::{Value, json};

use crate::support::TestBridge;
use crate::support::binary::Running;
use crate::support::store_webhooks::woo_product_webhook;
use crate::support::wait::until_answered;
use crate::support::woo_standin::WooStandin;

const SECRET: &str = "whsec-answer-cache";
/// The Espresso Cup: a simple product, 650 in the stand-in's seed.
const CUP: u64 = 30;
const PROFILE: &str = "https://agent.example/profiles/shopping-agent.json";

fn meta() -> Value {
    json!({"ucp-agent": {"profile": PROFILE}})
}

/// The three catalog reads of the cup, as arguments.
fn reads() -> [(&'static str, Value); 3] {
    [
        (
            "search_catalog",
            json!({"meta": meta(), "catalog": {"query": "espresso"}}),
        ),
        (
            "lookup_catalog",
            json!({"meta": meta(), "catalog": {"ids": [CUP.to_string()]}}),
        ),
        (
            "get_product",
            json!({"meta": meta(), "catalog": {"id": CUP.to_string()}}),
        ),
    ]
}

/// The first shown variant's price in any of the three answers.
fn price(answer: &Value) -> u64 {
    let product = answer
        .get("product")
        .unwrap_or_else(|| &answer["products"][0]);
    product["variants"][0]["price"]["amount"]
        .as_u64()
        .unwrap_or_else(|| panic!("no price in {answer}"))
}

struct Bridge {
    _process: Running,
    endpoint: String,
    base_url: String,
    config: PathBuf,
    client: reqwest::Client,
}

impl Drop for Bridge {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.config);
    }
}

impl Bridge {
    /// The bridge in front of `woo` with `[cache]` set to `cache`.
    fn start(woo: &WooStandin, cache: &str) -> Self {
        let config = std::env::temp_dir().join(format!(
            "bcp-answer-cache-{}-{}.toml",
            std::process::id(),
            uuid::Uuid::new_v4()
        ));
        let text = format!(
            "{}\n[negotiation]\nenabled = false\n\n[cache]\nwebhook_secret = \"{SECRET}\"\n{cache}\n",
            woo.config("")
        );
        std::fs::write(&config, text).unwrap();
        let mut process = Running::serve(&config);
        let endpoint = process.endpoint();
        let base_url = endpoint.trim_end_matches("/bcp/mcp").to_owned();
        Self {
            _process: process,
            endpoint,
            base_url,
            config,
            client: reqwest::Client::new(),
        }
    }

    /// `tools/call` (always JSON-RPC id 1); the reply's bytes as sent.
    async fn raw(&self, tool: &str, arguments: &Value) -> String {
        let response = self
            .client
            .post(&self.endpoint)
            .header("accept", "application/json")
            .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        response.text().await.unwrap()
    }

    /// A call that must answer; its `structuredContent`.
    async fn call(&self, tool: &str, arguments: &Value) -> Value {
        let reply: Value = serde_json::from_str(&self.raw(tool, arguments).await).unwrap();
        assert!(reply.get("error").is_none(), "{reply}");
        reply["result"]["structuredContent"].clone()
    }

    /// `bcp_answer_cache_{hits,misses}_total{tool}` as `/metrics` shows it (0 before any).
    async fn counted(&self, kind: &str, tool: &str) -> u64 {
        let text = self
            .client
            .get(format!("{}/metrics", self.base_url))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        let series = format!("bcp_answer_cache_{kind}_total{{tool=\"{tool}\"}} ");
        text.lines()
            .find_map(|line| line.strip_prefix(&series))
            .map_or(0, |value| value.trim().parse().unwrap())
    }

    async fn webhook(&self, id: u64) {
        let body = json!({"id": id, "name": "Espresso Cup"}).to_string();
        let status = woo_product_webhook(&self.base_url, SECRET, &body, None).await;
        assert_eq!(status, 200);
    }
}

#[tokio::test]
async fn a_repeated_read_is_answered_from_the_cache_byte_for_byte() {
    let woo = WooStandin::start().await;
    let bridge = Bridge::start(&woo, "search = true\nttl_secs = 600");
    for (tool, arguments) in reads() {
        let first = bridge.raw(tool, &arguments).await;
        assert_eq!(bridge.counted("misses", tool).await, 1, "{tool}");
        assert_eq!(bridge.counted("hits", tool).await, 0, "{tool}");
        // Asked once, not kept: the second call is built again (and kept).
        assert_eq!(bridge.raw(tool, &arguments).await, first, "{tool}");
        assert_eq!(bridge.counted("misses", tool).await, 2, "{tool}");
        assert_eq!(bridge.counted("hits", tool).await, 0, "{tool}");
        let upstream = woo.requests().len();
        let third = bridge.raw(tool, &arguments).await;
        assert_eq!(third, first, "{tool}: the kept answer is the built one");
        assert_eq!(bridge.counted("hits", tool).await, 1, "{tool}");
        assert_eq!(bridge.counted("misses", tool).await, 2, "{tool}");
        assert_eq!(
            woo.requests().len(),
            upstream,
            "{tool}: nothing asked of the store"
        );
    }
    // A hit is still a call: the tool counters and the merchant page's counts move.
    let metrics = reqwest::get(format!("{}/metrics", bridge.base_url))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        metrics.contains("bcp_tool_calls_total{tool=\"get_product\",outcome=\"success\"} 3"),
        "{metrics}"
    );
}

#[tokio::test]
async fn an_update_webhook_shows_the_new_price_on_the_next_call() {
    let woo = WooStandin::start().await;
    let bridge = Bridge::start(&woo, "search = true\nttl_secs = 600");
    for (tool, arguments) in reads() {
        for _ in 0..3 {
            assert_eq!(price(&bridge.call(tool, &arguments).await), 650, "{tool}");
        }
        assert_eq!(bridge.counted("hits", tool).await, 1, "{tool}");
    }
    woo.set_price(CUP, 725);
    // Cached for ten minutes: without the webhook every read keeps the old price.
    for (tool, arguments) in reads() {
        assert_eq!(price(&bridge.call(tool, &arguments).await), 650, "{tool}");
    }
    bridge.webhook(CUP).await;
    for (tool, arguments) in reads() {
        assert_eq!(
            price(&bridge.call(tool, &arguments).await),
            725,
            "{tool} after the webhook"
        );
    }
}

#[tokio::test]
async fn a_ttl_expiry_shows_the_new_price_on_the_next_call() {
    let woo = WooStandin::start().await;
    let bridge = Bridge::start(&woo, "search = true\nttl_secs = 1");
    for (tool, arguments) in reads() {
        for _ in 0..3 {
            assert_eq!(price(&bridge.call(tool, &arguments).await), 650, "{tool}");
        }
        assert_eq!(
            bridge.counted("hits", tool).await,
            1,
            "{tool}: kept before the TTL"
        );
    }
    woo.set_price(CUP, 725);
    // Nothing but the 1 s TTL drops these answers (no webhook is sent): each read shows the
    // new price once it has passed, long before the event-wait deadline.
    for (tool, arguments) in reads() {
        until_answered(
            &format!("{tool} to show the new price after the TTL"),
            async || price(&bridge.call(tool, &arguments).await) == 725,
        )
        .await;
    }
}

#[tokio::test]
async fn the_buyer_context_keys_answers_and_meta_does_not() {
    let woo = WooStandin::start().await;
    let bridge = Bridge::start(&woo, "ttl_secs = 600");
    let plain = json!({"meta": meta(), "catalog": {"id": CUP.to_string()}});
    // Asked twice (kept on the second miss), then once more with other meta, the same
    // arguments in another key order: the same answer.
    bridge.call("get_product", &plain).await;
    bridge.call("get_product", &plain).await;
    let reordered = json!({"catalog": {"id": CUP.to_string()}, "meta": {"ucp-agent": {"profile": PROFILE}, "idempotency-key": "k-1"}});
    bridge.call("get_product", &reordered).await;
    assert_eq!(bridge.counted("hits", "get_product").await, 1);
    // A buyer context is another answer.
    let brazil = json!({"meta": meta(), "catalog": {"id": CUP.to_string(), "context": {"address_country": "BR"}}});
    bridge.call("get_product", &brazil).await;
    bridge.call("get_product", &brazil).await;
    assert_eq!(bridge.counted("hits", "get_product").await, 1);
    assert_eq!(bridge.counted("misses", "get_product").await, 4);
    bridge.call("get_product", &brazil).await;
    assert_eq!(bridge.counted("hits", "get_product").await, 2);
}

#[tokio::test]
async fn search_answers_are_kept_only_while_search_pages_are() {
    let woo = WooStandin::start().await;
    // Pages go to the store every time: a kept answer could hide a new price.
    let bridge = Bridge::start(&woo, "search = false\nttl_secs = 600");
    let (tool, arguments) = reads()[0].clone();
    assert_eq!(price(&bridge.call(tool, &arguments).await), 650);
    assert_eq!(price(&bridge.call(tool, &arguments).await), 650);
    woo.set_price(CUP, 725);
    assert_eq!(price(&bridge.call(tool, &arguments).await), 725);
    assert_eq!(bridge.counted("hits", tool).await, 0);
}

#[tokio::test]
async fn the_off_switch_keeps_nothing() {
    let woo = WooStandin::start().await;
    let bridge = Bridge::start(&woo, "search = true\nttl_secs = 600\nanswers = false");
    for (tool, arguments) in reads() {
        let first = bridge.raw(tool, &arguments).await;
        assert_eq!(bridge.raw(tool, &arguments).await, first);
        assert_eq!(bridge.counted("hits", tool).await, 0, "{tool}");
        assert_eq!(bridge.counted("misses", tool).await, 0, "{tool}");
    }
}

// --- the negotiated release keys answers (in process, the embedded sample store) -------------

/// Two agents' profiles on loopback: one speaks only 2026-08-25, one only 2026-04-08.
async fn agents() -> SocketAddr {
    fn profile(version: &str) -> Value {
        let capabilities: serde_json::Map<String, Value> = [
            "dev.ucp.shopping.catalog.search",
            "dev.ucp.shopping.catalog.lookup",
        ]
        .iter()
        .map(|name| ((*name).to_owned(), json!([{"version": version}])))
        .collect();
        json!({"ucp": {"version": version, "services": {}, "capabilities": capabilities, "payment_handlers": {}}})
    }
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let app = Router::new()
        .route("/new", get(|| async { axum::Json(profile("2026-08-25")) }))
        .route("/old", get(|| async { axum::Json(profile("2026-04-08")) }));
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    addr
}

#[tokio::test]
async fn each_negotiated_release_gets_its_own_answer() {
    let agents = agents().await;
    let bridge = TestBridge::start(
        "[server]\nprotocol = \"ucp\"\n[negotiation]\nenabled = true\nallow_http_hosts = [\"127.0.0.1\"]\nallow_private_hosts = [\"127.0.0.1\"]\ntimeout_ms = 2000\n",
    )
    .await;
    let call = |agent: &'static str| {
        let arguments = json!({
            "meta": {"ucp-agent": {"profile": format!("http://{agents}/{agent}")}},
            "catalog": {"id": "prod_abc123"},
        });
        let bridge = &bridge;
        async move { bridge.call("get_product", arguments).await }
    };
    // Alternating, so a kept answer of one release would be handed to the other (each is
    // kept on its second round).
    for _ in 0..3 {
        for (agent, version) in [("new", "2026-08-25"), ("old", "2026-04-08")] {
            let answer = call(agent).await;
            assert_eq!(answer["ucp"]["version"], version, "{agent}: {answer}");
        }
    }
}
