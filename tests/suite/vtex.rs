//! VTEX specifics against the stand-in (tests/support/vtex_standin/): index-addressed cart
//! replacement, the ownership cookie, the capped AvailableQuantity, money in both units, the
//! legacy-search fallback, throttling, and the upstream requests each tool costs.

use crate::support::values::{line, lines};
use crate::support::vtex_standin::{
    CLOCK_SKU, FOOD, FOOD_SKU, MUG_PRICES, MUG_SKU_FIRST, MUGS, TEE, TEE_SKUS, VtexStandin,
};
use crate::support::{TestBridge, meta, meta_with_fresh_key};
use serde_json::{Value, json};

const NO_CACHE: &str = "\n[cache]\nenabled = false\n";

async fn setup(extra: &str) -> (VtexStandin, TestBridge) {
    let vtex = VtexStandin::start().await;
    let bridge = TestBridge::start(&(vtex.config("") + extra)).await;
    (vtex, bridge)
}

async fn create(bridge: &TestBridge, items: Vec<Value>) -> Value {
    bridge
        .call(
            "create_cart",
            json!({"meta": meta_with_fresh_key(), "cart": {"line_items": items}}),
        )
        .await
}

fn mug(n: u32) -> String {
    (MUG_SKU_FIRST + n).to_string()
}

/// Waits for the search-API probe the adapter starts at build, so counts start clean.
async fn settle(vtex: &VtexStandin) {
    crate::support::wait::until("the adapter's search-API probe", || {
        vtex.requests()
            .iter()
            .any(|line| line.contains("product-search") || line.contains("catalog_system"))
    })
    .await;
    vtex.take();
}

/// Removing lines shifts the indexes after them: the one PATCH addresses the highest index
/// first, and the cart ends exactly at the requested lines, in the store and in the answer.
#[tokio::test]
async fn replacement_survives_index_shifts() {
    let (vtex, bridge) = setup(NO_CACHE).await;
    let cart = create(
        &bridge,
        vec![
            line(&mug(0), 1),
            line(&mug(1), 1),
            line(&mug(2), 1),
            line(&mug(3), 1),
        ],
    )
    .await;
    let id = cart["id"].as_str().unwrap().to_owned();
    vtex.take();
    // Keep the 2nd (new quantity) and 4th, drop the 1st and 3rd, add a new one.
    let updated = bridge
        .call(
            "update_cart",
            json!({"meta": meta_with_fresh_key(), "id": id, "cart": {"line_items": [
                line(&mug(3), 1), line(&mug(1), 3), line(&mug(4), 2)
            ]}}),
        )
        .await;
    let expected = vec![(mug(1), 3), (mug(3), 1), (mug(4), 2)];
    let mut got = lines(&updated);
    got.sort();
    assert_eq!(got, expected, "{updated}");
    let mut stored: Vec<(String, u64)> = vtex
        .lines_of(&id)
        .into_iter()
        .map(|(sku, quantity)| (sku, u64::from(quantity)))
        .collect();
    stored.sort();
    assert_eq!(stored, expected);
    let calls = vtex.take();
    let writes: Vec<&String> = calls.iter().filter(|c| !c.starts_with("GET")).collect();
    assert_eq!(writes.len(), 1, "one write: {calls:?}");
    assert!(
        writes[0].starts_with("PATCH ") && writes[0].ends_with("/items"),
        "{calls:?}"
    );
}

/// Every orderForm call the bridge makes carries the cart's ownership cookie; the same cart
/// read without it is masked, and a write without it is refused (CHK003).
#[tokio::test]
async fn the_ownership_cookie_is_kept_per_cart() {
    let (vtex, bridge) = setup("").await;
    let cart = create(&bridge, vec![line(CLOCK_SKU, 1)]).await;
    let id = cart["id"].as_str().unwrap().to_owned();
    bridge
        .call("get_cart", json!({"meta": meta(), "id": id}))
        .await;
    let log = vtex.cookie_log();
    assert!(
        log.len() >= 2 && log.iter().all(|(_, owner)| *owner),
        "{log:?}"
    );

    let client = reqwest::Client::new();
    let url = format!("{}/api/checkout/pub/orderForm/{id}", vtex.base_url);
    let masked: Value = client.get(&url).send().await.unwrap().json().await.unwrap();
    let email = masked["clientProfileData"]["email"].as_str().unwrap();
    assert!(email.contains("***"), "{email}");
    let refused = client
        .post(format!("{url}/items/removeAll"))
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 403);
    let body: Value = refused.json().await.unwrap();
    assert_eq!(body["error"]["code"], "CHK003");
    // The bridge's own edit still goes through.
    let cancelled = bridge
        .call(
            "cancel_cart",
            json!({"meta": meta_with_fresh_key(), "id": id}),
        )
        .await;
    assert_eq!(cancelled["id"], json!(id), "{cancelled}");
}

/// AvailableQuantity 10000 says "available", not "10000 in stock": the catalog shows the
/// dry food as available with no count, and the orderForm's clamp (2) is what the agent hears.
#[tokio::test]
async fn available_quantity_is_a_flag_and_the_cart_clamps() {
    let (_vtex, bridge) = setup("").await;
    let product = bridge.catalog("get_product", json!({"id": FOOD})).await;
    let text = product.to_string();
    assert!(!text.contains("10000"), "{text}");
    let variant = &product["product"]["variants"][0];
    assert_eq!(
        variant["availability"]["available"],
        json!(true),
        "{variant}"
    );
    let cart = create(&bridge, vec![line(FOOD_SKU, 5)]).await;
    assert_eq!(lines(&cart), [(FOOD_SKU.to_owned(), 2)], "{cart}");
    assert_eq!(cart["messages"][0]["code"], "quantity_adjusted", "{cart}");
}

/// Search prices are decimal reais ("0.1", "4.35", "1299.90"), cart prices integer cents:
/// both arrive as the same exact minor units.
#[tokio::test]
async fn money_is_exact_in_both_units() {
    let (_vtex, bridge) = setup("").await;
    let expected: Vec<i64> = vec![2990, 10, 129990, 1999, 435];
    let page = bridge
        .catalog(
            "search_catalog",
            json!({"query": "caneca", "pagination": {"limit": 10}}),
        )
        .await;
    let prices: Vec<i64> = page["products"]
        .as_array()
        .unwrap()
        .iter()
        .map(|product| product["variants"][0]["price"]["amount"].as_i64().unwrap())
        .collect();
    assert_eq!(prices, expected, "{page}");
    assert_eq!(MUG_PRICES.len() as u32, MUGS);
    let cart = create(&bridge, vec![line(&mug(1), 3), line(&mug(4), 1)]).await;
    let totals: Vec<i64> = cart["line_items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|line| line["item"]["price"].as_i64().unwrap())
        .collect();
    assert_eq!(totals, [10, 435], "{cart}");
    let total = cart["totals"]
        .as_array()
        .unwrap()
        .iter()
        .find(|total| total["type"] == "total")
        .unwrap();
    assert_eq!(total["amount"], json!(465), "{cart}");
}

/// A store without Intelligent Search is searched, looked up and carted through the legacy
/// `catalog_system/pub` search, and doctor says which.
#[tokio::test]
async fn legacy_search_is_the_fallback() {
    let vtex = VtexStandin::start_legacy().await;
    let bridge = TestBridge::start(&(vtex.config("") + NO_CACHE)).await;
    let (paged, totals) = bridge.walk(json!({"query": "caneca"}), 2).await;
    assert_eq!(paged.len(), MUGS as usize, "{paged:?}");
    assert!(totals.iter().all(|total| *total == u64::from(MUGS)));
    let tee = bridge.catalog("get_product", json!({"id": TEE})).await;
    let axes: Vec<&str> = tee["product"]["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|option| option["name"].as_str().unwrap())
        .collect();
    assert_eq!(axes, ["Cor", "Tamanho"], "{tee}");
    let found = bridge
        .catalog(
            "lookup_catalog",
            json!({"ids": [TEE_SKUS[0].0, "caneca-gato-2"]}),
        )
        .await;
    assert_eq!(found["products"].as_array().unwrap().len(), 2, "{found}");
    assert!(
        vtex.requests()
            .iter()
            .all(|line| !line.contains("/product-search/?query"))
    );

    let config = bcp_bridge::startup::BridgeConfig::from_toml(&vtex.config("")).unwrap();
    let report = bcp_bridge::doctor::run(&config, true).await;
    let text = report.render();
    assert!(report.agent_could_shop(), "{text}");
    assert!(text.contains("legacy catalog_system search"), "{text}");
    assert!(text.contains("orderFormId="), "{text}");
}

/// A 429 on a read is waited out (Retry-After) and retried; the agent never sees it.
#[tokio::test]
async fn throttled_reads_are_retried() {
    let (vtex, bridge) = setup(NO_CACHE).await;
    settle(&vtex).await;
    vtex.throttle(1);
    let product = bridge.catalog("get_product", json!({"id": FOOD})).await;
    assert_eq!(product["product"]["id"], FOOD, "{product}");
    assert!(vtex.take().len() >= 3);
}

/// Upstream requests per tool, cache off, counted at the stand-in (BENCHMARKS.md
/// "VTEX upstream requests"). Cold = the first call of a fresh bridge after the start probe.
#[tokio::test]
async fn upstream_requests_per_tool() {
    let (vtex, bridge) = setup(NO_CACHE).await;
    settle(&vtex).await;
    let count = |calls: Vec<String>| calls.len();

    bridge
        .catalog("search_catalog", json!({"query": "caneca"}))
        .await;
    assert_eq!(count(vtex.take()), 1, "search");
    bridge
        .catalog(
            "search_catalog",
            json!({"query": "caneca", "filters": {"categories": ["Alimentação > Comedouro"], "price": {"min": 100, "max": 5000}}}),
        )
        .await;
    assert_eq!(count(vtex.take()), 2, "search with a category (tree, cold)");
    bridge
        .catalog(
            "search_catalog",
            json!({"query": "caneca", "filters": {"categories": ["Alimentação > Comedouro"]}}),
        )
        .await;
    assert_eq!(count(vtex.take()), 1, "search with a category (tree warm)");

    bridge.catalog("get_product", json!({"id": TEE})).await;
    assert_eq!(
        count(vtex.take()),
        2,
        "get_product: product and SKU id at once"
    );

    bridge
        .catalog(
            "lookup_catalog",
            json!({"ids": [TEE_SKUS[0].0, TEE_SKUS[2].0, mug(0)]}),
        )
        .await;
    let calls = vtex.take();
    assert_eq!(calls.len(), 1, "lookup of SKU ids: {calls:?}");
    assert!(calls[0].contains("query=sku%3A"), "{calls:?}");
    bridge
        .catalog(
            "lookup_catalog",
            json!({"ids": [TEE, "REF-2000701", "caneca-gato-3", "999999"]}),
        )
        .await;
    assert_eq!(
        count(vtex.take()),
        5,
        "mixed lookup: 3 queries, then 2 for the numbers left"
    );

    let cart = create(&bridge, vec![line(CLOCK_SKU, 1), line(&mug(0), 2)]).await;
    let id = cart["id"].as_str().unwrap().to_owned();
    assert_eq!(
        count(vtex.take()),
        3,
        "create_cart: lookup, new orderForm, add"
    );
    bridge
        .call("get_cart", json!({"meta": meta(), "id": id}))
        .await;
    assert_eq!(count(vtex.take()), 1, "get_cart");
    bridge
        .call(
            "update_cart",
            json!({"meta": meta_with_fresh_key(), "id": id, "cart": {"line_items": [line(&mug(1), 1)]}}),
        )
        .await;
    assert_eq!(
        count(vtex.take()),
        3,
        "update_cart: lookup, read, one PATCH"
    );
    bridge
        .call(
            "cancel_cart",
            json!({"meta": meta_with_fresh_key(), "id": id}),
        )
        .await;
    assert_eq!(count(vtex.take()), 2, "cancel_cart: read, removeAll");
    let gone = bridge
        .call("get_cart", json!({"meta": meta(), "id": id}))
        .await;
    assert_eq!(gone["messages"][0]["code"], "not_found");
    assert_eq!(count(vtex.take()), 1);
}

/// The same tools with the default product cache: the first call of a kind (cold) and the
/// same call again (warm). Search pages are kept by default too (issue 39 item 2).
#[tokio::test]
async fn upstream_requests_cold_and_warm_with_the_cache() {
    let (vtex, bridge) = setup("").await;
    settle(&vtex).await;
    let mut counts = Vec::new();
    for _ in 0..2 {
        bridge
            .catalog("search_catalog", json!({"query": "caneca"}))
            .await;
        let search = vtex.take().len();
        bridge.catalog("get_product", json!({"id": TEE})).await;
        let product = vtex.take().len();
        bridge
            .catalog("lookup_catalog", json!({"ids": [TEE_SKUS[0].0, mug(0)]}))
            .await;
        let lookup = vtex.take().len();
        let cart = create(&bridge, vec![line(CLOCK_SKU, 1)]).await;
        let id = cart["id"].as_str().unwrap().to_owned();
        let created = vtex.take().len();
        bridge
            .call(
                "update_cart",
                json!({"meta": meta_with_fresh_key(), "id": id, "cart": {"line_items": [line(&mug(1), 1)]}}),
            )
            .await;
        let updated = vtex.take().len();
        counts.push((search, product, lookup, created, updated));
    }
    assert_eq!(counts[0], (1, 2, 1, 3, 3), "cold");
    assert_eq!(counts[1], (0, 0, 0, 2, 2), "warm");
}

/// The example configuration shipped in the repository is valid.
#[test]
fn the_example_config_is_valid() {
    let example = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/config/vtex.example.toml"
    ))
    .unwrap();
    let config = bcp_bridge::startup::BridgeConfig::from_toml(&example);
    assert!(config.is_ok(), "{:?}", config.err());
}
