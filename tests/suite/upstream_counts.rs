//! Upstream requests per tool call against the Shopify and WooCommerce stand-ins, printed as
//! `UPSTREAM <platform> <call> <requests>` lines for bench/run.sh:
//! `cargo test --release --test suite upstream_counts -- --ignored --nocapture`.
//! Ignored in the normal suite: the adapter tests assert the bounds that matter (e.g. a
//! 50-id Shopify lookup costs at most 2 requests, `woo_round_trips` every WooCommerce
//! floor); this only measures, with the cache off, each WooCommerce tool cold and warm.
#![allow(clippy::print_stdout)]

use crate::support::TestBridge;
use serde_json::json;

const NO_CACHE: &str = "\n[cache]\nenabled = false\n";

#[tokio::test]
#[ignore = "measurement for bench/run.sh"]
async fn upstream_requests_per_tool_call() {
    use crate::support::shopify_standin::{SOCK_FIRST, Standin, TEE};
    let shop = Standin::start();
    let bridge = TestBridge::start(&(shop.config("currency = \"USD\"") + NO_CACHE)).await;
    let mut ids: Vec<String> = (0..25)
        .map(|index| format!("gid://shopify/Product/{}", SOCK_FIRST + index))
        .collect();
    ids.extend((25..50).map(|index| format!("sock-{index}")));
    shop.reset_counts();
    let found = bridge.catalog("lookup_catalog", json!({"ids": ids})).await;
    assert_eq!(found["products"].as_array().unwrap().len(), 50);
    println!("UPSTREAM shopify lookup_50_ids {}", shop.requests());
    shop.reset_counts();
    let product = bridge
        .catalog("get_product", json!({"id": TEE.to_string()}))
        .await;
    assert_eq!(
        product["product"]["variants"].as_array().unwrap().len(),
        300
    );
    println!(
        "UPSTREAM shopify get_product_300_variants {}",
        shop.requests()
    );
    shop.reset_counts();
    bridge
        .catalog("search_catalog", json!({"query": "cat"}))
        .await;
    println!("UPSTREAM shopify search_page {}", shop.requests());

    woocommerce().await;
}

/// Each WooCommerce tool cold (fresh bridge: no category tree, no guest Nonce yet) and warm
/// (the same call again). Carts: no catalog read before the write (the store judges lines).
async fn woocommerce() {
    let woo = crate::support::woo_standin::WooStandin::start().await;
    let config = woo.config("") + NO_CACHE;
    let print = |call: &str, requests: &[String]| {
        println!("UPSTREAM woocommerce {call} {}", requests.len());
    };
    let measure = |woo: &crate::support::woo_standin::WooStandin| {
        let requests = woo.requests();
        woo.clear_requests();
        requests
    };

    // The stand-in's catalog (captured from WooCommerce 7.9) is small: 50 ids mix its
    // products, variations, SKUs and slugs with unknown numeric ids, all in one batch.
    let mut ids: Vec<String> = ["10", "11", "16", "30", "TEE-S-BLUE", "MUG-1", "zip-hoodie"]
        .iter()
        .map(|id| (*id).to_owned())
        .collect();
    ids.extend((1000..1043).map(|id| id.to_string()));
    let catalog_calls = [
        ("get_product_variable", "get_product", json!({"id": "11"})),
        (
            "get_product_variation_id",
            "get_product",
            json!({"id": "21"}),
        ),
        ("get_product_sku", "get_product", json!({"id": "HOOD-GRN"})),
        ("lookup_50_ids", "lookup_catalog", json!({"ids": ids})),
        (
            "search_page_simple_hits",
            "search_catalog",
            json!({"query": "cup"}),
        ),
        (
            "search_page_variable_hits",
            "search_catalog",
            json!({"query": "e"}),
        ),
    ];
    for (label, name, catalog) in catalog_calls {
        let bridge = TestBridge::start(&config).await;
        woo.clear_requests();
        bridge.catalog(name, catalog.clone()).await;
        print(&format!("{label}_cold"), &measure(&woo));
        bridge.catalog(name, catalog).await;
        print(&format!("{label}_warm"), &measure(&woo));
    }

    let lines = json!([
        {"item": {"id": "10"}, "quantity": 1},
        {"item": {"id": "21"}, "quantity": 2},
        {"item": {"id": "30"}, "quantity": 1}
    ]);
    let bridge = TestBridge::start(&config).await;
    woo.clear_requests();
    let mut ids = Vec::new();
    for round in ["cold", "warm"] {
        let created = bridge
            .call(
                "create_cart",
                json!({"meta": crate::support::meta_with_key(&format!("create-{round}")), "cart": {"line_items": lines}}),
            )
            .await;
        print(&format!("create_cart_3_lines_{round}"), &measure(&woo));
        ids.push(created["id"].as_str().unwrap().to_owned());
    }
    // A SKU line costs one lookup round before the write.
    bridge
        .call(
            "create_cart",
            json!({"meta": crate::support::meta_with_key("create-sku"), "cart": {"line_items": [{"item": {"id": "MUG-1"}, "quantity": 1}]}}),
        )
        .await;
    print("create_cart_sku_line_warm", &measure(&woo));
    for (round, id) in ["cold", "warm"].iter().zip(&ids) {
        bridge
            .call(
                "get_cart",
                json!({"meta": crate::support::meta(), "id": id}),
            )
            .await;
        print(&format!("get_cart_{round}"), &measure(&woo));
        let replacement =
            json!([{"item": {"id": "31"}, "quantity": 2}, {"item": {"id": "22"}, "quantity": 1}]);
        bridge
            .call(
                "update_cart",
                json!({"meta": crate::support::meta_with_key(&format!("update-{round}")), "id": id, "cart": {"line_items": replacement}}),
            )
            .await;
        print(&format!("update_cart_2_lines_{round}"), &measure(&woo));
        bridge
            .call(
                "cancel_cart",
                json!({"meta": crate::support::meta_with_key(&format!("cancel-{round}")), "id": id}),
            )
            .await;
        print(&format!("cancel_cart_{round}"), &measure(&woo));
    }
}
