//! Upstream failures map to protocol errors; the Storefront token never leaves the bridge.

use std::time::Duration;

use crate::support::shopify_standin::*;
use crate::support::{TestBridge, meta, meta_with_key};
use bcp_bridge::startup::{BridgeConfig, ConfigError};
use reqwest::StatusCode;
use serde_json::{Value, json};

fn search() -> Value {
    json!({"meta": meta(), "catalog": {"query": "cat"}})
}

async fn setup() -> (Standin, TestBridge) {
    let standin = Standin::start();
    let bridge = TestBridge::start(&standin.config("")).await;
    (standin, bridge)
}

#[tokio::test]
async fn throttling_maps_to_rate_limited_with_retry_after() {
    let (standin, bridge) = setup().await;
    standin.set_fault(Some(Fault::TooManyRequests(7)));
    let (status, error) = bridge.call_error("search_catalog", search()).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(error["code"], -32000);
    assert_eq!(error["data"]["retry_after"], 7);
    // The bridge now holds calls to this shop until Retry-After passes; each further fault is
    // observed through a fresh bridge.
    let bridge = TestBridge::start(&standin.config("currency = \"USD\"")).await;

    standin.set_fault(Some(Fault::SecurityRejection));
    let (status, error) = bridge.call_error("search_catalog", search()).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(error["code"], -32000);
    assert!(error["data"]["retry_after"].as_u64().unwrap() >= 1);
    let bridge = TestBridge::start(&standin.config("currency = \"USD\"")).await;

    // Shopify's usual throttle: HTTP 200 with a THROTTLED GraphQL error. Reads are retried
    // (tests/shopify_fixes.rs); a throttle that outlasts the retries reaches the agent.
    standin.set_fault(Some(Fault::Throttled));
    let (status, error) = bridge.call_error("search_catalog", search()).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(error["data"]["retry_after"], 1);

    standin.set_fault(None);
    let bridge = TestBridge::start(&standin.config("currency = \"USD\"")).await;
    bridge.call("search_catalog", search()).await;
}

#[tokio::test]
async fn failures_map_to_unavailable() {
    let (standin, bridge) = setup().await;
    for fault in [
        Fault::Status(503),
        Fault::Status(500),
        Fault::Garbage,
        Fault::GraphqlCode("INTERNAL_SERVER_ERROR"),
        Fault::GraphqlCode("ACCESS_DENIED"),
        Fault::GraphqlCode("SHOP_INACTIVE"),
        Fault::Status(402),
    ] {
        standin.set_fault(Some(fault.clone()));
        for (tool, arguments) in [
            ("search_catalog", search()),
            (
                "lookup_catalog",
                json!({"meta": meta(), "catalog": {"ids": ["gid://shopify/Product/1001"]}}),
            ),
            (
                "get_product",
                json!({"meta": meta(), "catalog": {"id": "1001"}}),
            ),
            (
                "get_cart",
                json!({"meta": meta(), "id": "gid://shopify/Cart/abc?key=def"}),
            ),
        ] {
            let (status, error) = bridge.call_error(tool, arguments).await;
            assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{fault:?} {tool}");
            assert_eq!(error["code"], -32000, "{fault:?} {tool}");
            assert!(error["data"]["retry_after"].as_u64().unwrap() >= 1);
            let text = error.to_string();
            assert!(!text.contains("127.0.0.1"), "no upstream URL: {text}");
            assert!(
                !text.contains("Something went wrong"),
                "no upstream body: {text}"
            );
        }
    }
}

#[tokio::test]
async fn slow_upstream_times_out_quickly() {
    let standin = Standin::start();
    // One attempt only: this is about the timeout itself (retries are tests/upstream.rs').
    let bridge = TestBridge::start(&format!(
        "{}\n[upstream]\nmax_retries = 0\n",
        standin.config("")
    ))
    .await;
    standin.set_fault(Some(Fault::Slow(Duration::from_secs(4))));
    let (status, error) = bridge.call_error("search_catalog", search()).await;
    // Had the bridge waited for the stand-in, it would have answered the search: the
    // refusal itself shows it gave up first (no clock read).
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(error["code"], -32000);
    assert_eq!(error["data"]["retry_after"], 5);
}

#[tokio::test]
async fn a_refused_token_is_unavailable_not_leaked() {
    let standin = Standin::start();
    let config = standin
        .config("currency = \"USD\"")
        .replace(TOKEN, "shpat_wrong_token_value");
    let bridge = TestBridge::start(&config).await;
    let (status, reply) = bridge.call_raw("search_catalog", search()).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(reply["error"]["code"], -32000);
    assert!(!reply.to_string().contains("shpat_wrong_token_value"));
}

#[tokio::test]
async fn the_token_appears_in_no_response() {
    let (standin, bridge) = setup().await;
    let mut bodies = Vec::new();
    let mut record = |(_, reply): (StatusCode, Value)| {
        let text = reply.to_string();
        bodies.push(text.clone());
        reply
    };
    record(bridge.call_raw("search_catalog", search()).await);
    record(
        bridge
            .call_raw(
                "lookup_catalog",
                json!({"meta": meta(), "catalog": {"ids": ["gid://shopify/Product/1001", "cat", "x"]}}),
            )
            .await,
    );
    record(
        bridge
            .call_raw(
                "get_product",
                json!({"meta": meta(), "catalog": {"id": "big-tee"}}),
            )
            .await,
    );
    let created = record(
        bridge
            .call_raw(
                "create_cart",
                json!({"meta": meta_with_key("k1"), "cart": {"line_items": [{"item": {"id": format!("gid://shopify/ProductVariant/{MUG_VARIANT}")}, "quantity": 1}]}}),
            )
            .await,
    );
    let id = created["result"]["structuredContent"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    record(
        bridge
            .call_raw("get_cart", json!({"meta": meta(), "id": id}))
            .await,
    );
    record(
        bridge
            .call_raw(
                "update_cart",
                json!({"meta": meta_with_key("k2"), "id": id, "cart": {"line_items": [{"item": {"id": "MUG-001"}, "quantity": 3}]}}),
            )
            .await,
    );
    record(
        bridge
            .call_raw(
                "cancel_cart",
                json!({"meta": meta_with_key("k3"), "id": id}),
            )
            .await,
    );
    standin.set_fault(Some(Fault::Status(503)));
    record(bridge.call_raw("search_catalog", search()).await);
    standin.set_fault(Some(Fault::Garbage));
    record(
        bridge
            .call_raw("get_cart", json!({"meta": meta(), "id": id}))
            .await,
    );
    for body in &bodies {
        assert!(!body.contains(TOKEN), "token leaked: {body}");
    }
    let (_, tools) = bridge
        .rpc(json!({"jsonrpc": "2.0", "id": 99, "method": "tools/list"}))
        .await;
    assert!(!tools.to_string().contains(TOKEN));
    for path in ["/.well-known/bcp", "/healthz", "/readyz"] {
        let text = bridge.get(path).await.text().await.unwrap();
        assert!(!text.contains(TOKEN), "{path}");
    }
}

#[test]
fn config_problems_name_keys_and_hide_the_token() {
    let text = "[store]\nplatform = \"shopify\"\nshop_domain = \"https://Shop.example\"\npublic_token = \"shpat_secret_in_file\"\ntimeout_ms = 0\nendpoint = \"ftp://x\"\n";
    match BridgeConfig::from_toml(text) {
        Err(ConfigError::Invalid(problems)) => {
            let keys: Vec<&str> = problems
                .iter()
                .map(|problem| problem.key.as_str())
                .collect();
            assert!(keys.contains(&"store.shop_domain"), "{keys:?}");
            assert!(keys.contains(&"store.timeout_ms"), "{keys:?}");
            assert!(keys.contains(&"store.endpoint"), "{keys:?}");
            assert!(!format!("{problems:?}").contains("shpat_secret_in_file"));
        }
        Err(other) => panic!("unexpected {other}"),
        Ok(_) => panic!("accepted a bad config"),
    }
    let text = "[store]\nplatform = \"shopify\"\nshop_domain = \"shop.myshopify.com\"\npublic_token = { env = \"BCP_TEST_UNSET_TOKEN_VARIABLE\" }\n";
    assert!(BridgeConfig::from_toml(text).is_err());
}

#[tokio::test]
async fn without_a_configured_currency_an_unreachable_shop_stops_the_start() {
    // Nothing listens on a port we bound and released.
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let text = format!(
        "[store]\nplatform = \"shopify\"\nshop_domain = \"gone.myshopify.com\"\nprivate_token = \"{TOKEN}\"\nendpoint = \"http://127.0.0.1:{port}/api/2026-04/graphql.json\"\ntimeout_ms = 500\n"
    );
    let message = start_fails(&text).await;
    assert!(message.contains("store.currency"), "{message}");
    assert!(!message.contains(TOKEN));
    assert!(
        !message.contains(&port.to_string()),
        "no upstream URL: {message}"
    );
}

/// Issue 40 item 3: the shop read at start-up goes through the store's one client, so the
/// merchant's `[upstream]` (here its read retries) governs it like every later call.
#[tokio::test]
async fn issue_40_the_start_up_shop_read_obeys_upstream_like_every_call() {
    let standin = Standin::start();
    standin.throttle_operation("ShopInfo", 1);
    let message = start_fails(&format!(
        "{}[upstream]\nmax_retries = 0\n",
        standin.config("")
    ))
    .await;
    assert!(message.contains("store.currency"), "{message}");
    assert_eq!(standin.operations(), ["ShopInfo"]);

    standin.reset_counts();
    standin.throttle_operation("ShopInfo", 1);
    let _bridge = TestBridge::start(&standin.config("")).await;
    assert_eq!(standin.operations(), ["ShopInfo", "ShopInfo"]);
}

/// Why the bridge `text` configures does not start (it must not).
async fn start_fails(text: &str) -> String {
    let config = BridgeConfig::from_toml(text).unwrap();
    let bound = "127.0.0.1:0".parse().unwrap();
    let started =
        bcp_bridge::startup::build(&config, bound, tokio_util::sync::CancellationToken::new())
            .await;
    match started {
        Err(error) => error.to_string(),
        Ok(_) => panic!("started without reading the shop's currency"),
    }
}
