//! Upstream requests per tool call against the WooCommerce 10.9.4 stand-in, cache off: the
//! floors measured on a real store (ROUND-TRIPS.md in the shared 10.9.4 fixtures), counted
//! at the stand-in, and the number of sequential rounds, from the order in which the stand-in
//! saw requests arrive and answered them (every request held a while, so those sent together
//! overlap).

use std::time::Duration;

use crate::support::woo_standin::{Fault, WooStandin};
use crate::support::{TestBridge, meta, meta_with_key};
use serde_json::{Value, json};

const NO_CACHE: &str = "\n[cache]\nenabled = false\n";
/// How long each request is held while rounds are counted: long enough that requests sent
/// together all arrive before the first is answered. Nothing is timed.
const HOLD: Duration = Duration::from_millis(200);

async fn setup() -> (WooStandin, TestBridge) {
    let woo = WooStandin::start().await;
    // A generous attempt timeout: a batch answer repeats the whole cart per sub-request,
    // which a debug-build stand-in on a busy machine takes a while to write.
    let config = woo
        .config("")
        .replace("timeout_ms = 400", "timeout_ms = 5000");
    let bridge = TestBridge::start(&(config + NO_CACHE)).await;
    (woo, bridge)
}

async fn catalog(bridge: &TestBridge, tool: &str, catalog: Value) -> Value {
    bridge
        .call(tool, json!({"meta": meta(), "catalog": catalog}))
        .await
}

/// The requests one call made, without the category tree (per store, cached, counted apart).
fn take(woo: &WooStandin) -> Vec<String> {
    let calls = woo
        .requests()
        .into_iter()
        .filter(|line| !line.contains("/products/categories"))
        .map(|line| line.replace("/wp-json/wc/store/v1", "S"))
        .collect();
    woo.clear_requests();
    calls
}

/// The same, in a fixed order (requests of one round arrive in any order).
fn take_sorted(woo: &WooStandin) -> Vec<String> {
    let mut calls = take(woo);
    calls.sort();
    calls
}

fn categories(woo: &WooStandin) -> usize {
    woo.requests()
        .iter()
        .filter(|line| line.contains("/products/categories"))
        .count()
}

/// Sequential rounds a call costs, as the stand-in saw them (`WooStandin::rounds`).
async fn rounds<F: std::future::Future<Output = Value>>(woo: &WooStandin, call: F) -> u32 {
    woo.clear_requests();
    woo.set_fault(Fault::Slow(HOLD));
    call.await;
    woo.set_fault(Fault::None);
    let rounds = woo.rounds();
    woo.clear_requests();
    rounds
}

#[tokio::test]
async fn get_product_costs_two_parallel_requests_plus_a_round_from_a_variation_sku_or_slug() {
    let (woo, bridge) = setup().await;
    // Cold: the category tree once (per store, then cached), beside the product's requests.
    let tee = catalog(&bridge, "get_product", json!({"id": "11"})).await;
    assert_eq!(tee["product"]["id"], "11", "{tee}");
    assert_eq!(categories(&woo), 1);
    assert_eq!(take(&woo).len(), 2);
    // Warm: exactly the two measured requests (ROUND-TRIPS.md b), in one round.
    catalog(&bridge, "get_product", json!({"id": "11"})).await;
    assert_eq!(categories(&woo), 0);
    assert_eq!(
        take_sorted(&woo),
        [
            "GET S/products/11",
            "GET S/products?type=variation&parent%5B%5D=11&per_page=100&page=1"
        ]
    );
    let one = rounds(&woo, catalog(&bridge, "get_product", json!({"id": "11"}))).await;
    assert_eq!(one, 1);

    // A simple product: the same two (the variation list is empty); unknown: the same two.
    catalog(&bridge, "get_product", json!({"id": "10"})).await;
    assert_eq!(take(&woo).len(), 2);
    // Not an id: a number may still be a SKU, asked once more (`sku=`), only then.
    let missing = catalog(&bridge, "get_product", json!({"id": "404"})).await;
    assert_eq!(missing["messages"][0]["code"], "not_found");
    assert_eq!(take(&woo).len(), 3);

    // A variation id: +1 round (the parent and its variations, together).
    let hoodie = catalog(&bridge, "get_product", json!({"id": "21"})).await;
    assert_eq!(hoodie["product"]["id"], "20");
    assert_eq!(
        take_sorted(&woo),
        [
            "GET S/products/20",
            "GET S/products/21",
            "GET S/products?type=variation&parent%5B%5D=20&per_page=100&page=1",
            "GET S/products?type=variation&parent%5B%5D=21&per_page=100&page=1"
        ]
    );
    let two = rounds(&woo, catalog(&bridge, "get_product", json!({"id": "21"}))).await;
    assert_eq!(two, 2);

    // A SKU (of a variation: its parent is fetched beside the variations) and a slug: +1 round.
    let by_sku = catalog(&bridge, "get_product", json!({"id": "HOOD-GRN"})).await;
    assert_eq!(by_sku["product"]["variants"][0]["id"], "21");
    assert_eq!(take(&woo).len(), 3);
    let by_slug = catalog(&bridge, "get_product", json!({"id": "zip-hoodie"})).await;
    assert_eq!(by_slug["product"]["id"], "20");
    assert_eq!(take(&woo).len(), 3);
    let two = rounds(
        &woo,
        catalog(&bridge, "get_product", json!({"id": "zip-hoodie"})),
    )
    .await;
    assert_eq!(two, 2);
}

#[tokio::test]
async fn lookup_of_fifty_mixed_ids_costs_five_requests_in_two_rounds() {
    let (woo, bridge) = setup().await;
    // Product ids, a variation id, SKUs (simple and variation), a slug, unknown ids.
    let mut ids: Vec<String> = ["11", "16", "10", "30", "TEE-S-BLUE", "MUG-1", "zip-hoodie"]
        .iter()
        .map(|id| (*id).to_owned())
        .collect();
    ids.extend((1000..1040).map(|id| id.to_string()));
    ids.extend(["nope-1", "NOPE-2", "nope-3"].map(str::to_owned));
    assert_eq!(ids.len(), 50);
    let found = catalog(&bridge, "lookup_catalog", json!({"ids": ids})).await;
    assert_eq!(found["products"].as_array().unwrap().len(), 4, "{found}");
    let calls = take(&woo);
    // Round one: include, type=variation&include, sku=, slug=; round two: the variations
    // of every variable product found (ROUND-TRIPS.md a).
    assert_eq!(calls.len(), 5, "{calls:#?}");
    assert!(
        calls
            .iter()
            .any(|c| c.contains("type=variation") && c.contains("parent=11%2C20")),
        "{calls:#?}"
    );
    let two = rounds(
        &woo,
        catalog(&bridge, "lookup_catalog", json!({"ids": ids})),
    )
    .await;
    assert_eq!(two, 2);
    // Variations whose parents were not inputs: the parents join round two (6 requests).
    catalog(
        &bridge,
        "lookup_catalog",
        json!({"ids": ["21", "TEE-S-BLUE", "nope"]}),
    )
    .await;
    let calls = take(&woo);
    assert_eq!(calls.len(), 6, "{calls:#?}");
}

#[tokio::test]
async fn search_costs_one_request_per_page_plus_the_variations_of_variable_hits() {
    let (woo, bridge) = setup().await;
    // Cold: the category tree goes out beside the listing, not before it.
    let cups = catalog(&bridge, "search_catalog", json!({"query": "cup"})).await;
    assert_eq!(cups["products"].as_array().unwrap().len(), 3);
    assert_eq!(categories(&woo), 1);
    assert_eq!(take(&woo).len(), 1);
    // Only simple products: one request, one round.
    let one = rounds(
        &woo,
        catalog(&bridge, "search_catalog", json!({"query": "cup"})),
    )
    .await;
    assert_eq!(one, 1);
    // Variable hits: +1 request for all their variations at once.
    catalog(&bridge, "search_catalog", json!({"query": "e"})).await;
    let calls = take(&woo);
    assert_eq!(calls.len(), 2, "{calls:#?}");
    let two = rounds(
        &woo,
        catalog(&bridge, "search_catalog", json!({"query": "e"})),
    )
    .await;
    assert_eq!(two, 2);
}

/// Every request one cart call made: the store judges the lines from its own write answer,
/// so there is no catalog read before the write.
fn cart_calls(woo: &WooStandin) -> Vec<String> {
    take(woo)
}

async fn create(bridge: &TestBridge, lines: Value) -> Value {
    bridge
        .call(
            "create_cart",
            json!({"meta": meta_with_key(&uuid::Uuid::new_v4().to_string()), "cart": {"line_items": lines}}),
        )
        .await
}

#[tokio::test]
async fn carts_cost_one_batch_per_write() {
    let (woo, bridge) = setup().await;
    let lines =
        json!([{"item": {"id": "10"}, "quantity": 1}, {"item": {"id": "21"}, "quantity": 2}]);
    // create, cold: the read that hands out the guest Nonce, then the batch.
    let cart = create(&bridge, lines.clone()).await;
    let id = cart["id"].as_str().unwrap().to_owned();
    assert_eq!(cart_calls(&woo), ["GET S/cart", "POST S/batch"]);
    // create, warm: one batch.
    create(&bridge, lines).await;
    assert_eq!(cart_calls(&woo), ["POST S/batch"]);
    // get_cart: one read.
    bridge
        .call("get_cart", json!({"meta": meta(), "id": id}))
        .await;
    assert_eq!(cart_calls(&woo), ["GET S/cart"]);
    // update_cart (full replacement): one batch.
    let updated = bridge
        .call(
            "update_cart",
            json!({"meta": meta_with_key("u"), "id": id, "cart": {"line_items": [{"item": {"id": "30"}, "quantity": 4}]}}),
        )
        .await;
    assert_eq!(updated["line_items"][0]["quantity"], 4);
    assert_eq!(cart_calls(&woo), ["POST S/batch"]);
    // cancel_cart: one batch.
    let cancelled = bridge
        .call("cancel_cart", json!({"meta": meta_with_key("c"), "id": id}))
        .await;
    assert_eq!(cancelled["line_items"][0]["item"]["id"], "30");
    assert_eq!(cart_calls(&woo), ["POST S/batch"]);
}

#[tokio::test]
async fn more_than_twenty_five_lines_take_ceil_n_over_25_batches() {
    let (woo, bridge) = setup().await;
    woo.add_simple_products(100, 30);
    let lines: Vec<Value> = (100..130)
        .map(|id| json!({"item": {"id": id.to_string()}, "quantity": 1}))
        .collect();
    create(&bridge, json!([{"item": {"id": "10"}, "quantity": 1}])).await;
    cart_calls(&woo);
    let cart = create(&bridge, Value::Array(lines.clone())).await;
    assert_eq!(cart["line_items"].as_array().unwrap().len(), 30, "{cart}");
    // 30 lines: 25 + 5.
    assert_eq!(cart_calls(&woo), ["POST S/batch", "POST S/batch"]);
    let batches = woo.batches();
    let sizes: Vec<usize> = batches.iter().rev().take(2).map(Vec::len).collect();
    assert_eq!(sizes, [5, 25]);
    // A replacement of 30 lines: read + empty + 23 adds, then 7 adds.
    let id = cart["id"].as_str().unwrap();
    let updated = bridge
        .call(
            "update_cart",
            json!({"meta": meta_with_key("u30"), "id": id, "cart": {"line_items": lines}}),
        )
        .await;
    assert_eq!(updated["line_items"].as_array().unwrap().len(), 30);
    assert_eq!(cart_calls(&woo), ["POST S/batch", "POST S/batch"]);
}

#[tokio::test]
async fn refused_lines_are_judged_from_each_sub_response() {
    let (woo, bridge) = setup().await;
    // The catalog still says in stock; the store knows better by the time of the write.
    woo.set_stock_behind_catalog(14, 0);
    woo.set_stock_behind_catalog(16, 2);
    let cart = create(
        &bridge,
        json!([
            {"item": {"id": "10"}, "quantity": 1},
            {"item": {"id": "14"}, "quantity": 1},
            {"item": {"id": "16"}, "quantity": 5}
        ]),
    )
    .await;
    let lines: Vec<(String, u64)> = cart["line_items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            (
                l["item"]["id"].as_str().unwrap().to_owned(),
                l["quantity"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(lines, [("10".to_owned(), 1), ("16".to_owned(), 2)]);
    let messages = cart["messages"].as_array().unwrap();
    let at = |path: &str| messages.iter().find(|m| m["path"] == path).unwrap();
    assert_eq!(at("$.line_items[1]")["code"], "out_of_stock");
    assert_eq!(at("$.line_items[2]")["code"], "quantity_adjusted");
    assert!(
        at("$.line_items[2]")["content"]
            .as_str()
            .unwrap()
            .contains("(2 remaining)")
    );
    // The partially-out-of-stock line costs one more batch at the quantity the store named.
    assert_eq!(
        cart_calls(&woo),
        ["GET S/cart", "POST S/batch", "POST S/batch"]
    );
}

#[tokio::test]
async fn a_stale_nonce_costs_one_retry_on_the_session_the_refusal_opened() {
    let (woo, bridge) = setup().await;
    let lines = json!([{"item": {"id": "10"}, "quantity": 1}]);
    create(&bridge, lines.clone()).await;
    cart_calls(&woo);
    // The nonce tick turned: every sub-request of the tokenless batch is refused (403) and
    // nothing is applied; the refusals carry the new Nonce and a session token.
    woo.rotate_nonce("0badc0ffee");
    let cart = create(&bridge, lines.clone()).await;
    assert_eq!(cart["line_items"][0]["item"]["id"], "10", "{cart}");
    assert_eq!(cart_calls(&woo), ["POST S/batch", "POST S/batch"]);
    // The next cart uses the new Nonce at once.
    create(&bridge, lines).await;
    assert_eq!(cart_calls(&woo), ["POST S/batch"]);
}

/// A SKU of digits only (a barcode) is found like any SKU: in the lookup's one `sku=` request
/// beside the ids, and by get_product after the store says it is no id.
#[tokio::test]
async fn a_numeric_sku_is_found_as_a_sku() {
    let woo = WooStandin::start().await;
    let bridge = TestBridge::start(&woo.config("")).await;
    let found = catalog(
        &bridge,
        "lookup_catalog",
        json!({"ids": ["7891234567895", "10"]}),
    )
    .await;
    let ids: Vec<&str> = found["products"]
        .as_array()
        .unwrap()
        .iter()
        .map(|product| product["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["32", "10"], "{found}");
    take(&woo);
    let product = catalog(&bridge, "get_product", json!({"id": "7891234567895"})).await;
    assert_eq!(product["product"]["id"], "32", "{product}");
    assert_eq!(take(&woo).len(), 3);
}

/// Issue 27 item 8: the numeric SKU lookups find is found as a cart line too. The store is
/// asked it as an id first (real ids cost nothing more); only when it knows no such product
/// is it asked as a SKU, and the product that SKU names is added.
#[tokio::test]
async fn a_numeric_sku_as_a_cart_line_is_added_as_the_product_it_names() {
    let (woo, bridge) = setup().await;
    let cart = create(
        &bridge,
        json!([{"item": {"id": "7891234567895"}, "quantity": 2}, {"item": {"id": "10"}, "quantity": 1}]),
    )
    .await;
    let lines: Vec<(&str, u64)> = cart["line_items"]
        .as_array()
        .unwrap_or_else(|| panic!("{cart}"))
        .iter()
        .map(|line| {
            (
                line["item"]["id"].as_str().unwrap(),
                line["quantity"].as_u64().unwrap(),
            )
        })
        .collect();
    // The store's cart names the product by its id, as for a line sent by SKU or slug.
    assert!(lines.contains(&("32", 2)), "{cart}");
    assert!(
        cart["messages"].as_array().is_none_or(|messages| messages
            .iter()
            .all(|message| message["code"] != "not_found")),
        "{cart}"
    );
    let calls = cart_calls(&woo);
    assert_eq!(
        calls.iter().filter(|call| call.contains("batch")).count(),
        2,
        "{calls:?}"
    );
    // A cart of real ids asks nothing more.
    create(&bridge, json!([{"item": {"id": "10"}, "quantity": 1}])).await;
    assert_eq!(cart_calls(&woo), ["POST S/batch"]);
}
