//! Catalog tools end to end: agent → bridge (real HTTP) → Shopify adapter → Storefront stand-in.

use crate::support::shopify_standin::*;
use crate::support::values::ids;
use crate::support::{TestBridge, meta};
use serde_json::json;

async fn setup() -> (Standin, TestBridge) {
    let standin = Standin::start();
    let bridge = TestBridge::start(&standin.config("")).await;
    // The bridge read the shop's currency while starting.
    assert_eq!(standin.operations(), ["ShopInfo"]);
    standin.reset_counts();
    (standin, bridge)
}

#[tokio::test]
async fn search_normalises_shopify_products() {
    let (standin, bridge) = setup().await;
    let result = bridge
        .call(
            "search_catalog",
            json!({"meta": meta(), "catalog": {"query": "cat"}}),
        )
        .await;
    let product = &result["products"][0];
    assert_eq!(product["id"], "gid://shopify/Product/7857989384");
    assert_eq!(product["handle"], "cat");
    assert_eq!(
        product["url"],
        "https://sendmecats.myshopify.com/products/cat"
    );
    // Money strings ("0.0", "10.3") become exact minor units. // TOT-021
    assert_eq!(
        product["price_range"]["min"],
        json!({"amount": 0, "currency": "USD"})
    );
    assert_eq!(
        product["price_range"]["max"],
        json!({"amount": 1030, "currency": "USD"})
    );
    let categories: Vec<(String, String)> = product["categories"]
        .as_array()
        .unwrap()
        .iter()
        .map(|category| {
            (
                category["taxonomy"].as_str().unwrap().to_owned(),
                category["value"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    for expected in [
        ("merchant", "Pets"),
        ("merchant", "Animals"),
        ("shopify", "ap-2"),
        ("google_product_category", "2"),
    ] {
        assert!(
            categories.contains(&(expected.0.to_owned(), expected.1.to_owned())),
            "{categories:?}"
        );
    }
    assert_eq!(product["media"][0]["alt_text"], "fettucine");
    assert_eq!(product["options"][0]["name"], "Fur");
    // One featured variant per search hit, purchasable.
    assert_eq!(product["variants"].as_array().unwrap().len(), 1);
    assert_eq!(product["variants"][0]["availability"]["available"], true);
    assert_eq!(result["pagination"]["total_count"], 1);
    assert_eq!(standin.operations(), ["SearchProducts"]);
}

#[tokio::test]
async fn single_variant_products_hide_the_default_title_option() {
    let (_standin, bridge) = setup().await;
    let result = bridge
        .call(
            "search_catalog",
            json!({"meta": meta(), "catalog": {"query": "mug"}}),
        )
        .await;
    let product = &result["products"][0];
    assert_eq!(product["title"], "Ceramic Mug");
    assert!(
        product
            .get("options")
            .is_none_or(|options| options.as_array().unwrap().is_empty())
    );
    let variant = &product["variants"][0];
    assert_eq!(variant["title"], "Ceramic Mug");
    assert_eq!(variant["sku"], "MUG-001");
    assert_eq!(variant["price"]["amount"], 1800);
    assert_eq!(variant["list_price"]["amount"], 2000);
    assert!(product.get("url").is_none(), "onlineStoreUrl null → no url");
}

#[tokio::test]
async fn search_pages_with_opaque_cursors() {
    let (_standin, bridge) = setup().await;
    let first = bridge
        .call(
            "search_catalog",
            json!({"meta": meta(), "catalog": {"query": "sock", "pagination": {"limit": 25}}}),
        )
        .await;
    assert_eq!(first["products"].as_array().unwrap().len(), 25);
    assert_eq!(first["pagination"]["has_next_page"], true);
    assert_eq!(first["pagination"]["total_count"], 60);
    // CAT-002 CAT-003 CAT-004
    let cursor = first["pagination"]["cursor"].as_str().unwrap();
    assert!(
        !cursor.contains("p:"),
        "Shopify's cursor is wrapped: {cursor}"
    );
    let second = bridge
        .call(
            "search_catalog",
            json!({"meta": meta(), "catalog": {"query": "sock", "pagination": {"limit": 25, "cursor": cursor}}}),
        )
        .await;
    let (a, b) = (ids(&first["products"]), ids(&second["products"]));
    assert_eq!(b.len(), 25);
    assert!(a.iter().all(|id| !b.contains(id)));
    // A cursor is bound to its query.
    let (_, error) = bridge
        .call_error(
            "search_catalog",
            json!({"meta": meta(), "catalog": {"query": "cat", "pagination": {"cursor": cursor}}}),
        )
        .await;
    assert_eq!(error["code"], -32602);
}

#[tokio::test]
async fn price_filters_go_to_shopify_exactly() {
    let (standin, bridge) = setup().await;
    let result = bridge
        .call(
            "search_catalog",
            json!({"meta": meta(), "catalog": {"query": "mug OR tee", "filters": {"price": {"min": 1001, "max": 1999}}}}),
        )
        .await;
    assert_eq!(ids(&result["products"]), ["gid://shopify/Product/1001"]);
    let body = standin.bodies().pop().unwrap();
    assert!(body.contains("\"min\":10.01"), "{body}");
    assert!(body.contains("\"max\":19.99"), "{body}");
}

#[tokio::test]
async fn browsing_by_category_and_price_uses_products() {
    let (standin, bridge) = setup().await;
    let result = bridge
        .call(
            "search_catalog",
            json!({"meta": meta(), "catalog": {"filters": {"categories": ["Kitchen"]}}}),
        )
        .await;
    assert_eq!(ids(&result["products"]), ["gid://shopify/Product/1001"]);
    // Google and Shopify taxonomy values filter too (post-filtered by the brain).
    let result = bridge
        .call(
            "search_catalog",
            json!({"meta": meta(), "catalog": {"filters": {"categories": ["649"]}}}),
        )
        .await;
    assert_eq!(ids(&result["products"]), ["gid://shopify/Product/1001"]);
    let result = bridge
        .call(
            "search_catalog",
            json!({"meta": meta(), "catalog": {"filters": {"price": {"max": 300}}, "pagination": {"limit": 50}}}),
        )
        .await;
    for product in result["products"].as_array().unwrap() {
        assert!(product["variants"][0]["price"]["amount"].as_i64().unwrap() <= 300);
    }
    assert!(
        standin
            .operations()
            .iter()
            .all(|operation| operation == "BrowseProducts")
    );
    assert!(
        standin
            .bodies()
            .last()
            .unwrap()
            .contains("variants.price:<=3.00")
    );
}

#[tokio::test]
async fn context_picks_country_and_language() {
    let (standin, bridge) = setup().await;
    bridge
        .call(
            "search_catalog",
            json!({"meta": meta(), "catalog": {"query": "cat", "context": {"address_country": "br", "language": "pt-BR"}}}),
        )
        .await;
    let body = standin.bodies().pop().unwrap();
    assert!(body.contains("\"country\":\"BR\""), "{body}");
    assert!(body.contains("\"language\":\"PT_BR\""), "{body}");
    assert!(body.contains("@inContext"));
}

#[tokio::test]
async fn lookup_resolves_every_kind_of_id_in_two_requests() {
    let (standin, bridge) = setup().await;
    let result = bridge
        .call(
            "lookup_catalog",
            json!({"meta": meta(), "catalog": {"ids": [
                "gid://shopify/Product/7857989384",
                format!("gid://shopify/ProductVariant/{MUG_VARIANT}"),
                "1002",
                "soy-candle",
                "SOCK-3",
                "gid://shopify/Product/999999",
                "not an id",
                "gid://shopify/Product/7857989384",
            ]}}),
        )
        .await;
    let products = result["products"].as_array().unwrap();
    let found = ids(&result["products"]);
    assert_eq!(
        found,
        [
            "gid://shopify/Product/7857989384",
            "gid://shopify/Product/1001",
            "gid://shopify/Product/1002",
            "gid://shopify/Product/1004",
            format!("gid://shopify/Product/{}", SOCK_FIRST + 3).as_str(),
        ]
    );
    // Correlation: product ids are featured, variant ids and SKUs exact. // CAT-013 CAT-018 CAT-025
    assert_eq!(products[0]["variants"][0]["inputs"][0]["match"], "featured");
    assert_eq!(
        products[1]["variants"][0]["inputs"][0],
        json!({"id": format!("gid://shopify/ProductVariant/{MUG_VARIANT}"), "match": "exact"})
    );
    assert_eq!(products[4]["variants"][0]["inputs"][0]["match"], "exact");
    let not_found: Vec<&str> = result["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|message| message["code"] == "not_found")
        .map(|message| message["content"].as_str().unwrap())
        .collect();
    assert_eq!(not_found, ["gid://shopify/Product/999999", "not an id"]);
    assert_eq!(standin.requests(), 2, "{:?}", standin.operations());
    // Any text may be a SKU: it reached Shopify as one quoted phrase, never as operators.
    assert!(
        standin
            .bodies()
            .iter()
            .any(|body| body.contains(r#"\"not an id\""#))
    );
}

#[tokio::test]
async fn lookup_of_fifty_ids_costs_at_most_two_requests() {
    let (standin, bridge) = setup().await;
    let mut batch: Vec<String> = (0..25)
        .map(|index| format!("gid://shopify/Product/{}", SOCK_FIRST + index))
        .collect();
    batch.extend((25..50).map(|index| format!("sock-{index}")));
    let result = bridge
        .call(
            "lookup_catalog",
            json!({"meta": meta(), "catalog": {"ids": batch}}),
        )
        .await;
    assert_eq!(result["products"].as_array().unwrap().len(), 50);
    assert!(standin.requests() <= 2, "{:?}", standin.operations());

    standin.reset_counts();
    let gids: Vec<String> = (0..50)
        .map(|index| {
            format!(
                "gid://shopify/ProductVariant/{}",
                SOCK_FIRST + index + 100_000
            )
        })
        .collect();
    let result = bridge
        .call(
            "lookup_catalog",
            json!({"meta": meta(), "catalog": {"ids": gids}}),
        )
        .await;
    assert_eq!(result["products"].as_array().unwrap().len(), 50);
    assert_eq!(standin.operations(), ["Nodes"]);
}

#[tokio::test]
async fn get_product_loads_all_variants_past_250() {
    let (standin, bridge) = setup().await;
    let result = bridge
        .call(
            "get_product",
            json!({"meta": meta(), "catalog": {"id": format!("gid://shopify/Product/{TEE}")}}),
        )
        .await;
    let product = &result["product"];
    // CAT-033: no selection is the featured variant's options (the first available one);
    // the signals are computed over all 300 variants: S19 beside Color 00 is variant 285.
    assert_eq!(
        product["selected"],
        json!([{"name": "Size", "label": "S00"}, {"name": "Color", "label": "Color 00"}])
    );
    let s19 = product["options"]
        .as_array()
        .unwrap()
        .iter()
        .find(|option| option["name"] == "Size")
        .and_then(|option| {
            option["values"]
                .as_array()
                .unwrap()
                .iter()
                .find(|value| value["label"] == "S19")
        })
        .cloned()
        .unwrap();
    assert_eq!(
        (&s19["exists"], &s19["available"]),
        (&json!(true), &json!(true))
    );
    assert_eq!(
        standin.operations(),
        ["Nodes", "ProductVariants"],
        "250 with the product, then the rest in one page"
    );

    // Availability of the last size is computed over variants 285..300. // CAT-014
    let result = bridge
        .call(
            "get_product",
            json!({"meta": meta(), "catalog": {"id": "big-tee", "selected": [{"name": "Size", "label": "S19"}, {"name": "Color", "label": "Color 05"}]}}),
        )
        .await;
    let product = &result["product"];
    assert_eq!(
        product["selected"],
        json!([{"name": "Size", "label": "S19"}, {"name": "Color", "label": "Color 05"}])
    );
    assert_eq!(
        product["variants"][0]["id"],
        format!("gid://shopify/ProductVariant/{}", tee_variant(19, 5))
    );
    let colors = product["options"]
        .as_array()
        .unwrap()
        .iter()
        .find(|option| option["name"] == "Color")
        .unwrap();
    let available: Vec<&str> = colors["values"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|value| value["available"] == true)
        .map(|value| value["label"].as_str().unwrap())
        .collect();
    assert_eq!(available, ["Color 00"]);
}

#[tokio::test]
async fn get_product_by_variant_sku_and_numeric_id() {
    let (_standin, bridge) = setup().await;
    let variant = format!("gid://shopify/ProductVariant/{}", tee_variant(12, 3));
    for id in [
        variant.clone(),
        tee_variant(12, 3).to_string(),
        "TEE-12-03".to_owned(),
    ] {
        let result = bridge
            .call(
                "get_product",
                json!({"meta": meta(), "catalog": {"id": id}}),
            )
            .await;
        // CAT-032: the requested variant comes first.
        assert_eq!(result["product"]["variants"][0]["id"], variant, "{id}");
        assert_eq!(
            result["product"]["selected"],
            json!([{"name": "Size", "label": "S12"}, {"name": "Color", "label": "Color 03"}])
        );
    }
}

#[tokio::test]
async fn unknown_products_are_not_found() {
    let (standin, bridge) = setup().await;
    for id in [
        "gid://shopify/Product/424242",
        "no-such-handle",
        "\"quoted\" OR x",
        "../x",
        "bell\u{7}",
    ] {
        let result = bridge
            .call(
                "get_product",
                json!({"meta": meta(), "catalog": {"id": id}}),
            )
            .await;
        // CAT-019
        assert_eq!(result["ucp"]["status"], "error", "{id}");
        assert_eq!(result["messages"][0]["code"], "not_found");
        assert_eq!(result["messages"][0]["severity"], "unrecoverable");
    }
    // Any text may be a SKU and is searched (as a quoted phrase); only ids that cannot be
    // Shopify ids (control characters, other gids) cost no request at all.
    assert_eq!(standin.requests(), 4);
}

#[tokio::test]
async fn one_shopify_category_is_pushed_to_shopify() {
    let (standin, bridge) = setup().await;
    let result = bridge
        .call(
            "search_catalog",
            json!({"meta": meta(), "catalog": {"query": "mug OR tee OR cat", "filters": {"categories": ["hg-11"]}}}),
        )
        .await;
    // Shopify narrows to the subcategory hg-11-1; the brain keeps only exact category values
    // or merchant paths, so a parent key finds nothing and no wrong product slips through.
    assert!(
        standin
            .bodies()
            .pop()
            .unwrap()
            .contains("gid://shopify/TaxonomyCategory/hg-11")
    );
    assert!(result["products"].as_array().unwrap().is_empty());
    let result = bridge
        .call(
            "search_catalog",
            json!({"meta": meta(), "catalog": {"query": "mug OR tee OR cat", "filters": {"categories": ["hg-11-1"]}}}),
        )
        .await;
    assert_eq!(ids(&result["products"]), ["gid://shopify/Product/1001"]);
}
