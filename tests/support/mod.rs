//! Test harness: starts the real bridge on a loopback port and talks to it over HTTP, the way
//! an agent does. Each test gets its own bridge (and its own in-memory sample store).

pub mod binary;
pub mod chromium;
pub mod debug_bridge;
pub mod hostile;
pub mod outside;
pub mod pix_psp;
pub mod redis;
pub mod shopify_orders;
pub mod shopify_standin;
pub mod signer;
pub mod store_webhooks;
pub mod values;
pub mod vtex_standin;
pub mod wait;
pub mod woo_standin;

use std::net::SocketAddr;

use bcp_bridge::startup;
use bcp_bridge::startup::BridgeConfig;
use reqwest::StatusCode;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

pub const AGENT_PROFILE: &str = "https://platform.example/profiles/v2026-01/shopping-agent.json";

pub struct TestBridge {
    pub base_url: String,
    pub mcp_url: String,
    pub addr: SocketAddr,
    pub client: reqwest::Client,
    /// Every namespace's endpoint (`server.protocol`); `mcp_url` is the first one's.
    pub endpoints: Vec<startup::Endpoint>,
    shutdown: CancellationToken,
    next_id: std::sync::atomic::AtomicU64,
}

impl Drop for TestBridge {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

pub fn meta() -> Value {
    json!({"ucp-agent": {"profile": AGENT_PROFILE}})
}

pub fn meta_with_key(key: &str) -> Value {
    json!({"ucp-agent": {"profile": AGENT_PROFILE}, "idempotency-key": key})
}

/// `meta` with an idempotency key no other call has used.
pub fn meta_with_fresh_key() -> Value {
    meta_with_key(&uuid::Uuid::new_v4().to_string())
}

/// `tools/call` of `tool` at the MCP `endpoint` of a bridge running as its own process; the
/// call must answer, and this is its `structuredContent`.
pub async fn tool_call_at(endpoint: &str, tool: &str, arguments: Value) -> Value {
    let reply: Value = reqwest::Client::new()
        .post(endpoint)
        .header("accept", "application/json")
        .json(
            &serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments}}),
        )
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(reply.get("error").is_none(), "{reply}");
    reply["result"]["structuredContent"].clone()
}

/// `update_checkout` of the checkout `id` with `checkout`, the answer's structured content.
pub async fn update_checkout(bridge: &TestBridge, id: &str, checkout: Value) -> Value {
    bridge
        .call(
            "update_checkout",
            json!({"meta": meta(), "id": id, "checkout": checkout}),
        )
        .await
}

impl TestBridge {
    /// The embedded sample store with default settings.
    pub async fn sample() -> Self {
        Self::start("").await
    }

    /// A bridge configured by `config_toml`, listening on a free loopback port.
    pub async fn start(config_toml: &str) -> Self {
        let mut config = BridgeConfig::from_toml(config_toml).expect("test config is valid");
        // AGENT_PROFILE cannot be fetched; only tests about negotiation turn it on.
        if !config_toml.contains("[negotiation]") {
            config.negotiation.enabled = false;
        }
        Self::start_with(config).await
    }

    pub async fn start_with(config: BridgeConfig) -> Self {
        Self::serving(config, &bcp_bridge::pipeline::tools::DECLARED).await
    }

    /// A bridge serving `tools` rather than its own declarations.
    pub async fn serving(
        config: BridgeConfig,
        tools: &[&'static bcp_bridge::pipeline::tools::Declaration],
    ) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let shutdown = CancellationToken::new();
        let bridge = startup::build_with_tools(&config, addr, shutdown.clone(), tools)
            .await
            .expect("bridge builds");
        let token = shutdown.clone();
        let endpoints = bridge.endpoints.clone();
        // The binary's own accept loop, so every test also goes through its deadlines.
        let hygiene = bcp_bridge::startup::accept::Hygiene::from(&config.server);
        tokio::spawn(bcp_bridge::startup::accept::serve(
            listener,
            bridge.router,
            hygiene,
            async move { token.cancelled().await },
        ));
        Self {
            base_url: bridge.base_url,
            mcp_url: bridge.mcp_url.unwrap_or_default(),
            addr,
            client: reqwest::Client::new(),
            endpoints,
            shutdown,
            next_id: std::sync::atomic::AtomicU64::new(1),
        }
    }

    /// POSTs a raw body to the MCP endpoint as a bare JSON client would.
    pub async fn post_raw(&self, body: &str) -> (StatusCode, String) {
        let response = self
            .client
            .post(&self.mcp_url)
            .header("content-type", "application/json")
            .header("accept", "application/json")
            .body(body.to_owned())
            .send()
            .await
            .unwrap();
        let status = response.status();
        (status, response.text().await.unwrap())
    }

    /// Sends one JSON-RPC message and returns the HTTP status and the parsed reply.
    pub async fn rpc(&self, message: Value) -> (StatusCode, Value) {
        let (status, text) = self.post_raw(&message.to_string()).await;
        let value = if text.is_empty() {
            Value::Null
        } else {
            serde_json::from_str(&text).unwrap_or_else(|_| panic!("not JSON ({status}): {text}"))
        };
        (status, value)
    }

    /// `tools/call` without `initialize`, as UCP clients do; returns the whole JSON-RPC reply.
    pub async fn call_raw(&self, tool: &str, arguments: Value) -> (StatusCode, Value) {
        let id = self
            .next_id
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let (status, reply) = self
            .rpc(json!({
                "jsonrpc": "2.0",
                "id": id,
                "method": "tools/call",
                "params": {"name": tool, "arguments": arguments}
            }))
            .await;
        assert_eq!(reply["id"], json!(id), "reply id matches request: {reply}");
        (status, reply)
    }

    /// `tools/call` that must succeed at the JSON-RPC level; returns `structuredContent`
    /// after checking the text content carries the same JSON.
    pub async fn call(&self, tool: &str, arguments: Value) -> Value {
        let (status, reply) = self.call_raw(tool, arguments).await;
        assert_eq!(status, StatusCode::OK, "{reply}");
        let result = &reply["result"];
        assert!(reply.get("error").is_none(), "unexpected error: {reply}");
        let structured = result["structuredContent"].clone();
        let text = result["content"][0]["text"].as_str().expect("text content");
        assert_eq!(result["content"][0]["type"], "text");
        let from_text: Value = serde_json::from_str(text).expect("text is JSON");
        assert_eq!(
            from_text, structured,
            "text content equals structuredContent"
        );
        structured
    }

    /// `tools/call` that must fail at the JSON-RPC level; returns (HTTP status, error object).
    pub async fn call_error(&self, tool: &str, arguments: Value) -> (StatusCode, Value) {
        let (status, reply) = self.call_raw(tool, arguments).await;
        assert!(reply.get("result").is_none(), "expected an error: {reply}");
        (status, reply["error"].clone())
    }

    /// A catalog tool (`search_catalog`, `lookup_catalog`, `get_product`) called with the
    /// default `meta`; returns `structuredContent`.
    pub async fn catalog(&self, tool: &str, catalog: Value) -> Value {
        self.call(tool, json!({"meta": meta(), "catalog": catalog}))
            .await
    }

    /// Follows search cursors from the first page to the last (CAT-001/CAT-002: `has_next_page`
    /// always, a cursor exactly when there is a next page); returns every product id in order
    /// and each page's `total_count`.
    pub async fn walk(&self, mut catalog: Value, limit: u64) -> (Vec<String>, Vec<u64>) {
        let mut seen = Vec::new();
        let mut totals = Vec::new();
        catalog["pagination"] = json!({"limit": limit});
        for _ in 0..100 {
            let page = self.catalog("search_catalog", catalog.clone()).await;
            let products = values::ids(&page["products"]);
            assert!(products.len() <= limit as usize);
            seen.extend(products);
            totals.push(page["pagination"]["total_count"].as_u64().unwrap());
            let more = page["pagination"]["has_next_page"].as_bool().unwrap();
            match (more, page["pagination"].get("cursor")) {
                (true, Some(cursor)) => catalog["pagination"]["cursor"] = cursor.clone(),
                (false, None) => return (seen, totals),
                other => panic!("inconsistent pagination {other:?}"),
            }
        }
        panic!("pagination did not end");
    }

    /// A request to the first namespace's REST binding, as an agent sends it (`UCP-Agent`,
    /// JSON content when there is a body); returns the status and the body as sent.
    pub async fn rest(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<&Value>,
        headers: &[(&str, &str)],
    ) -> (StatusCode, String) {
        let base = self.endpoints[0].rest_url.clone().expect("REST is served");
        let mut request = self
            .client
            .request(method, format!("{base}{path}"))
            .header("ucp-agent", format!("profile=\"{AGENT_PROFILE}\""))
            .header("request-id", uuid::Uuid::new_v4().to_string());
        if let Some(body) = body {
            request = request
                .header("content-type", "application/json")
                .body(body.to_string());
        }
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let response = request.send().await.unwrap();
        let status = response.status();
        (status, response.text().await.unwrap())
    }

    /// MCP's `structuredContent` of a call, as compact JSON in the answer's own key order:
    /// what a REST body must equal byte for byte.
    pub async fn structured_bytes(&self, tool: &str, arguments: Value) -> String {
        serde_json::to_string(&self.call(tool, arguments).await).unwrap()
    }

    /// What is wrong with `answer` as the `outputSchema` the bridge advertises for `tool`
    /// says (issue 40 item 1).
    pub async fn output_problems(&self, tool: &str, answer: &Value) -> Vec<String> {
        let (_, listing) = self
            .rpc(serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
            .await;
        let advertised = listing["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|advertised| advertised["name"] == tool)
            .unwrap_or_else(|| panic!("{tool} is not listed"));
        let validator = jsonschema::validator_for(&advertised["outputSchema"]).unwrap();
        validator
            .iter_errors(answer)
            .map(|error| format!("{}: {error}", error.instance_path()))
            .collect()
    }

    pub async fn get(&self, path: &str) -> reqwest::Response {
        self.client
            .get(format!("{}{path}", self.base_url))
            .send()
            .await
            .unwrap()
    }
}
