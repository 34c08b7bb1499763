//! Access control on the MCP endpoint: hashed bearer tokens (401) and an allow-list of agent
//! profiles (403). Discovery and health stay public.

use crate::support::{AGENT_PROFILE, TestBridge, meta};
use reqwest::StatusCode;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

const TOKEN: &str = "agent-token-0123456789";

fn digest(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

async fn post(bridge: &TestBridge, authorization: Option<&str>, body: Value) -> reqwest::Response {
    let mut request = bridge
        .client
        .post(&bridge.mcp_url)
        .header("content-type", "application/json")
        .header("accept", "application/json")
        .body(body.to_string());
    if let Some(value) = authorization {
        request = request.header("authorization", value);
    }
    request.send().await.unwrap()
}

fn search_call() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "search_catalog", "arguments": {"meta": meta(), "catalog": {"query": "shirt"}}}})
}

#[tokio::test]
async fn bearer_tokens_guard_the_mcp_endpoint() {
    let bridge = TestBridge::start(&format!(
        "[access]\nbearer_token_sha256 = [\"{}\", \"{}\"]\n",
        digest("another-token"),
        digest(TOKEN)
    ))
    .await;
    for (authorization, challenge) in [
        (None, "Bearer"),
        (
            Some("Bearer wrong-token".to_owned()),
            "Bearer error=\"invalid_token\"",
        ),
        (
            Some(format!("Basic {TOKEN}")),
            "Bearer error=\"invalid_token\"",
        ),
        (Some("Bearer ".to_owned()), "Bearer error=\"invalid_token\""),
    ] {
        let response = post(&bridge, authorization.as_deref(), search_call()).await;
        assert_eq!(
            response.status(),
            StatusCode::UNAUTHORIZED,
            "{authorization:?}"
        );
        assert_eq!(response.headers()["www-authenticate"], challenge);
        let body: Value = response.json().await.unwrap();
        assert_eq!(body["error"]["code"], -32000);
    }
    // Every MCP method is behind the token, not only tools/call.
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    assert_eq!(
        post(&bridge, None, list.clone()).await.status(),
        StatusCode::UNAUTHORIZED
    );

    let authorised = format!("Bearer {TOKEN}");
    let response = post(&bridge, Some(&authorised), search_call()).await;
    assert_eq!(response.status(), StatusCode::OK);
    let body: Value = response.json().await.unwrap();
    assert!(
        body["result"]["structuredContent"]["products"].is_array(),
        "{body}"
    );
    let response = post(&bridge, Some(&authorised), list).await;
    assert_eq!(response.status(), StatusCode::OK);

    // Discovery and health need no token.
    for path in [
        "/.well-known/bcp",
        "/.well-known/ucp.json",
        "/healthz",
        "/readyz",
    ] {
        assert_eq!(bridge.get(path).await.status(), StatusCode::OK, "{path}");
    }
}

#[tokio::test]
async fn only_listed_agent_profiles_may_call_tools() {
    let bridge = TestBridge::start(&format!(
        "[access]\nallowed_profiles = [\"{AGENT_PROFILE}\"]\n"
    ))
    .await;
    let allowed = bridge
        .call(
            "search_catalog",
            json!({"meta": meta(), "catalog": {"query": "shirt"}}),
        )
        .await;
    assert!(allowed["products"].is_array());
    let (status, error) = bridge
        .call_error(
            "create_cart",
            json!({"meta": {"ucp-agent": {"profile": "https://stranger.example/agent.json"}, "idempotency-key": "k"}, "cart": {"line_items": [{"item": {"id": "item_123"}, "quantity": 1}]}}),
        )
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert_eq!(error["code"], -32000);
    // A missing profile stays an argument error (-32602).
    let (_, error) = bridge
        .call_error("search_catalog", json!({"catalog": {"query": "shirt"}}))
        .await;
    assert_eq!(error["code"], -32602);
}

#[test]
fn digests_must_be_sha256_hex() {
    let problems = match bcp_bridge::startup::BridgeConfig::from_toml(
        "[access]\nbearer_token_sha256 = [\"plain-token\"]\nallowed_profiles = [\"nope\"]\n",
    ) {
        Err(bcp_bridge::startup::ConfigError::Invalid(problems)) => problems,
        other => panic!("{other:?}"),
    };
    let rendered: Vec<String> = problems.iter().map(ToString::to_string).collect();
    assert!(
        rendered
            .iter()
            .any(|p| p.starts_with("access.bearer_token_sha256[0]")),
        "{rendered:?}"
    );
    assert!(
        rendered
            .iter()
            .any(|p| p.starts_with("access.allowed_profiles[0]")),
        "{rendered:?}"
    );
    assert!(
        !rendered.iter().any(|p| p.contains("plain-token")),
        "{rendered:?}"
    );
}
