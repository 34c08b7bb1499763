//! Upstream requests per tool call against the Shopify and WooCommerce stand-ins, printed as
//! `UPSTREAM <platform> <call> <requests>` lines for bench/run.sh:
//! `cargo test --release --test suite upstream_counts -- --ignored --nocapture`.
//! Ignored in the normal suite: the adapter tests assert the bounds that matter (e.g. a
//! 50-id Shopify lookup costs at most 2 requests); this only measures, with the cache off.
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

    let woo = crate::support::woo_standin::WooStandin::start().await;
    let bridge = TestBridge::start(&(woo.config("") + NO_CACHE)).await;
    // The stand-in's catalog (captured from WooCommerce 7.9) is small: 50 ids mix its
    // products, variations, SKUs and slugs with unknown numeric ids, all in one batch.
    let mut ids: Vec<String> = ["10", "11", "12", "30", "zip-hoodie"]
        .iter()
        .map(|id| (*id).to_owned())
        .collect();
    ids.extend((1000..1045).map(|id| id.to_string()));
    woo.clear_requests();
    bridge.catalog("lookup_catalog", json!({"ids": ids})).await;
    println!(
        "UPSTREAM woocommerce lookup_50_ids {}",
        woo.requests().len()
    );
    woo.clear_requests();
    let product = bridge.catalog("get_product", json!({"id": "11"})).await;
    let variants = product["product"]["variants"].as_array().unwrap().len();
    println!(
        "UPSTREAM woocommerce get_product_{variants}_variants {}",
        woo.requests().len()
    );
    woo.clear_requests();
    bridge
        .catalog("search_catalog", json!({"query": "cup"}))
        .await;
    println!("UPSTREAM woocommerce search_page {}", woo.requests().len());
}
