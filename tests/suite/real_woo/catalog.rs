//! Catalog tools against the real store's catalog (tests/real_woo/catalog.php).

use serde_json::{Value, json};

use super::store::{real_store, shared};
use crate::support::meta;

fn ids(products: &Value) -> Vec<String> {
    products
        .as_array()
        .unwrap_or_else(|| panic!("no products: {products}"))
        .iter()
        .map(|p| p["id"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
#[ignore = "needs the real WooCommerce: bash .ci/real-woo.sh test"]
async fn search_walks_every_page_once() {
    let store = real_store();
    let _shared = shared().await;
    let bridge = store.bridge("").await;
    // CAT-001, CAT-002, CAT-003: 12 "Bermuda" products in pages of 5.
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        let mut catalog = json!({"query": "bermuda", "pagination": {"limit": 5}});
        if let Some(cursor) = &cursor {
            catalog["pagination"]["cursor"] = json!(cursor);
        }
        let page = bridge
            .call(
                "search_catalog",
                json!({"meta": meta(), "catalog": catalog}),
            )
            .await;
        pages += 1;
        assert_eq!(page["pagination"]["total_count"], 12, "{page}");
        let found = ids(&page["products"]);
        assert_eq!(found.len(), if pages < 3 { 5 } else { 2 }, "{page}");
        seen.extend(found);
        if page["pagination"]["has_next_page"] == false {
            assert!(page["pagination"].get("cursor").is_none_or(Value::is_null));
            break;
        }
        cursor = Some(page["pagination"]["cursor"].as_str().unwrap().to_owned());
        assert!(pages < 3, "more pages than the store has");
    }
    assert_eq!(pages, 3);
    let mut expected: Vec<String> = (1..=12)
        .map(|i| store.sid(&format!("bermuda{i}")))
        .collect();
    expected.sort();
    seen.sort();
    assert_eq!(seen, expected, "every product exactly once");

    // CAT-004: a category filter is pushed down; the category path comes from the store.
    let shorts = bridge
        .call(
            "search_catalog",
            json!({"meta": meta(), "catalog": {"filters": {"categories": ["Clothing > Shorts"]}, "pagination": {"limit": 20}}}),
        )
        .await;
    assert_eq!(ids(&shorts["products"]).len(), 12, "{shorts}");
    assert_eq!(
        shorts["products"][0]["categories"][0]["value"],
        "Clothing > Shorts"
    );
    // Prices in BRL minor units from the store's strings (Bermuda 1: 31.07).
    let first = bridge
        .call(
            "search_catalog",
            json!({"meta": meta(), "catalog": {"query": "Bermuda 1"}}),
        )
        .await;
    let bermuda1 = first["products"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["id"] == store.sid("bermuda1"))
        .unwrap_or_else(|| panic!("{first}"));
    assert_eq!(
        bermuda1["price_range"]["min"],
        json!({"amount": 3107, "currency": "BRL"})
    );
}

#[tokio::test]
#[ignore = "needs the real WooCommerce: bash .ci/real-woo.sh test"]
async fn lookup_mixes_ids_variations_skus_and_slugs() {
    let store = real_store();
    let _shared = shared().await;
    let bridge = store.bridge("").await;
    // CAT-013, CAT-015, CAT-016, CAT-018, CAT-021: a product id, a variation id, a variation
    // SKU, a slug, a simple SKU, a duplicate and two unknowns.
    let garrafa = store.sid("garrafa");
    let preto40 = store.sid("var_preto_40");
    let result = bridge
        .call(
            "lookup_catalog",
            json!({"meta": meta(), "catalog": {"ids": [
                garrafa, preto40, "TENIS-AZUL-40", "bolsa-de-lona", "CINTO-3", garrafa, "99999", "nope"
            ]}}),
        )
        .await;
    let mut found = ids(&result["products"]);
    found.sort();
    let mut expected = vec![
        store.sid("garrafa"),
        store.sid("tenis"),
        store.sid("bolsa"),
        store.sid("cinto"),
    ];
    expected.sort();
    assert_eq!(found, expected, "{result}");
    let tenis = result["products"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["id"] == store.sid("tenis"))
        .unwrap();
    let inputs: Vec<(String, String)> = tenis["variants"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|v| {
            v["inputs"]
                .as_array()
                .map(|inputs| {
                    inputs
                        .iter()
                        .map(|i| {
                            (
                                v["id"].as_str().unwrap().to_owned(),
                                i["id"].as_str().unwrap().to_owned(),
                            )
                        })
                        .collect::<Vec<_>>()
                })
                .unwrap_or_default()
        })
        .collect();
    assert!(
        inputs.contains(&(preto40.clone(), preto40.clone())),
        "{inputs:?}"
    );
    assert!(
        inputs.contains(&(store.sid("var_azul_40"), "TENIS-AZUL-40".to_owned())),
        "{inputs:?}"
    );
    let mut not_found: Vec<&str> = result["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["code"] == "not_found")
        .map(|m| m["content"].as_str().unwrap())
        .collect();
    not_found.sort_unstable();
    assert_eq!(not_found, ["99999", "nope"], "{result}");
}

/// SKUs with a space and with non-ASCII letters are looked up as the store spells them
/// (`sku=BOLSA+LONA,CANECA-CAF%C3%89`, one percent-encoded query value) and found.
#[tokio::test]
#[ignore = "needs the real WooCommerce: bash .ci/real-woo.sh test"]
async fn lookup_finds_any_sku_the_store_accepts() {
    let store = real_store();
    let _shared = shared().await;
    let bridge = store.bridge("").await;
    let result = bridge
        .call(
            "lookup_catalog",
            json!({"meta": meta(), "catalog": {"ids": ["BOLSA LONA", "CANECA-CAFÉ"]}}),
        )
        .await;
    let mut found = ids(&result["products"]);
    found.sort();
    let mut expected = vec![store.sid("bolsa"), store.sid("caneca")];
    expected.sort();
    assert_eq!(found, expected, "{result}");
}

#[tokio::test]
#[ignore = "needs the real WooCommerce: bash .ci/real-woo.sh test"]
async fn get_product_selects_options_over_real_variations() {
    let store = real_store();
    let _shared = shared().await;
    let bridge = store.bridge("").await;
    // CAT-014, CAT-033: Branco/40 exists but is sold out.
    let result = bridge
        .call(
            "get_product",
            json!({"meta": meta(), "catalog": {"id": store.sid("tenis"), "selected": [
                {"name": "Color", "label": "Branco"}, {"name": "Size", "label": "40"}
            ]}}),
        )
        .await;
    let product = &result["product"];
    assert_eq!(product["id"], store.sid("tenis"), "{result}");
    assert_eq!(product["title"], "Tênis de Corrida");
    assert_eq!(
        product["selected"],
        json!([{"name": "Color", "label": "Branco"}, {"name": "Size", "label": "40"}])
    );
    assert_eq!(product["variants"][0]["id"], store.sid("var_branco_40"));
    assert_eq!(product["variants"][0]["availability"]["available"], false);
    // The variants that match the selection; the price range spans all 299.90–349.90.
    assert_eq!(product["variants"].as_array().unwrap().len(), 1, "{result}");
    assert_eq!(product["price_range"]["min"]["amount"], 29990);
    assert_eq!(product["price_range"]["max"]["amount"], 34990);
    let names: Vec<&str> = product["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["Color", "Size"]);

    // CAT-033: without a selection the answer selects the featured variant's options, so
    // `variants` is that one variant; the options still list every value of the eight
    // variations (Azul/42 does not exist).
    let all = bridge
        .call(
            "get_product",
            json!({"meta": meta(), "catalog": {"id": store.sid("tenis")}}),
        )
        .await;
    let featured = &all["product"]["variants"][0];
    assert_eq!(
        all["product"]["variants"].as_array().unwrap().len(),
        1,
        "{all}"
    );
    assert_eq!(all["product"]["selected"], featured["options"], "{all}");
    assert_eq!(featured["availability"]["available"], true, "{all}");
    let sizes = &all["product"]["options"][1];
    let labels: Vec<&str> = sizes["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels, ["38", "40", "42"], "{sizes}");

    // CAT-032: a variation id puts that variant first and selects its options.
    let by_variation = bridge
        .call(
            "get_product",
            json!({"meta": meta(), "catalog": {"id": store.sid("var_azul_40")}}),
        )
        .await;
    assert_eq!(by_variation["product"]["id"], store.sid("tenis"));
    assert_eq!(
        by_variation["product"]["variants"][0]["id"],
        store.sid("var_azul_40")
    );
    assert_eq!(
        by_variation["product"]["selected"],
        json!([{"name": "Color", "label": "Azul"}, {"name": "Size", "label": "40"}])
    );

    // Relaxation: Azul/42 does not exist; with Color preferred, Size is dropped.
    let relaxed = bridge
        .call(
            "get_product",
            json!({"meta": meta(), "catalog": {"id": store.sid("tenis"), "selected": [
                {"name": "Color", "label": "Azul"}, {"name": "Size", "label": "42"}
            ], "preferences": ["Color"]}}),
        )
        .await;
    assert_eq!(
        relaxed["product"]["selected"],
        json!([{"name": "Color", "label": "Azul"}]),
        "{relaxed}"
    );

    // CAT-019: unknown id → business error.
    let missing = bridge
        .call(
            "get_product",
            json!({"meta": meta(), "catalog": {"id": "99999"}}),
        )
        .await;
    assert_eq!(missing["ucp"]["status"], "error");
    assert_eq!(missing["messages"][0]["code"], "not_found");
}
