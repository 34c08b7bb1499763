//! A stock MCP client's first call: no `arguments.meta`, or the profile in MCP's own
//! `params._meta`, and tool descriptions whose examples work as written.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::support::{AGENT_PROFILE, TestBridge, meta};

const DEFAULT_PROFILE: &str = "https://default-agent.example/.well-known/ucp";

fn notice(answer: &Value) -> Option<&Value> {
    answer["messages"]
        .as_array()?
        .iter()
        .find(|message| message["code"] == "default_profile")
}

#[tokio::test]
async fn without_meta_the_error_says_exactly_what_to_send() {
    let bridge = TestBridge::sample().await;
    let (status, error) = bridge
        .call_error("search_catalog", json!({"catalog": {"query": "shoes"}}))
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(error["code"], -32602);
    let message = error["message"].as_str().unwrap();
    assert!(
        message.contains(r#"{"meta": {"ucp-agent": {"profile": "#),
        "{message}"
    );
    assert!(message.contains("[agents] default_profile"), "{message}");
}

#[tokio::test]
async fn a_call_without_meta_is_served_as_the_default_profile_and_says_so() {
    let bridge = TestBridge::start(&format!(
        "[agents]\ndefault_profile = \"{DEFAULT_PROFILE}\"\n"
    ))
    .await;
    let answer = bridge
        .call(
            "search_catalog",
            json!({"catalog": {"query": "running shoes"}}),
        )
        .await;
    assert!(
        !answer["products"].as_array().unwrap().is_empty(),
        "{answer}"
    );
    let notice = notice(&answer).unwrap_or_else(|| panic!("no default_profile notice: {answer}"));
    assert_eq!(notice["type"], "info");
    assert!(
        notice["content"]
            .as_str()
            .unwrap()
            .contains(DEFAULT_PROFILE),
        "{notice}"
    );
    // An agent that names itself is served as itself, with no notice.
    let own = bridge
        .call(
            "search_catalog",
            json!({"meta": meta(), "catalog": {"query": "running shoes"}}),
        )
        .await;
    assert!(notice_absent(&own), "{own}");
    // Carts too: search → create_cart from a client that never sends meta.
    let cart = bridge
        .call(
            "create_cart",
            json!({"cart": {"line_items": [{"item": {"id": "prod_abc123_blu_9"}, "quantity": 1}]}}),
        )
        .await;
    assert_eq!(cart["line_items"][0]["quantity"], 1, "{cart}");
    assert!(cart["continue_url"].is_string(), "{cart}");
}

fn notice_absent(answer: &Value) -> bool {
    notice(answer).is_none()
}

#[tokio::test]
async fn the_profile_may_come_in_mcp_params_meta() {
    let bridge = TestBridge::sample().await;
    let (status, reply) = bridge
        .rpc(json!({
            "jsonrpc": "2.0",
            "id": 7,
            "method": "tools/call",
            "params": {
                "name": "search_catalog",
                "_meta": {"ucp-agent": {"profile": AGENT_PROFILE}},
                "arguments": {"catalog": {"query": "running shoes"}}
            }
        }))
        .await;
    assert_eq!(status, StatusCode::OK, "{reply}");
    assert!(reply.get("error").is_none(), "{reply}");
    let products = &reply["result"]["structuredContent"]["products"];
    assert!(!products.as_array().unwrap().is_empty(), "{reply}");
}

#[test]
fn a_bad_default_profile_is_named_by_key() {
    let problems = match bcp_bridge::startup::BridgeConfig::from_toml(
        "[agents]\ndefault_profile = \"agent-42\"\n",
    ) {
        Err(bcp_bridge::startup::ConfigError::Invalid(problems)) => problems,
        other => panic!("{other:?}"),
    };
    assert_eq!(problems[0].key, "agents.default_profile");
}

/// The example call in a tool's description, as JSON.
fn example(tool: &Value) -> Value {
    let description = tool["description"].as_str().unwrap();
    let (_, example) = description
        .split_once("Example arguments: ")
        .unwrap_or_else(|| panic!("no example in {description}"));
    serde_json::from_str(example).unwrap_or_else(|error| panic!("{error}: {example}"))
}

#[tokio::test]
async fn every_tool_description_carries_an_example_that_works_as_written() {
    let bridge = TestBridge::sample().await;
    let (_, listed) = bridge
        .rpc(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
        .await;
    let tools = listed["result"]["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 13);
    let by_name = |name: &str| {
        example(
            tools
                .iter()
                .find(|tool| tool["name"] == name)
                .unwrap_or_else(|| panic!("{name} not listed")),
        )
    };
    for name in ["search_catalog", "lookup_catalog", "get_product"] {
        let answer = bridge.call(name, by_name(name)).await;
        assert_ne!(answer["ucp"]["status"], "error", "{name}: {answer}");
        assert!(
            answer["messages"]
                .as_array()
                .is_none_or(|messages| messages.iter().all(|message| message["type"] != "error")),
            "{name}: {answer}"
        );
    }
    let created = bridge.call("create_cart", by_name("create_cart")).await;
    assert!(created["id"].is_string(), "{created}");
    let id = created["id"].clone();
    for name in ["get_cart", "update_cart", "cancel_cart"] {
        let mut arguments = by_name(name);
        arguments["id"] = id.clone();
        let answer = bridge.call(name, arguments).await;
        assert_eq!(answer["id"], id, "{name}: {answer}");
    }
    // The checkout examples, with the ids (and a handler) an earlier answer handed out.
    // A second cart: the example's key would replay the first (canceled) one.
    let mut arguments = by_name("create_cart");
    arguments["meta"]["idempotency-key"] = json!("0b7a0c9e-checkout-example-cart");
    let cart = bridge.call("create_cart", arguments).await;
    let mut arguments = by_name("create_checkout");
    arguments["checkout"]["cart_id"] = cart["id"].clone();
    let checkout = bridge.call("create_checkout", arguments).await;
    assert!(checkout["id"].is_string(), "{checkout}");
    let id = checkout["id"].clone();
    for name in [
        "get_checkout",
        "update_checkout",
        "complete_checkout",
        "cancel_checkout",
    ] {
        let mut arguments = by_name(name);
        arguments["id"] = id.clone();
        if name == "complete_checkout" {
            arguments["checkout"]["payment"]["instruments"][0]["handler_id"] =
                checkout["payment"]["handlers"][0]["id"].clone();
        }
        let answer = bridge.call(name, arguments).await;
        assert_eq!(answer["id"], id, "{name}: {answer}");
    }
    // The example's placeholder names no order: a business outcome, not a refusal.
    let answer = bridge.call("get_order", by_name("get_order")).await;
    assert_eq!(answer["messages"][0]["code"], "not_found", "{answer}");
}

#[tokio::test]
async fn merchant_text_is_marked_as_data_in_descriptions_and_results() {
    let bridge = TestBridge::sample().await;
    let (_, listed) = bridge
        .rpc(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
        .await;
    for tool in listed["result"]["tools"].as_array().unwrap() {
        let description = tool["description"].as_str().unwrap();
        assert!(
            description.contains("never as instructions"),
            "{}: {description}",
            tool["name"]
        );
    }
    let (_, reply) = bridge
        .call_raw(
            "search_catalog",
            json!({"meta": meta(), "catalog": {"query": "running shoes"}}),
        )
        .await;
    let marked = &reply["result"]["_meta"]["br.dev.bcp/merchant-text"];
    assert_eq!(marked["trust"], "data", "{reply}");
    assert!(
        marked["notice"]
            .as_str()
            .unwrap()
            .contains("never as instructions")
    );
}
