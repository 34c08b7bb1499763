//! Upstream requests per tool call against the Shopify and WooCommerce stand-ins, printed as
//! `UPSTREAM <platform> <call> <requests>` lines for bench/run.sh:
//! `cargo test --release --test upstream_counts -- --ignored --nocapture`.
//! Ignored in the normal suite: the adapter tests assert the bounds that matter (e.g. a
//! 50-id Shopify lookup costs at most 2 requests); this only measures, with the cache off.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout
)]
#[path = "support/shopify_standin.rs"]
mod shopify_standin;
mod support;
#[path = "support/woo_standin/mod.rs"]
mod woo_standin;

use serde_json::{Value, json};
use support::{TestBridge, meta};

const NO_CACHE: &str = "\n[cache]\nenabled = false\n";

async fn tool(bridge: &TestBridge, name: &str, catalog: Value) -> Value {
    bridge
        .call(name, json!({"meta": meta(), "catalog": catalog}))
        .await
}

#[tokio::test]
#[ignore = "measurement for bench/run.sh"]
async fn upstream_requests_per_tool_call() {
    use shopify_standin::{SOCK_FIRST, Standin, TEE};
    let shop = Standin::start();
    let bridge = TestBridge::start(&(shop.config("currency = \"USD\"") + NO_CACHE)).await;
    let mut ids: Vec<String> = (0..25)
        .map(|index| format!("gid://shopify/Product/{}", SOCK_FIRST + index))
        .collect();
    ids.extend((25..50).map(|index| format!("sock-{index}")));
    shop.reset_counts();
    let found = tool(&bridge, "lookup_catalog", json!({"ids": ids})).await;
    assert_eq!(found["products"].as_array().unwrap().len(), 50);
    println!("UPSTREAM shopify lookup_50_ids {}", shop.requests());
    shop.reset_counts();
    let product = tool(&bridge, "get_product", json!({"id": TEE.to_string()})).await;
    assert_eq!(
        product["product"]["variants"].as_array().unwrap().len(),
        300
    );
    println!(
        "UPSTREAM shopify get_product_300_variants {}",
        shop.requests()
    );
    shop.reset_counts();
    tool(&bridge, "search_catalog", json!({"query": "cat"})).await;
    println!("UPSTREAM shopify search_page {}", shop.requests());

    let woo = woo_standin::WooStandin::start().await;
    let bridge = TestBridge::start(&(woo.config("") + NO_CACHE)).await;
    // The stand-in's catalog (captured from WooCommerce 7.9) is small: 50 ids mix its
    // products, variations, SKUs and slugs with unknown numeric ids, all in one batch.
    let mut ids: Vec<String> = ["10", "11", "12", "30", "zip-hoodie"]
        .iter()
        .map(|id| (*id).to_owned())
        .collect();
    ids.extend((1000..1045).map(|id| id.to_string()));
    woo.clear_requests();
    tool(&bridge, "lookup_catalog", json!({"ids": ids})).await;
    println!(
        "UPSTREAM woocommerce lookup_50_ids {}",
        woo.requests().len()
    );
    woo.clear_requests();
    let product = tool(&bridge, "get_product", json!({"id": "11"})).await;
    let variants = product["product"]["variants"].as_array().unwrap().len();
    println!(
        "UPSTREAM woocommerce get_product_{variants}_variants {}",
        woo.requests().len()
    );
    woo.clear_requests();
    tool(&bridge, "search_catalog", json!({"query": "cup"})).await;
    println!("UPSTREAM woocommerce search_page {}", woo.requests().len());
}
