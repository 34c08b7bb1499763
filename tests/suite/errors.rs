//! Bad input gets a clear JSON-RPC error naming what is wrong, nothing leaks, and the server
//! keeps answering afterwards.

use crate::support::{TestBridge, meta, meta_with_key};
use reqwest::StatusCode;
use serde_json::{Value, json};

async fn still_answers(bridge: &TestBridge) {
    let result = bridge
        .call(
            "search_catalog",
            json!({"meta": meta(), "catalog": {"query": "shoes"}}),
        )
        .await;
    assert!(!result["products"].as_array().unwrap().is_empty());
}

async fn invalid(bridge: &TestBridge, tool: &str, arguments: Value) -> String {
    let (status, error) = bridge.call_error(tool, arguments).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(error["code"], -32602, "{error}");
    error["message"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn missing_agent_profile_is_invalid_params() {
    let bridge = TestBridge::sample().await;
    let message = invalid(
        &bridge,
        "search_catalog",
        json!({"catalog": {"query": "x"}}),
    )
    .await;
    assert!(message.contains("meta"), "{message}");
    let message = invalid(
        &bridge,
        "search_catalog",
        json!({"meta": {}, "catalog": {"query": "x"}}),
    )
    .await;
    assert!(message.contains("ucp-agent"), "{message}");
    let message = invalid(
        &bridge,
        "get_cart",
        json!({"meta": {"ucp-agent": {}}, "id": "cart_1"}),
    )
    .await;
    assert!(
        message.starts_with("Invalid params: $.meta['ucp-agent']"),
        "{message}"
    );
    assert!(message.contains("profile"), "{message}");
    still_answers(&bridge).await;
}

#[tokio::test]
async fn cart_id_inside_the_cart_object_is_refused() {
    let bridge = TestBridge::sample().await;
    // MCP-002 (cart flavour): the target cart is named by the top-level id only.
    let message = invalid(
        &bridge,
        "update_cart",
        json!({"meta": meta(), "id": "cart_1", "cart": {"id": "cart_1", "line_items": []}}),
    )
    .await;
    assert!(message.contains("$.cart.id"), "{message}");
    for tool in ["get_cart", "cancel_cart"] {
        let message = invalid(
            &bridge,
            tool,
            json!({"meta": meta_with_key("k"), "id": "cart_1", "cart": {"id": "cart_1"}}),
        )
        .await;
        assert!(message.contains("$.cart.id"), "{tool}: {message}");
    }
    still_answers(&bridge).await;
}

#[tokio::test]
async fn cancel_without_idempotency_key_is_refused() {
    let bridge = TestBridge::sample().await;
    let cart = bridge
        .call("create_cart", json!({"meta": meta(), "cart": {"line_items": [{"item": {"id": "item_123"}, "quantity": 1}]}}))
        .await;
    let id = cart["id"].as_str().unwrap();
    let message = invalid(&bridge, "cancel_cart", json!({"meta": meta(), "id": id})).await;
    assert!(message.contains("idempotency-key"), "{message}");
    // Nothing was lost: the cart is still there.
    let again = bridge
        .call("get_cart", json!({"meta": meta(), "id": id}))
        .await;
    assert_eq!(again["line_items"], cart["line_items"]);
}

#[tokio::test]
async fn schema_violations_name_their_json_path() {
    let bridge = TestBridge::sample().await;
    let cases = [
        (
            "create_cart",
            json!({"meta": meta(), "cart": {"line_items": [{"item": {"id": "item_123"}, "quantity": 0}]}}),
            "$.cart.line_items[0].quantity",
        ),
        (
            "create_cart",
            json!({"meta": meta(), "cart": {"line_items": []}}),
            "$.cart.line_items",
        ),
        (
            "search_catalog",
            json!({"meta": meta(), "catalog": {"query": 42}}),
            "$.catalog.query",
        ),
        (
            "search_catalog",
            json!({"meta": meta(), "catalog": {"query": "x", "pagination": {"limit": 0}}}),
            "$.catalog.pagination.limit",
        ),
        (
            "search_catalog",
            json!({"meta": meta(), "catalog": {"filters": {"price": {"min": -1}}}}),
            "$.catalog.filters.price.min",
        ),
        (
            "lookup_catalog",
            json!({"meta": meta(), "catalog": {"ids": []}}),
            "$.catalog.ids",
        ),
        (
            "get_product",
            json!({"meta": meta(), "catalog": {}}),
            "$.catalog",
        ),
        (
            "update_cart",
            json!({"meta": meta(), "cart": {"line_items": []}}),
            "$",
        ),
    ];
    for (tool, arguments, path) in cases {
        let message = invalid(&bridge, tool, arguments).await;
        assert!(
            message.starts_with(&format!("Invalid params: {path}")),
            "{tool}: {message}"
        );
    }
    still_answers(&bridge).await;
}

#[tokio::test]
async fn search_needs_a_query_or_filters() {
    let bridge = TestBridge::sample().await;
    // CAT-009/CAT-010/CAT-011.
    for catalog in [
        json!({}),
        json!({"query": "   "}),
        json!({"filters": {}}),
        json!({"filters": {"categories": []}}),
    ] {
        let message = invalid(
            &bridge,
            "search_catalog",
            json!({"meta": meta(), "catalog": catalog}),
        )
        .await;
        assert!(message.contains("query"), "{message}");
    }
}

#[tokio::test]
async fn semantic_errors_are_invalid_params_too() {
    let bridge = TestBridge::sample().await;
    let message = invalid(
        &bridge,
        "search_catalog",
        json!({"meta": meta(), "catalog": {"filters": {"price": {"min": 500, "max": 100}}}}),
    )
    .await;
    assert!(
        message.contains("$.catalog.filters.price") || message.contains("catalog.filters.price"),
        "{message}"
    );
    // CAT-034: an option name at most once.
    let message = invalid(
        &bridge,
        "get_product",
        json!({"meta": meta(), "catalog": {"id": "prod_abc123", "selected": [{"name": "Color", "label": "Red"}, {"name": "color", "label": "Blue"}]}}),
    )
    .await;
    assert!(message.contains("$.catalog.selected[1].name"), "{message}");
    let message = invalid(&bridge, "checkout_everything", json!({"meta": meta()})).await;
    assert!(message.contains("checkout_everything"), "{message}");
}

#[tokio::test]
async fn malformed_json_is_a_parse_error_and_the_server_survives() {
    let bridge = TestBridge::sample().await;
    let (status, body) = bridge
        .post_raw("{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": ")
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let reply: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(reply["error"]["code"], -32700);
    assert_eq!(reply["id"], Value::Null);

    let (status, reply) = bridge.rpc(json!({"jsonrpc": "2.0", "id": 7})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(reply["error"]["code"], -32600);
    assert_eq!(reply["id"], 7);

    let (_, reply) = bridge
        .rpc(json!([{"jsonrpc": "2.0", "id": 1, "method": "ping"}]))
        .await;
    assert_eq!(reply["error"]["code"], -32600);

    let (_, reply) = bridge
        .rpc(json!({"jsonrpc": "2.0", "id": 8, "method": "shop/everything"}))
        .await;
    assert_eq!(reply["error"]["code"], -32601);
    assert_eq!(reply["id"], 8);

    let (_, reply) = bridge
        .rpc(
            json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"arguments": {}}}),
        )
        .await;
    assert_eq!(reply["error"]["code"], -32602);
    still_answers(&bridge).await;
}

#[tokio::test]
async fn oversized_bodies_are_refused_before_parsing() {
    let bridge = TestBridge::start("[limits]\nmax_body_bytes = 2048\n").await;
    let big = "x".repeat(4096);
    let (status, reply) = bridge
        .rpc(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "search_catalog", "arguments": {"meta": meta(), "catalog": {"query": big}}}}))
        .await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(reply["error"]["code"], -32600);
    still_answers(&bridge).await;
}

#[tokio::test]
async fn error_messages_do_not_echo_large_inputs() {
    let bridge = TestBridge::sample().await;
    let secretish = "s3cr3t-".repeat(50);
    let (_, error) = bridge
        .call_error(
            "search_catalog",
            json!({"meta": meta(), "catalog": {"query": {"nested": secretish}}}),
        )
        .await;
    assert!(!error.to_string().contains("s3cr3t"), "{error}");
}

#[tokio::test]
async fn every_invalid_params_path_is_spelled_as_json_path() {
    // Schema errors and the brain's own checks name their argument the same way.
    let bridge = TestBridge::sample().await;
    let ids: Vec<String> = (0..51).map(|n| format!("prod_{n}")).collect();
    for (tool, arguments, path) in [
        (
            "search_catalog",
            json!({"meta": meta(), "catalog": {"filters": {"price": {"min": 500, "max": 100}}}}),
            "$.catalog.filters.price",
        ),
        (
            "search_catalog",
            json!({"meta": meta(), "catalog": {"query": "shoe", "pagination": {"cursor": "not-a-cursor"}}}),
            "$.catalog.pagination.cursor",
        ),
        (
            "lookup_catalog",
            json!({"meta": meta(), "catalog": {"ids": ids}}),
            "$.catalog.ids",
        ),
        (
            "search_catalog",
            json!({"meta": meta(), "catalog": {"query": " "}}),
            "$.catalog",
        ),
    ] {
        let (_, error) = bridge.call_error(tool, arguments).await;
        assert_eq!(error["code"], -32602, "{error}");
        assert_eq!(error["data"]["path"], path, "{error}");
        assert!(
            error["message"]
                .as_str()
                .unwrap()
                .contains(&format!(" {path}: ")),
            "{error}"
        );
    }
}
