//! Catalog tools end to end: bridge → WooCommerce adapter → Store API stand-in.

use crate::support::values::ids;
use crate::support::woo_standin::{self, WooStandin};
use crate::support::{TestBridge, meta};
use serde_json::json;

async fn setup() -> (WooStandin, TestBridge) {
    let woo = WooStandin::start().await;
    let bridge = TestBridge::start(&woo.config("")).await;
    (woo, bridge)
}

fn product_calls(woo: &WooStandin) -> Vec<String> {
    woo.requests()
        .into_iter()
        .filter(|line| line.contains("/products?"))
        .collect()
}

#[tokio::test]
async fn search_maps_prices_options_categories_and_pages() {
    let (woo, bridge) = setup().await;
    // CAT-001, CAT-002, CAT-003: pagination over X-WP-Total / X-WP-TotalPages.
    let first = bridge
        .call(
            "search_catalog",
            json!({"meta": meta(), "catalog": {"query": "cup", "pagination": {"limit": 2}}}),
        )
        .await;
    assert_eq!(ids(&first["products"]), ["32", "31"]);
    assert_eq!(first["pagination"]["has_next_page"], true);
    assert_eq!(first["pagination"]["total_count"], 3);
    let cursor = first["pagination"]["cursor"].as_str().unwrap();
    let second = bridge
        .call(
            "search_catalog",
            json!({"meta": meta(), "catalog": {"query": "cup", "pagination": {"limit": 2, "cursor": cursor}}}),
        )
        .await;
    assert_eq!(ids(&second["products"]), ["30"]);
    assert_eq!(second["pagination"]["has_next_page"], false);
    let calls = product_calls(&woo);
    assert!(
        calls[0].contains("page=1") && calls[0].contains("per_page=2"),
        "{calls:?}"
    );
    assert!(
        calls
            .iter()
            .any(|c| c.contains("page=2") && c.contains("per_page=2")),
        "{calls:?}"
    );

    // Minor-unit strings become integer minor units; variable products show a purchasable
    // variant and the full price range; categories carry the merchant path.
    let tee = bridge
        .call(
            "search_catalog",
            json!({"meta": meta(), "catalog": {"query": "logo tee"}}),
        )
        .await;
    let product = &tee["products"][0];
    assert_eq!(product["id"], "11");
    assert_eq!(
        product["price_range"]["min"],
        json!({"amount": 2000, "currency": "USD"})
    );
    assert_eq!(
        product["price_range"]["max"],
        json!({"amount": 2200, "currency": "USD"})
    );
    assert_eq!(
        product["categories"],
        json!([{"value": "Clothing > T-Shirts", "taxonomy": "merchant"}])
    );
    assert_eq!(product["variants"].as_array().unwrap().len(), 1);
    assert_eq!(product["variants"][0]["availability"]["available"], true);
}

#[tokio::test]
async fn filters_are_pushed_down_as_woo_parameters() {
    let (woo, bridge) = setup().await;
    // Category path → Woo category id (children included by Woo); price in minor units.
    let result = bridge
        .call(
            "search_catalog",
            json!({"meta": meta(), "catalog": {"filters": {"categories": ["Clothing"], "price": {"min": 4600}}}}),
        )
        .await;
    assert_eq!(ids(&result["products"]), ["20"]);
    let variant = &result["products"][0]["variants"][0];
    assert_eq!(
        variant["id"], "22",
        "only the navy hoodie is within the price filter"
    );
    assert_eq!(
        variant["options"],
        json!([{"name": "Colour", "label": "Navy"}])
    );
    let calls = product_calls(&woo);
    assert!(
        calls[0].contains("category=15") && calls[0].contains("min_price=4600"),
        "{calls:?}"
    );

    let kitchen = bridge
        .call(
            "search_catalog",
            json!({"meta": meta(), "catalog": {"filters": {"categories": ["Kitchen & Dining"], "price": {"max": 999}}}}),
        )
        .await;
    assert_eq!(ids(&kitchen["products"]), ["31", "30", "10"]);
    let mug = kitchen["products"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["id"] == "10")
        .unwrap();
    assert_eq!(
        mug["variants"][0]["price"],
        json!({"amount": 999, "currency": "USD"})
    );
    assert_eq!(
        mug["variants"][0]["list_price"],
        json!({"amount": 1250, "currency": "USD"})
    );
    assert_eq!(mug["description"]["plain"], "A sturdy mug & a classic.");
    assert_eq!(mug["rating"]["value"], 4.5);

    // CAT-012: an unknown category matches nothing, without asking the store.
    woo.clear_requests();
    let none = bridge
        .call(
            "search_catalog",
            json!({"meta": meta(), "catalog": {"query": "tee", "filters": {"categories": ["Garden"]}}}),
        )
        .await;
    assert_eq!(none["products"], json!([]));
    assert!(product_calls(&woo).is_empty());
}

#[tokio::test]
async fn lookup_by_every_kind_of_id_in_two_rounds() {
    let (woo, bridge) = setup().await;
    woo.clear_requests();
    // CAT-013, CAT-015, CAT-016, CAT-018: product id, variation id, SKU of a variation,
    // slug, simple SKU; duplicates merged; one product per group with its correlations.
    let result = bridge
        .call(
            "lookup_catalog",
            json!({"meta": meta(), "catalog": {"ids": ["11", "16", "TEE-S-BLUE", "zip-hoodie", "MUG-1", "16", "999", "nope"]}}),
        )
        .await;
    assert_eq!(ids(&result["products"]), ["11", "20", "10"]);
    let tee = &result["products"][0];
    let inputs: Vec<(String, String, String)> = tee["variants"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|v| {
            v["inputs"].as_array().unwrap().iter().map(move |i| {
                (
                    v["id"].as_str().unwrap().to_owned(),
                    i["id"].as_str().unwrap().to_owned(),
                    i["match"].as_str().unwrap().to_owned(),
                )
            })
        })
        .collect();
    assert!(
        inputs.contains(&("16".into(), "16".into(), "exact".into())),
        "{inputs:?}"
    );
    assert!(
        inputs.contains(&("13".into(), "TEE-S-BLUE".into(), "exact".into())),
        "{inputs:?}"
    );
    assert!(
        inputs
            .iter()
            .any(|(_, input, m)| input == "11" && m == "featured"),
        "{inputs:?}"
    );
    assert_eq!(
        result["products"][2]["variants"][0]["inputs"][0]["match"],
        "exact"
    );
    // CAT-021: unknown ids come back as info messages.
    let not_found: Vec<&str> = result["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["code"] == "not_found")
        .map(|m| m["content"].as_str().unwrap())
        .collect();
    assert_eq!(not_found, ["999", "nope"]);
    // Round one: by id (products, variations), by SKU, by slug (each of the last two
    // matches products and variations); round two: all variations of the two variable
    // products in one call (ROUND-TRIPS.md a).
    let calls = product_calls(&woo);
    assert_eq!(calls.len(), 5, "{calls:#?}");
    assert!(
        calls
            .iter()
            .any(|c| c.contains("type=variation") && c.contains("parent=11%2C20")),
        "{calls:#?}"
    );
}

#[tokio::test]
async fn get_product_sees_every_variation_and_relaxes() {
    let (_woo, bridge) = setup().await;
    // CAT-014, CAT-033: product id; M/Blue (15) is out of stock in the store.
    let result = bridge
        .call(
            "get_product",
            json!({"meta": meta(), "catalog": {"id": "11", "selected": [{"name": "Size", "label": "M"}, {"name": "Color", "label": "Blue"}]}}),
        )
        .await;
    let product = &result["product"];
    assert_eq!(
        product["selected"],
        json!([{"name": "Size", "label": "M"}, {"name": "Color", "label": "Blue"}])
    );
    assert_eq!(product["variants"][0]["id"], "15");
    assert_eq!(product["variants"][0]["availability"]["available"], false);
    let sizes = &product["options"][0];
    assert_eq!(sizes["name"], "Size");
    let m = sizes["values"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["label"] == "M")
        .unwrap();
    assert_eq!(m["available"], false);
    let s = sizes["values"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["label"] == "S")
        .unwrap();
    assert_eq!(s["available"], true);

    // Relaxation over complete data: XL does not exist, so it is dropped.
    let relaxed = bridge
        .call(
            "get_product",
            json!({"meta": meta(), "catalog": {"id": "11", "selected": [{"name": "Color", "label": "Red"}, {"name": "Size", "label": "XL"}], "preferences": ["Color"]}}),
        )
        .await;
    assert_eq!(
        relaxed["product"]["selected"],
        json!([{"name": "Color", "label": "Red"}])
    );
    assert_eq!(relaxed["product"]["variants"].as_array().unwrap().len(), 3);

    // CAT-032: a variation id puts that variant first; taxonomy terms show their names.
    let hoodie = bridge
        .call(
            "get_product",
            json!({"meta": meta(), "catalog": {"id": "21"}}),
        )
        .await;
    assert_eq!(hoodie["product"]["id"], "20");
    assert_eq!(hoodie["product"]["variants"][0]["id"], "21");
    assert_eq!(
        hoodie["product"]["selected"],
        json!([{"name": "Colour", "label": "Forest Green"}])
    );
    assert_eq!(
        hoodie["product"]["categories"][0]["value"],
        "Clothing > Hoodies"
    );

    // CAT-019: unknown id → business error, not a protocol error.
    let missing = bridge
        .call(
            "get_product",
            json!({"meta": meta(), "catalog": {"id": "404"}}),
        )
        .await;
    assert_eq!(missing["ucp"]["status"], "error");
    assert_eq!(missing["messages"][0]["code"], "not_found");
}

#[tokio::test]
async fn large_batches_are_chunked_to_the_store_page_size() {
    let woo = WooStandin::start().await;
    let config = format!("[limits]\nmax_lookup_batch = 250\n{}", woo.config(""));
    let bridge = TestBridge::start(&config).await;
    // CAT-027: within the bridge's limit, no id is lost to the Store API's 100-per-page cap.
    let mut wanted: Vec<String> = (1000..1150).map(|n| n.to_string()).collect();
    wanted.push("30".to_owned());
    woo.clear_requests();
    let result = bridge
        .call(
            "lookup_catalog",
            json!({"meta": meta(), "catalog": {"ids": wanted}}),
        )
        .await;
    assert_eq!(ids(&result["products"]), ["30"]);
    let by_include = product_calls(&woo)
        .into_iter()
        .filter(|c| c.contains("include="))
        .count();
    assert_eq!(by_include, 4, "two chunks, products and variations");
}

#[tokio::test]
async fn rest_v3_keys_add_the_merchant_default_variation_and_stay_secret() {
    let woo = WooStandin::start().await;
    // WooCommerce takes the keys only over TLS: the stand-in plays a store behind a
    // TLS-terminating proxy on loopback, which the configuration must declare.
    let keys = format!(
        "consumer_key = \"{}\"\nconsumer_secret = \"{}\"\nrest_v3_tls_proxy = true",
        woo_standin::V3_KEY,
        woo_standin::V3_SECRET
    );
    let bridge = TestBridge::start(&woo.config(&keys)).await;
    let mut seen = Vec::new();
    // Without keys the first purchasable variation (12, S/Red) is featured; the merchant's
    // default is L/Blue (17), and Navy (22) for the hoodie.
    let product = bridge
        .call(
            "get_product",
            json!({"meta": meta(), "catalog": {"id": "11"}}),
        )
        .await;
    assert_eq!(product["product"]["variants"][0]["id"], "17");
    seen.push(product);
    let lookup = bridge
        .call(
            "lookup_catalog",
            json!({"meta": meta(), "catalog": {"ids": ["zip-hoodie"]}}),
        )
        .await;
    assert_eq!(lookup["products"][0]["variants"][0]["id"], "22");
    seen.push(lookup);
    let search = bridge
        .call(
            "search_catalog",
            json!({"meta": meta(), "catalog": {"query": "logo"}}),
        )
        .await;
    assert_eq!(search["products"][0]["variants"][0]["id"], "17");
    seen.push(search);
    // Sent as Basic auth, never as query parameters.
    assert!(
        woo.requests()
            .iter()
            .all(|line| !line.contains("consumer_"))
    );
    assert!(
        woo.requests()
            .iter()
            .any(|line| line.contains("/wc/v3/products?include="))
    );

    // Wrong keys: the store answers 401, the tools still work without the default.
    let wrong = TestBridge::start(
        &woo.config(
            "consumer_key = \"ck_wrong\"\nconsumer_secret = \"cs_wrong_secret_value\"\nrest_v3_tls_proxy = true",
        ),
    )
    .await;
    let fallback = wrong
        .call(
            "get_product",
            json!({"meta": meta(), "catalog": {"id": "11"}}),
        )
        .await;
    assert_eq!(fallback["product"]["variants"][0]["id"], "12");
    seen.push(fallback);
    let (_, tools) = bridge
        .rpc(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
        .await;
    seen.push(tools);
    let text = serde_json::to_string(&seen).unwrap();
    for secret in [
        woo_standin::V3_KEY,
        woo_standin::V3_SECRET,
        "cs_wrong_secret_value",
    ] {
        assert!(!text.contains(secret), "secret leaked into a response");
    }
}

#[test]
fn rest_v3_keys_over_plain_http_are_a_configuration_problem() {
    // Issue 10: WooCommerce answers every Basic-auth request over http with 401, loopback
    // or not, so `check` (and start-up) names the case instead of a 401 at run time.
    let config = format!(
        "[store]\nplatform = \"woocommerce\"\nbase_url = \"http://127.0.0.1:8081\"\ncurrency = \"BRL\"\nconsumer_key = \"{}\"\nconsumer_secret = \"{}\"\n",
        woo_standin::V3_KEY,
        woo_standin::V3_SECRET
    );
    let problems = match bcp_bridge::startup::BridgeConfig::from_toml(&config) {
        Err(error) => format!("{error:?}"),
        Ok(_) => panic!("http + REST v3 keys must not pass"),
    };
    assert!(problems.contains("store.consumer_key"), "{problems}");
    assert!(problems.contains("only over https"), "{problems}");
    assert!(!problems.contains(woo_standin::V3_SECRET));
}

#[tokio::test]
async fn without_keys_the_first_purchasable_variation_is_featured() {
    let (woo, bridge) = setup().await;
    let product = bridge
        .call(
            "get_product",
            json!({"meta": meta(), "catalog": {"id": "11"}}),
        )
        .await;
    assert_eq!(product["product"]["variants"][0]["id"], "12");
    assert!(woo.requests().iter().all(|line| !line.contains("/wc/v3/")));
}

#[tokio::test]
async fn price_range_reflects_the_variants_the_filter_kept() {
    // Issue 10: Zip Hoodie's variants cost 4500 and 4800 (Woo's own range 4500–4800); with
    // `min: 4600` only the 4800 one is in range, and so is the price range.
    let (_woo, bridge) = setup().await;
    for (tool, catalog) in [
        (
            "search_catalog",
            json!({"query": "hoodie", "filters": {"price": {"min": 4600}}}),
        ),
        (
            "lookup_catalog",
            json!({"ids": ["20"], "filters": {"price": {"min": 4600}}}),
        ),
    ] {
        let result = bridge
            .call(tool, json!({"meta": meta(), "catalog": catalog}))
            .await;
        let hoodie = &result["products"][0];
        assert_eq!(hoodie["id"], "20", "{tool}: {result}");
        assert_eq!(hoodie["price_range"]["min"]["amount"], 4800, "{tool}");
        assert_eq!(hoodie["price_range"]["max"]["amount"], 4800, "{tool}");
    }
    let product = bridge
        .call(
            "get_product",
            json!({"meta": meta(), "catalog": {"id": "20", "filters": {"price": {"min": 4600}}}}),
        )
        .await;
    assert_eq!(product["product"]["price_range"]["min"]["amount"], 4800);
    // Without a filter the range is the whole product's.
    let plain = bridge
        .call(
            "lookup_catalog",
            json!({"meta": meta(), "catalog": {"ids": ["20"]}}),
        )
        .await;
    assert_eq!(plain["products"][0]["price_range"]["min"]["amount"], 4500);
}
