#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Catalog tools end to end: agent → bridge (real HTTP) → Shopify adapter → Storefront stand-in.

mod support;
#[path = "support/shopify_standin.rs"]
mod shopify_standin;

use serde_json::json;
use shopify_standin::*;
use support::{TestBridge, meta};

#[tokio::test]
async fn search_returns_normalised_products() {
    let standin = Standin::start();
    let bridge = TestBridge::start(&standin.config("")).await;
    let result = bridge
        .call("search_catalog", json!({"meta": meta(), "catalog": {"query": "cat"}}))
        .await;
    eprintln!("{result:#}");
    assert_eq!(result["products"][0]["id"], "gid://shopify/Product/7857989384");
}
