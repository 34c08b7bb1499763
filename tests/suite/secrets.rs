//! Every secret this bridge knows (bearer token, Redis URL with password) stays out of logs,
//! responses and configuration errors, through a full session of every tool, replays,
//! refusals and a Redis outage.

use std::io::Write;
use std::sync::{Arc, Mutex};

use crate::support::redis::RedisServer;
use crate::support::{TestBridge, meta, meta_with_key};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

const TOKEN: &str = "tok-SECRET-7f3a9c1e5b";
const REDIS_PASSWORD: &str = "pw-SECRET-d41d8cd98f";

#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn assert_clean(what: &str, text: &str) {
    for secret in [TOKEN, REDIS_PASSWORD] {
        assert!(!text.contains(secret), "{what} leaks a secret:\n{text}");
    }
}

async fn rpc(bridge: &TestBridge, token: &str, transcript: &mut String, message: Value) -> Value {
    let response = bridge
        .client
        .post(&bridge.mcp_url)
        .header("content-type", "application/json")
        .header("accept", "application/json")
        .bearer_auth(token)
        .json(&message)
        .send()
        .await
        .unwrap();
    transcript.push_str(&format!("{:?}\n", response.headers()));
    let text = response.text().await.unwrap();
    transcript.push_str(&text);
    transcript.push('\n');
    serde_json::from_str(&text).unwrap_or(Value::Null)
}

fn call(id: u64, tool: &str, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool, "arguments": arguments}})
}

#[tokio::test]
#[ignore = "needs redis-server: cargo test -- --include-ignored with redis-server on the PATH (.ci/run installs it)"]
async fn no_secret_reaches_logs_or_responses() {
    let captured = Captured::default();
    let writer = captured.clone();
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::new("trace"))
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .init();

    let mut redis = RedisServer::run(Some(REDIS_PASSWORD));
    let config = format!(
        "[access]\nbearer_token_sha256 = [\"{}\"]\n[idempotency]\nbackend = \"redis\"\nredis_url = \"{}\"\n",
        hex::encode(Sha256::digest(TOKEN.as_bytes())),
        redis.url(Some(REDIS_PASSWORD))
    );
    let parsed = bcp_bridge::startup::BridgeConfig::from_toml(&config).unwrap();
    assert_clean("Debug of the configuration", &format!("{parsed:?}"));
    let bridge = TestBridge::start(&config).await;
    let mut transcript = String::new();
    let t = &mut transcript;

    rpc(&bridge, TOKEN, t, json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})).await;
    rpc(
        &bridge,
        TOKEN,
        t,
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    )
    .await;
    rpc(
        &bridge,
        TOKEN,
        t,
        call(
            3,
            "search_catalog",
            json!({"meta": meta(), "catalog": {"query": "shirt"}}),
        ),
    )
    .await;
    rpc(
        &bridge,
        TOKEN,
        t,
        call(
            4,
            "lookup_catalog",
            json!({"meta": meta(), "catalog": {"ids": ["prod_abc123", "nope"]}}),
        ),
    )
    .await;
    rpc(
        &bridge,
        TOKEN,
        t,
        call(
            5,
            "get_product",
            json!({"meta": meta(), "catalog": {"id": "prod_abc123"}}),
        ),
    )
    .await;
    let create = call(
        6,
        "create_cart",
        json!({"meta": meta_with_key("c1"), "cart": {"line_items": [{"item": {"id": "item_123"}, "quantity": 1}]}}),
    );
    let created = rpc(&bridge, TOKEN, t, create.clone()).await;
    let id = created["result"]["structuredContent"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    rpc(&bridge, TOKEN, t, create).await; // replay
    rpc(&bridge, TOKEN, t, call(7, "create_cart", json!({"meta": meta_with_key("c1"), "cart": {"line_items": [{"item": {"id": "item_123"}, "quantity": 2}]}}))).await; // 409
    rpc(
        &bridge,
        TOKEN,
        t,
        call(8, "get_cart", json!({"meta": meta(), "id": id})),
    )
    .await;
    rpc(&bridge, TOKEN, t, call(9, "update_cart", json!({"meta": meta_with_key("u1"), "id": id, "cart": {"line_items": [{"item": {"id": "item_456"}, "quantity": 2}]}}))).await;
    rpc(
        &bridge,
        TOKEN,
        t,
        call(
            10,
            "cancel_cart",
            json!({"meta": meta_with_key("x1"), "id": id}),
        ),
    )
    .await;
    rpc(
        &bridge,
        TOKEN,
        t,
        call(11, "get_cart", json!({"meta": meta(), "id": "nope"})),
    )
    .await;
    rpc(
        &bridge,
        TOKEN,
        t,
        call(12, "create_cart", json!({"meta": meta(), "cart": {}})),
    )
    .await; // -32602
    // A wrong token close to the real one, and a refused request, echo nothing.
    rpc(
        &bridge,
        &format!("{TOKEN}x"),
        t,
        call(
            13,
            "search_catalog",
            json!({"meta": meta(), "catalog": {"query": "shirt"}}),
        ),
    )
    .await;
    for path in ["/.well-known/bcp", "/healthz", "/readyz"] {
        t.push_str(&bridge.get(path).await.text().await.unwrap());
    }
    // Outage: the connection error path must not print the URL either.
    redis.stop();
    let refused = rpc(&bridge, TOKEN, t, call(14, "create_cart", json!({"meta": meta_with_key("c2"), "cart": {"line_items": [{"item": {"id": "item_123"}, "quantity": 1}]}}))).await;
    assert_eq!(refused["error"]["code"], -32000, "{refused}");
    assert!(transcript.contains("structuredContent"), "the session ran");
    assert_clean("responses", &transcript);

    let logs = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
    assert!(logs.contains("tool answered"), "logs were captured");
    assert!(
        logs.contains("redis idempotency store"),
        "the outage was logged"
    );
    assert_clean("logs", &logs);

    // Configuration problems do not quote the secret they are about.
    let bad = format!(
        "[idempotency]\nbackend = \"redis\"\nredis_url = \"http://:{REDIS_PASSWORD}@127.0.0.1:1/\"\n"
    );
    let error = bcp_bridge::startup::BridgeConfig::from_toml(&bad).unwrap_err();
    assert!(
        error.to_string().contains("idempotency.redis_url"),
        "{error}"
    );
    assert_clean("configuration errors", &error.to_string());
}
