//! The checkout scenarios every platform with a checkout must pass: a cart becomes a
//! checkout, an address brings the store's options, a selection reprices, codes apply or are
//! refused with the store's reason, and the checkout ends the platform's way — an order placed
//! with a test or offline handler, or a hand-off to the store's own page (`requires_escalation`
//! with `continue_url`), which a real browser opens where the stand-in serves that page.
//! Requirement ids are those of requirements/checkout.json.

use std::time::Duration;

use futures_util::future::LocalBoxFuture;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use super::{Fixture, Store, segment};
use crate::support::update_checkout as update;
use crate::support::values::{amount, key, line, lines, messages, total};
use crate::support::{TestBridge, meta, meta_with_key};

/// One platform's checkout, as data.
pub struct CheckoutFixture {
    /// Starts the store with checkout served (its `[checkout]` settings, if it needs any).
    pub start: fn() -> LocalBoxFuture<'static, Store>,
    /// The cart the checkout is made from: (item id, quantity), in stock with room to spare.
    pub lines: Vec<(String, u32)>,
    /// A destination the store ships to.
    pub address: Value,
    /// A delivery option the store offers there and does not select by itself, and what it
    /// costs.
    pub option: (String, i64),
    /// A code the store takes, spelt in another case than the store's (DSC-005).
    pub code: String,
    /// A code the store refuses, and the message code that says why.
    pub refused: (String, &'static str),
    pub ends: Ends,
    /// The store needs the buyer's email before it takes the order.
    pub asks_email: bool,
}

/// How a ready checkout completes on this platform.
pub enum Ends {
    /// The bridge places the order with this payment handler.
    Places { handler: &'static str },
    /// The buyer pays on the store's page: complete hands off.
    HandsOff,
}

/// With a CPF (BCP fiscal identity): a Brazilian store requires one before it takes the order.
fn buyer() -> Value {
    // A valid CPF: stores with Brazilian checkout fields require one (issue 37).
    json!({"email": "ana@example.com", "first_name": "Ana", "last_name": "Souza",
        "taxpayer_id": {"kind": "cpf", "value": "39053344705"}})
}

fn has_path(checkout: &Value, path: &str) -> bool {
    messages(checkout).iter().any(|(_, found)| found == path)
}

/// The first group's options as `(id, cost)`, and the one selected.
fn offered(checkout: &Value) -> (Vec<(String, i64)>, Option<String>) {
    let group = &checkout["fulfillment"]["methods"][0]["groups"][0];
    let options = group["options"]
        .as_array()
        .unwrap_or_else(|| panic!("no options in {checkout}"))
        .iter()
        .map(|option| {
            let cost = option["totals"]
                .as_array()
                .and_then(|totals| totals.iter().find(|total| total["type"] == "total"))
                .and_then(|total| total["amount"].as_i64())
                .unwrap_or_else(|| panic!("no total in {option}"));
            (option["id"].as_str().unwrap().to_owned(), cost)
        })
        .collect();
    (
        options,
        group["selected_option_id"].as_str().map(str::to_owned),
    )
}

fn selection(checkout: &Value, option: &str) -> Value {
    let method = &checkout["fulfillment"]["methods"][0];
    json!({"fulfillment": {"methods": [{"id": method["id"], "groups": [{"id": method["groups"][0]["id"], "selected_option_id": option}]}]}})
}

/// The fixture's cart, and the checkout made from it.
async fn from_cart(bridge: &TestBridge, fixture: &CheckoutFixture) -> (Value, Value) {
    let items: Vec<Value> = fixture
        .lines
        .iter()
        .map(|(id, quantity)| line(id, *quantity))
        .collect();
    let cart = bridge
        .call(
            "create_cart",
            json!({"meta": meta_with_key(&key()), "cart": {"line_items": items}}),
        )
        .await;
    assert!(cart["id"].is_string(), "{cart}");
    let checkout = bridge
        .call(
            "create_checkout",
            json!({"meta": meta_with_key(&key()), "checkout": {"cart_id": cart["id"]}}),
        )
        .await;
    assert!(checkout["id"].is_string(), "{checkout}");
    (cart, checkout)
}

/// A checkout with the buyer and the address given (over REST's PUT), answered as MCP's
/// get_checkout answers it.
async fn addressed(bridge: &TestBridge, fixture: &CheckoutFixture) -> (String, Value) {
    let (_, created) = from_cart(bridge, fixture).await;
    let id = created["id"].as_str().unwrap().to_owned();
    let path = format!("/checkout-sessions/{}", segment(&id));
    // CHK-020: PUT carries the resource (its own id included); CHK-019: GET and get_checkout
    // answer the same bytes as the PUT's answer.
    let (status, put) = bridge
        .rest(
            Method::PUT,
            &path,
            Some(&json!({
                "id": id,
                "buyer": buyer(),
                "fulfillment": {"methods": [{"type": "shipping", "destinations": [fixture.address]}]}
            })),
            &[("idempotency-key", &key())],
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{put}");
    let (status, got) = bridge.rest(Method::GET, &path, None, &[]).await;
    assert_eq!(status, StatusCode::OK, "{got}");
    let mcp = bridge
        .structured_bytes("get_checkout", json!({"meta": meta(), "id": id}))
        .await;
    assert_eq!(got, mcp);
    assert_eq!(put, mcp);
    (id, serde_json::from_str(&put).unwrap())
}

/// The fixture's option selected: nothing missing any more.
async fn ready(bridge: &TestBridge, fixture: &CheckoutFixture) -> (String, Value) {
    let (id, addressed) = addressed(bridge, fixture).await;
    let selected = update(bridge, &id, selection(&addressed, &fixture.option.0)).await;
    assert_eq!(
        offered(&selected).1.as_ref(),
        Some(&fixture.option.0),
        "{selected}"
    );
    (id, selected)
}

/// What a checkout with nothing missing is on this platform: ready to complete, or (the
/// buyer pays on the store's page) requires_escalation with the page and a message that
/// asks for the buyer (CHK-001/CHK-014/CHK-015).
fn assert_nothing_missing(checkout: &Value, ends: &Ends) {
    match ends {
        Ends::Places { .. } => {
            assert_eq!(checkout["status"], "ready_for_complete", "{checkout}");
        }
        Ends::HandsOff => {
            assert_eq!(checkout["status"], "requires_escalation", "{checkout}");
            assert!(
                checkout["continue_url"]
                    .as_str()
                    .is_some_and(|url| url.starts_with("http")),
                "{checkout}"
            );
            assert!(
                checkout["messages"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|message| message["severity"] == "requires_buyer_input"),
                "{checkout}"
            );
        }
    }
}

/// CART-001: a checkout made from a cart holds the cart's lines (not new ones) at the
/// cart's prices; it is incomplete and names what is missing by path (CHK-029, CHK-033,
/// CHK-034).
pub async fn checkout_from_a_cart_has_the_carts_lines(bridge: &TestBridge, fixture: &Fixture) {
    let fixture = &fixture.checkout;
    let (cart, checkout) = from_cart(bridge, fixture).await;
    let wanted: Vec<(String, u64)> = fixture
        .lines
        .iter()
        .map(|(id, quantity)| (id.clone(), u64::from(*quantity)))
        .collect();
    assert_eq!(lines(&cart), wanted, "{cart}");
    assert_eq!(lines(&checkout), wanted, "{checkout}");
    for member in [
        "ucp",
        "id",
        "line_items",
        "status",
        "currency",
        "totals",
        "links",
    ] {
        assert!(checkout.get(member).is_some(), "{member} in {checkout}");
    }
    assert_eq!(checkout["currency"], cart["currency"]);
    let subtotal = amount(&checkout, "subtotal");
    assert!(subtotal.is_some_and(|amount| amount > 0), "{checkout}");
    assert_eq!(subtotal, Some(total(&cart, "subtotal")));
    assert_eq!(checkout["status"], "incomplete", "{checkout}");
    assert_eq!(
        has_path(&checkout, "$.buyer.email"),
        fixture.asks_email,
        "{checkout}"
    );
    assert!(has_path(&checkout, "$.fulfillment.methods"), "{checkout}");
    if let Ends::HandsOff = fixture.ends {
        // CHK-016: the store's page on every open checkout where the buyer will pay there.
        assert!(checkout["continue_url"].is_string(), "{checkout}");
    }
    // The checkout reads back as it was answered.
    let got = bridge
        .call(
            "get_checkout",
            json!({"meta": meta(), "id": checkout["id"]}),
        )
        .await;
    assert_eq!(got, checkout);
}

/// An address brings the store's options (FUL-003/FUL-007/FUL-008); selecting one makes its
/// cost the fulfillment total and moves the total by exactly that (TOT-007), and the
/// checkout goes from incomplete to what nothing missing means on this platform.
pub async fn address_options_select_reprices(bridge: &TestBridge, fixture: &Fixture) {
    let fixture = &fixture.checkout;
    let (id, addressed) = addressed(bridge, fixture).await;
    let (options, preselected) = offered(&addressed);
    let (option, cost) = &fixture.option;
    assert!(
        options.contains(&(option.clone(), *cost)),
        "{option} at {cost} in {options:?}"
    );
    assert_ne!(preselected.as_ref(), Some(option), "{addressed}");
    if preselected.is_none() {
        // Nothing chosen yet: incomplete, the choice named where it is made.
        assert_eq!(addressed["status"], "incomplete", "{addressed}");
        assert!(
            has_path(
                &addressed,
                "$.fulfillment.methods[0].groups[0].selected_option_id"
            ),
            "{addressed}"
        );
    }
    assert_eq!(addressed["buyer"]["email"], "ana@example.com");
    let before_fulfillment = amount(&addressed, "fulfillment").unwrap_or(0);
    let before = amount(&addressed, "total").unwrap();

    let selected = update(bridge, &id, selection(&addressed, option)).await;
    assert_eq!(offered(&selected).1.as_ref(), Some(option), "{selected}");
    assert_eq!(amount(&selected, "fulfillment"), Some(*cost), "{selected}");
    assert_eq!(
        amount(&selected, "total"),
        Some(before - before_fulfillment + cost),
        "{selected}"
    );
    assert_ne!(amount(&selected, "total"), Some(before), "the total moved");
    assert_nothing_missing(&selected, &fixture.ends);
    assert!(
        !messages(&selected)
            .iter()
            .any(|(code, _)| code == "missing"),
        "{selected}"
    );
}

/// DSC-005/DSC-008: a code the store takes, in any case, is a discount in the totals;
/// DSC-003/DSC-007/DSC-011/DSC-030: beside a code the store refuses, the good one stays and
/// the refusal is a warning at its place with the store's reason; DSC-004: `[]` clears.
pub async fn code_applied_then_refused(bridge: &TestBridge, fixture: &Fixture) {
    let fixture = &fixture.checkout;
    let (id, ready) = ready(bridge, fixture).await;
    let before = amount(&ready, "total").unwrap();
    assert_eq!(amount(&ready, "discount"), None, "{ready}");

    let applied = update(bridge, &id, json!({"discounts": {"codes": [fixture.code]}})).await;
    let discount = amount(&applied, "discount").unwrap_or_else(|| panic!("{applied}"));
    assert!(discount < 0, "{applied}");
    assert_eq!(amount(&applied, "total"), Some(before + discount));
    let codes: Vec<String> = applied["discounts"]["applied"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|discount| discount["code"].as_str().map(str::to_lowercase))
        .collect();
    assert_eq!(codes, [fixture.code.to_lowercase()], "{applied}");
    assert!(
        !messages(&applied)
            .iter()
            .any(|(code, _)| code.starts_with("discount_code")),
        "{applied}"
    );

    let (refused_code, why) = &fixture.refused;
    let refused = update(
        bridge,
        &id,
        json!({"discounts": {"codes": [fixture.code, refused_code]}}),
    )
    .await;
    let warning = refused["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|message| message["path"] == "$.discounts.codes[1]")
        .unwrap_or_else(|| panic!("no refusal at codes[1] in {refused}"));
    assert_eq!(warning["type"], "warning", "{warning}");
    assert_eq!(warning["code"], *why, "{warning}");
    assert!(
        warning["content"]
            .as_str()
            .is_some_and(|content| !content.is_empty()),
        "{warning}"
    );
    assert_eq!(amount(&refused, "discount"), Some(discount), "{refused}");
    assert_eq!(amount(&refused, "total"), Some(before + discount));

    let cleared = update(bridge, &id, json!({"discounts": {"codes": []}})).await;
    assert_eq!(amount(&cleared, "discount"), None, "{cleared}");
    assert_eq!(amount(&cleared, "total"), Some(before), "{cleared}");
    assert_nothing_missing(&cleared, &fixture.ends);
}

/// CHK-021/CHK-025: complete places the order (completed, with it) or hands the buyer to the
/// store's page (CHK-001/CHK-008: requires_escalation, continue_url, the same total, no
/// order); CHK-048: the same key replayed over REST answers the same bytes.
pub async fn complete_then_replayed(bridge: &TestBridge, fixture: &Fixture) {
    let fixture = &fixture.checkout;
    let (id, ready) = ready(bridge, fixture).await;
    assert_nothing_missing(&ready, &fixture.ends);
    let body = match fixture.ends {
        Ends::Places { handler } => {
            json!({"payment": {"instruments": [{"handler_id": handler, "type": "card"}]}})
        }
        Ends::HandsOff => json!({}),
    };
    let complete_key = key();
    let first = bridge
        .structured_bytes(
            "complete_checkout",
            json!({"meta": meta_with_key(&complete_key), "id": id, "checkout": body}),
        )
        .await;
    let completed: Value = serde_json::from_str(&first).unwrap();
    assert_eq!(completed["id"], json!(id));
    assert_eq!(lines(&completed), lines(&ready), "{completed}");
    assert_eq!(
        amount(&completed, "total"),
        amount(&ready, "total"),
        "{completed}"
    );
    match fixture.ends {
        Ends::Places { .. } => {
            assert_eq!(completed["status"], "completed", "{completed}");
            assert!(
                completed["order"]["id"]
                    .as_str()
                    .is_some_and(|order| !order.is_empty()),
                "{completed}"
            );
            // CHK-003: no continue_url on a terminal status.
            assert!(completed.get("continue_url").is_none(), "{completed}");
        }
        Ends::HandsOff => {
            assert_eq!(completed["status"], "requires_escalation", "{completed}");
            assert_eq!(completed["continue_url"], ready["continue_url"]);
            assert!(completed.get("order").is_none(), "{completed}");
        }
    }

    let (status, replay) = bridge
        .rest(
            Method::POST,
            &format!("/checkout-sessions/{}/complete", segment(&id)),
            Some(&body),
            &[("idempotency-key", &complete_key)],
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{replay}");
    assert_eq!(replay, first);

    match fixture.ends {
        Ends::Places { .. } => {
            // CHK-017/CHK-027: completed is immutable; cancel says it cannot.
            let canceled = bridge
                .call(
                    "cancel_checkout",
                    json!({"meta": meta_with_key(&key()), "id": id}),
                )
                .await;
            assert_eq!(canceled["status"], "completed", "{canceled}");
            assert_eq!(
                messages(&canceled).first().map(|(code, _)| code.as_str()),
                Some("checkout_immutable")
            );
        }
        Ends::HandsOff => {
            // Nothing was placed: a new key hands off again, to the same page.
            let again = bridge
                .call(
                    "complete_checkout",
                    json!({"meta": meta_with_key(&key()), "id": id, "checkout": {}}),
                )
                .await;
            assert_eq!(again["status"], "requires_escalation", "{again}");
            assert_eq!(again["continue_url"], completed["continue_url"]);
        }
    }
}

/// CHK-022/CHK-028: an open checkout cancels over REST (canceled, CHK-003 no continue_url);
/// the same key over MCP answers the same bytes (CHK-048); afterwards it reads back canceled
/// or not at all (CHK-057), and is not completed.
pub async fn cancel_an_open_checkout(bridge: &TestBridge, fixture: &Fixture) {
    let fixture = &fixture.checkout;
    let (_, created) = from_cart(bridge, fixture).await;
    let id = created["id"].as_str().unwrap().to_owned();
    let cancel_key = key();
    let (status, canceled) = bridge
        .rest(
            Method::POST,
            &format!("/checkout-sessions/{}/cancel", segment(&id)),
            None,
            &[("idempotency-key", &cancel_key)],
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{canceled}");
    let replay = bridge
        .structured_bytes(
            "cancel_checkout",
            json!({"meta": meta_with_key(&cancel_key), "id": id}),
        )
        .await;
    assert_eq!(canceled, replay);
    let canceled: Value = serde_json::from_str(&canceled).unwrap();
    assert_eq!(canceled["status"], "canceled", "{canceled}");
    assert_eq!(canceled["id"], json!(id));
    assert!(canceled.get("continue_url").is_none(), "{canceled}");
    let fetched = bridge
        .call("get_checkout", json!({"meta": meta(), "id": id}))
        .await;
    let gone = messages(&fetched)
        .first()
        .is_some_and(|(code, _)| code == "not_found");
    assert!(fetched["status"] == "canceled" || gone, "{fetched}");
    let (_, completed) = bridge
        .call_raw(
            "complete_checkout",
            json!({"meta": meta_with_key(&key()), "id": id, "checkout": {}}),
        )
        .await;
    let status = &completed["result"]["structuredContent"]["status"];
    assert!(
        status != "completed" && status != "requires_escalation",
        "{completed}"
    );
}

/// Where the checkout hands off to the store's page (CHK-005: the page preserves the
/// checkout's state), a real browser opens `continue_url` and the page shows the same items,
/// quantities and total the checkout answered.
pub async fn escalation_page_shows_the_same_items_and_total(
    bridge: &TestBridge,
    fixture: &Fixture,
) {
    let fixture = &fixture.checkout;
    assert!(
        matches!(fixture.ends, Ends::HandsOff),
        "only the platforms that hand off run this scenario (conformance::escalation_page)"
    );
    let (id, ready) = ready(bridge, fixture).await;
    let completed = bridge
        .call(
            "complete_checkout",
            json!({"meta": meta_with_key(&key()), "id": id, "checkout": {}}),
        )
        .await;
    assert_eq!(completed["status"], "requires_escalation", "{completed}");
    let url = completed["continue_url"].as_str().unwrap().to_owned();
    let total = amount(&completed, "total").unwrap();
    assert_eq!(Some(total), amount(&ready, "total"));
    let items: Vec<(String, u64)> = completed["line_items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|line| {
            (
                line["item"]["title"].as_str().unwrap().to_owned(),
                line["quantity"].as_u64().unwrap(),
            )
        })
        .collect();
    let shown = tokio::task::spawn_blocking(move || {
        let mut browser = crate::support::chromium::Browser::launch();
        browser.open(&url);
        browser.wait_for(
            "document.querySelector('[data-total]') !== null",
            Duration::from_secs(10),
        );
        browser.eval(
            "({items: [...document.querySelectorAll('[data-item]')].map(row => \
               [row.querySelector('.name').textContent, Number(row.querySelector('.quantity').textContent)]), \
              total: Number(document.querySelector('[data-total]').dataset.total), \
              text: document.body.innerText})",
        )
    })
    .await
    .unwrap();
    let on_page: Vec<(String, u64)> = shown["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| {
            (
                row[0].as_str().unwrap().to_owned(),
                row[1].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(on_page, items, "{shown}");
    assert_eq!(shown["total"], json!(total), "{shown}");
}
