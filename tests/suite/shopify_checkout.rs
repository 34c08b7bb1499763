//! Checkout on a Shopify store, end to end: agent → bridge (MCP and REST) → Shopify checkout
//! adapter → the Storefront stand-in's carts. A Shopify checkout is its cart: the store's
//! delivery options and prices, its codes, and complete hands the buyer to the cart's
//! checkoutUrl (the Storefront API takes no payment). Requirement ids are those of
//! requirements/checkout.json.

use crate::support::debug_bridge::DebugBridge;
use crate::support::shopify_orders::{OrderWebhooks, cart_token, shopify_order};
use crate::support::shopify_standin::*;
pub(crate) use crate::support::update_checkout as update;
use crate::support::values::{amount as total, key, line, messages};
use crate::support::{TestBridge, meta, meta_with_key};
use serde_json::{Value, json};

fn variant(id: u64) -> String {
    format!("gid://shopify/ProductVariant/{id}")
}

pub(crate) fn new_york() -> Value {
    json!({
        "first_name": "Ana", "last_name": "Souza",
        "street_address": "350 5th Ave", "address_locality": "New York",
        "address_region": "NY", "postal_code": "10118", "address_country": "US"
    })
}

async fn setup() -> (Standin, TestBridge) {
    let standin = Standin::start();
    let bridge = TestBridge::start(&standin.config("")).await;
    standin.reset_counts();
    (standin, bridge)
}

/// Two mugs ("18.0" each) in a cart, converted into a checkout.
async fn from_cart(bridge: &TestBridge) -> (Value, Value) {
    let cart = bridge
        .call(
            "create_cart",
            json!({"meta": meta(), "cart": {"line_items": [line(&variant(MUG_VARIANT), 2)]}}),
        )
        .await;
    let checkout = bridge
        .call(
            "create_checkout",
            json!({"meta": meta_with_key(&key()), "checkout": {"cart_id": cart["id"]}}),
        )
        .await;
    (cart, checkout)
}

/// The option ids and prices of the checkout's first group.
fn offered(checkout: &Value) -> Vec<(String, i64)> {
    checkout["fulfillment"]["methods"][0]["groups"][0]["options"]
        .as_array()
        .unwrap_or_else(|| panic!("no options in {checkout}"))
        .iter()
        .map(|option| {
            let cost = option["totals"]
                .as_array()
                .and_then(|totals| totals.iter().find(|total| total["type"] == "total"))
                .map_or_else(
                    || option["cost"].as_i64().unwrap_or(-1),
                    |total| total["amount"].as_i64().unwrap(),
                );
            (option["id"].as_str().unwrap().to_owned(), cost)
        })
        .collect()
}

pub(crate) fn select(checkout: &Value, option: &str) -> Value {
    let method = &checkout["fulfillment"]["methods"][0];
    json!({"fulfillment": {"methods": [{"id": method["id"], "groups": [{"id": method["groups"][0]["id"], "selected_option_id": option}]}]}})
}

#[tokio::test]
async fn a_shopify_cart_checks_out_on_shopifys_page_at_the_stores_prices() {
    let (standin, bridge) = setup().await;
    let (cart, created) = from_cart(&bridge).await;
    let id = created["id"].as_str().unwrap().to_owned();
    // The checkout is the cart itself: same id, same lines, Shopify's own page.
    assert_eq!(id, cart["id"].as_str().unwrap());
    assert_eq!(created["status"], "incomplete", "{created}");
    assert_eq!(created["line_items"][0]["quantity"], 2);
    assert_eq!(total(&created, "subtotal"), Some(3600));
    assert_eq!(total(&created, "total"), Some(3600));
    // CHK-016: a continue_url on every open checkout, the cart's own checkoutUrl.
    let checkout_url = cart["continue_url"].as_str().unwrap().to_owned();
    assert_eq!(created["continue_url"], checkout_url.as_str());
    // CHK-029: what is missing, by path.
    let missing = messages(&created);
    assert!(
        missing.contains(&("missing".into(), "$.buyer.email".into())),
        "{missing:?}"
    );
    assert!(
        missing.contains(&("missing".into(), "$.fulfillment.methods".into())),
        "{missing:?}"
    );

    // The buyer goes to Shopify's buyer identity, the address to the cart's delivery
    // addresses; the answer carries the store's delivery options for it.
    let addressed = update(
        &bridge,
        &id,
        json!({
            "buyer": {"email": "ana@example.com", "first_name": "Ana"},
            "fulfillment": {"methods": [{"type": "shipping", "destinations": [new_york()]}]}
        }),
    )
    .await;
    assert_eq!(
        addressed["buyer"]["email"], "ana@example.com",
        "{addressed}"
    );
    assert_eq!(addressed["buyer"]["first_name"], "Ana");
    let operations = standin.operations();
    assert!(
        operations.contains(&"CheckoutBuyerUpdate".to_owned()),
        "{operations:?}"
    );
    assert!(
        operations.contains(&"CheckoutAddressReplace".to_owned()),
        "{operations:?}"
    );
    // FUL-003/FUL-007/FUL-008: the store's options, priced by the store (pickup is left for
    // Shopify's page).
    assert_eq!(
        offered(&addressed),
        [(STANDARD.to_owned(), 500), (EXPRESS.to_owned(), 1550)],
        "{addressed}"
    );
    assert_eq!(addressed["status"], "incomplete");
    assert!(
        messages(&addressed)
            .iter()
            .any(|(_, path)| path == "$.fulfillment.methods[0].groups[0].selected_option_id"),
        "{addressed}"
    );
    assert_eq!(total(&addressed, "fulfillment"), None);

    // Selecting an option: Shopify's price for it in the totals. Nothing is missing now, and
    // the buyer pays on Shopify's page (CHK-014/CHK-015: requires_escalation, continue_url
    // and a requires_buyer_input message).
    let selected = update(&bridge, &id, select(&addressed, EXPRESS)).await;
    assert_eq!(
        selected["fulfillment"]["methods"][0]["groups"][0]["selected_option_id"],
        EXPRESS
    );
    assert_eq!(total(&selected, "fulfillment"), Some(1550));
    assert_eq!(total(&selected, "total"), Some(3600 + 1550));
    assert_eq!(selected["status"], "requires_escalation", "{selected}");
    assert_eq!(selected["continue_url"], checkout_url.as_str());
    assert!(
        selected["messages"]
            .as_array()
            .unwrap()
            .iter()
            .any(|message| message["severity"] == "requires_buyer_input"),
        "{selected}"
    );

    // DSC-005/DSC-008: a code, case-insensitive, in the totals and on the lines.
    let discounted = update(&bridge, &id, json!({"discounts": {"codes": ["save10"]}})).await;
    assert_eq!(total(&discounted, "discount"), Some(-360), "{discounted}");
    assert_eq!(total(&discounted, "total"), Some(3600 - 360 + 1550));
    let applied = &discounted["discounts"]["applied"][0];
    assert_eq!(applied["amount"], 360);
    assert_eq!(applied["allocations"][0]["amount"], 360);
    assert_eq!(applied["allocations"][0]["path"], "$.line_items[0]");
    // DSC-007/DSC-011: a code Shopify holds but does not apply is a warning at its place,
    // with the store's reason, and the store keeps only the codes it applies.
    let refused = update(
        &bridge,
        &id,
        json!({"discounts": {"codes": ["save10", INACTIVE_CODE]}}),
    )
    .await;
    assert!(
        messages(&refused).contains(&(
            "discount_code_expired".into(),
            "$.discounts.codes[1]".into()
        )),
        "{refused}"
    );
    let warning = refused["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|message| message["code"] == "discount_code_expired")
        .unwrap();
    assert_eq!(
        warning["content"],
        format!("{INACTIVE_CODE} discount is not active")
    );
    assert_eq!(total(&refused, "discount"), Some(-360));
    assert_eq!(standin.cart_codes(&id), ["save10"]);
    let unknown_code = update(
        &bridge,
        &id,
        json!({"discounts": {"codes": ["save10", "NOPE"]}}),
    )
    .await;
    assert!(
        messages(&unknown_code).contains(&(
            "discount_code_invalid".into(),
            "$.discounts.codes[1]".into()
        )),
        "{unknown_code}"
    );
    let before_complete = total(&unknown_code, "total").unwrap();
    assert_eq!(before_complete, 3600 - 360 + 1550);

    // CHK-001/CHK-008: complete escalates to the cart's checkoutUrl with the same total;
    // nothing is placed (no order: Shopify creates it when the buyer pays there).
    let complete_key = key();
    let arguments = json!({"meta": meta_with_key(&complete_key), "id": id, "checkout": {}});
    let first = bridge
        .structured_bytes("complete_checkout", arguments.clone())
        .await;
    let completed: Value = serde_json::from_str(&first).unwrap();
    assert_eq!(completed["status"], "requires_escalation", "{completed}");
    assert_eq!(completed["continue_url"], checkout_url.as_str());
    assert_eq!(total(&completed, "total"), Some(before_complete));
    assert!(completed.get("order").is_none(), "{completed}");
    // CHK-048: the replay answers the same bytes.
    let replay = bridge
        .structured_bytes("complete_checkout", arguments)
        .await;
    assert_eq!(first, replay);
    // Nothing was placed, so a new key hands off again rather than claiming an order exists.
    let again = bridge
        .call(
            "complete_checkout",
            json!({"meta": meta_with_key(&key()), "id": id, "checkout": {}}),
        )
        .await;
    assert_eq!(again["status"], "requires_escalation", "{again}");
    assert_eq!(again["continue_url"], checkout_url.as_str());
    assert!(
        again
            .get("messages")
            .is_none_or(|list| !list.to_string().contains("checkout_immutable")),
        "{again}"
    );

    // CHK-028: an open checkout cancels; Shopify cannot delete a cart, so it is marked and
    // emptied (its checkoutUrl sells nothing), and reads back canceled (CHK-057).
    let canceled = bridge
        .call(
            "cancel_checkout",
            json!({"meta": meta_with_key(&key()), "id": id}),
        )
        .await;
    assert_eq!(canceled["status"], "canceled", "{canceled}");
    assert!(canceled.get("continue_url").is_none());
    assert!(
        standin
            .cart_attributes(&id)
            .iter()
            .any(|(key, _)| key == "_bcp_cancelled")
    );
    assert_eq!(standin.cart_line_count(&id), 0);
    let fetched = bridge
        .call("get_checkout", json!({"meta": meta(), "id": id}))
        .await;
    assert_eq!(fetched["status"], "canceled", "{fetched}");
    // CHK-027: canceling again says it cannot.
    let again = bridge
        .call(
            "cancel_checkout",
            json!({"meta": meta_with_key(&key()), "id": id}),
        )
        .await;
    assert_eq!(messages(&again)[0].0, "checkout_immutable", "{again}");
}

#[tokio::test]
async fn bad_ids_and_refused_input_are_named() {
    let (standin, bridge) = setup().await;
    // CHK-052: unknown checkouts (a cart id Shopify does not know, and no cart id at all) are
    // a business outcome with an unrecoverable message.
    for id in ["gid://shopify/Cart/nope?key=k0", "chk_123"] {
        let unknown = bridge
            .call("get_checkout", json!({"meta": meta(), "id": id}))
            .await;
        assert_eq!(unknown["ucp"]["status"], "error", "{unknown}");
        assert_eq!(unknown["messages"][0]["code"], "not_found");
        assert_eq!(unknown["messages"][0]["severity"], "unrecoverable");
    }
    let unknown_cart = bridge
        .call(
            "create_checkout",
            json!({"meta": meta_with_key(&key()), "checkout": {"cart_id": "gid://shopify/Cart/gone?key=k9"}}),
        )
        .await;
    assert_eq!(
        unknown_cart["messages"][0]["code"], "not_found",
        "{unknown_cart}"
    );

    let (_, created) = from_cart(&bridge).await;
    let id = created["id"].as_str().unwrap().to_owned();
    let addressed = update(
        &bridge,
        &id,
        json!({"fulfillment": {"methods": [{"type": "shipping", "destinations": [new_york()]}]}}),
    )
    .await;
    // An option the group does not offer, a group the checkout never gave, and a pickup
    // option the checkout does not offer: refused before Shopify is written to.
    standin.reset_counts();
    for (group_ok, option) in [(true, "teleport"), (false, STANDARD), (true, PICKUP)] {
        let mut body = select(&addressed, option);
        if !group_ok {
            body["fulfillment"]["methods"][0]["groups"][0]["id"] =
                json!("gid://shopify/CartDeliveryGroup/other");
        }
        let (_, reply) = bridge
            .call_raw(
                "update_checkout",
                json!({"meta": meta(), "id": id, "checkout": body}),
            )
            .await;
        let text = reply.to_string();
        assert!(
            text.contains("selected_option_id") && text.contains("is not one of group"),
            "{option}: {reply}"
        );
    }
    let operations = standin.operations();
    assert!(
        !operations.contains(&"CheckoutOptionSelect".to_owned()),
        "{operations:?}"
    );
    let after = bridge
        .call("get_checkout", json!({"meta": meta(), "id": id}))
        .await;
    assert!(
        after["fulfillment"]["methods"][0]["groups"][0]
            .get("selected_option_id")
            .is_none_or(Value::is_null),
        "{after}"
    );
    // Shopify's refusals are named by the agent's field, without echoing the data.
    let (_, bad_email) = bridge
        .call_raw(
            "update_checkout",
            json!({"meta": meta(), "id": id, "checkout": {"buyer": {"email": "not-an-email"}}}),
        )
        .await;
    let text = bad_email.to_string();
    assert!(text.contains("$.buyer.email"), "{bad_email}");
    assert!(!text.contains("not-an-email"), "{bad_email}");
    let mut bad_zip = new_york();
    bad_zip["postal_code"] = json!("1O118");
    let (_, reply) = bridge
        .call_raw(
            "update_checkout",
            json!({"meta": meta(), "id": id, "checkout": {"fulfillment": {"methods": [{"type": "shipping", "destinations": [bad_zip]}]}}}),
        )
        .await;
    let text = reply.to_string();
    assert!(
        text.contains("destinations[0].postal_code")
            && text.contains("INVALID_ZIP_CODE_FOR_COUNTRY"),
        "{reply}"
    );
    assert!(!text.contains("1O118"), "{reply}");
    let mut nowhere = new_york();
    nowhere["address_country"] = json!("ZZ");
    let (_, reply) = bridge
        .call_raw(
            "update_checkout",
            json!({"meta": meta(), "id": id, "checkout": {"fulfillment": {"methods": [{"type": "shipping", "destinations": [nowhere]}]}}}),
        )
        .await;
    assert!(reply.to_string().contains("address_country"), "{reply}");
    // A destination the store does not deliver to: no option, and the status says so.
    let mut unserved = new_york();
    unserved["address_country"] = json!("KP");
    let stranded = update(
        &bridge,
        &id,
        json!({"fulfillment": {"methods": [{"type": "shipping", "destinations": [unserved]}]}}),
    )
    .await;
    assert_eq!(stranded["status"], "incomplete");
    assert!(
        messages(&stranded)
            .iter()
            .any(|(code, _)| code == "fulfillment_unavailable"),
        "{stranded}"
    );
}

#[tokio::test]
async fn shopify_serves_checkout_without_orders_and_over_rest() {
    let (standin, bridge) = setup().await;
    let (_, reply) = bridge
        .rpc(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
        .await;
    let names: Vec<&str> = reply["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|tool| tool["name"].as_str())
        .collect();
    for name in [
        "create_checkout",
        "update_checkout",
        "complete_checkout",
        "cancel_checkout",
    ] {
        assert!(names.contains(&name), "{names:?}");
    }
    // Orders are Shopify's, made on its page: the bridge reads none.
    assert!(!names.contains(&"get_order"), "{names:?}");
    let profile = bridge.get("/.well-known/bcp").await.text().await.unwrap();
    assert!(
        profile.contains("br.dev.bcp.shopping.checkout"),
        "{profile}"
    );

    // CHK-018: created from line items (a new Shopify cart), 201.
    let (status, created) = bridge
        .rest(
            reqwest::Method::POST,
            "/checkout-sessions",
            Some(&json!({"line_items": [line(&variant(MUG_VARIANT), 1)], "buyer": {"email": "ana@example.com"}})),
            &[("idempotency-key", &key())],
        )
        .await;
    assert_eq!(status, reqwest::StatusCode::CREATED, "{created}");
    let created: Value = serde_json::from_str(&created).unwrap();
    let id = created["id"].as_str().unwrap();
    assert!(id.starts_with("gid://shopify/Cart/"), "{id}");
    assert_eq!(created["buyer"]["email"], "ana@example.com");
    assert_eq!(total(&created, "total"), Some(1800));
    assert!(standin.operations().contains(&"CartCreate".to_owned()));
    // CHK-019: the cart id travels percent-encoded in the path; GET answers get_checkout's
    // bytes.
    let encoded: String = url::form_urlencoded::byte_serialize(id.as_bytes()).collect();
    let (status, got) = bridge
        .rest(
            reqwest::Method::GET,
            &format!("/checkout-sessions/{encoded}"),
            None,
            &[],
        )
        .await;
    assert_eq!(status, reqwest::StatusCode::OK, "{got}");
    let mcp = bridge
        .structured_bytes("get_checkout", json!({"meta": meta(), "id": id}))
        .await;
    assert_eq!(got, mcp);
}

/// A whole Shopify checkout at `debug`: the buyer's name, email, phone and address reach
/// Shopify (they are the order's) but no log line.
#[tokio::test]
async fn buyer_data_reaches_shopify_and_no_log_line() {
    let standin = Standin::start();
    let mut bridge = DebugBridge::start("shopify-buyer-logs", &standin.config(""));
    let (name, surname, email, phone) = (
        "Genoveva",
        "Quixabeira",
        "genoveva.q@example.com",
        "+12125550187",
    );
    let (street, city, postal) = ("4321 Zulmira Tavares Blvd", "Poughkeepsie", "12601");
    let created = bridge
        .call(
        "create_checkout",
        json!({"meta": meta_with_key(&key()), "checkout": {
            "line_items": [line(&variant(MUG_VARIANT), 1)],
            "buyer": {"first_name": name, "last_name": surname, "email": email, "phone_number": phone}
        }}),
    )
    .await;
    let id = created["id"].as_str().unwrap().to_owned();
    let addressed = bridge
        .call(
        "update_checkout",
        json!({"meta": meta(), "id": id, "checkout": {"fulfillment": {"methods": [{"type": "shipping", "destinations": [{
            "first_name": name, "last_name": surname, "street_address": street,
            "address_locality": city, "address_region": "NY", "postal_code": postal,
            "address_country": "US", "phone_number": phone
        }]}]}}}),
    )
    .await;
    bridge
        .call(
            "update_checkout",
            json!({"meta": meta(), "id": id, "checkout": select(&addressed, STANDARD)}),
        )
        .await;
    let completed = bridge
        .call(
            "complete_checkout",
            json!({"meta": meta_with_key(&key()), "id": id, "checkout": {}}),
        )
        .await;
    assert_eq!(completed["status"], "requires_escalation", "{completed}");
    // The answer carries the buyer (it is theirs), read back from Shopify.
    assert_eq!(completed["buyer"]["email"], email);
    assert_eq!(completed["buyer"]["phone_number"], phone);
    assert_eq!(completed["buyer"]["last_name"], surname);
    let sent = standin.bodies().join("\n");
    let secrets = [name, surname, email, phone, street, city, postal];
    for secret in secrets {
        assert!(sent.contains(secret), "{secret} did not reach Shopify");
    }
    bridge.assert_log_holds_none(&secrets);
}

#[tokio::test]
async fn automatic_discounts_lines_and_a_converted_carts_one_checkout() {
    let (_standin, bridge) = setup().await;
    let cart = bridge
        .call(
            "create_cart",
            json!({"meta": meta(), "cart": {"line_items": [line(&variant(MUG_VARIANT), 3)]}}),
        )
        .await;
    let first = bridge
        .call(
            "create_checkout",
            json!({"meta": meta_with_key(&key()), "checkout": {"cart_id": cart["id"]}}),
        )
        .await;
    // CART-002: converting the same cart again answers the open checkout.
    let again = bridge
        .call(
            "create_checkout",
            json!({"meta": meta_with_key(&key()), "checkout": {"cart_id": cart["id"]}}),
        )
        .await;
    assert_eq!(again["id"], first["id"], "{again}");
    let id = first["id"].as_str().unwrap().to_owned();
    // DSC-006/DSC-012: Shopify's automatic discount, with no code and no allocation (it is
    // on the whole cart); DSC-008: in the totals.
    let automatic = &first["discounts"]["applied"][0];
    assert_eq!(automatic["title"], AUTOMATIC_TITLE, "{first}");
    assert_eq!(automatic["automatic"], true);
    assert!(automatic.get("code").is_none());
    assert_eq!(automatic["amount"], 400);
    assert_eq!(total(&first, "subtotal"), Some(5400));
    assert_eq!(total(&first, "discount"), Some(-400));
    assert_eq!(total(&first, "total"), Some(5000));
    // Another country, another of the store's rates; the total adds it to Shopify's.
    let mut lisbon = new_york();
    lisbon["address_country"] = json!("PT");
    lisbon["postal_code"] = json!("1100-148");
    let addressed = update(
        &bridge,
        &id,
        json!({"fulfillment": {"methods": [{"type": "shipping", "destinations": [lisbon]}]}}),
    )
    .await;
    assert_eq!(offered(&addressed), [("intl-25".to_owned(), 2500)]);
    let selected = update(&bridge, &id, select(&addressed, "intl-25")).await;
    assert_eq!(
        total(&selected, "total"),
        Some(5400 - 400 + 2500),
        "{selected}"
    );
    let coded = update(&bridge, &id, json!({"discounts": {"codes": ["SAVE10"]}})).await;
    assert_eq!(total(&coded, "discount"), Some(-(540 + 400)), "{coded}");
    assert_eq!(total(&coded, "total"), Some(5400 - 540 - 400 + 2500));
    // The lines change through Shopify's cart: one mug is no trio.
    let fewer = update(
        &bridge,
        &id,
        json!({"line_items": [line(&variant(MUG_VARIANT), 1)]}),
    )
    .await;
    assert_eq!(fewer["line_items"][0]["quantity"], 1, "{fewer}");
    assert_eq!(total(&fewer, "subtotal"), Some(1800));
    assert_eq!(total(&fewer, "discount"), Some(-180));
    assert!(
        fewer["discounts"]["applied"]
            .as_array()
            .unwrap()
            .iter()
            .all(|discount| discount["title"] != AUTOMATIC_TITLE),
        "{fewer}"
    );
    // CHK-052: a write to a checkout that does not exist is not found.
    let unknown = update(
        &bridge,
        "gid://shopify/Cart/nope?key=k0",
        json!({"discounts": {"codes": ["SAVE10"]}}),
    )
    .await;
    assert_eq!(unknown["messages"][0]["code"], "not_found", "{unknown}");
    // The checkout was the cart: once canceled, the cart is gone with it.
    bridge
        .call(
            "cancel_checkout",
            json!({"meta": meta_with_key(&key()), "id": id}),
        )
        .await;
    let converted = bridge
        .call(
            "create_checkout",
            json!({"meta": meta_with_key(&key()), "checkout": {"cart_id": cart["id"]}}),
        )
        .await;
    assert_eq!(converted["messages"][0]["code"], "not_found", "{converted}");
}

/// `[checkout]` names gateways for stores that take payment themselves; on Shopify it does
/// nothing, and the merchant is told so at start-up.
#[tokio::test]
async fn checkout_gateways_set_for_shopify_are_reported_ignored() {
    let standin = Standin::start();
    let config = format!(
        "{}\n[checkout]\nplace_with = [\"bacs\"]\n",
        standin.config("")
    );
    let mut bridge = DebugBridge::start("shopify-checkout-ignored", &config);
    // Checkout is still served: it hands off.
    let created = bridge
        .call(
            "create_checkout",
            json!({"meta": meta_with_key(&key()), "checkout": {"line_items": [line(&variant(MUG_VARIANT), 1)]}}),
        )
        .await;
    assert!(created["id"].is_string(), "{created}");
    let log = bridge.log();
    assert!(
        log.lines()
            .any(|line| line.contains("WARN")
                && line.contains("place_with and pay_with are ignored")),
        "{log}"
    );
}

/// With `orders_webhook_secret`, the order the buyer placed on Shopify's page comes back by
/// Shopify's signed `orders/*` webhooks: the checkout it was handed off from answers
/// `completed` with it, `get_order` (MCP and REST) reads it, and a later event updates it.
/// Orders of carts the bridge never made are not kept.
#[tokio::test]
async fn an_order_placed_on_shopifys_page_comes_back_by_webhook() {
    const SECRET: &str = "shpss_test_orders_secret";
    let standin = Standin::start();
    let bridge =
        TestBridge::start(&standin.config(&format!("orders_webhook_secret = \"{SECRET}\""))).await;
    let (_, reply) = bridge
        .rpc(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
        .await;
    assert!(
        reply["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|tool| tool["name"] == "get_order"),
        "{reply}"
    );

    let created = bridge
        .call(
            "create_checkout",
            json!({"meta": meta_with_key(&key()), "checkout": {
                "line_items": [line(&variant(MUG_VARIANT), 2)],
                "buyer": {"email": "ana@example.com"}}}),
        )
        .await;
    let id = created["id"].as_str().unwrap().to_owned();
    let addressed = update(
        &bridge,
        &id,
        json!({"fulfillment": {"methods": [{"type": "shipping", "destinations": [new_york()]}]}}),
    )
    .await;
    let ready = update(&bridge, &id, select(&addressed, EXPRESS)).await;
    let handed = bridge
        .call(
            "complete_checkout",
            json!({"meta": meta_with_key(&key()), "id": id, "checkout": {}}),
        )
        .await;
    assert_eq!(handed["status"], "requires_escalation", "{handed}");

    let shop = OrderWebhooks::to(&bridge.base_url, SECRET);
    let forger = OrderWebhooks::to(&bridge.base_url, "another");
    let create = Some("orders/create");
    let body = shopify_order(&cart_token(&id), &ready).to_string();
    // Unsigned or wrongly signed: refused, nothing kept.
    let refused = forger.deliver_raw(body.as_bytes(), create, None).await;
    assert_eq!(refused, 401);
    let still = bridge
        .call("get_checkout", json!({"meta": meta(), "id": id}))
        .await;
    assert_eq!(still["status"], "requires_escalation", "{still}");
    // An order of a cart the bridge never made is accepted (Shopify must not retry it) but
    // not kept: no agent reads other buyers' orders.
    let other = shopify_order("a-cart-from-the-web-shop", &ready).to_string();
    let accepted = shop.deliver_raw(other.as_bytes(), create, None).await;
    assert_eq!(accepted, 200);
    let unknown = bridge
        .call(
            "get_order",
            json!({"meta": meta(), "id": "gid://shopify/Order/820982911946154508"}),
        )
        .await;
    assert_eq!(unknown["messages"][0]["code"], "not_found", "{unknown}");
    // Not an order at all: 400.
    let bad = shop.deliver_raw(b"{\"id\": \"nope\"", create, None).await;
    assert_eq!(bad, 400);

    // Shopify's own webhook for this checkout's cart.
    let linked = shop.deliver_raw(body.as_bytes(), create, None).await;
    assert_eq!(linked, 200);
    let completed = bridge
        .call("get_checkout", json!({"meta": meta(), "id": id}))
        .await;
    assert_eq!(completed["status"], "completed", "{completed}");
    let order_id = completed["order"]["id"].as_str().unwrap().to_owned();
    // Issue 35 item 1: agents get a handle, never Shopify's own (guessable) order gid.
    assert!(order_id.starts_with("ord_"), "{order_id}");
    assert!(!order_id.contains("820982911946154508"), "{order_id}");
    assert!(
        completed["order"]["permalink_url"]
            .as_str()
            .unwrap()
            .contains("/orders/"),
        "{completed}"
    );
    // A completion retried after the buyer paid answers the order too.
    let replayed = bridge
        .call(
            "complete_checkout",
            json!({"meta": meta_with_key(&key()), "id": id, "checkout": {}}),
        )
        .await;
    assert_eq!(replayed["status"], "completed", "{replayed}");
    assert_eq!(replayed["order"]["id"], json!(order_id));

    // ORD-001, ORD-005, ORD-020: the order entity, the same over MCP and REST.
    let order = bridge
        .call("get_order", json!({"meta": meta(), "id": order_id}))
        .await;
    assert_eq!(order["id"], json!(order_id), "{order}");
    assert_eq!(order["checkout_id"], json!(id));
    let items = order["line_items"].as_array().unwrap();
    assert_eq!(items.len(), 1, "{order}");
    assert_eq!(items[0]["item"]["id"], json!(variant(MUG_VARIANT)));
    assert_eq!(items[0]["quantity"]["original"], 2);
    assert_eq!(items[0]["status"], "processing");
    assert_eq!(total(&order, "total"), total(&ready, "total"));
    let encoded: String = url::form_urlencoded::byte_serialize(order_id.as_bytes()).collect();
    let (status, rest) = bridge
        .rest(
            reqwest::Method::GET,
            &format!("/orders/{encoded}"),
            None,
            &[],
        )
        .await;
    assert_eq!(status, reqwest::StatusCode::OK, "{rest}");
    let rest: Value = serde_json::from_str(&rest).unwrap();
    assert_eq!(rest["id"], json!(order_id));

    // ORD-002, ORD-006: a later event (this one names no cart) updates the order it names;
    // a cancelled line stays, its active quantity 0.
    let mut cancelled = shopify_order("", &ready);
    cancelled["cancelled_at"] = json!("2026-12-06T09:00:00-05:00");
    cancelled["updated_at"] = json!("2026-12-06T09:00:00-05:00");
    cancelled["financial_status"] = json!("refunded");
    let updated = shop
        .deliver_raw(
            cancelled.to_string().as_bytes(),
            Some("orders/cancelled"),
            None,
        )
        .await;
    assert_eq!(updated, 200);
    let after = bridge
        .call("get_order", json!({"meta": meta(), "id": order_id}))
        .await;
    let line = &after["line_items"][0];
    assert_eq!(line["quantity"]["total"], 0, "{after}");
    assert_eq!(line["status"], "removed", "{after}");
}
