//! Checkout on a VTEX store, over real HTTP on loopback against the VTEX stand-in
//! (tests/support/vtex_standin/): the orderForm the cart is becomes the checkout, the store's
//! SLAs its options, its coupons and totalizers the discounts and totals, and complete hands
//! the buyer to the store's payment step for that orderForm. Requirement ids are those of
//! requirements/checkout.json.

use crate::support::debug_bridge::DebugBridge;
use crate::support::update_checkout as update;
use crate::support::values::{amount as total, codes, key, line, sao_paulo};
use crate::support::vtex_standin::{
    CLOCK_SKU, CODE, EXPIRED_CODE, MUG_SKU_FIRST, PICKUP_POINT, VtexStandin,
};
use crate::support::{TestBridge, meta, meta_with_key};
use serde_json::{Value, json};

const NO_CACHE: &str = "\n[cache]\nenabled = false\n";
/// A valid CPF (BCP fiscal identity): a Brazilian VTEX store requires one (issue 37).
fn cpf() -> Value {
    json!({"kind": "cpf", "value": "52998224725"})
}
/// R$ 197,99 + 2 × R$ 29,90, as the stand-in's catalog prices them.
const ITEMS: i64 = 19_799 + 2 * 2_990;
const PICKUP: &str = "Retirada (Loja Centro)";

fn mug() -> String {
    MUG_SKU_FIRST.to_string()
}

/// `(method id, method type, group id, [(option id, total)], selected option)`.
type Method = (String, String, String, Vec<(String, i64)>, Option<String>);

/// Each method with its one group's options.
fn options(checkout: &Value) -> Vec<Method> {
    checkout["fulfillment"]["methods"]
        .as_array()
        .map(|methods| {
            methods
                .iter()
                .map(|method| {
                    let group = &method["groups"][0];
                    let options = group["options"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|option| {
                            let amount = option["totals"]
                                .as_array()
                                .and_then(|totals| totals.iter().find(|t| t["type"] == "total"))
                                .and_then(|t| t["amount"].as_i64())
                                .unwrap_or_else(|| panic!("no total in {option}"));
                            (option["id"].as_str().unwrap().to_owned(), amount)
                        })
                        .collect();
                    (
                        method["id"].as_str().unwrap().to_owned(),
                        method["type"].as_str().unwrap().to_owned(),
                        group["id"].as_str().unwrap().to_owned(),
                        options,
                        group["selected_option_id"].as_str().map(str::to_owned),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

async fn setup() -> (VtexStandin, TestBridge) {
    let vtex = VtexStandin::start().await;
    let bridge = TestBridge::start(&(vtex.config("") + NO_CACHE)).await;
    (vtex, bridge)
}

async fn select(bridge: &TestBridge, id: &str, group: &str, option: &str) -> Value {
    update(
        bridge,
        id,
        json!({"fulfillment": {"methods": [{"groups": [{"id": group, "selected_option_id": option}]}]}}),
    )
    .await
}

/// A cart of a clock and two mugs, checked out.
async fn from_cart(bridge: &TestBridge) -> (String, Value) {
    let cart = bridge
        .call(
            "create_cart",
            json!({"meta": meta(), "cart": {"line_items": [line(CLOCK_SKU, 1), line(&mug(), 2)]}}),
        )
        .await;
    let cart_id = cart["id"].as_str().unwrap().to_owned();
    let checkout = bridge
        .call(
            "create_checkout",
            json!({"meta": meta_with_key(&key()), "checkout": {"cart_id": cart_id}}),
        )
        .await;
    (cart_id, checkout)
}

/// Buyer and address given: the store's SLAs, its default one selected.
async fn addressed(bridge: &TestBridge) -> (String, Value) {
    let (_, created) = from_cart(bridge).await;
    let id = created["id"].as_str().unwrap().to_owned();
    let answer = update(
        bridge,
        &id,
        json!({
            "buyer": {"email": "ana@example.com", "first_name": "Ana", "last_name": "Souza", "taxpayer_id": cpf()},
            "fulfillment": {"methods": [{"type": "shipping", "destinations": [sao_paulo()]}]}
        }),
    )
    .await;
    (id, answer)
}

#[tokio::test]
async fn a_vtex_store_serves_checkout_and_a_cart_becomes_its_order_form() {
    let (vtex, bridge) = setup().await;
    let profile = bridge.get("/.well-known/bcp").await.text().await.unwrap();
    assert!(
        profile.contains("br.dev.bcp.shopping.checkout"),
        "{profile}"
    );
    let (cart_id, created) = from_cart(&bridge).await;
    // The checkout is the cart's own orderForm: its lines and the store's item total.
    assert_eq!(created["id"], cart_id.as_str(), "{created}");
    assert_eq!(created["line_items"].as_array().unwrap().len(), 2);
    assert_eq!(total(&created, "subtotal"), Some(ITEMS));
    assert_eq!(total(&created, "total"), Some(ITEMS));
    // Nothing to ship to yet, no buyer: incomplete, with what is missing by path (CHK-029).
    assert_eq!(created["status"], "incomplete", "{created}");
    let paths: Vec<&str> = created["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|message| message["path"].as_str())
        .collect();
    assert!(paths.contains(&"$.buyer.email"), "{paths:?}");
    assert!(paths.contains(&"$.fulfillment.methods"), "{paths:?}");
    // CHK-002: a non-terminal checkout carries the store's page for this orderForm.
    let url = created["continue_url"].as_str().unwrap();
    assert!(url.starts_with(&vtex.base_url), "{url}");
    assert!(url.contains(&format!("orderFormId={cart_id}")), "{url}");
    // A new orderForm holds no buyer: VTEX's example profile is not taken for one.
    assert!(
        created
            .get("buyer")
            .is_none_or(|buyer| buyer.get("email").is_none()),
        "{created}"
    );
}

#[tokio::test]
async fn the_address_brings_the_store_slas_and_selecting_one_reprices_with_the_store_numbers() {
    let (vtex, bridge) = setup().await;
    let (id, answer) = addressed(&bridge).await;
    // The buyer went to the orderForm (clientProfileData), only the fields given.
    let profile = vtex.profile_of(&id);
    assert_eq!(profile["email"], "ana@example.com");
    assert_eq!(profile["firstName"], "Ana");
    // No document is made up: the one there is the CPF the agent gave.
    assert!(
        profile
            .get("document")
            .is_none_or(|document| document == "52998224725"),
        "{profile:?}"
    );
    assert!(!profile.contains_key("phone"), "{profile:?}");
    // FUL-002/FUL-006/FUL-008/FUL-017: one group, the store's SLAs priced for all its items
    // (per-unit price × 3 units), delivery first, the pickup point too; VTEX selected its best
    // delivery SLA itself.
    let methods = options(&answer);
    assert_eq!(methods.len(), 1, "{answer}");
    let (method, kind, group, offered, selected) = &methods[0];
    assert_eq!((method.as_str(), kind.as_str()), ("shipping", "shipping"));
    assert_eq!(
        offered,
        &vec![
            ("Normal".to_owned(), 4_500),
            ("Expressa".to_owned(), 9_000),
            (PICKUP.to_owned(), 0)
        ]
    );
    assert_eq!(selected.as_deref(), Some("Normal"));
    assert_eq!(
        answer["fulfillment"]["methods"][0]["line_item_ids"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    // The estimate is in the option's description, not its title (FUL-013/FUL-014).
    let normal = &answer["fulfillment"]["methods"][0]["groups"][0]["options"][0];
    assert_eq!(normal["title"], "Normal");
    assert!(
        normal["description"]
            .as_str()
            .unwrap()
            .contains("5 business days"),
        "{normal}"
    );
    assert_eq!(total(&answer, "fulfillment"), Some(4_500));
    assert_eq!(total(&answer, "total"), Some(ITEMS + 4_500));
    // Everything the bridge can fill in is there; the buyer pays on the store's page
    // (CHK-014/CHK-015: continue_url and a requires_buyer_input message).
    assert_eq!(answer["status"], "requires_escalation", "{answer}");
    assert!(
        answer["continue_url"]
            .as_str()
            .unwrap()
            .ends_with("#/payment")
    );
    assert!(
        answer["messages"]
            .as_array()
            .unwrap()
            .iter()
            .any(|message| message["severity"] == "requires_buyer_input")
    );

    let expressa = select(&bridge, &id, group, "Expressa").await;
    assert_eq!(vtex.slas_of(&id), vec![Some("Expressa".to_owned()); 2]);
    assert_eq!(options(&expressa)[0].4.as_deref(), Some("Expressa"));
    // TOT-007: the store's totalizers and value, exactly.
    let store = vtex.form(&id);
    assert_eq!(total(&expressa, "fulfillment"), Some(9_000));
    assert_eq!(total(&expressa, "total"), store["value"].as_i64());
    assert_eq!(total(&expressa, "total"), Some(ITEMS + 9_000));

    // Pickup: the group moves to a pickup method whose destination is the store's point.
    let pickup = select(&bridge, &id, group, PICKUP).await;
    let methods = options(&pickup);
    assert_eq!(methods.len(), 1, "{pickup}");
    assert_eq!(methods[0].1, "pickup");
    assert_eq!(methods[0].4.as_deref(), Some(PICKUP));
    let method = &pickup["fulfillment"]["methods"][0];
    assert_eq!(method["selected_destination_id"], PICKUP_POINT);
    assert_eq!(method["destinations"][0]["id"], PICKUP_POINT);
    assert_eq!(method["destinations"][0]["name"], "Loja Centro");
    assert_eq!(total(&pickup, "fulfillment"), Some(0));
    assert_eq!(total(&pickup, "total"), Some(ITEMS));
    // A pickup method with the store's point holds to the UCP checkout schema too.
    let schemas = crate::schemas::Schemas::load();
    for answer in [&answer, &pickup] {
        let problems = crate::schemas::problems(&schemas.checkout, answer);
        assert!(problems.is_empty(), "{problems:#?}\n{answer}");
    }
    // ... and back to delivery from the pickup group.
    let back = select(&bridge, &id, &methods[0].2, "Normal").await;
    assert_eq!(options(&back)[0].1, "shipping");
    assert_eq!(total(&back, "total"), Some(ITEMS + 4_500));
}

#[tokio::test]
async fn codes_are_the_store_coupons_and_a_refusal_carries_the_store_reason() {
    let (vtex, bridge) = setup().await;
    let (id, _) = addressed(&bridge).await;
    // DSC-005: matched case-insensitively by the store.
    let applied = update(
        &bridge,
        &id,
        json!({"discounts": {"codes": [CODE.to_lowercase()]}}),
    )
    .await;
    // 10 % of each line, as the store tagged them: 1979 + 598.
    let off = 1_979 + 598;
    let discount = &applied["discounts"]["applied"][0];
    assert_eq!(
        discount["code"].as_str().map(str::to_uppercase).as_deref(),
        Some(CODE),
        "{applied}"
    );
    assert_eq!(discount["title"], "Bem-vindo 10%");
    assert_eq!(discount["amount"], off);
    let store = vtex.form(&id);
    assert_eq!(store["marketingData"]["coupon"], CODE);
    // DSC-008/TOT-007: the totals are the store's (value = items − discounts + shipping).
    assert_eq!(total(&applied, "total"), store["value"].as_i64());
    assert_eq!(total(&applied, "total"), Some(ITEMS - off + 4_500));
    assert!(
        codes(&applied)
            .iter()
            .all(|code| !code.starts_with("discount_code")),
        "{applied}"
    );

    // DSC-007/DSC-030: one code refused, the other kept; the refusal in the store's words.
    let refused = update(
        &bridge,
        &id,
        json!({"discounts": {"codes": [CODE, "NOPE10"]}}),
    )
    .await;
    let warning = refused["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|message| message["code"] == "discount_code_invalid")
        .unwrap_or_else(|| panic!("no refusal in {refused}"));
    assert_eq!(warning["type"], "warning");
    assert!(
        warning["content"]
            .as_str()
            .unwrap()
            .contains("O código de cupom NOPE10 não é válido"),
        "{warning}"
    );
    assert_eq!(warning["path"], "$.discounts.codes[1]");
    assert_eq!(total(&refused, "total"), Some(ITEMS - off + 4_500));
    let expired = update(
        &bridge,
        &id,
        json!({"discounts": {"codes": [CODE, EXPIRED_CODE]}}),
    )
    .await;
    assert!(
        codes(&expired).contains(&"discount_code_expired".to_owned()),
        "{expired}"
    );

    // DSC-004: an empty list removes the store's coupon.
    let cleared = update(&bridge, &id, json!({"discounts": {"codes": []}})).await;
    assert!(
        vtex.form(&id)["marketingData"].is_null(),
        "{}",
        vtex.form(&id)
    );
    assert_eq!(total(&cleared, "total"), Some(ITEMS + 4_500));
    assert!(
        cleared["discounts"]["applied"]
            .as_array()
            .is_none_or(Vec::is_empty),
        "{cleared}"
    );
}

#[tokio::test]
async fn complete_hands_off_to_the_store_payment_step_for_the_same_order_form() {
    let (vtex, bridge) = setup().await;
    let (id, _) = addressed(&bridge).await;
    let ready = select(&bridge, &id, "shipping_items", "Expressa").await;
    let before = total(&ready, "total");
    vtex.take();
    let complete_key = key();
    let arguments = json!({"meta": meta_with_key(&complete_key), "id": id, "checkout": {}});
    let first = bridge
        .structured_bytes("complete_checkout", arguments.clone())
        .await;
    let completed: Value = serde_json::from_str(&first).unwrap();
    // CHK-001/CHK-014/PAY-018: requires_escalation with continue_url, the store's payment
    // step for this very orderForm, the same total.
    assert_eq!(completed["status"], "requires_escalation", "{completed}");
    let url = url::Url::parse(completed["continue_url"].as_str().unwrap()).unwrap();
    assert_eq!(url.path(), "/checkout/");
    assert_eq!(url.fragment(), Some("/payment"));
    assert!(
        url.query_pairs()
            .any(|(k, v)| k == "orderFormId" && v == id.as_str()),
        "{url}"
    );
    assert_eq!(total(&completed, "total"), before);
    assert!(
        completed.get("order").is_none(),
        "no order exists until the buyer pays"
    );
    // Nothing was placed or written: complete only read the orderForm.
    let calls = vtex.take();
    assert!(
        !calls.is_empty() && calls.iter().all(|call| call.starts_with("GET ")),
        "{calls:?}"
    );
    // CHK-048: the same key answers the same bytes.
    let replay = bridge
        .structured_bytes("complete_checkout", arguments)
        .await;
    assert_eq!(first, replay);
    // The handoff is not repeated under a new key; the checkout still points at the page.
    let again = bridge
        .call(
            "complete_checkout",
            json!({"meta": meta_with_key(&key()), "id": id, "checkout": {}}),
        )
        .await;
    assert_eq!(again["status"], "requires_escalation");
    assert_eq!(again["continue_url"], completed["continue_url"]);
    // The answers hold to the UCP checkout schema.
    let schemas = crate::schemas::Schemas::load();
    for answer in [&ready, &completed] {
        let problems = crate::schemas::problems(&schemas.checkout, answer);
        assert!(problems.is_empty(), "{problems:#?}\n{answer}");
    }
    // get_order is not served: no order is read back from VTEX.
    let (_, reply) = bridge
        .rpc(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
        .await;
    assert!(!reply.to_string().contains("\"get_order\""), "{reply}");
}

#[tokio::test]
async fn cancel_empties_the_order_form_and_the_checkout_is_gone() {
    let (vtex, bridge) = setup().await;
    let (id, _) = addressed(&bridge).await;
    assert_eq!(vtex.lines_of(&id).len(), 2);
    // CHK-028/CHK-022: an open checkout cancels (REST POST …/cancel).
    let (status, canceled) = bridge
        .rest(
            reqwest::Method::POST,
            &format!("/checkout-sessions/{id}/cancel"),
            None,
            &[("idempotency-key", &key())],
        )
        .await;
    assert_eq!(status, reqwest::StatusCode::OK, "{canceled}");
    let canceled: Value = serde_json::from_str(&canceled).unwrap();
    assert_eq!(canceled["status"], "canceled");
    // CHK-003: no continue_url on a terminal status.
    assert!(canceled.get("continue_url").is_none());
    // The orderForm cannot be deleted: it is emptied, so the payment page buys nothing.
    assert!(vtex.lines_of(&id).is_empty());
    // Issue 36 item 2: afterwards the checkout reads canceled (the bridge kept its end, the
    // store forgot it), and a write to it is refused as immutable, reaching no store.
    let read = bridge
        .call("get_checkout", json!({"meta": meta(), "id": id}))
        .await;
    assert_eq!(read["status"], "canceled", "{read}");
    let updated = update(&bridge, &id, json!({"buyer": {"email": "a@example.com"}})).await;
    assert_eq!(updated["status"], "canceled", "{updated}");
    assert_eq!(
        updated["messages"][0]["code"], "checkout_immutable",
        "{updated}"
    );
    assert!(vtex.lines_of(&id).is_empty());
}

#[tokio::test]
async fn unknown_checkouts_and_options_are_refused_before_the_store_is_written() {
    let (vtex, bridge) = setup().await;
    // CHK-052: unknown ids, well-formed or not, are business outcomes.
    for unknown in ["0123456789abcdef0123456789abcdef", "chk_nope", "../x"] {
        let answer = bridge
            .call("get_checkout", json!({"meta": meta(), "id": unknown}))
            .await;
        assert_eq!(answer["ucp"]["status"], "error", "{answer}");
        assert_eq!(answer["messages"][0]["code"], "not_found", "{answer}");
        let updated = update(
            &bridge,
            unknown,
            json!({"buyer": {"email": "a@example.com"}}),
        )
        .await;
        assert_eq!(updated["messages"][0]["code"], "not_found", "{updated}");
    }
    let cart_gone = bridge
        .call(
            "create_checkout",
            json!({"meta": meta_with_key(&key()), "checkout": {"cart_id": "0123456789abcdef0123456789abcdef"}}),
        )
        .await;
    assert_eq!(cart_gone["messages"][0]["code"], "not_found", "{cart_gone}");

    let (id, _) = addressed(&bridge).await;
    vtex.take();
    for (group, option) in [
        ("shipping_items", "Teletransporte"),
        ("no_such_group", "Normal"),
    ] {
        // A recoverable message in the checkout, the rest of the update applied (issue 36).
        let refused = update(
            &bridge,
            &id,
            json!({"fulfillment": {"methods": [{"groups": [{"id": group, "selected_option_id": option}]}]}}),
        )
        .await;
        let message = &refused["messages"][0];
        assert_eq!(message["code"], "invalid", "{refused}");
        assert_eq!(message["severity"], "recoverable", "{refused}");
        assert!(
            message["path"]
                .as_str()
                .is_some_and(|path| path.starts_with("$.fulfillment.methods[0].groups")),
            "{refused}"
        );
    }
    let writes: Vec<String> = vtex
        .take()
        .into_iter()
        .filter(|call| !call.starts_with("GET "))
        .collect();
    assert!(writes.is_empty(), "{writes:?}");
    assert_eq!(vtex.slas_of(&id), vec![None, None]);
    // An address in a country the store does not ship to is refused by name.
    let (_, error) = bridge
        .call_error(
            "update_checkout",
            json!({"meta": meta(), "id": id, "checkout": {"fulfillment": {"methods": [{"type": "shipping", "destinations": [{
                "street_address": "1-1 Chiyoda", "address_locality": "Tokyo", "postal_code": "100-0001", "address_country": "JP"
            }]}]}}}),
        )
        .await;
    assert_eq!(error["code"], -32602, "{error}");
}

#[tokio::test]
async fn a_checkout_from_lines_over_rest_attaches_the_buyer_and_answers_what_mcp_answers() {
    use reqwest::{Method, StatusCode};
    let (vtex, bridge) = setup().await;
    // CHK-018: POST /checkout-sessions, 201; a new orderForm with the lines and the buyer.
    let (status, created) = bridge
        .rest(
            Method::POST,
            "/checkout-sessions",
            Some(&json!({"line_items": [line(CLOCK_SKU, 2)], "buyer": {"email": "bia@example.com", "phone_number": "+5511987650000", "taxpayer_id": cpf()}})),
            &[("idempotency-key", &key())],
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let created: Value = serde_json::from_str(&created).unwrap();
    let id = created["id"].as_str().unwrap().to_owned();
    assert_eq!(vtex.lines_of(&id), vec![(CLOCK_SKU.to_owned(), 2)]);
    assert_eq!(vtex.profile_of(&id)["phone"], "+5511987650000");
    assert_eq!(created["buyer"]["email"], "bia@example.com");
    assert_eq!(total(&created, "total"), Some(2 * 19_799));
    // CHK-020: PUT with the address; CHK-019: GET answers the bytes MCP answers.
    let (status, put) = bridge
        .rest(
            Method::PUT,
            &format!("/checkout-sessions/{id}"),
            Some(&json!({"line_items": [line(CLOCK_SKU, 2)], "fulfillment": {"methods": [{"type": "shipping", "destinations": [sao_paulo()]}]}})),
            &[("idempotency-key", &key())],
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{put}");
    let put: Value = serde_json::from_str(&put).unwrap();
    assert_eq!(total(&put, "fulfillment"), Some(3_000));
    let (_, got) = bridge
        .rest(Method::GET, &format!("/checkout-sessions/{id}"), None, &[])
        .await;
    let mcp = bridge
        .structured_bytes("get_checkout", json!({"meta": meta(), "id": id}))
        .await;
    assert_eq!(got, mcp);
    // CHK-021: complete over REST escalates to the store's payment step.
    let (status, completed) = bridge
        .rest(
            Method::POST,
            &format!("/checkout-sessions/{id}/complete"),
            Some(&json!({})),
            &[("idempotency-key", &key())],
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{completed}");
    let completed: Value = serde_json::from_str(&completed).unwrap();
    assert_eq!(completed["status"], "requires_escalation", "{completed}");
    assert!(
        completed["continue_url"]
            .as_str()
            .unwrap()
            .ends_with("#/payment")
    );
}

/// Buyer data (name, email, phone, address) reaches VTEX's attachments and the agent's answer,
/// never a log line, even at `debug`, across a whole VTEX checkout.
#[tokio::test]
async fn buyer_data_is_in_no_log_line_of_a_vtex_checkout() {
    let vtex = VtexStandin::start().await;
    let mut bridge = DebugBridge::start("vtex-buyer-logs", &vtex.config(""));
    let (name, surname, email, phone) = (
        "Genoveva",
        "Quixabeira",
        "genoveva.q@example.com",
        "+5511987650123",
    );
    let (street, city, postal) = ("Rua Zulmira Tavares 4321", "Itaquaquecetuba", "08599-777");
    // A CPF and a bairro the store's CEP route does not know (issue 37 item 7: no CPF/CNPJ in
    // any log line).
    let (cpf, bairro) = ("86288366757", "Bairro Vila Zulmira");
    let created = bridge
        .call(
        "create_checkout",
        json!({"meta": meta_with_key(&key()), "checkout": {
            "line_items": [line(CLOCK_SKU, 1)],
            "buyer": {"first_name": name, "last_name": surname, "email": email, "phone_number": phone,
                "taxpayer_id": {"kind": "cpf", "value": cpf}}
        }}),
    )
    .await;
    let id = created["id"]
        .as_str()
        .unwrap_or_else(|| panic!("{created}"))
        .to_owned();
    bridge
        .call(
        "update_checkout",
        json!({"meta": meta(), "id": id, "checkout": {"fulfillment": {"methods": [{"type": "shipping", "destinations": [{
            "first_name": name, "last_name": surname, "street_address": street,
            "extended_address": bairro, "address_locality": city, "address_region": "SP", "postal_code": postal,
            "address_country": "BR", "phone_number": phone
        }]}]}}}),
    )
    .await;
    let completed = bridge
        .call(
            "complete_checkout",
            json!({"meta": meta_with_key(&key()), "id": id, "checkout": {}}),
        )
        .await;
    assert_eq!(completed["status"], "requires_escalation", "{completed}");
    assert_eq!(completed["buyer"]["email"], email);
    // The address went to VTEX as its form: street and number apart, the country alpha-3.
    let sent = vtex.form(&id)["shippingData"]["address"].clone();
    assert_eq!(sent["street"], "Rua Zulmira Tavares");
    assert_eq!(sent["number"], "4321");
    assert_eq!(sent["country"], "BRA");
    assert_eq!(sent["receiverName"], format!("{name} {surname}"));
    bridge.assert_log_holds_none(&[
        name,
        surname,
        email,
        phone,
        street,
        city,
        postal,
        "Zulmira",
        "4321",
        cpf,
        "862.883",
        "Vila Zulmira",
    ]);
}
