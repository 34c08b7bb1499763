//! Inbound rate limits and observability on the running bridge (sample store, loopback HTTP).

use crate::support::{TestBridge, meta};
use reqwest::StatusCode;
use serde_json::{Value, json};

fn get_product_args(profile: &str) -> Value {
    json!({
        "meta": {"ucp-agent": {"profile": profile}},
        "catalog": {"id": "prod_abc123"}
    })
}

fn assert_rate_limited(status: StatusCode, error: &Value) {
    // CHK-050 (429 for rate limits) and SPEC.md errors: -32000 with data.retry_after.
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{error}");
    assert_eq!(error["code"], -32000, "{error}");
    let retry_after = error["data"]["retry_after"].as_u64().expect("retry_after");
    assert!((1..=60).contains(&retry_after), "{error}");
}

#[tokio::test]
async fn each_agent_profile_has_its_own_budget() {
    let bridge = TestBridge::start("[inbound]\nper_agent_per_minute = 2\n").await;
    let agent_a = "https://agent-a.example/profile.json";
    for _ in 0..2 {
        bridge.call("get_product", get_product_args(agent_a)).await;
    }
    let (status, error) = bridge
        .call_error("get_product", get_product_args(agent_a))
        .await;
    assert_rate_limited(status, &error);
    // Another agent from the same address is not affected (the per-address default is far off).
    bridge
        .call(
            "get_product",
            get_product_args("https://agent-b.example/profile.json"),
        )
        .await;
}

#[tokio::test]
async fn each_client_address_has_its_own_budget() {
    let bridge = TestBridge::start("[inbound]\nper_ip_per_minute = 3\n").await;
    for index in 0..3 {
        let profile = format!("https://agent-{index}.example/profile.json");
        bridge.call("get_product", get_product_args(&profile)).await;
    }
    // A fresh profile does not help: the address is over budget.
    let (status, error) = bridge
        .call_error(
            "get_product",
            get_product_args("https://agent-new.example/profile.json"),
        )
        .await;
    assert_rate_limited(status, &error);
}

/// `get_product` as forwarded by a proxy for `client`; the HTTP status.
async fn forwarded_for(bridge: &TestBridge, client: &str) -> StatusCode {
    let body = json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "get_product", "arguments": get_product_args("https://agent.example/p.json")}
    });
    bridge
        .client
        .post(&bridge.mcp_url)
        .header("content-type", "application/json")
        .header("accept", "application/json")
        .header("x-forwarded-for", format!("{client}, 127.0.0.9"))
        .body(body.to_string())
        .send()
        .await
        .unwrap()
        .status()
}

#[tokio::test]
async fn behind_a_trusted_proxy_each_forwarded_client_has_its_own_budget() {
    // The test client is on 127.0.0.1, inside the trusted range, as an ingress would be.
    let bridge = TestBridge::start(
        "[server]\ntrusted_proxies = [\"127.0.0.0/8\"]\n[inbound]\nper_ip_per_minute = 2\n",
    )
    .await;
    for _ in 0..2 {
        assert_eq!(forwarded_for(&bridge, "198.51.100.1").await, StatusCode::OK);
    }
    assert_eq!(
        forwarded_for(&bridge, "198.51.100.1").await,
        StatusCode::TOO_MANY_REQUESTS
    );
    // Another client behind the same proxy still has its budget.
    assert_eq!(forwarded_for(&bridge, "198.51.100.2").await, StatusCode::OK);
}

#[tokio::test]
async fn a_client_that_is_not_a_trusted_proxy_cannot_pick_its_address() {
    let bridge = TestBridge::start("[inbound]\nper_ip_per_minute = 2\n").await;
    for client in ["198.51.100.1", "198.51.100.2"] {
        assert_eq!(forwarded_for(&bridge, client).await, StatusCode::OK);
    }
    // Both counted against the real peer: a made-up header buys no budget.
    assert_eq!(
        forwarded_for(&bridge, "198.51.100.3").await,
        StatusCode::TOO_MANY_REQUESTS
    );
}

#[tokio::test]
async fn a_real_agents_session_burst_fits_the_default_budgets() {
    // Issue 35 item 3: budgets are on by default, sized so a session's burst never meets them.
    let bridge = TestBridge::sample().await;
    for _ in 0..50 {
        bridge
            .call(
                "get_product",
                json!({"meta": meta(), "catalog": {"id": "prod_abc123"}}),
            )
            .await;
    }
}

fn counter(metrics: &str, name: &str, labels: &[&str]) -> f64 {
    metrics
        .lines()
        .filter(|line| line.starts_with(name) && labels.iter().all(|label| line.contains(label)))
        .filter_map(|line| line.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

#[tokio::test]
async fn metrics_count_tools_latency_cache_and_rejections() {
    let bridge = TestBridge::start("[inbound]\nper_agent_per_minute = 1\n").await;
    let agent = "https://metrics-agent.example/profile.json";
    bridge.call("get_product", get_product_args(agent)).await;
    let (status, _) = bridge
        .call_error("get_product", get_product_args(agent))
        .await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);

    let response = bridge.get("/metrics").await;
    assert_eq!(response.status(), StatusCode::OK);
    let text = response.text().await.unwrap();
    // The recorder is process-wide (other tests in this binary add to it): check presence.
    assert!(
        counter(
            &text,
            "bcp_tool_calls_total",
            &["tool=\"get_product\"", "outcome=\"success\""]
        ) >= 1.0,
        "{text}"
    );
    assert!(
        counter(
            &text,
            "bcp_tool_calls_total",
            &["tool=\"get_product\"", "outcome=\"rate_limited\""]
        ) >= 1.0,
        "{text}"
    );
    assert!(
        counter(
            &text,
            "bcp_rate_limited_total",
            &["scope=\"inbound_agent\""]
        ) >= 1.0,
        "{text}"
    );
    assert!(
        counter(&text, "bcp_cache_misses_total", &["kind=\"product\""]) >= 1.0,
        "{text}"
    );
    assert!(
        text.contains("bcp_tool_duration_seconds_bucket"),
        "latency histogram: {text}"
    );
}

#[tokio::test]
async fn webhook_routes_exist_only_with_a_secret_and_refuse_bad_signatures() {
    let without = TestBridge::sample().await;
    let response = without
        .client
        .post(format!("{}/webhooks/shopify", without.base_url))
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::NOT_FOUND);

    let with = TestBridge::start("[cache]\nwebhook_secret = \"whsec_bridge_test\"\n").await;
    for (path, header) in [
        ("/webhooks/shopify", "X-Shopify-Hmac-Sha256"),
        ("/webhooks/woocommerce", "X-WC-Webhook-Signature"),
    ] {
        let response = with
            .client
            .post(format!("{}{path}", with.base_url))
            .header(header, "bm90IGEgc2lnbmF0dXJl")
            .body(r#"{"id":"prod_abc123"}"#)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED, "{path}");
        let body = response.text().await.unwrap();
        assert!(!body.contains("whsec_bridge_test"), "{body}");
    }
}

#[test]
fn hardening_keys_are_checked_by_name() {
    let error = bcp_bridge::startup::BridgeConfig::from_toml(
        "[server]\nrequest_timeout_ms = 1\n[cache]\nenabled = false\nttl_secs = 0\nwebhook_secret = \"x\"\n[inbound]\nper_agent = 3\n",
    )
    .unwrap_err()
    .to_string();
    for key in [
        "server.request_timeout_ms",
        "cache.ttl_secs",
        "cache.webhook_secret",
        "inbound.per_agent",
    ] {
        assert!(error.contains(key), "{key} in {error}");
    }
    assert!(!error.contains("\"x\""), "secret value leaked: {error}");
}
