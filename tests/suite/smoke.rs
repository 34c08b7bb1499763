use crate::support::{TestBridge, meta};
use serde_json::json;

#[tokio::test]
async fn bare_tools_call_answers_plain_json() {
    let bridge = TestBridge::sample().await;
    let result = bridge
        .call(
            "search_catalog",
            json!({"meta": meta(), "catalog": {"query": "shoes"}}),
        )
        .await;
    assert_eq!(result["ucp"]["version"], "2026-07-28");
    assert!(!result["products"].as_array().unwrap().is_empty());
}
