//! Issue 36 item 1: update is a full replacement (`line_items` required on update in both
//! releases' checkout.json). An agent that sends its whole checkout back on every update goes
//! buyer → address → option → code → complete on every store; what the checkout already holds
//! writes nothing to the store, a changed quantity reaches it, and what a store cannot take
//! is a recoverable message at its path. Over MCP and REST, against the stand-ins.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::support::shopify_standin::{MUG_VARIANT, Standin};
use crate::support::values::{key, line, sao_paulo};
use crate::support::vtex_standin::{CLOCK_SKU, MUG_SKU_FIRST, VtexStandin};
use crate::support::woo_standin::WooStandin;
use crate::support::{TestBridge, meta, meta_with_key};

#[derive(Debug, Clone, Copy)]
pub(crate) enum Front {
    Mcp,
    Rest,
}

fn parsed(status: StatusCode, text: &str) -> Value {
    assert!(status.is_success(), "{status}: {text}");
    serde_json::from_str(text).unwrap_or_else(|_| panic!("not JSON: {text}"))
}

/// A checkout id as one path segment (Shopify's carry `gid://…?key=…`).
fn in_path(id: &str) -> String {
    url::form_urlencoded::byte_serialize(id.as_bytes()).collect()
}

pub(crate) async fn create(bridge: &TestBridge, front: Front, checkout: Value) -> Value {
    match front {
        Front::Mcp => {
            bridge
                .call(
                    "create_checkout",
                    json!({"meta": meta_with_key(&key()), "checkout": checkout}),
                )
                .await
        }
        Front::Rest => {
            let (status, text) = bridge
                .rest(
                    Method::POST,
                    "/checkout-sessions",
                    Some(&checkout),
                    &[("idempotency-key", &key())],
                )
                .await;
            parsed(status, &text)
        }
    }
}

pub(crate) async fn update(bridge: &TestBridge, front: Front, id: &str, checkout: Value) -> Value {
    match front {
        Front::Mcp => {
            bridge
                .call(
                    "update_checkout",
                    json!({"meta": meta_with_key(&key()), "id": id, "checkout": checkout}),
                )
                .await
        }
        Front::Rest => {
            let mut body = checkout;
            body["id"] = json!(id);
            let (status, text) = bridge
                .rest(
                    Method::PUT,
                    &format!("/checkout-sessions/{}", in_path(id)),
                    Some(&body),
                    &[("idempotency-key", &key())],
                )
                .await;
            parsed(status, &text)
        }
    }
}

pub(crate) async fn complete(bridge: &TestBridge, front: Front, id: &str, handler: &str) -> Value {
    let checkout = json!({"payment": {"instruments": [{"handler_id": handler}]}});
    match front {
        Front::Mcp => {
            bridge
                .call(
                    "complete_checkout",
                    json!({"meta": meta_with_key(&key()), "id": id, "checkout": checkout}),
                )
                .await
        }
        Front::Rest => {
            let (status, text) = bridge
                .rest(
                    Method::POST,
                    &format!("/checkout-sessions/{}/complete", in_path(id)),
                    Some(&checkout),
                    &[("idempotency-key", &key())],
                )
                .await;
            parsed(status, &text)
        }
    }
}

/// The checkout an agent got, as the body of its next update: its own lines (line ids
/// included), buyer, fulfillment as answered and codes.
pub(crate) fn full(answer: &Value) -> Value {
    let lines: Vec<Value> = answer["line_items"]
        .as_array()
        .unwrap_or_else(|| panic!("no line_items: {answer}"))
        .iter()
        .map(|held| json!({"id": held["id"], "item": {"id": held["item"]["id"]}, "quantity": held["quantity"]}))
        .collect();
    let mut body = json!({"line_items": lines});
    if let Some(buyer) = answer.get("buyer") {
        body["buyer"] = buyer.clone();
    }
    if let Some(fulfillment) = answer.get("fulfillment") {
        body["fulfillment"] = fulfillment.clone();
    }
    if let Some(codes) = answer.pointer("/discounts/codes") {
        body["discounts"] = json!({"codes": codes});
    }
    body
}

/// `body` with its first group's selection set to `option`.
pub(crate) fn choosing(mut body: Value, option: &str) -> Value {
    body["fulfillment"]["methods"][0]["groups"][0]["selected_option_id"] = json!(option);
    body
}

/// `body` with the first method's destination set to `address` (or made, on the first one).
pub(crate) fn shipping_to(mut body: Value, address: Value) -> Value {
    match body.pointer_mut("/fulfillment/methods/0") {
        Some(method) => method["destinations"] = json!([address]),
        None => {
            body["fulfillment"] =
                json!({"methods": [{"type": "shipping", "destinations": [address]}]});
        }
    }
    body
}

/// `body` with the quantity of line `index` set.
pub(crate) fn with_quantity(mut body: Value, index: usize, quantity: u64) -> Value {
    body["line_items"][index]["quantity"] = json!(quantity);
    body
}

pub(crate) fn quantities(answer: &Value) -> Vec<(String, u64)> {
    let mut lines: Vec<(String, u64)> = answer["line_items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|held| {
            (
                held["item"]["id"].as_str().unwrap().to_owned(),
                held["quantity"].as_u64().unwrap(),
            )
        })
        .collect();
    lines.sort();
    lines
}

fn selected(answer: &Value) -> &Value {
    &answer["fulfillment"]["methods"][0]["groups"][0]["selected_option_id"]
}

/// Writes the WooCommerce stand-in received (every write is a POST or a DELETE).
fn woo_writes(woo: &WooStandin) -> usize {
    woo.requests()
        .iter()
        .filter(|request| !request.starts_with("GET"))
        .count()
}

/// The whole journey on the WooCommerce stand-in, full checkout on every update.
async fn woo_journey(front: Front) {
    let woo = WooStandin::start().await;
    let bridge = TestBridge::start(&woo.config("\n[checkout]\nplace_with = [\"cod\"]")).await;
    let created = create(
        &bridge,
        front,
        json!({"line_items": [line("16", 1), line("10", 2)]}),
    )
    .await;
    let id = created["id"].as_str().unwrap().to_owned();
    let token = crate::real_woo::store::token_of(&id);
    let lines = woo.cart_of(&token);

    let mut body = full(&created);
    body["buyer"] = json!({"email": "ana@example.com", "first_name": "Ana"});
    let named = update(&bridge, front, &id, body).await;
    let addressed = update(&bridge, front, &id, shipping_to(full(&named), sao_paulo())).await;
    let chosen = update(
        &bridge,
        front,
        &id,
        choosing(full(&addressed), "flat_rate:2"),
    )
    .await;
    let mut body = full(&chosen);
    body["discounts"] = json!({"codes": ["BCP10"]});
    let ready = update(&bridge, front, &id, body).await;
    assert_eq!(ready["status"], "ready_for_complete", "{ready}");
    assert_eq!(selected(&ready), "flat_rate:2");
    // Four updates, each carrying the lines: the store's cart was never rewritten.
    assert!(woo.batches().is_empty(), "{:?}", woo.batches());
    assert_eq!(woo.cart_of(&token), lines);

    // Sent back exactly as answered: nothing is written to the store.
    let writes = woo_writes(&woo);
    let again = update(&bridge, front, &id, full(&ready)).await;
    assert_eq!(woo_writes(&woo), writes, "{:?}", woo.requests());
    assert_eq!(again["totals"], ready["totals"]);
    assert_eq!(again["status"], "ready_for_complete");

    // A new quantity: the cart behind the checkout follows, the option and the code stay.
    let more = update(&bridge, front, &id, with_quantity(full(&ready), 0, 3)).await;
    assert_eq!(more["status"], "ready_for_complete", "{more}");
    let mut held: Vec<(String, u64)> = woo
        .cart_of(&token)
        .iter()
        .map(|(item, quantity)| (item.to_string(), u64::from(*quantity)))
        .collect();
    held.sort();
    assert_eq!(held, quantities(&more));
    assert_eq!(
        quantities(&more),
        [("10".to_owned(), 2), ("16".to_owned(), 3)]
    );
    assert_eq!(selected(&more), "flat_rate:2", "{more}");
    assert_eq!(more["discounts"]["codes"], json!(["BCP10"]), "{more}");

    let done = complete(&bridge, front, &id, "cod").await;
    assert_eq!(done["status"], "completed", "{done}");
    let order = bridge
        .call(
            "get_order",
            json!({"meta": meta(), "id": done["order"]["id"]}),
        )
        .await;
    assert_eq!(order["id"], done["order"]["id"], "{order}");
}

#[tokio::test]
async fn woocommerce_takes_the_full_checkout_on_every_update_over_mcp() {
    woo_journey(Front::Mcp).await;
}

#[tokio::test]
async fn woocommerce_takes_the_full_checkout_on_every_update_over_rest() {
    woo_journey(Front::Rest).await;
}

/// The sample store: the same journey, and the conformance suite's update (issue 36 Scope B)
/// that moves the destination abroad while keeping the Brazilian option.
#[tokio::test]
async fn the_sample_store_keeps_what_it_can_of_an_update_whose_option_the_new_address_lacks() {
    for front in [Front::Mcp, Front::Rest] {
        let bridge = TestBridge::sample().await;
        let created = create(
            &bridge,
            front,
            json!({"line_items": [line("prod_chinelo_praia_azm_3334", 1)]}),
        )
        .await;
        let id = created["id"].as_str().unwrap().to_owned();
        let addressed = update(
            &bridge,
            front,
            &id,
            shipping_to(full(&created), sao_paulo()),
        )
        .await;
        let ready = update(&bridge, front, &id, choosing(full(&addressed), "pac")).await;
        assert_eq!(selected(&ready), "pac", "{ready}");
        // UCP conformance test_update_checkout: quantity 2, a new buyer, a US destination,
        // the group still naming pac.
        let mut body = with_quantity(full(&ready), 0, 2);
        body["buyer"] = json!({"email": "jane@example.com", "first_name": "Jane"});
        let body = shipping_to(
            body,
            json!({"id": "dest_2", "address_country": "US", "postal_code": "90210",
                   "address_locality": "Beverly Hills", "address_region": "CA",
                   "street_address": "456 Elm St"}),
        );
        let moved = update(&bridge, front, &id, body).await;
        assert_eq!(moved["line_items"][0]["quantity"], 2, "{moved}");
        assert_eq!(moved["buyer"]["first_name"], "Jane");
        let destination = &moved["fulfillment"]["methods"][0]["destinations"][0];
        assert_eq!(destination["address_country"], "US", "{moved}");
        let refusal = moved["messages"]
            .as_array()
            .unwrap()
            .iter()
            .find(|message| message["code"] == "invalid")
            .unwrap_or_else(|| panic!("{moved}"));
        assert_eq!(refusal["severity"], "recoverable");
        assert_eq!(
            refusal["path"],
            "$.fulfillment.methods[0].groups[0].selected_option_id"
        );
        assert!(refusal["content"].as_str().unwrap().contains("pac"));
        assert_eq!(moved["status"], "incomplete");
        // The agent picks from what the answer lists and completes.
        let ready = update(&bridge, front, &id, choosing(full(&moved), "intl")).await;
        assert_eq!(ready["status"], "ready_for_complete", "{ready}");
        let done = complete(&bridge, front, &id, "sample_test_approve").await;
        assert_eq!(done["status"], "completed", "{done}");
    }
}

const SHOPIFY_WRITES: [&str; 10] = [
    "CartAttributesUpdate",
    "CartCancel",
    "CartCreate",
    "CartLinesAdd",
    "CartLinesUpdate",
    "CartReplace",
    "CheckoutAddressReplace",
    "CheckoutBuyerUpdate",
    "CheckoutCodesUpdate",
    "CheckoutOptionSelect",
];

fn shopify_writes(standin: &Standin) -> Vec<String> {
    standin
        .operations()
        .into_iter()
        .filter(|operation| SHOPIFY_WRITES.contains(&operation.as_str()))
        .collect()
}

#[tokio::test]
async fn shopify_writes_nothing_for_the_checkout_sent_back_and_only_lines_for_a_new_quantity() {
    let standin = Standin::start();
    let bridge = TestBridge::start(&standin.config("")).await;
    let variant = format!("gid://shopify/ProductVariant/{MUG_VARIANT}");
    let created = create(
        &bridge,
        Front::Mcp,
        json!({"line_items": [line(&variant, 2)]}),
    )
    .await;
    let id = created["id"].as_str().unwrap().to_owned();
    let mut body = shipping_to(full(&created), crate::shopify_checkout::new_york());
    body["buyer"] = json!({"email": "ana@example.com"});
    let addressed = update(&bridge, Front::Mcp, &id, body).await;
    let option = addressed["fulfillment"]["methods"][0]["groups"][0]["options"][0]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("{addressed}"))
        .to_owned();
    let chosen = update(
        &bridge,
        Front::Rest,
        &id,
        choosing(full(&addressed), &option),
    )
    .await;
    assert_eq!(selected(&chosen), option.as_str(), "{chosen}");

    standin.reset_counts();
    let again = update(&bridge, Front::Rest, &id, full(&chosen)).await;
    assert_eq!(shopify_writes(&standin), Vec::<String>::new());
    assert_eq!(again["totals"], chosen["totals"]);

    let more = update(&bridge, Front::Mcp, &id, with_quantity(full(&chosen), 0, 3)).await;
    assert_eq!(quantities(&more), [(variant, 3)]);
    assert_eq!(shopify_writes(&standin), ["CartLinesUpdate"]);
    assert_eq!(selected(&more), option.as_str(), "{more}");
}

fn vtex_writes(vtex: &VtexStandin) -> Vec<String> {
    vtex.requests()
        .into_iter()
        .filter(|request| !request.starts_with("GET"))
        .collect()
}

#[tokio::test]
async fn vtex_writes_nothing_for_the_checkout_sent_back_and_cannot_empty_it() {
    let vtex = VtexStandin::start().await;
    let bridge = TestBridge::start(&(vtex.config("") + "\n[cache]\nenabled = false\n")).await;
    let mug = MUG_SKU_FIRST.to_string();
    let created = create(
        &bridge,
        Front::Mcp,
        json!({"line_items": [line(CLOCK_SKU, 1), line(&mug, 2)]}),
    )
    .await;
    let id = created["id"]
        .as_str()
        .unwrap_or_else(|| panic!("{created}"))
        .to_owned();
    let mut body = shipping_to(full(&created), sao_paulo());
    body["buyer"] = json!({"email": "ana@example.com"});
    let addressed = update(&bridge, Front::Mcp, &id, body).await;
    let option = addressed["fulfillment"]["methods"][0]["groups"][0]["options"][0]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("{addressed}"))
        .to_owned();
    let chosen = update(
        &bridge,
        Front::Rest,
        &id,
        choosing(full(&addressed), &option),
    )
    .await;

    let before = vtex_writes(&vtex);
    let again = update(&bridge, Front::Rest, &id, full(&chosen)).await;
    assert_eq!(vtex_writes(&vtex), before);
    assert_eq!(again["totals"], chosen["totals"]);

    let more = update(&bridge, Front::Mcp, &id, with_quantity(full(&chosen), 1, 3)).await;
    assert!(quantities(&more).contains(&(mug.clone(), 3)), "{more}");
    assert!(vtex_writes(&vtex).len() > before.len());

    // An emptied orderForm reads as gone on VTEX: the store cannot hold a checkout without
    // lines, so the update is answered with the checkout as it is and a message to fix.
    let mut empty = full(&more);
    empty["line_items"] = json!([]);
    let kept = update(&bridge, Front::Rest, &id, empty).await;
    assert_eq!(quantities(&kept), quantities(&more));
    let refusal = &kept["messages"][0];
    assert_eq!(refusal["path"], "$.line_items", "{kept}");
    assert_eq!(refusal["severity"], "recoverable");
}

/// Scope B: a quantity above `limits.max_line_quantity` is revised down with a warning, in
/// a cart and a checkout alike, over both fronts (checkout.md "Quantity and sale basis").
#[tokio::test]
async fn a_quantity_above_the_line_bound_is_revised_with_a_warning_in_carts_and_checkouts() {
    let bridge = TestBridge::start("[limits]\nmax_line_quantity = 5\n").await;
    let sandal = "prod_chinelo_praia_azm_3334";
    let adjusted = |answer: &Value| {
        let warning = answer["messages"]
            .as_array()
            .unwrap_or_else(|| panic!("{answer}"))
            .iter()
            .find(|message| message["code"] == "quantity_adjusted")
            .unwrap_or_else(|| panic!("{answer}"))
            .clone();
        assert_eq!(warning["type"], "warning");
        assert_eq!(warning["path"], "$.line_items[0].quantity");
        assert_eq!(answer["line_items"][0]["quantity"], 5, "{answer}");
    };
    let cart = bridge
        .call(
            "create_cart",
            json!({"meta": meta(), "cart": {"line_items": [line(sandal, 10001)]}}),
        )
        .await;
    adjusted(&cart);
    for front in [Front::Mcp, Front::Rest] {
        let created = create(&bridge, front, json!({"line_items": [line(sandal, 6)]})).await;
        adjusted(&created);
        let id = created["id"].as_str().unwrap();
        let updated = update(&bridge, front, id, with_quantity(full(&created), 0, 10001)).await;
        adjusted(&updated);
    }
    // Past what a JSON number holds exactly, the request itself is malformed.
    let (_, error) = bridge
        .call_error(
            "create_cart",
            json!({"meta": meta(), "cart": {"line_items": [{"item": {"id": sandal}, "quantity": 9_007_199_254_740_992_u64}]}}),
        )
        .await;
    assert_eq!(error["code"], -32602, "{error}");
}
