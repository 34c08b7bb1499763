//! The Shopify adapter end to end (locale and country checks, throttling, category browse,
//! images, SKU lookups, stock, cart line costs, round trips): agent → bridge (real HTTP) →
//! Shopify adapter → the schema-validating Storefront stand-in. Cache off, so every count is upstream requests.

use std::time::{Duration, Instant};

use crate::support::shopify_standin::*;
use crate::support::{TestBridge, meta, meta_with_key};
use bcp_bridge::startup::{BridgeConfig, ConfigError};
use serde_json::{Value, json};

const NO_CACHE: &str = "\n[cache]\nenabled = false\n";

async fn setup() -> (Standin, TestBridge) {
    let standin = Standin::start();
    let bridge = TestBridge::start(&(standin.config("currency = \"USD\"") + NO_CACHE)).await;
    standin.reset_counts();
    (standin, bridge)
}

fn key() -> Value {
    meta_with_key(&uuid::Uuid::new_v4().to_string())
}

fn variant(id: u64) -> String {
    format!("gid://shopify/ProductVariant/{id}")
}

fn line(id: u64, quantity: u32) -> Value {
    json!({"item": {"id": variant(id)}, "quantity": quantity})
}

fn path(error: &Value) -> &str {
    error["data"]["path"].as_str().unwrap_or_default()
}

#[tokio::test]
async fn a_country_or_language_shopify_does_not_know_is_refused_naming_its_path() {
    let (standin, bridge) = setup().await;
    for (context, wanted) in [
        (
            json!({"address_country": "XX"}),
            "$.catalog.context.address_country",
        ),
        (json!({"language": "xx-ZZ"}), "$.catalog.context.language"),
    ] {
        let (_, error) = bridge
            .call_error(
                "search_catalog",
                json!({"meta": meta(), "catalog": {"query": "cat", "context": context}}),
            )
            .await;
        assert_eq!(error["code"], -32602, "{error}");
        assert_eq!(path(&error), wanted, "{error}");
        assert!(error["data"].get("retry_after").is_none());
    }
    let (_, error) = bridge
        .call_error(
            "get_product",
            json!({"meta": meta(), "catalog": {"id": "cat", "context": {"address_country": "XX"}}}),
        )
        .await;
    assert_eq!(path(&error), "$.catalog.context.address_country");
    // Refused before Shopify was asked anything.
    assert_eq!(standin.requests(), 0, "{:?}", standin.operations());

    // A regional language Shopify lacks falls back to its language; a known one passes.
    bridge
        .call(
            "search_catalog",
            json!({"meta": meta(), "catalog": {"query": "cat", "context": {"address_country": "br", "language": "en-US"}}}),
        )
        .await;
    let body = standin.bodies().pop().unwrap();
    assert!(body.contains("\"language\":\"EN\""), "{body}");

    // Cart tools: the same refusal, no cart written.
    standin.reset_counts();
    let (_, error) = bridge
        .call_error(
            "create_cart",
            json!({"meta": key(), "cart": {"line_items": [line(MUG_VARIANT, 1)], "context": {"address_country": "XX"}}}),
        )
        .await;
    assert_eq!(error["code"], -32602, "{error}");
    assert_eq!(path(&error), "$.cart.context.address_country");
    assert_eq!(standin.requests(), 0, "{:?}", standin.operations());
}

#[test]
fn the_configured_country_must_be_one_shopify_knows() {
    let text = "[store]\nplatform = \"shopify\"\nshop_domain = \"shop.myshopify.com\"\npublic_token = \"t\"\ncurrency = \"USD\"\ncountry = \"XX\"\n";
    match BridgeConfig::from_toml(text) {
        Err(ConfigError::Invalid(problems)) => {
            assert!(
                problems
                    .iter()
                    .any(|problem| problem.key == "store.country"),
                "{problems:?}"
            );
        }
        Err(other) => panic!("unexpected {other}"),
        Ok(_) => panic!("accepted country XX"),
    }
}

#[tokio::test]
async fn graphql_throttled_reads_are_retried_like_http_429() {
    let (standin, bridge) = setup().await;
    standin.throttle_next(1);
    let started = Instant::now();
    let result = bridge
        .call(
            "search_catalog",
            json!({"meta": meta(), "catalog": {"query": "cat"}}),
        )
        .await;
    assert_eq!(result["products"][0]["handle"], "cat");
    // The throttled answer, then the retried one.
    assert_eq!(standin.operations(), ["SearchProducts", "SearchProducts"]);
    // Shopify's bucket refills within a second: the retry waited for it.
    assert!(started.elapsed() >= Duration::from_millis(900));

    // Writes are not repeated: a throttled cartCreate is the agent's to retry.
    standin.reset_counts();
    let bridge = TestBridge::start(&(standin.config("currency = \"USD\"") + NO_CACHE)).await;
    standin.reset_counts();
    standin.throttle_operation("CartCreate", 1);
    let (_, error) = bridge
        .call_error(
            "create_cart",
            json!({"meta": key(), "cart": {"line_items": [line(MUG_VARIANT, 1)]}}),
        )
        .await;
    assert_eq!(error["code"], -32000);
    assert_eq!(error["data"]["retry_after"], 1);
    assert_eq!(standin.operations(), ["CartCreate"]);
}

#[tokio::test]
async fn a_browse_by_shopify_category_is_answered_by_shopify_in_one_page() {
    let (standin, bridge) = setup().await;
    let result = bridge
        .call(
            "search_catalog",
            json!({"meta": meta(), "catalog": {"filters": {"categories": ["aa-2-5"]}, "pagination": {"limit": 10}}}),
        )
        .await;
    let handles: Vec<&str> = result["products"]
        .as_array()
        .unwrap()
        .iter()
        .map(|product| product["handle"].as_str().unwrap())
        .collect();
    let wanted: Vec<String> = CATEGORY_SOCKS
        .iter()
        .map(|index| format!("sock-{index}"))
        .collect();
    assert_eq!(handles, wanted);
    assert_eq!(result["pagination"]["has_next_page"], false);
    assert_eq!(standin.operations(), ["SearchProducts"]);
    let body = standin.bodies().pop().unwrap();
    assert!(
        body.contains("gid://shopify/TaxonomyCategory/aa-2-5"),
        "{body}"
    );
}

#[tokio::test]
async fn every_image_of_a_product_is_shown() {
    let (_standin, bridge) = setup().await;
    let result = bridge
        .call(
            "get_product",
            json!({"meta": meta(), "catalog": {"id": format!("gid://shopify/Product/{GALLERY}")}}),
        )
        .await;
    assert_eq!(
        result["product"]["media"].as_array().unwrap().len(),
        15,
        "{}",
        result["product"]["media"]
    );
}

#[tokio::test]
async fn skus_with_accents_and_spaces_are_looked_up_and_shared_skus_name_every_variant() {
    let (standin, bridge) = setup().await;
    let result = bridge
        .call(
            "lookup_catalog",
            json!({"meta": meta(), "catalog": {"ids": ["CAMISETA-AÇAÍ", "CAMISA AZUL 42", "DUP-SKU"]}}),
        )
        .await;
    let mut matched: Vec<(String, String)> = Vec::new();
    for product in result["products"].as_array().unwrap() {
        for variant in product["variants"].as_array().unwrap() {
            for input in variant["inputs"].as_array().unwrap() {
                assert_eq!(input["match"], "exact");
                matched.push((
                    input["id"].as_str().unwrap().to_owned(),
                    variant["id"].as_str().unwrap().to_owned(),
                ));
            }
        }
    }
    matched.sort();
    let mut wanted = vec![
        ("CAMISETA-AÇAÍ".to_owned(), variant(CAMISETA_P)),
        ("CAMISA AZUL 42".to_owned(), variant(CAMISETA_M)),
        ("DUP-SKU".to_owned(), variant(CAMISETA_G)),
        ("DUP-SKU".to_owned(), variant(CANECA_VARIANT)),
    ];
    wanted.sort();
    assert_eq!(matched, wanted, "{result}");
    assert!(result.get("messages").is_none_or(|messages| {
        messages
            .as_array()
            .unwrap()
            .iter()
            .all(|message| message["code"] != "not_found")
    }));
    assert_eq!(standin.operations(), ["SearchProducts"]);
    // Each SKU went out as one quoted phrase (accents intact), never as search operators.
    let body: Value = serde_json::from_str(&standin.bodies()[0]).unwrap();
    assert_eq!(
        body["variables"]["query"],
        "\"CAMISETA-AÇAÍ\" OR \"CAMISA AZUL 42\" OR \"DUP-SKU\""
    );

    // Quotes and backslashes inside a SKU are escaped, not interpreted.
    standin.reset_counts();
    bridge
        .call(
            "lookup_catalog",
            json!({"meta": meta(), "catalog": {"ids": ["a\" OR title:*", "b\\c"]}}),
        )
        .await;
    let body: Value = serde_json::from_str(&standin.bodies().pop().unwrap()).unwrap();
    assert_eq!(
        body["variables"]["query"],
        "\"a\\\" OR title:*\" OR \"b\\\\c\""
    );
}

#[tokio::test]
async fn a_variant_sold_while_out_of_stock_reads_as_backorder() {
    let (_standin, bridge) = setup().await;
    let result = bridge
        .call(
            "lookup_catalog",
            json!({"meta": meta(), "catalog": {"ids": [variant(CAMISETA_G), variant(CAMISETA_P), variant(CAMISETA_GG)]}}),
        )
        .await;
    let variants = result["products"][0]["variants"].as_array().unwrap();
    let status = |id: u64| {
        variants
            .iter()
            .find(|candidate| candidate["id"] == variant(id))
            .unwrap()["availability"]
            .clone()
    };
    assert_eq!(
        status(CAMISETA_G),
        json!({"available": true, "status": "backorder"})
    );
    assert_eq!(status(CAMISETA_P)["status"], "in_stock");
    assert_eq!(
        status(CAMISETA_GG),
        json!({"available": false, "status": "out_of_stock"})
    );
}

#[tokio::test]
async fn a_sold_out_message_names_the_product_and_the_variant() {
    let (_standin, bridge) = setup().await;
    let result = bridge
        .call(
            "create_cart",
            json!({"meta": key(), "cart": {"line_items": [line(CAMISETA_GG, 1), line(MUG_VARIANT, 1)]}}),
        )
        .await;
    let message = result["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|message| message["code"] == "out_of_stock")
        .unwrap();
    assert_eq!(message["content"], "Camiseta — GG is out of stock");
    assert_eq!(message["path"], "$.line_items[0]");
}

/// Shopify judges cart lines (`LineJudge::Store`): variant gids go straight into the write,
/// and only what the write cannot say costs a read.
#[tokio::test]
async fn cart_lines_cost_a_read_only_when_the_write_cannot_judge_them() {
    let (standin, bridge) = setup().await;
    let items = |ids: &[&str]| -> Vec<Value> {
        ids.iter()
            .map(|id| json!({"item": {"id": id}, "quantity": 1}))
            .collect()
    };

    // A sold-out line Shopify leaves out: its title is read afterwards, in one request of
    // just the titles, so the message names product and variant.
    let result = bridge
        .call(
            "create_cart",
            json!({"meta": key(), "cart": {"line_items": [line(MUG_VARIANT, 1), line(CAMISETA_GG, 1)]}}),
        )
        .await;
    assert_eq!(standin.operations(), ["CartCreate", "VariantTitles"]);
    let message = &result["messages"][0];
    assert_eq!(message["code"], "out_of_stock");
    assert_eq!(message["path"], "$.line_items[1]");
    assert_eq!(message["content"], "Camiseta — GG is out of stock");

    // Everything sold out: no cart, and nothing to discard in Shopify. // CART-016
    standin.reset_counts();
    let none = bridge
        .call(
            "create_cart",
            json!({"meta": key(), "cart": {"line_items": [line(LAMP_VARIANT, 1)]}}),
        )
        .await;
    assert_eq!(none["ucp"]["status"], "error", "{none}");
    assert_eq!(none["messages"][0]["code"], "out_of_stock");
    assert!(none.get("id").is_none());
    assert_eq!(standin.operations(), ["CartCreate", "VariantTitles"]);

    // A SKU, a handle-less product gid and a number are looked up in one round first (the
    // SKU's search; the gids' nodes), and each problem lands on the agent's own line.
    standin.reset_counts();
    let created = bridge
        .call(
            "create_cart",
            json!({"meta": key(), "cart": {"line_items": items(&[
                "SOCK-7",
                &format!("gid://shopify/Product/{CAMISETA}"),
                &format!("gid://shopify/Product/{MUG}"),
                "gid://shopify/Collection/1",
                "SOCK-7-NOPE",
            ])}}),
        )
        .await;
    let mut operations = standin.operations();
    operations.sort();
    assert_eq!(operations, ["CartCreate", "Nodes", "SearchProducts"]);
    let lines: Vec<&str> = created["line_items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|line| line["item"]["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        lines,
        [variant(SOCK_FIRST + 7 + 100_000), variant(MUG_VARIANT)]
    );
    let at = |path: &str| {
        created["messages"]
            .as_array()
            .unwrap()
            .iter()
            .find(|message| message["path"] == path)
            .unwrap_or_else(|| panic!("no message at {path}: {created}"))["code"]
            .clone()
    };
    assert_eq!(at("$.line_items[1]"), "item_unavailable");
    assert_eq!(at("$.line_items[3]"), "not_found");
    assert_eq!(at("$.line_items[4]"), "not_found");

    // update_cart: the cart read and a SKU's lookup go out together, then one write.
    let id = created["id"].as_str().unwrap().to_owned();
    standin.reset_counts();
    let updated = bridge
        .call(
            "update_cart",
            json!({"meta": key(), "id": id, "cart": {"line_items": items(&["SOCK-8", &variant(MUG_VARIANT)])}}),
        )
        .await;
    let mut operations = standin.operations();
    operations.sort();
    assert_eq!(operations, ["CartGet", "CartReplace", "SearchProducts"]);
    assert_eq!(
        updated["line_items"][1]["item"]["id"],
        variant(SOCK_FIRST + 8 + 100_000),
        "{updated}"
    );
}

#[test]
fn checkout_params_may_not_overwrite_the_cart_key() {
    for (platform, store, reserved) in [
        (
            "shopify",
            "platform = \"shopify\"\nshop_domain = \"shop.myshopify.com\"\npublic_token = \"t\"\ncurrency = \"USD\"",
            "key",
        ),
        (
            "woocommerce",
            "platform = \"woocommerce\"\nbase_url = \"https://shop.example\"\ncurrency = \"USD\"",
            "session",
        ),
    ] {
        let text = format!(
            "[store]\n{store}\n[cart]\ncheckout_params = {{ {reserved} = \"x\", utm_source = \"agent\" }}\n"
        );
        match BridgeConfig::from_toml(&text) {
            Err(ConfigError::Invalid(problems)) => {
                let keys: Vec<&str> = problems
                    .iter()
                    .map(|problem| problem.key.as_str())
                    .collect();
                assert_eq!(
                    keys,
                    [format!("cart.checkout_params.{reserved}")],
                    "{platform}"
                );
            }
            Err(other) => panic!("{platform}: unexpected {other}"),
            Ok(_) => panic!("{platform}: accepted checkout_params.{reserved}"),
        }
        let text =
            format!("[store]\n{store}\n[cart]\ncheckout_params = {{ utm_source = \"agent\" }}\n");
        assert!(BridgeConfig::from_toml(&text).is_ok(), "{platform}");
    }
}

#[tokio::test]
async fn round_trips_at_the_floor() {
    let (standin, bridge) = setup().await;

    // get_product: one request, two past 250 variants.
    bridge
        .call(
            "get_product",
            json!({"meta": meta(), "catalog": {"id": format!("gid://shopify/Product/{MUG}")}}),
        )
        .await;
    assert_eq!(standin.requests(), 1, "{:?}", standin.operations());
    standin.reset_counts();
    bridge
        .call(
            "get_product",
            json!({"meta": meta(), "catalog": {"id": format!("gid://shopify/Product/{TEE}")}}),
        )
        .await;
    assert_eq!(standin.requests(), 2, "{:?}", standin.operations());

    // lookup_catalog, 50 mixed ids (gids, numbers, handles, SKUs, one beyond a big product's
    // first 50 variants, unknown ones): two requests, sent together.
    standin.reset_counts();
    let mut ids: Vec<String> = (0..20)
        .map(|index| format!("gid://shopify/Product/{}", SOCK_FIRST + index))
        .collect();
    ids.extend((20..30).map(|index| (SOCK_FIRST + index + 100_000).to_string()));
    ids.extend((30..40).map(|index| format!("sock-{index}")));
    ids.extend((40..46).map(|index| format!("SOCK-{index}")));
    ids.extend([
        "TEE-12-03".to_owned(),
        "CAMISETA-AÇAÍ".to_owned(),
        "no-such-handle".to_owned(),
        "gid://shopify/Product/424242".to_owned(),
    ]);
    assert_eq!(ids.len(), 50);
    let result = bridge
        .call(
            "lookup_catalog",
            json!({"meta": meta(), "catalog": {"ids": ids}}),
        )
        .await;
    assert_eq!(result["products"].as_array().unwrap().len(), 48);
    let mut operations = standin.operations();
    operations.sort();
    assert_eq!(operations, ["Nodes", "SearchProducts"]);

    // create_cart: one cartCreate; Shopify judges the lines, nothing is read first.
    standin.reset_counts();
    let created = bridge
        .call(
            "create_cart",
            json!({"meta": key(), "cart": {"line_items": [line(MUG_VARIANT, 1), line(CANDLE_VARIANT, 1)]}}),
        )
        .await;
    let id = created["id"].as_str().unwrap().to_owned();
    assert_eq!(standin.operations(), ["CartCreate"]);

    // update_cart, full replacement (a change, a removal and an addition): read + one write.
    standin.reset_counts();
    let updated = bridge
        .call(
            "update_cart",
            json!({"meta": key(), "id": id, "cart": {"line_items": [line(MUG_VARIANT, 3), line(CAT_FIRST_VARIANT, 1)]}}),
        )
        .await;
    let lines: Vec<(String, u64)> = updated["line_items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|line| {
            (
                line["item"]["id"].as_str().unwrap().to_owned(),
                line["quantity"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        lines,
        [(variant(MUG_VARIANT), 3), (variant(CAT_FIRST_VARIANT), 1)]
    );
    assert_eq!(standin.operations(), ["CartGet", "CartReplace"]);

    // cancel_cart: read + one write that marks and empties.
    standin.reset_counts();
    bridge
        .call("cancel_cart", json!({"meta": key(), "id": id}))
        .await;
    assert_eq!(standin.operations(), ["CartGet", "CartCancel"]);
    assert_eq!(standin.cart_line_count(&id), 0);
    assert!(
        standin
            .cart_attributes(&id)
            .iter()
            .any(|(key, _)| key == "_bcp_cancelled")
    );
    let gone = bridge
        .call("get_cart", json!({"meta": meta(), "id": id}))
        .await;
    assert_eq!(gone["messages"][0]["code"], "not_found");
}

/// The five tools' upstream requests, printed (`-- --ignored --nocapture`) for the README and
/// the issue's before/after table; `round_trips_at_the_floor` asserts them.
#[tokio::test]
#[ignore = "a measurement, not a test: cargo test --test suite measure_round_trips -- --ignored --nocapture (CI skips measure_*)"]
#[allow(clippy::print_stdout)]
async fn measure_round_trips() {
    let (standin, bridge) = setup().await;
    let report = |tool: &str, standin: &Standin| {
        println!(
            "ROUNDTRIPS {tool} {} {:?}",
            standin.requests(),
            standin.operations()
        );
        standin.reset_counts();
    };
    bridge
        .call(
            "get_product",
            json!({"meta": meta(), "catalog": {"id": format!("gid://shopify/Product/{MUG}")}}),
        )
        .await;
    report("get_product", &standin);
    bridge
        .call(
            "get_product",
            json!({"meta": meta(), "catalog": {"id": format!("gid://shopify/Product/{TEE}")}}),
        )
        .await;
    report("get_product_300_variants", &standin);
    let mut ids: Vec<String> = (0..20)
        .map(|index| format!("gid://shopify/Product/{}", SOCK_FIRST + index))
        .collect();
    ids.extend((20..30).map(|index| (SOCK_FIRST + index + 100_000).to_string()));
    ids.extend((30..40).map(|index| format!("sock-{index}")));
    ids.extend((40..47).map(|index| format!("SOCK-{index}")));
    ids.extend([
        "TEE-12-03".to_owned(),
        "no-such-handle".to_owned(),
        "gid://shopify/Product/424242".to_owned(),
    ]);
    bridge
        .call(
            "lookup_catalog",
            json!({"meta": meta(), "catalog": {"ids": ids}}),
        )
        .await;
    report("lookup_catalog_50_mixed", &standin);
    let created = bridge
        .call(
            "create_cart",
            json!({"meta": key(), "cart": {"line_items": [line(MUG_VARIANT, 1), line(CANDLE_VARIANT, 1)]}}),
        )
        .await;
    report("create_cart", &standin);
    let id = created["id"].as_str().unwrap().to_owned();
    bridge
        .call(
            "update_cart",
            json!({"meta": key(), "id": id, "cart": {"line_items": [line(MUG_VARIANT, 3), line(CAT_FIRST_VARIANT, 1)]}}),
        )
        .await;
    report("update_cart", &standin);
    bridge
        .call("cancel_cart", json!({"meta": key(), "id": id}))
        .await;
    report("cancel_cart", &standin);
}
