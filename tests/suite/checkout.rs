//! Checkout over MCP (and REST) against the sample store's deterministic checkout: the whole
//! journey an agent takes from a cart to a placed order. Requirement ids are those of
//! requirements/checkout.json.

use crate::support::debug_bridge::DebugBridge;
use crate::support::update_checkout as update;
use crate::support::values::{amount as total, codes, key, line, paths, sao_paulo};
use crate::support::{TestBridge, meta, meta_with_key};
use serde_json::{Value, json};

const SHOE: &str = "prod_cloud_stride_blu_39"; // R$ 349,90
const SANDAL: &str = "prod_chinelo_praia_azm_3334"; // R$ 34,90

async fn from_cart(bridge: &TestBridge) -> Value {
    let cart = bridge
        .call(
            "create_cart",
            json!({"meta": meta(), "cart": {"line_items": [line(SHOE, 1), line(SANDAL, 2)]}}),
        )
        .await;
    let cart_id = cart["id"].as_str().unwrap();
    bridge
        .call(
            "create_checkout",
            json!({"meta": meta_with_key(&key()), "checkout": {"cart_id": cart_id}}),
        )
        .await
}

/// Address, option, code, buyer: a checkout ready to complete.
async fn ready(bridge: &TestBridge) -> Value {
    let created = from_cart(bridge).await;
    let id = created["id"].as_str().unwrap();
    update(
        bridge,
        id,
        json!({
            "buyer": {"email": "ana@example.com", "first_name": "Ana"},
            "fulfillment": {"methods": [{"type": "shipping", "destinations": [sao_paulo()]}]}
        }),
    )
    .await;
    let ready = update(
        bridge,
        id,
        json!({"fulfillment": {"methods": [{"id": "ful_1", "groups": [{"id": "grp_1", "selected_option_id": "sedex"}]}]}}),
    )
    .await;
    assert_eq!(ready["status"], "ready_for_complete", "{ready}");
    ready
}

#[tokio::test]
async fn the_profile_declares_checkout_and_the_tools_are_listed() {
    let bridge = TestBridge::sample().await;
    let profile: Value = bridge
        .get("/.well-known/bcp")
        .await
        .json()
        .await
        .unwrap_or(Value::Null);
    if !profile.is_null() {
        assert!(
            profile.to_string().contains("br.dev.bcp.shopping.checkout"),
            "{profile}"
        );
    }
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
        "get_checkout",
        "update_checkout",
        "complete_checkout",
        "cancel_checkout",
    ] {
        assert!(names.contains(&name), "{names:?}");
    }
}

#[tokio::test]
async fn a_checkout_from_a_cart_is_incomplete_with_what_is_missing_by_path() {
    let bridge = TestBridge::sample().await;
    let checkout = from_cart(&bridge).await;
    // CHK-034: the required top-level members; CHK-033: a lifecycle status.
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
    assert_eq!(
        checkout["ucp"]["capabilities"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        // The checkout and the extensions in force (no agent narrowed them).
        [
            "br.dev.bcp.shopping.checkout",
            "br.dev.bcp.shopping.discount",
            "br.dev.bcp.shopping.fulfillment"
        ]
    );
    assert_eq!(checkout["status"], "incomplete");
    assert_eq!(checkout["line_items"].as_array().unwrap().len(), 2);
    // The store's totals: 349,90 + 2 × 34,90, nothing shipped yet.
    assert_eq!(total(&checkout, "subtotal"), Some(41_970));
    assert_eq!(total(&checkout, "total"), Some(41_970));
    // CHK-029: each missing piece is named where the agent fills it in.
    let paths = paths(&checkout);
    // The sample store's test orders need no email: only the destination is missing.
    assert!(!paths.contains(&"$.buyer.email".to_owned()), "{paths:?}");
    assert!(
        paths.contains(&"$.fulfillment.methods".to_owned()),
        "{paths:?}"
    );
    assert!(codes(&checkout).iter().all(|code| code == "missing"));
}

#[tokio::test]
async fn an_address_brings_options_and_a_selection_changes_the_totals() {
    let bridge = TestBridge::sample().await;
    let created = bridge
        .call(
            "create_checkout",
            json!({"meta": meta_with_key(&key()), "checkout": {"line_items": [line(SANDAL, 1)], "buyer": {"email": "ana@example.com"}}}),
        )
        .await;
    let id = created["id"].as_str().unwrap();
    assert_eq!(created["status"], "incomplete");
    let addressed = update(
        &bridge,
        id,
        json!({"fulfillment": {"methods": [{"type": "shipping", "destinations": [sao_paulo()]}]}}),
    )
    .await;
    // FUL-003/FUL-007/FUL-008: method, group and options with their store prices.
    let method = &addressed["fulfillment"]["methods"][0];
    assert_eq!(method["type"], "shipping");
    let options: Vec<&str> = method["groups"][0]["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|option| option["id"].as_str().unwrap())
        .collect();
    assert_eq!(options, ["pac", "sedex", "pickup"]);
    assert_eq!(addressed["status"], "incomplete");
    assert!(
        paths(&addressed)
            .contains(&"$.fulfillment.methods[0].groups[0].selected_option_id".to_owned())
    );
    let before = total(&addressed, "total").unwrap();
    let selected = update(
        &bridge,
        id,
        json!({"fulfillment": {"methods": [{"id": method["id"], "groups": [{"id": method["groups"][0]["id"], "selected_option_id": "pac"}]}]}}),
    )
    .await;
    assert_eq!(
        selected["fulfillment"]["methods"][0]["groups"][0]["selected_option_id"],
        "pac"
    );
    assert_eq!(total(&selected, "fulfillment"), Some(1500));
    assert_eq!(total(&selected, "total"), Some(before + 1500));
    // Incomplete → ready: nothing is missing and the store has handlers the bridge can use.
    assert_eq!(selected["status"], "ready_for_complete");
    assert!(selected.get("messages").is_none(), "{selected}");
}

#[tokio::test]
async fn a_code_is_applied_and_a_refused_one_says_why() {
    let bridge = TestBridge::sample().await;
    let created = from_cart(&bridge).await;
    let id = created["id"].as_str().unwrap();
    // DSC-005: codes match case-insensitively; DSC-008: the discount is in the totals.
    let applied = update(&bridge, id, json!({"discounts": {"codes": ["bemvindo10"]}})).await;
    assert_eq!(total(&applied, "discount"), Some(-4_197));
    assert_eq!(total(&applied, "total"), Some(41_970 - 4_197));
    let discount = &applied["discounts"]["applied"][0];
    assert_eq!(discount["amount"], 4_197);
    assert_eq!(applied["discounts"]["codes"], json!(["bemvindo10"]));
    // DSC-003: the codes sent replace the set; DSC-007/DSC-011: a refused code is a warning
    // at its place in discounts.codes.
    let refused = update(&bridge, id, json!({"discounts": {"codes": ["VERAO2025"]}})).await;
    assert_eq!(total(&refused, "discount"), None);
    let warning = refused["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|message| message["type"] == "warning")
        .unwrap();
    assert_eq!(warning["code"], "discount_code_expired");
    assert_eq!(warning["path"], "$.discounts.codes[0]");
    // DSC-004: [] clears.
    let cleared = update(&bridge, id, json!({"discounts": {"codes": []}})).await;
    assert_eq!(cleared["discounts"]["codes"], json!([]));
}

#[tokio::test]
async fn complete_places_the_order_once_and_a_replay_answers_the_same_bytes() {
    let bridge = TestBridge::sample().await;
    let ready = ready(&bridge).await;
    let id = ready["id"].as_str().unwrap();
    let complete_key = key();
    let arguments = json!({
        "meta": meta_with_key(&complete_key),
        "id": id,
        "checkout": {"payment": {"instruments": [{"handler_id": "sample_test_approve", "type": "card"}]}}
    });
    let first = bridge
        .structured_bytes("complete_checkout", arguments.clone())
        .await;
    let completed: Value = serde_json::from_str(&first).unwrap();
    // The answers at every step hold to the UCP checkout schema (2026-04-08, the BCP seed's).
    let schemas = crate::schemas::Schemas::load();
    for answer in [&ready, &completed] {
        let problems = crate::schemas::problems(&schemas.checkout, answer);
        assert!(problems.is_empty(), "{problems:#?}\n{answer}");
        // Issue 40 item 1: and to the output schema the tool advertises.
        let problems = bridge.output_problems("complete_checkout", answer).await;
        assert!(problems.is_empty(), "{problems:#?}\n{answer}");
    }
    // CHK-025: the order; CHK-003: no continue_url on a terminal status.
    assert_eq!(completed["status"], "completed", "{completed}");
    assert!(
        completed["order"]["id"]
            .as_str()
            .unwrap()
            .starts_with("ord_")
    );
    assert!(completed.get("continue_url").is_none());
    // CHK-048: the same key and payload answer the recorded bytes.
    let replay = bridge
        .structured_bytes("complete_checkout", arguments)
        .await;
    assert_eq!(first, replay);
    // The order reads back (get_order, GET /orders/{id}) with the checkout's lines and totals.
    let order_id = completed["order"]["id"].as_str().unwrap();
    let order = bridge
        .call("get_order", json!({"meta": meta(), "id": order_id}))
        .await;
    assert_eq!(order["id"], order_id);
    assert_eq!(order["checkout_id"], id);
    assert_eq!(
        order["ucp"]["capabilities"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        ["br.dev.bcp.shopping.order"]
    );
    assert_eq!(order["line_items"].as_array().unwrap().len(), 2);
    assert_eq!(total(&order, "total"), total(&completed, "total"));
    let problems = crate::schemas::problems(&schemas.order, &order);
    assert!(problems.is_empty(), "{problems:#?}\n{order}");
    let problems = bridge.output_problems("get_order", &order).await;
    assert!(problems.is_empty(), "{problems:#?}\n{order}");
    let (status, rest_order) = bridge
        .rest(
            reqwest::Method::GET,
            &format!("/orders/{order_id}"),
            None,
            &[],
        )
        .await;
    assert_eq!(status, reqwest::StatusCode::OK);
    assert_eq!(rest_order, serde_json::to_string(&order).unwrap());
    let unknown = bridge
        .call("get_order", json!({"meta": meta(), "id": "ord_999"}))
        .await;
    assert_eq!(unknown["messages"][0]["code"], "not_found");
    // CHK-017: a completed checkout is immutable; CHK-027: cancel says it cannot.
    let again = update(&bridge, id, json!({"discounts": {"codes": ["BEMVINDO10"]}})).await;
    assert_eq!(again["status"], "completed");
    assert_eq!(codes(&again)[0], "checkout_immutable");
    let cancel = bridge
        .call(
            "cancel_checkout",
            json!({"meta": meta_with_key(&key()), "id": id}),
        )
        .await;
    assert_eq!(cancel["status"], "completed");
    assert_eq!(codes(&cancel)[0], "checkout_immutable");
    // Over REST the refusal is a conflict with the checkout's state: 409, the checkout as it
    // stands in the body (as MCP answers it).
    let (status, body) = bridge
        .rest(
            reqwest::Method::POST,
            &format!("/checkout-sessions/{id}/cancel"),
            None,
            &[("idempotency-key", &key())],
        )
        .await;
    assert_eq!(status, reqwest::StatusCode::CONFLICT, "{body}");
    let body: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(body["status"], "completed");
    assert_eq!(codes(&body)[0], "checkout_immutable");
    let (status, _) = bridge
        .rest(
            reqwest::Method::PUT,
            &format!("/checkout-sessions/{id}"),
            Some(&json!({"line_items": [{"item": {"id": "prod_abc123_blu_10"}, "quantity": 1}]})),
            &[("idempotency-key", &key())],
        )
        .await;
    assert_eq!(status, reqwest::StatusCode::CONFLICT);
}

#[tokio::test]
async fn a_declined_payment_leaves_the_checkout_open_with_the_reason() {
    let bridge = TestBridge::sample().await;
    let ready = ready(&bridge).await;
    let id = ready["id"].as_str().unwrap();
    let declined = bridge
        .call(
            "complete_checkout",
            json!({"meta": meta_with_key(&key()), "id": id, "checkout": {"payment": {"instruments": [{"handler_id": "sample_test_decline"}]}}}),
        )
        .await;
    assert_eq!(declined["status"], "ready_for_complete");
    assert_eq!(codes(&declined)[0], "payment_failed");
    // PAY-014: an unknown handler is refused before anything is placed.
    let (_, error) = bridge
        .call_error(
            "complete_checkout",
            json!({"meta": meta_with_key(&key()), "id": id, "checkout": {"payment": {"instruments": [{"handler_id": "bogus"}]}}}),
        )
        .await;
    assert_eq!(error["code"], -32602, "{error}");
}

/// The issuer challenges the payment (as 3-D Secure does): the order exists, pending, and the
/// buyer confirms on the shop's page. CHK-001, CHK-004, CHK-015: `requires_escalation` with an
/// absolute https `continue_url` and a message that needs the buyer.
#[tokio::test]
async fn a_challenged_payment_escalates_to_the_shops_page() {
    let bridge = TestBridge::sample().await;
    let ready = ready(&bridge).await;
    let id = ready["id"].as_str().unwrap();
    let challenged = bridge
        .call(
            "complete_checkout",
            json!({"meta": meta_with_key(&key()), "id": id, "checkout": {"payment": {"instruments": [{"handler_id": "sample_test_challenge", "type": "card"}]}}}),
        )
        .await;
    assert_eq!(challenged["status"], "requires_escalation", "{challenged}");
    let url = challenged["continue_url"].as_str().unwrap();
    assert!(
        url.starts_with("https://") && url.contains("pay?order="),
        "{url}"
    );
    let needs_buyer = challenged["messages"]
        .as_array()
        .unwrap()
        .iter()
        .any(|message| message["severity"] == "requires_buyer_input");
    assert!(needs_buyer, "{challenged}");
    // It stays escalated: read back, the same page and no second order.
    let again = bridge
        .call("get_checkout", json!({"meta": meta(), "id": id}))
        .await;
    assert_eq!(again["status"], "requires_escalation");
    assert_eq!(again["continue_url"], challenged["continue_url"]);
}

#[tokio::test]
async fn complete_without_a_handler_names_what_to_choose() {
    let bridge = TestBridge::sample().await;
    let ready = ready(&bridge).await;
    let id = ready["id"].as_str().unwrap();
    let answer = bridge
        .call(
            "complete_checkout",
            json!({"meta": meta_with_key(&key()), "id": id, "checkout": {}}),
        )
        .await;
    // No handler chosen: nothing is placed, the agent is told what to choose.
    assert_eq!(answer["status"], "ready_for_complete");
    assert!(paths(&answer).contains(&"$.payment.instruments".to_owned()));
}

#[tokio::test]
async fn cancel_ends_an_open_checkout_and_complete_needs_a_key() {
    let bridge = TestBridge::sample().await;
    let created = from_cart(&bridge).await;
    let id = created["id"].as_str().unwrap();
    // checkout-mcp.md: complete requires meta.idempotency-key.
    let (_, error) = bridge
        .call_error(
            "complete_checkout",
            json!({"meta": meta(), "id": id, "checkout": {}}),
        )
        .await;
    assert_eq!(error["code"], -32602, "{error}");
    // CHK-028: an open checkout cancels.
    let canceled = bridge
        .call(
            "cancel_checkout",
            json!({"meta": meta_with_key(&key()), "id": id}),
        )
        .await;
    assert_eq!(canceled["status"], "canceled");
    assert!(canceled.get("continue_url").is_none());
    let fetched = bridge
        .call("get_checkout", json!({"meta": meta(), "id": id}))
        .await;
    assert!(matches!(
        fetched["status"].as_str(),
        Some("canceled") | None
    ));
    // Issue 36 item 2 (the official suite's test_cannot_complete_canceled_checkout): canceled
    // is terminal, so completing it is refused as immutable, 409 over REST with the checkout,
    // the same payload over MCP, and nothing is placed.
    let payment = json!({"payment": {"instruments": [{"handler_id": "sample_test_approve"}]}});
    let (status, body) = bridge
        .rest(
            reqwest::Method::POST,
            &format!("/checkout-sessions/{id}/complete"),
            Some(&payment),
            &[("idempotency-key", &key())],
        )
        .await;
    assert_eq!(status, reqwest::StatusCode::CONFLICT, "{body}");
    let body: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(body["status"], "canceled", "{body}");
    assert_eq!(codes(&body)[0], "checkout_immutable");
    assert!(body.get("order").is_none(), "{body}");
    let completed = bridge
        .call(
            "complete_checkout",
            json!({"meta": meta_with_key(&key()), "id": id, "checkout": payment}),
        )
        .await;
    assert_eq!(completed["status"], "canceled", "{completed}");
    assert_eq!(codes(&completed)[0], "checkout_immutable");
    // CHK-052: an unknown checkout is a business outcome with an unrecoverable message.
    let unknown = bridge
        .call("get_checkout", json!({"meta": meta(), "id": "chk_nope"}))
        .await;
    assert_eq!(unknown["ucp"]["status"], "error");
    assert_eq!(unknown["messages"][0]["code"], "not_found");
    assert_eq!(unknown["messages"][0]["severity"], "unrecoverable");
}

#[tokio::test]
async fn a_checkout_with_no_buyable_item_is_not_created() {
    let bridge = TestBridge::sample().await;
    // CHK-053: ucp.status error, messages, no resource.
    let answer = bridge
        .call(
            "create_checkout",
            json!({"meta": meta_with_key(&key()), "checkout": {"line_items": [line("no_such_item", 1)]}}),
        )
        .await;
    assert_eq!(answer["ucp"]["status"], "error");
    assert!(answer.get("id").is_none());
    assert_eq!(answer["messages"][0]["code"], "not_found");
}

/// A REST checkout request; the body parsed, with the status.
async fn rest(
    bridge: &TestBridge,
    method: reqwest::Method,
    path: &str,
    body: Option<Value>,
    key: Option<&str>,
) -> (reqwest::StatusCode, String) {
    let headers: Vec<(&str, &str)> = key
        .map(|key| vec![("idempotency-key", key)])
        .unwrap_or_default();
    bridge.rest(method, path, body.as_ref(), &headers).await
}

#[tokio::test]
async fn rest_checkout_sessions_answer_the_bytes_mcp_answers() {
    use reqwest::{Method, StatusCode};
    let bridge = TestBridge::sample().await;
    // CHK-018: create is POST /checkout-sessions, 201 with the checkout.
    let (status, created) = rest(
        &bridge,
        Method::POST,
        "/checkout-sessions",
        Some(json!({"line_items": [line(SANDAL, 1)], "buyer": {"email": "ana@example.com"}})),
        Some(&key()),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let created: Value = serde_json::from_str(&created).unwrap();
    let id = created["id"].as_str().unwrap().to_owned();
    assert_eq!(created["status"], "incomplete");
    // CHK-019: GET is the same business payload as get_checkout, byte for byte.
    let (status, got) = rest(
        &bridge,
        Method::GET,
        &format!("/checkout-sessions/{id}"),
        None,
        None,
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let mcp = bridge
        .structured_bytes("get_checkout", json!({"meta": meta(), "id": id}))
        .await;
    assert_eq!(got, mcp);
    // CHK-020: PUT carries the resource, its own id included (the path's).
    let (status, put) = rest(
        &bridge,
        Method::PUT,
        &format!("/checkout-sessions/{id}"),
        Some(json!({
            "id": id,
            "fulfillment": {"methods": [{"type": "shipping", "destinations": [sao_paulo()]}]}
        })),
        Some(&key()),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{put}");
    let mcp = bridge
        .structured_bytes("get_checkout", json!({"meta": meta(), "id": id}))
        .await;
    assert_eq!(put, mcp);
    let (status, _) = rest(
        &bridge,
        Method::PUT,
        &format!("/checkout-sessions/{id}"),
        Some(json!({"id": "chk_other"})),
        Some(&key()),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let (_, selected) = rest(
        &bridge,
        Method::PUT,
        &format!("/checkout-sessions/{id}"),
        Some(json!({"fulfillment": {"methods": [{"id": "ful_1", "groups": [{"id": "grp_1", "selected_option_id": "sedex"}]}]}})),
        Some(&key()),
    )
    .await;
    let selected: Value = serde_json::from_str(&selected).unwrap();
    assert_eq!(selected["status"], "ready_for_complete", "{selected}");
    // CHK-021: complete, with the Idempotency-Key header; its replay answers the same bytes.
    let complete_key = key();
    let body = json!({"payment": {"instruments": [{"handler_id": "sample_test_approve"}]}});
    let path = format!("/checkout-sessions/{id}/complete");
    let (status, completed) = rest(
        &bridge,
        Method::POST,
        &path,
        Some(body.clone()),
        Some(&complete_key),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{completed}");
    let (_, replay) = rest(
        &bridge,
        Method::POST,
        &path,
        Some(body),
        Some(&complete_key),
    )
    .await;
    assert_eq!(completed, replay);
    let completed: Value = serde_json::from_str(&completed).unwrap();
    assert_eq!(completed["status"], "completed");
    let mcp = bridge
        .structured_bytes("get_checkout", json!({"meta": meta(), "id": id}))
        .await;
    assert_eq!(serde_json::to_string(&completed).unwrap(), mcp);
    // CHK-022: cancel is POST …/cancel; an open checkout answers canceled.
    let other = bridge
        .call(
            "create_checkout",
            json!({"meta": meta_with_key(&key()), "checkout": {"line_items": [line(SHOE, 1)]}}),
        )
        .await;
    let other_id = other["id"].as_str().unwrap();
    let (status, canceled) = rest(
        &bridge,
        Method::POST,
        &format!("/checkout-sessions/{other_id}/cancel"),
        None,
        Some(&key()),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{canceled}");
    let canceled: Value = serde_json::from_str(&canceled).unwrap();
    assert_eq!(canceled["status"], "canceled");
}

/// Issue 24 item 7: after a whole checkout at `debug`, neither the log nor the merchant page
/// holds the buyer's name, email, phone or address.
#[tokio::test]
async fn buyer_data_is_in_no_log_line_and_not_on_the_merchant_page() {
    let mut bridge = DebugBridge::start("buyer-logs", "");
    let (name, surname, email, phone) = (
        "Genoveva",
        "Quixabeira",
        "genoveva.q@example.com",
        "+5511987650123",
    );
    let (street, city, postal) = ("Rua Zulmira Tavares 4321", "Itaquaquecetuba", "08599-777");
    let created = bridge
        .call(
        "create_checkout",
        json!({"meta": meta_with_key(&key()), "checkout": {
            "line_items": [line(SANDAL, 1)],
            "buyer": {"first_name": name, "last_name": surname, "email": email, "phone_number": phone}
        }}),
    )
    .await;
    let id = created["id"].as_str().unwrap().to_owned();
    bridge
        .call(
        "update_checkout",
        json!({"meta": meta(), "id": id, "checkout": {"fulfillment": {"methods": [{"type": "shipping", "destinations": [{
            "first_name": name, "last_name": surname, "street_address": street,
            "address_locality": city, "address_region": "SP", "postal_code": postal,
            "address_country": "BR", "phone_number": phone
        }]}]}}}),
    )
    .await;
    bridge
        .call(
        "update_checkout",
        json!({"meta": meta(), "id": id, "checkout": {"fulfillment": {"methods": [{"id": "ful_1", "groups": [{"id": "grp_1", "selected_option_id": "pac"}]}]}}}),
    )
    .await;
    let completed = bridge
        .call(
        "complete_checkout",
        json!({"meta": meta_with_key(&key()), "id": id, "checkout": {"payment": {"instruments": [{"handler_id": "sample_test_approve"}]}}}),
    )
    .await;
    assert_eq!(completed["status"], "completed", "{completed}");
    // The answer carries the buyer (it is theirs); nothing else may.
    assert_eq!(completed["buyer"]["email"], email);
    let page = bridge
        .client()
        .get(format!("{}/", bridge.base_url()))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let secrets = [name, surname, email, phone, street, city, postal];
    for secret in secrets {
        assert!(!page.contains(secret), "{secret} on the merchant page");
    }
    bridge.assert_log_holds_none(&secrets);
}

async fn tool_names(bridge: &TestBridge) -> Vec<String> {
    let (_, reply) = bridge
        .rpc(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
        .await;
    reply["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|tool| tool["name"].as_str().map(str::to_owned))
        .collect()
}

/// A store that takes payment itself (WooCommerce) serves checkout only once the merchant
/// names the gateways agents may place orders with (`[checkout]`); the profile follows.
#[tokio::test]
async fn woocommerce_serves_checkout_only_when_the_merchant_names_its_gateways() {
    use crate::support::woo_standin::WooStandin;
    let woo = WooStandin::start().await;
    let off = TestBridge::start(&woo.config("")).await;
    assert!(
        !tool_names(&off)
            .await
            .iter()
            .any(|name| name.contains("checkout"))
    );
    let profile = off.get("/.well-known/bcp").await.text().await.unwrap();
    assert!(!profile.contains("shopping.checkout"), "{profile}");
    let on = TestBridge::start(&woo.config("\n[checkout]\nplace_with = [\"bacs\", \"cod\"]")).await;
    let names = tool_names(&on).await;
    for name in ["create_checkout", "complete_checkout", "get_order"] {
        assert!(names.iter().any(|found| found == name), "{names:?}");
    }
    let profile = on.get("/.well-known/bcp").await.text().await.unwrap();
    assert!(
        profile.contains("br.dev.bcp.shopping.checkout"),
        "{profile}"
    );
    // A checkout is a Store API cart session: the store's lines and totals, what is missing.
    let created = on
        .call(
            "create_checkout",
            json!({"meta": meta_with_key(&key()), "checkout": {"line_items": [{"item": {"id": "16"}, "quantity": 1}]}}),
        )
        .await;
    assert_eq!(created["status"], "incomplete", "{created}");
    assert_eq!(created["line_items"][0]["item"]["price"], 2200);
    assert_eq!(total(&created, "total"), Some(2200));
    assert!(paths(&created).contains(&"$.buyer.email".to_owned()));
    assert!(
        created["continue_url"]
            .as_str()
            .unwrap()
            .contains("/checkout/?session="),
        "{created}"
    );
}

#[tokio::test]
async fn converting_a_cart_uses_its_contents_and_answers_the_open_checkout_again() {
    let bridge = TestBridge::sample().await;
    let cart = bridge
        .call(
            "create_cart",
            json!({"meta": meta(), "cart": {"line_items": [line(SHOE, 1), line(SANDAL, 2)]}}),
        )
        .await;
    let cart_id = cart["id"].as_str().unwrap();
    // CART-001: the cart's contents win over line items sent beside its id.
    let first = bridge
        .call(
            "create_checkout",
            json!({"meta": meta_with_key(&key()), "checkout": {"cart_id": cart_id, "line_items": [line(SANDAL, 7)]}}),
        )
        .await;
    assert_eq!(first["status"], "incomplete", "{first}");
    assert_eq!(first["line_items"].as_array().unwrap().len(), 2, "{first}");
    // CART-002: converting the same cart again answers the open checkout, not a new one.
    let again = bridge
        .call(
            "create_checkout",
            json!({"meta": meta_with_key(&key()), "checkout": {"cart_id": cart_id}}),
        )
        .await;
    assert_eq!(again["id"], first["id"], "{again}");
    // Once it is canceled, the cart converts into a new checkout.
    bridge
        .call(
            "cancel_checkout",
            json!({"meta": meta_with_key(&key()), "id": first["id"]}),
        )
        .await;
    let after = bridge
        .call(
            "create_checkout",
            json!({"meta": meta_with_key(&key()), "checkout": {"cart_id": cart_id}}),
        )
        .await;
    assert_ne!(after["id"], first["id"], "{after}");
}

#[tokio::test]
async fn over_rest_a_repeated_conversion_is_200_not_201() {
    use reqwest::{Method, StatusCode};
    let bridge = TestBridge::sample().await;
    let cart = bridge
        .call(
            "create_cart",
            json!({"meta": meta(), "cart": {"line_items": [line(SANDAL, 1)]}}),
        )
        .await;
    let body = json!({"cart_id": cart["id"], "line_items": []});
    // CART-002: the first conversion creates (201), the second answers the open one (200).
    let (first, created) = rest(
        &bridge,
        Method::POST,
        "/checkout-sessions",
        Some(body.clone()),
        Some(&key()),
    )
    .await;
    assert_eq!(first, StatusCode::CREATED, "{created}");
    let (second, again) = rest(
        &bridge,
        Method::POST,
        "/checkout-sessions",
        Some(body),
        Some(&key()),
    )
    .await;
    assert_eq!(second, StatusCode::OK, "{again}");
    let created: Value = serde_json::from_str(&created).unwrap();
    let again: Value = serde_json::from_str(&again).unwrap();
    assert_eq!(again["id"], created["id"]);
}

/// A checkout made with an address and a selection: the address prices the options, the
/// selection is tried on them, and one the new checkout never handed out is a warning, not a
/// refusal of the whole create (spck's fulfillment probes send ids of their own).
#[tokio::test]
async fn a_create_with_an_address_and_a_selection_makes_the_checkout() {
    let bridge = TestBridge::sample().await;
    let create = |group: &str, option: &str| {
        json!({"meta": meta_with_key(&key()), "checkout": {
            "line_items": [line(SANDAL, 1)],
            "fulfillment": {"methods": [{"type": "shipping",
                "destinations": [{"address_country": "BR", "address_region": "SP", "postal_code": "01310-100"}],
                "groups": [{"id": group, "selected_option_id": option}]}]}
        }})
    };
    let guessed = bridge.call("create_checkout", create("g1", "std")).await;
    assert_eq!(guessed["status"], "incomplete", "{guessed}");
    let group = &guessed["fulfillment"]["methods"][0]["groups"][0];
    assert!(
        !group["options"].as_array().unwrap().is_empty(),
        "{guessed}"
    ); // FUL-008
    assert_eq!(group["selected_option_id"], Value::Null);
    let messages = guessed["messages"].as_array().unwrap();
    let warning = messages
        .iter()
        .find(|message| message["type"] == "warning")
        .unwrap_or_else(|| panic!("{guessed}"));
    assert_eq!(warning["code"], "invalid");
    assert_eq!(
        warning["path"],
        "$.fulfillment.methods[0].groups[0].selected_option_id"
    );
    // The address was taken: no message still asks for it.
    assert!(
        !paths(&guessed).contains(&"$.fulfillment.methods".to_owned()),
        "{guessed}"
    );
    // The ids the store hands out (deterministic here) select at create.
    let chosen = bridge.call("create_checkout", create("grp_1", "pac")).await;
    let group = &chosen["fulfillment"]["methods"][0]["groups"][0];
    assert_eq!(group["selected_option_id"], "pac", "{chosen}");
    assert!(
        chosen["messages"]
            .as_array()
            .is_none_or(|list| list.iter().all(|message| message["type"] != "warning")),
        "{chosen}"
    );
}

/// fulfillment_group.json: a group's `id` is omitted on create (the store makes the groups)
/// and required on update. A selection sent with the creation applies to the group the store
/// made at that position, whatever placeholder id the agent wrote; an update without the id is
/// refused at its path.
#[tokio::test]
async fn a_selection_at_create_matches_the_stores_group_by_position() {
    let bridge = TestBridge::sample().await;
    for group in [
        json!({"selected_option_id": "sedex"}),
        json!({"id": "g1", "selected_option_id": "sedex"}),
    ] {
        let created = bridge
            .call(
                "create_checkout",
                json!({"meta": meta_with_key(&key()), "checkout": {
                    "line_items": [line("prod_abc123_blu_10", 1)],
                    "fulfillment": {"methods": [{"type": "shipping", "destinations": [sao_paulo()], "groups": [group]}]}
                }}),
            )
            .await;
        let made = &created["fulfillment"]["methods"][0]["groups"][0];
        assert_eq!(made["selected_option_id"], "sedex", "{created}");
        assert_eq!(created["status"], "ready_for_complete", "{created}");
    }
    let created = bridge
        .call(
            "create_checkout",
            json!({"meta": meta_with_key(&key()), "checkout": {"line_items": [line("prod_abc123_blu_10", 1)]}}),
        )
        .await;
    let (_, error) = bridge
        .call_error(
            "update_checkout",
            json!({"meta": meta(), "id": created["id"], "checkout": {"fulfillment": {"methods": [{"type": "shipping", "destinations": [sao_paulo()], "groups": [{"selected_option_id": "pac"}]}]}}}),
        )
        .await;
    assert_eq!(error["code"], -32602, "{error}");
    assert!(
        error["message"].as_str().unwrap().contains("groups[0].id"),
        "{error}"
    );
}

/// Issue 35 items 1 and 5: agent B, next to agent A's order, enumerates order ids the way
/// stores number them and alters A's handle; every guess is `not_found`, answered in the very
/// same bytes whatever was guessed, and only A's own handle reads the order.
#[tokio::test]
async fn a_second_agent_enumerating_order_ids_finds_nothing() {
    let bridge = TestBridge::sample().await;
    let ready = ready(&bridge).await;
    let id = ready["id"].as_str().unwrap();
    let completed = bridge
        .call(
            "complete_checkout",
            json!({
                "meta": meta_with_key(&key()),
                "id": id,
                "checkout": {"payment": {"instruments": [{"handler_id": "sample_test_approve"}]}}
            }),
        )
        .await;
    assert_eq!(completed["status"], "completed", "{completed}");
    let handle = completed["order"]["id"].as_str().unwrap().to_owned();
    // At least 128 bits an outsider cannot produce: the store's number is not in it.
    assert!(handle.len() >= 4 + 22, "{handle}");
    for number in ["ord_1", "1"] {
        assert!(!handle.ends_with(number), "{handle}");
    }
    let mut guesses: Vec<String> = (0..30).map(|n| format!("ord_{n}")).collect();
    guesses.extend(
        ["1", "wc_order_1", "gid://shopify/Order/1", "ord_"]
            .iter()
            .map(|guess| (*guess).to_owned()),
    );
    let mut flipped = handle.clone().into_bytes();
    let at = flipped.len() / 2;
    flipped[at] = if flipped[at] == b'A' { b'B' } else { b'A' };
    guesses.push(String::from_utf8(flipped).unwrap());
    guesses.push(handle[..handle.len() - 1].to_owned());
    guesses.push(format!("{handle}A"));
    guesses.push(format!("ord_{}", "A".repeat(handle.len() - 4)));
    let mut answers = std::collections::BTreeSet::new();
    for guess in &guesses {
        let answer = bridge
            .structured_bytes("get_order", json!({"meta": meta(), "id": guess}))
            .await;
        assert!(answer.contains("\"not_found\""), "{guess}: {answer}");
        assert!(!answer.contains("Rua"), "{guess}: {answer}");
        answers.insert(answer);
        let (status, body) = bridge
            .rest(reqwest::Method::GET, &format!("/orders/{guess}"), None, &[])
            .await;
        assert!(!body.contains("Rua"), "{guess}: {status} {body}");
    }
    assert_eq!(answers.len(), 1, "a guess is told apart: {answers:#?}");
    // The owner's handle reads the order, over MCP and REST alike.
    let order = bridge
        .call("get_order", json!({"meta": meta(), "id": handle}))
        .await;
    assert_eq!(order["id"], json!(handle), "{order}");
    assert_eq!(order["checkout_id"], json!(id));
    // Cart and checkout ids are as unguessable: 128 random bits at least.
    let hex = |id: &str| id.chars().filter(char::is_ascii_hexdigit).count();
    assert!(hex(id) >= 32, "{id}");
}

/// Issue 36 item 3 (overview.md, PAY-003): the profile advertises the payment handlers
/// checkout answers offer, under the same registry key, and only those.
#[tokio::test]
async fn the_profile_lists_the_handlers_checkout_answers_offer() {
    let bridge = TestBridge::sample().await;
    let profile: Value = bridge.get("/.well-known/bcp").await.json().await.unwrap();
    let advertised = &profile["ucp"]["payment_handlers"];
    let created = from_cart(&bridge).await;
    let offered = &created["ucp"]["payment_handlers"];
    assert!(
        offered.as_object().is_some_and(|map| !map.is_empty()),
        "{created}"
    );
    assert_eq!(advertised, offered, "{profile}");
    assert!(
        advertised.to_string().contains("sample_test_approve"),
        "{profile}"
    );
}
