//! get_product's interactive narrowing over the sample store's "Blue Runner Pro"
//! (prod_abc123): Color Blue/Red/Green × Size 8/9/10/11/12/15, where Blue/11, Red/15, Green/8,
//! Green/12 and Green/15 do not exist and Red/11 and every Green are out of stock.

use crate::support::TestBridge;
use serde_json::{Value, json};

async fn get_product(bridge: &TestBridge, catalog: Value) -> Value {
    bridge.catalog("get_product", catalog).await
}

fn selected(product: &Value) -> Vec<(String, String)> {
    product["selected"]
        .as_array()
        .unwrap()
        .iter()
        .map(|choice| {
            (
                choice["name"].as_str().unwrap().to_owned(),
                choice["label"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

/// (exists, available) of one option value.
fn signal(product: &Value, option: &str, label: &str) -> (bool, bool) {
    let option = product["options"]
        .as_array()
        .unwrap()
        .iter()
        .find(|candidate| candidate["name"] == option)
        .unwrap_or_else(|| panic!("option {option} in {product}"));
    let value = option["values"]
        .as_array()
        .unwrap()
        .iter()
        .find(|candidate| candidate["label"] == label)
        .unwrap_or_else(|| panic!("value {label}"));
    (
        value["exists"].as_bool().unwrap(),
        value["available"].as_bool().unwrap(),
    )
}

fn variant_ids(product: &Value) -> Vec<String> {
    product["variants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|variant| variant["id"].as_str().unwrap().to_owned())
        .collect()
}

fn pair(name: &str, label: &str) -> (String, String) {
    (name.to_owned(), label.to_owned())
}

#[tokio::test]
async fn no_selection_defaults_to_the_featured_variants_options() {
    let bridge = TestBridge::sample().await;
    let response = get_product(&bridge, json!({"id": "prod_abc123"})).await;
    let product = &response["product"];
    assert_eq!(
        response["ucp"]["capabilities"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        ["br.dev.bcp.shopping.catalog.lookup"]
    );
    // CAT-033 (lookup.md "Option selection"): without `selected`, the featured variant's
    // default selections; the variant subset and the signals follow from them.
    assert_eq!(
        selected(product),
        [pair("Color", "Blue"), pair("Size", "10")]
    );
    assert_eq!(variant_ids(product), ["prod_abc123_blu_10"]);
    // Relative to Blue / 10: Green 10 exists but cannot be bought; there is no Blue 11.
    assert_eq!(signal(product, "Color", "Green"), (true, false));
    assert_eq!(signal(product, "Color", "Red"), (true, true));
    assert_eq!(signal(product, "Size", "11"), (false, false));
    assert_eq!(signal(product, "Size", "15"), (true, true));
}

#[tokio::test]
async fn selection_narrows_variants_and_signals_other_axes() {
    let bridge = TestBridge::sample().await;
    let response = get_product(
        &bridge,
        json!({"id": "prod_abc123", "selected": [{"name": "Color", "label": "Blue"}], "preferences": ["Color", "Size"]}),
    )
    .await;
    let product = &response["product"];
    assert_eq!(selected(product), [pair("Color", "Blue")]);
    let ids = variant_ids(product);
    assert_eq!(ids[0], "prod_abc123_blu_10", "featured first");
    assert!(
        ids.iter().all(|id| id.starts_with("prod_abc123_blu_")),
        "{ids:?}"
    );
    assert_eq!(ids.len(), 5);
    // Blue/11 does not exist; Blue/15 does.
    assert_eq!(signal(product, "Size", "11"), (false, false));
    assert_eq!(signal(product, "Size", "15"), (true, true));
    // Color values are judged with every other selection (none besides Color itself).
    assert_eq!(signal(product, "Color", "Green"), (true, false));
}

#[tokio::test]
async fn red_15_with_preferences_color_size_keeps_color() {
    let bridge = TestBridge::sample().await;
    let response = get_product(
        &bridge,
        json!({
            "id": "prod_abc123",
            "selected": [{"name": "Color", "label": "Red"}, {"name": "Size", "label": "15"}],
            "preferences": ["Color", "Size"]
        }),
    )
    .await;
    let product = &response["product"];
    assert_eq!(selected(product), [pair("Color", "Red")]);
    let ids = variant_ids(product);
    assert!(
        ids.iter().all(|id| id.starts_with("prod_abc123_red_")),
        "{ids:?}"
    );
    // Relative to Color=Red: size 15 does not exist in Red, 11 exists but is sold out.
    assert_eq!(signal(product, "Size", "15"), (false, false));
    assert_eq!(signal(product, "Size", "11"), (true, false));
    assert_eq!(signal(product, "Size", "12"), (true, true));
}

#[tokio::test]
async fn preferences_size_color_keeps_size_instead() {
    let bridge = TestBridge::sample().await;
    let response = get_product(
        &bridge,
        json!({
            "id": "prod_abc123",
            "selected": [{"name": "Color", "label": "Red"}, {"name": "Size", "label": "15"}],
            "preferences": ["Size", "Color"]
        }),
    )
    .await;
    let product = &response["product"];
    assert_eq!(selected(product), [pair("Size", "15")]);
    assert_eq!(variant_ids(product), ["prod_abc123_blu_15"]);
    // Relative to Size=15: only Blue has it.
    assert_eq!(signal(product, "Color", "Blue"), (true, true));
    assert_eq!(signal(product, "Color", "Red"), (false, false));
}

#[tokio::test]
async fn options_not_in_preferences_are_dropped_first() {
    let bridge = TestBridge::sample().await;
    // Preferences name only Size, so Color (unnamed) goes before Size.
    let response = get_product(
        &bridge,
        json!({
            "id": "prod_abc123",
            "selected": [{"name": "Color", "label": "Red"}, {"name": "Size", "label": "15"}],
            "preferences": ["Size"]
        }),
    )
    .await;
    assert_eq!(selected(&response["product"]), [pair("Size", "15")]);
    // Without any preferences the last selection goes first.
    let response = get_product(
        &bridge,
        json!({
            "id": "prod_abc123",
            "selected": [{"name": "Color", "label": "Red"}, {"name": "Size", "label": "15"}]
        }),
    )
    .await;
    assert_eq!(selected(&response["product"]), [pair("Color", "Red")]);
}

#[tokio::test]
async fn exact_combination_returns_that_variant_even_when_sold_out() {
    let bridge = TestBridge::sample().await;
    let response = get_product(
        &bridge,
        json!({
            "id": "prod_abc123",
            "selected": [{"name": "Color", "label": "Red"}, {"name": "Size", "label": "11"}],
            "preferences": ["Color", "Size"]
        }),
    )
    .await;
    let product = &response["product"];
    assert_eq!(
        selected(product),
        [pair("Color", "Red"), pair("Size", "11")]
    );
    assert_eq!(variant_ids(product), ["prod_abc123_red_11"]);
    assert_eq!(product["variants"][0]["availability"]["available"], false);
    assert_eq!(signal(product, "Size", "11"), (true, false));
    assert_eq!(signal(product, "Color", "Green"), (true, false));
    assert_eq!(signal(product, "Color", "Blue"), (false, false));
}

#[tokio::test]
async fn unknown_option_or_value_is_relaxed_away() {
    let bridge = TestBridge::sample().await;
    let response = get_product(
        &bridge,
        json!({
            "id": "prod_abc123",
            "selected": [{"name": "Material", "label": "Leather"}, {"name": "Color", "label": "Purple"}],
            "preferences": ["Color"]
        }),
    )
    .await;
    assert_eq!(
        selected(&response["product"]),
        Vec::<(String, String)>::new()
    );
    assert_eq!(variant_ids(&response["product"]).len(), 13);
}

#[tokio::test]
async fn selections_match_case_insensitively_in_merchant_spelling() {
    let bridge = TestBridge::sample().await;
    let response = get_product(
        &bridge,
        json!({"id": "prod_abc123", "selected": [{"name": "color", "label": "BLUE"}]}),
    )
    .await;
    assert_eq!(selected(&response["product"]), [pair("Color", "Blue")]);
}

#[tokio::test]
async fn variant_id_wins_over_selected_and_comes_first() {
    let bridge = TestBridge::sample().await;
    // CAT-032: the requested variant is the first element; CAT-014: variant ids work.
    let response = get_product(
        &bridge,
        json!({
            "id": "prod_abc123_red_12",
            "selected": [{"name": "Color", "label": "Blue"}],
            "preferences": ["Color", "Size"]
        }),
    )
    .await;
    let product = &response["product"];
    assert_eq!(product["id"], "prod_abc123");
    assert_eq!(
        selected(product),
        [pair("Color", "Red"), pair("Size", "12")]
    );
    assert_eq!(variant_ids(product), ["prod_abc123_red_12"]);
}

#[tokio::test]
async fn sold_out_variant_id_is_still_featured() {
    let bridge = TestBridge::sample().await;
    let response = get_product(&bridge, json!({"id": "prod_abc123_grn_10"})).await;
    let product = &response["product"];
    assert_eq!(variant_ids(product), ["prod_abc123_grn_10"]);
    assert_eq!(product["variants"][0]["availability"]["available"], false);
}

#[tokio::test]
async fn product_without_options_has_one_variant_and_empty_selection() {
    let bridge = TestBridge::sample().await;
    let response = get_product(&bridge, json!({"id": "item_123"})).await;
    let product = &response["product"];
    assert_eq!(variant_ids(product), ["item_123"]);
    assert!(product.get("options").is_none());
    assert_eq!(selected(product), Vec::<(String, String)>::new());
}

#[tokio::test]
async fn unknown_id_is_a_not_found_business_error() {
    let bridge = TestBridge::sample().await;
    // CAT-019: not found is a result with ucp.status "error", not a JSON-RPC error.
    let response = get_product(&bridge, json!({"id": "prod_invalid"})).await;
    assert_eq!(response["ucp"]["status"], "error");
    assert!(response.get("product").is_none());
    assert_eq!(
        response["messages"],
        json!([{"type": "error", "code": "not_found", "content": "Product not found: prod_invalid", "severity": "unrecoverable"}])
    );
}

#[tokio::test]
async fn price_filter_narrows_variants() {
    let bridge = TestBridge::sample().await;
    let response = get_product(
        &bridge,
        json!({"id": "prod_abc123", "filters": {"price": {"min": 15000}}}),
    )
    .await;
    // The featured variant among those the filter keeps; the other one stays reachable.
    let product = &response["product"];
    assert_eq!(variant_ids(product), ["prod_abc123_blu_12"]);
    assert_eq!(
        selected(product),
        [pair("Color", "Blue"), pair("Size", "12")]
    );
    assert_eq!(signal(product, "Size", "15"), (true, true));
}
