//! search_catalog and lookup_catalog against the embedded sample store.

use std::collections::HashSet;

use crate::support::values::ids;
use crate::support::{TestBridge, meta};
use serde_json::{Value, json};

async fn search(bridge: &TestBridge, catalog: Value) -> Value {
    bridge.catalog("search_catalog", catalog).await
}

async fn lookup(bridge: &TestBridge, catalog: Value) -> Value {
    bridge.catalog("lookup_catalog", catalog).await
}

#[tokio::test]
async fn pagination_walks_every_page_without_duplicates_or_gaps() {
    let bridge = TestBridge::sample().await;
    // Browse (filters only) over everything priced up to R$ 100 000.
    let browse = json!({"filters": {"price": {"min": 0, "max": 10_000_000}}});
    // CAT-001/CAT-002 (checked on every page by `walk`).
    let (all_at_once, _) = bridge.walk(browse.clone(), 50).await;
    assert!(all_at_once.len() >= 30, "{}", all_at_once.len());
    for limit in [1, 3, 7, 10] {
        let (paged, totals) = bridge.walk(browse.clone(), limit).await;
        assert_eq!(
            paged, all_at_once,
            "limit {limit}: same order, no gap, no duplicate"
        );
        let unique: HashSet<_> = paged.iter().collect();
        assert_eq!(unique.len(), paged.len());
        assert!(totals.iter().all(|total| *total as usize == paged.len()));
    }
}

#[tokio::test]
async fn default_limit_is_ten_and_large_limits_are_clamped() {
    let bridge = TestBridge::sample().await;
    let browse = json!({"filters": {"categories": ["Footwear", "Clothing", "Home", "Electronics", "Beauty", "Books", "Toys", "Food & Drinks", "Bags", "Gift Cards"]}});
    // MCP-006 / CAT-005: default page size 10.
    let page = search(&bridge, browse.clone()).await;
    assert_eq!(page["products"].as_array().unwrap().len(), 10);
    // CAT-007: larger limits are clamped silently to the configured maximum (50).
    let mut big = browse.clone();
    big["pagination"] = json!({"limit": 10_000});
    let page = search(&bridge, big).await;
    assert!(page["products"].as_array().unwrap().len() <= 50);
    assert!(page.get("messages").is_none());
}

#[tokio::test]
async fn configured_maximum_page_size_applies() {
    let bridge = TestBridge::start("[limits]\nmax_page_size = 4\ndefault_page_size = 2\n").await;
    let page = search(&bridge, json!({"query": "a", "pagination": {"limit": 100}})).await;
    assert!(page["products"].as_array().unwrap().len() <= 4);
    let page = search(&bridge, json!({"filters": {"categories": ["Clothing"]}})).await;
    assert_eq!(page["products"].as_array().unwrap().len(), 2);
}

#[tokio::test]
async fn cursor_from_another_query_is_refused() {
    let bridge = TestBridge::sample().await;
    let page = search(
        &bridge,
        json!({"filters": {"categories": ["Clothing"]}, "pagination": {"limit": 2}}),
    )
    .await;
    let cursor = page["pagination"]["cursor"].as_str().unwrap().to_owned();
    let (_, error) = bridge
        .call_error(
            "search_catalog",
            json!({"meta": meta(), "catalog": {"filters": {"categories": ["Home"]}, "pagination": {"cursor": cursor}}}),
        )
        .await;
    assert_eq!(error["code"], -32602);
    assert!(
        error["message"].as_str().unwrap().contains("cursor"),
        "{error}"
    );
    let (_, error) = bridge
        .call_error(
            "search_catalog",
            json!({"meta": meta(), "catalog": {"query": "shoes", "pagination": {"cursor": "eyJwYWdlIjoxfQ=="}}}),
        )
        .await;
    assert_eq!(error["code"], -32602);
}

#[tokio::test]
async fn filters_combine_with_and_and_categories_with_or() {
    let bridge = TestBridge::sample().await;
    let page = search(
        &bridge,
        json!({"filters": {"categories": ["Footwear > Running", "Footwear > Trail"]}, "pagination": {"limit": 50}}),
    )
    .await;
    let found = ids(&page["products"]);
    assert!(found.contains(&"prod_abc123".to_owned()));
    assert!(found.contains(&"prod_def456".to_owned()));
    for product in page["products"].as_array().unwrap() {
        let merchant = product["categories"]
            .as_array()
            .unwrap()
            .iter()
            .find(|category| category["taxonomy"] == "merchant")
            .unwrap();
        let path = merchant["value"].as_str().unwrap();
        assert!(
            path == "Footwear > Running" || path == "Footwear > Trail",
            "{path}"
        );
    }
    // Price AND category: every returned product has its shown variant inside the range.
    let page = search(
        &bridge,
        json!({"filters": {"categories": ["Clothing"], "price": {"min": 2000, "max": 5000}}, "pagination": {"limit": 50}}),
    )
    .await;
    assert!(!page["products"].as_array().unwrap().is_empty());
    for product in page["products"].as_array().unwrap() {
        let price = product["variants"][0]["price"]["amount"].as_i64().unwrap();
        assert!((2000..=5000).contains(&price), "{price}");
    }
}

#[tokio::test]
async fn query_matches_words_and_finds_seed_product() {
    let bridge = TestBridge::sample().await;
    let page = search(&bridge, json!({"query": "blue running shoes"})).await;
    let found = ids(&page["products"]);
    assert!(found.contains(&"prod_abc123".to_owned()), "{found:?}");
    // Every query word must match somewhere: nothing unrelated comes back.
    assert!(found.len() <= 3, "{found:?}");
    // Accents and case do not matter.
    let page = search(&bridge, json!({"query": "CAMISETA basica algodao"})).await;
    assert!(!page["products"].as_array().unwrap().is_empty());
}

#[tokio::test]
async fn no_match_is_an_empty_list_without_messages() {
    let bridge = TestBridge::sample().await;
    // CAT-012: empty search returns products: [] and no messages.
    let page = search(&bridge, json!({"query": "zeppelin submarine"})).await;
    assert_eq!(page["products"], json!([]));
    assert!(page.get("messages").is_none());
    assert_eq!(page["pagination"]["has_next_page"], false);
}

#[tokio::test]
async fn price_filter_in_another_currency_is_ignored_with_a_warning() {
    let bridge = TestBridge::sample().await;
    let page = search(
        &bridge,
        json!({"query": "shoes", "context": {"currency": "USD"}, "filters": {"price": {"max": 1}}}),
    )
    .await;
    assert!(!page["products"].as_array().unwrap().is_empty());
    assert_eq!(page["messages"][0]["type"], "warning");
    assert_eq!(page["messages"][0]["code"], "filter_ignored");
}

#[tokio::test]
async fn lookup_deduplicates_and_correlates_inputs() {
    let bridge = TestBridge::sample().await;
    // CAT-015, CAT-016, CAT-018: duplicates collapse, a product appears once, every variant
    // says which inputs it answers.
    let response = lookup(
        &bridge,
        json!({"ids": ["prod_abc123", "var_xyz789", "prod_abc123", "prod_abc123_red_12", "BRP-BLU-10", "prod_notfound1"]}),
    )
    .await;
    let products = response["products"].as_array().unwrap();
    assert_eq!(ids(&response["products"]), ["prod_abc123", "prod_def456"]);
    let runner = &products[0];
    let variants = runner["variants"].as_array().unwrap();
    // The featured variant answers both the product id and its SKU.
    assert_eq!(variants[0]["id"], "prod_abc123_blu_10");
    assert_eq!(
        variants[0]["inputs"],
        json!([{"id": "prod_abc123", "match": "featured"}, {"id": "BRP-BLU-10", "match": "exact"}])
    );
    assert_eq!(variants[1]["id"], "prod_abc123_red_12");
    assert_eq!(
        variants[1]["inputs"],
        json!([{"id": "prod_abc123_red_12", "match": "exact"}])
    );
    // CAT-017: no variant without inputs.
    assert_eq!(variants.len(), 2);
    let trail = &products[1];
    assert_eq!(trail["variants"][0]["id"], "var_xyz789");
    assert_eq!(
        trail["variants"][0]["inputs"],
        json!([{"id": "var_xyz789", "match": "exact"}])
    );
    // CAT-021: unknown ids → info not_found, once each.
    assert_eq!(
        response["messages"],
        json!([{"type": "info", "code": "not_found", "content": "prod_notfound1"}])
    );
    // Price range still covers every variant of the product.
    assert_eq!(runner["price_range"]["min"]["amount"], 12000);
    assert_eq!(runner["price_range"]["max"]["amount"], 15000);
}

#[tokio::test]
async fn lookup_of_only_unknown_ids_is_empty_with_messages() {
    let bridge = TestBridge::sample().await;
    let response = lookup(
        &bridge,
        json!({"ids": ["prod_invalid", "../../etc/passwd", "a?b=c"]}),
    )
    .await;
    assert_eq!(response["products"], json!([]));
    assert_eq!(response["messages"].as_array().unwrap().len(), 3);
    assert!(response.get("ucp").unwrap().get("status").is_none());
}

#[tokio::test]
async fn lookup_by_handle_features_a_variant() {
    let bridge = TestBridge::sample().await;
    let response = lookup(&bridge, json!({"ids": ["blue-runner-pro"]})).await;
    assert_eq!(response["products"][0]["id"], "prod_abc123");
    assert_eq!(
        response["products"][0]["variants"][0]["inputs"][0]["match"],
        "featured"
    );
}

#[tokio::test]
async fn lookup_over_the_batch_limit_is_invalid_params() {
    let bridge = TestBridge::start("[limits]\nmax_lookup_batch = 3\n").await;
    // CAT-027: requests over the batch limit are rejected with -32602.
    let (_, error) = bridge
        .call_error(
            "lookup_catalog",
            json!({"meta": meta(), "catalog": {"ids": ["a", "b", "c", "d"]}}),
        )
        .await;
    assert_eq!(error["code"], -32602);
    assert!(
        error["message"].as_str().unwrap().contains("$.catalog.ids"),
        "{error}"
    );
    // The limit itself is fine.
    let response = lookup(&bridge, json!({"ids": ["item_123", "item_456", "x"]})).await;
    assert_eq!(response["products"].as_array().unwrap().len(), 2);
}
