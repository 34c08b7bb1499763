//! Hostile identifiers and upstream faults, through the bridge to the Store API stand-in.

use std::time::Duration;

use crate::support::woo_standin::{Fault, WooStandin};
use crate::support::{TestBridge, meta, meta_with_key};
use bcp_bridge::startup::BridgeConfig;
use serde_json::json;

const HOSTILE: &[&str] = &[
    "../wp-admin",
    "..%2F..%2Fwp-json",
    "10/../../users",
    "10?consumer_key=x",
    "10#frag",
    "%2F",
    "10%2F11",
    "10&per_page=100",
    "10,11",
    "１０",
    "10 ",
    "../",
    "?",
    "#",
    "a\r\nX-Injected: 1",
    "https://evil.example/products",
];

#[tokio::test]
async fn hostile_ids_never_reach_the_upstream_path_or_query() {
    let woo = WooStandin::start().await;
    let bridge = TestBridge::start(&woo.config("")).await;
    for id in HOSTILE {
        let lookup = bridge
            .call(
                "lookup_catalog",
                json!({"meta": meta(), "catalog": {"ids": [id]}}),
            )
            .await;
        assert_eq!(lookup["products"], json!([]), "{id}");
        let product = bridge
            .call(
                "get_product",
                json!({"meta": meta(), "catalog": {"id": id}}),
            )
            .await;
        assert_eq!(product["messages"][0]["code"], "not_found", "{id}");
        for tool in ["get_cart", "cancel_cart"] {
            let cart = bridge
                .call(
                    tool,
                    json!({"meta": meta_with_key(&format!("{tool} {id}")), "id": id}),
                )
                .await;
            assert_eq!(cart["messages"][0]["code"], "not_found", "{tool} {id}");
        }
        let created = bridge
            .call(
                "create_cart",
                json!({"meta": meta_with_key(&format!("create {id}")), "cart": {"line_items": [{"item": {"id": id}, "quantity": 1}]}}),
            )
            .await;
        assert_eq!(created["ucp"]["status"], "error", "{id}");
    }
    // Nothing unparseable was looked up at all: the store only ever saw fixed routes.
    for line in woo.requests() {
        let path = line.split(['?', ' ']).nth(1).unwrap();
        assert!(
            [
                "/wp-json/wc/store/v1/products",
                "/wp-json/wc/store/v1/products/categories",
                "/wp-json/wc/store/v1/cart"
            ]
            .contains(&path),
            "{line}"
        );
        for bad in [
            "..",
            "%2F",
            "%2f",
            "#",
            "wp-admin",
            "users",
            "consumer_key",
            "evil",
            "%0D",
            "%0A",
        ] {
            assert!(!line.contains(bad), "{bad} reached the store: {line}");
        }
    }
}

#[tokio::test]
async fn upstream_faults_map_to_retryable_errors() {
    let woo = WooStandin::start().await;
    let bridge = TestBridge::start(&woo.config("")).await;
    let search = json!({"meta": meta(), "catalog": {"query": "mug"}});

    woo.set_fault(Fault::RateLimit { retry_after: 7 });
    let (status, error) = bridge.call_error("search_catalog", search.clone()).await;
    assert_eq!(error["code"], -32000, "{error}");
    assert_eq!(status.as_u16(), 429);
    assert_eq!(error["data"]["retry_after"], 7);
    // That bridge now honours Retry-After and holds every call to this store for 7 s; the
    // other faults are observed through a fresh one.
    let (status, held) = bridge.call_error("search_catalog", search.clone()).await;
    assert_eq!((status.as_u16(), &held["code"]), (429, &json!(-32000)));
    let bridge = TestBridge::start(&woo.config("")).await;

    woo.set_fault(Fault::ServerError);
    let (status, error) = bridge
        .call_error(
            "lookup_catalog",
            json!({"meta": meta(), "catalog": {"ids": ["10"]}}),
        )
        .await;
    assert_eq!(error["code"], -32000, "{error}");
    assert_eq!(status.as_u16(), 503);
    assert!(error["data"]["retry_after"].as_u64().is_some());

    woo.set_fault(Fault::Garbage);
    let (_, error) = bridge
        .call_error(
            "get_product",
            json!({"meta": meta(), "catalog": {"id": "10"}}),
        )
        .await;
    assert_eq!(error["code"], -32000, "{error}");
    assert!(
        !error.to_string().contains("127.0.0.1"),
        "no upstream URL leaks: {error}"
    );

    // Slower than `timeout_ms` (400 ms in the test config): answered quickly, not hung.
    woo.set_fault(Fault::Slow(Duration::from_secs(3)));
    let (_, error) = bridge
        .call_error(
            "create_cart",
            json!({"meta": meta_with_key("slow"), "cart": {"line_items": [{"item": {"id": "10"}, "quantity": 1}]}}),
        )
        .await;
    // Had it waited for the stand-in, the cart would have been made: the refusal shows the
    // bridge gave up first (no clock read).
    assert_eq!(error["code"], -32000, "{error}");
    assert!(error["data"]["retry_after"].as_u64().is_some());

    woo.set_fault(Fault::None);
    let ok = bridge.call("search_catalog", search).await;
    assert_eq!(ok["products"][0]["id"], "10");
}

#[tokio::test]
async fn configuration_is_checked_with_key_names() {
    let problems = |text: &str| match BridgeConfig::from_toml(text) {
        Err(bcp_bridge::startup::ConfigError::Invalid(problems)) => {
            problems.into_iter().map(|p| p.key).collect::<Vec<_>>()
        }
        Ok(_) => Vec::new(),
        Err(other) => panic!("{other}"),
    };
    assert_eq!(
        problems("[store]\nplatform='woocommerce'\nbase_url='http://shop.example'\ncurrency='USD'"),
        ["store.base_url"]
    );
    assert!(problems("[store]\nplatform='woocommerce'\nbase_url='http://shop.example'\ncurrency='USD'\nallow_insecure_http=true").is_empty());
    assert!(problems("[store]\nplatform='woocommerce'\nbase_url='https://shop.example'\ncurrency='BRL'\ncheckout='link'").is_empty());
    assert_eq!(
        problems(
            "[store]\nplatform='woocommerce'\nbase_url='https://user:pw@shop.example'\ncurrency='USD'"
        ),
        ["store.base_url"]
    );
    // The example configuration shipped in the repository is valid.
    let example = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/config/woocommerce.example.toml"
    ))
    .unwrap();
    assert!(problems(&example).is_empty());
}

#[tokio::test]
async fn discovery_and_readiness_reflect_the_store() {
    let woo = WooStandin::start().await;
    let bridge = TestBridge::start(&woo.config("")).await;
    let ready = bridge.get("/readyz").await;
    assert!(ready.status().is_success());
    woo.set_fault(Fault::ServerError);
    let not_ready = bridge.get("/readyz").await;
    assert!(!not_ready.status().is_success());
}

#[tokio::test]
async fn cart_write_faults_surface_and_leave_the_cart_readable() {
    let woo = WooStandin::start().await;
    let bridge = TestBridge::start(&woo.config("")).await;
    let created = bridge
        .call(
            "create_cart",
            json!({"meta": meta_with_key("w1"), "cart": {"line_items": [{"item": {"id": "10"}, "quantity": 1}]}}),
        )
        .await;
    let id = created["id"].as_str().unwrap();

    // Store API rate limiting applies to POST requests only, as WooCommerce's does.
    woo.set_write_fault(Fault::RateLimit { retry_after: 11 });
    let (status, error) = bridge
        .call_error(
            "update_cart",
            json!({"meta": meta_with_key("w2"), "id": id, "cart": {"line_items": [{"item": {"id": "10"}, "quantity": 2}]}}),
        )
        .await;
    assert_eq!(status.as_u16(), 429);
    assert_eq!(error["code"], -32000);
    assert_eq!(error["data"]["retry_after"], 11);
    // This bridge now holds calls to the store for 11 s (Retry-After); the cart lives in the
    // store, so a second replica carries on with it.
    let bridge = TestBridge::start(&woo.config("")).await;

    woo.set_write_fault(Fault::ServerError);
    let (_, error) = bridge
        .call_error(
            "cancel_cart",
            json!({"meta": meta_with_key("w3"), "id": id}),
        )
        .await;
    assert_eq!(error["code"], -32000);

    // Reads still work and the cart is unchanged.
    let fetched = bridge
        .call("get_cart", json!({"meta": meta(), "id": id}))
        .await;
    assert_eq!(fetched["line_items"][0]["quantity"], 1);
    woo.set_fault(Fault::None);
    let cancelled = bridge
        .call(
            "cancel_cart",
            json!({"meta": meta_with_key("w4"), "id": id}),
        )
        .await;
    assert_eq!(cancelled["line_items"][0]["quantity"], 1);
}
