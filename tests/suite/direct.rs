//! The front answers plain sessionless `tools/call`s itself (one encoding per answer); what
//! it writes must be what rmcp writes for the same call, byte for byte, for results,
//! business errors and protocol errors alike, with the same HTTP status. A request rmcp
//! must judge (here: one carrying an `Mcp-Session-Id`) still goes through rmcp.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::support::{TestBridge, meta, meta_with_fresh_key};

async fn post(bridge: &TestBridge, body: &str, through_rmcp: bool) -> (StatusCode, String) {
    let mut request = bridge
        .client
        .post(&bridge.mcp_url)
        .header("content-type", "application/json")
        .body(body.to_owned());
    if through_rmcp {
        // Sessionless mode ignores the id, but the front leaves such requests to rmcp.
        request = request.header("mcp-session-id", "direct-test");
    }
    let response = request.send().await.unwrap();
    let status = response.status();
    (status, response.text().await.unwrap())
}

fn call(id: &str, tool: &str, arguments: Value) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{arguments}}}}}"#
    )
}

async fn same_both_ways(bridge: &TestBridge, body: &str) -> (StatusCode, String) {
    let direct = post(bridge, body, false).await;
    let rmcp = post(bridge, body, true).await;
    assert_eq!(direct.0, rmcp.0, "status of {body}");
    assert_eq!(direct.1, rmcp.1, "body of {body}");
    direct
}

#[tokio::test]
async fn direct_answers_are_the_bytes_rmcp_writes() {
    let bridge = TestBridge::sample().await;
    let cases = [
        // A result with merchant text full of characters the text copy must escape.
        call(
            "1",
            "search_catalog",
            json!({"meta": meta(), "catalog": {"query": "shirt"}}),
        ),
        call(
            "\"a\\\"b\"",
            "lookup_catalog",
            json!({"meta": meta(), "catalog": {"ids": ["prod_abc123", "nope", "var_xyz789"]}}),
        ),
        call(
            "123456789012345678901234567890",
            "get_product",
            json!({"meta": meta(), "catalog": {"id": "prod_abc123", "selected": [{"name": "Color", "label": "Blue"}]}}),
        ),
        // A business outcome (ucp.status error).
        call(
            "2",
            "get_product",
            json!({"meta": meta(), "catalog": {"id": "no_such_product"}}),
        ),
        // Protocol errors: schema (-32602 with data), unknown tool, a brain refusal.
        call(
            "3",
            "search_catalog",
            json!({"meta": meta(), "catalog": {"query": 5}}),
        ),
        call("4", "no_such_tool", json!({"meta": meta()})),
        call(
            "5",
            "search_catalog",
            json!({"meta": meta(), "catalog": {}}),
        ),
        call("6", "get_cart", json!({"meta": meta(), "id": "nope"})),
    ];
    for body in &cases {
        let (status, text) = same_both_ways(&bridge, body).await;
        assert_eq!(status, StatusCode::OK, "{body}: {text}");
    }
    // An id that needs escaping, and one past i64, come back exactly as written.
    let (_, text) = post(&bridge, &cases[1], false).await;
    assert!(
        text.starts_with(r#"{"jsonrpc":"2.0","id":"a\"b","result""#),
        "{text}"
    );
    let (_, text) = post(&bridge, &cases[2], false).await;
    assert!(
        text.starts_with(r#"{"jsonrpc":"2.0","id":123456789012345678901234567890,"#),
        "{text}"
    );
}

#[tokio::test]
async fn direct_cart_calls_keep_idempotency_and_statuses() {
    let bridge = TestBridge::sample().await;
    let create = call(
        "1",
        "create_cart",
        json!({"meta": meta_with_fresh_key(), "cart": {"line_items": [{"item": {"id": "item_123"}, "quantity": 1}]}}),
    );
    let (status, first) = post(&bridge, &create, false).await;
    assert_eq!(status, StatusCode::OK, "{first}");
    // The retry replays the stored answer, through either front.
    let (_, again) = post(&bridge, &create, true).await;
    assert_eq!(first, again);
    let (_, again) = post(&bridge, &create, false).await;
    assert_eq!(first, again);

    // The inbound limit answers 429 on the direct path as on rmcp's.
    let limited = TestBridge::start("[inbound]\nper_agent_per_minute = 1\n").await;
    let search = call(
        "7",
        "search_catalog",
        json!({"meta": meta(), "catalog": {"query": "shirt"}}),
    );
    let (status, _) = post(&limited, &search, false).await;
    assert_eq!(status, StatusCode::OK);
    let (status, text) = post(&limited, &search, false).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{text}");
    let reply: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(reply["error"]["code"], -32000, "{text}");
    assert_eq!(reply["id"], 7, "{text}");
}
