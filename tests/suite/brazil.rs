//! BCP's Brazil on the sample store as a Brazilian store (issue 37): the buyer's CPF/CNPJ
//! (`br.dev.bcp.shopping.fiscal_identity`, fiscal-identity.md), the seller's identity in every
//! checkout and order answer, Brazilian addresses (house number and bairro), the store's
//! requirements as recoverable messages, and the return policy in the profile
//! (`br.dev.bcp.shopping.returns`, returns.md), over MCP and REST; the UCP door unchanged.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::support::debug_bridge::DebugBridge;
use crate::support::update_checkout as update;
use crate::support::values::{codes, key, line};
use crate::support::{TestBridge, meta, meta_with_key};

const SANDAL: &str = "prod_chinelo_praia_azm_3334";
const TAXPAYER_PATH: &str = "$.buyer.taxpayer_id";
const STREET_PATH: &str = "$.fulfillment.methods[0].destinations[0].street_address";
const SELLER_CNPJ: &str = "19131243000197";
const LEGAL_NAME: &str = "Loja Exemplo Comércio de Artesanato Ltda";
const FISCAL: &str = "br.dev.bcp.shopping.fiscal_identity";
const RETURNS: &str = "br.dev.bcp.shopping.returns";

const STORE: &str = "[store]\nplatform = \"sample\"\nbrazilian_checkout = true\n";

fn seller_config() -> String {
    format!(
        r#"{STORE}
[seller]
cnpj = "19.131.243/0001-97"
legal_name = "{LEGAL_NAME}"
[seller.address]
street_address = "Rua Doutor Quirino, 1481"
address_locality = "Campinas"
address_region = "SP"
postal_code = "13015-081"
address_country = "BR"
[returns]
withdrawal_period_days = 10
request_channel = "https://loja.example.com.br/devolucoes"
"#
    )
}

fn quirino() -> Value {
    json!({
        "first_name": "Ana", "last_name": "Souza",
        "street_address": "Rua Doutor Quirino, 1481", "extended_address": "Sala 42 - Bairro Centro",
        "address_locality": "Campinas", "address_region": "SP", "postal_code": "13015-081",
        "address_country": "BR"
    })
}

fn shipping_to(address: Value) -> Value {
    json!({"fulfillment": {"methods": [{"type": "shipping", "destinations": [address]}]}})
}

fn pac() -> Value {
    json!({"fulfillment": {"methods": [{"id": "ful_1", "groups": [{"id": "grp_1", "selected_option_id": "pac"}]}]}})
}

fn approve() -> Value {
    json!({"payment": {"instruments": [{"handler_id": "sample_test_approve"}]}})
}

async fn create(bridge: &TestBridge, checkout: Value) -> Value {
    bridge
        .call(
            "create_checkout",
            json!({"meta": meta_with_key(&key()), "checkout": checkout}),
        )
        .await
}

/// The messages of `answer` at `path`.
fn at<'a>(answer: &'a Value, path: &str) -> Vec<&'a Value> {
    answer["messages"]
        .as_array()
        .map(|messages| {
            messages
                .iter()
                .filter(|message| message["path"] == path)
                .collect()
        })
        .unwrap_or_default()
}

fn assert_seller(answer: &Value) {
    // fiscal-identity.md normative rule 1: seller_identity in every checkout and order
    // response while the capability is active, the extension named in the envelope.
    assert_eq!(answer["seller_identity"]["cnpj"], SELLER_CNPJ, "{answer}");
    assert_eq!(answer["seller_identity"]["legal_name"], LEGAL_NAME);
    assert!(
        answer["ucp"]["capabilities"].get(FISCAL).is_some(),
        "{answer}"
    );
}

/// Issue 37 items 1–5 over MCP: checkout → taxpayer_id → Brazilian address → complete.
#[tokio::test]
async fn checkout_taxpayer_id_brazilian_address_complete_over_mcp() {
    let bridge = TestBridge::start(&seller_config()).await;
    let created = create(&bridge, json!({"line_items": [line(SANDAL, 1)]})).await;
    let id = created["id"].as_str().unwrap().to_owned();
    assert_seller(&created);
    assert_eq!(
        created["seller_identity"]["address"]["address_locality"],
        "Campinas"
    );
    // The store requires a CPF/CNPJ: one recoverable message at the field's path, saying how.
    assert_eq!(created["status"], "incomplete", "{created}");
    let asked = at(&created, TAXPAYER_PATH);
    assert_eq!(asked.len(), 1, "{created}");
    assert_eq!(asked[0]["code"], "missing");
    assert_eq!(asked[0]["severity"], "recoverable");
    let words = asked[0]["content"].as_str().unwrap();
    assert!(
        words.contains("buyer.taxpayer_id") && words.contains("\"cpf\""),
        "{words}"
    );

    // Punctuation is accepted; the wire carries the digits only.
    let with_cpf = update(
        &bridge,
        &id,
        json!({"buyer": {"email": "ana@example.com", "taxpayer_id": {"kind": "cpf", "value": "390.533.447-05"}}}),
    )
    .await;
    assert_eq!(
        with_cpf["buyer"]["taxpayer_id"],
        json!({"kind": "cpf", "value": "39053344705"})
    );
    assert!(at(&with_cpf, TAXPAYER_PATH).is_empty(), "{with_cpf}");
    assert_seller(&with_cpf);

    // House number and bairro are split for the store and joined back for the agent.
    let addressed = update(&bridge, &id, shipping_to(quirino())).await;
    let destination = &addressed["fulfillment"]["methods"][0]["destinations"][0];
    assert_eq!(destination["street_address"], "Rua Doutor Quirino, 1481");
    assert_eq!(destination["extended_address"], "Sala 42 - Bairro Centro");
    assert!(at(&addressed, STREET_PATH).is_empty(), "{addressed}");
    let ready = update(&bridge, &id, pac()).await;
    assert_eq!(ready["status"], "ready_for_complete", "{ready}");
    assert_seller(&ready);

    let completed = bridge
        .call(
            "complete_checkout",
            json!({"meta": meta_with_key(&key()), "id": id, "checkout": approve()}),
        )
        .await;
    assert_eq!(completed["status"], "completed", "{completed}");
    assert_seller(&completed);
    // Carried to the store: the placed checkout keeps the document.
    let kept = bridge
        .call("get_checkout", json!({"meta": meta(), "id": id}))
        .await;
    assert_eq!(kept["buyer"]["taxpayer_id"]["value"], "39053344705");
    assert_seller(&kept);

    let order_id = completed["order"]["id"].as_str().unwrap();
    let order = bridge
        .call("get_order", json!({"meta": meta(), "id": order_id}))
        .await;
    assert_seller(&order);
    let shipped = &order["fulfillment"]["expectations"][0]["destination"];
    assert_eq!(
        shipped["street_address"], "Rua Doutor Quirino, 1481",
        "{order}"
    );
    assert_eq!(shipped["extended_address"], "Sala 42 - Bairro Centro");
}

/// Issue 37 item 3: a missing house number is one recoverable message at the destination's
/// street_address; "s/n" satisfies it.
#[tokio::test]
async fn a_missing_house_number_is_asked_for_at_the_street_address() {
    let bridge = TestBridge::start(&seller_config()).await;
    let created = create(
        &bridge,
        json!({"line_items": [line(SANDAL, 1)], "buyer": {"taxpayer_id": {"kind": "cpf", "value": "52998224725"}}}),
    )
    .await;
    let id = created["id"].as_str().unwrap().to_owned();
    assert_eq!(created["buyer"]["taxpayer_id"]["value"], "52998224725");
    let mut address = quirino();
    address["street_address"] = json!("Rua Doutor Quirino");
    let answer = update(&bridge, &id, shipping_to(address)).await;
    assert_eq!(answer["status"], "incomplete");
    let asked = at(&answer, STREET_PATH);
    assert_eq!(asked.len(), 1, "{answer}");
    assert_eq!(asked[0]["severity"], "recoverable");
    assert!(
        asked[0]["content"]
            .as_str()
            .unwrap()
            .contains("house number"),
        "{answer}"
    );
    let mut address = quirino();
    address["street_address"] = json!("Rua Doutor Quirino, s/n");
    let answer = update(&bridge, &id, shipping_to(address)).await;
    assert!(at(&answer, STREET_PATH).is_empty(), "{answer}");
    assert_eq!(
        answer["fulfillment"]["methods"][0]["destinations"][0]["street_address"],
        "Rua Doutor Quirino, s/n"
    );
}

/// Issue 37 item 1: a document with wrong check digits is refused at `$.buyer.taxpayer_id`
/// with a recoverable message, as a result (never a protocol error), and the rest of the
/// payload still applies; completing with one places nothing.
#[tokio::test]
async fn wrong_check_digits_are_refused_at_the_path_and_nothing_else_is_lost() {
    let bridge = TestBridge::start(&seller_config()).await;
    let created = create(&bridge, json!({"line_items": [line(SANDAL, 1)]})).await;
    let id = created["id"].as_str().unwrap().to_owned();
    let mut payload = shipping_to(quirino());
    payload["buyer"] = json!({"email": "ana@example.com", "taxpayer_id": {"kind": "cpf", "value": "390.533.447-06"}});
    let answer = update(&bridge, &id, payload).await;
    let refused = at(&answer, TAXPAYER_PATH);
    assert_eq!(refused[0]["code"], "invalid", "{answer}");
    assert_eq!(refused[0]["severity"], "recoverable");
    assert!(
        refused[0]["content"]
            .as_str()
            .unwrap()
            .contains("check digits")
    );
    assert!(!answer.to_string().contains("39053344706"), "{answer}");
    assert!(answer["buyer"].get("taxpayer_id").is_none(), "{answer}");
    assert_eq!(answer["buyer"]["email"], "ana@example.com");
    assert_eq!(
        answer["fulfillment"]["methods"][0]["destinations"][0]["street_address"],
        "Rua Doutor Quirino, 1481"
    );
    // A wrong alphanumeric CNPJ too (the 2026 rule: letters valued ASCII − 48).
    let answer = update(
        &bridge,
        &id,
        json!({"buyer": {"taxpayer_id": {"kind": "cnpj", "value": "12.ABC.345/01DE-36"}}}),
    )
    .await;
    assert_eq!(at(&answer, TAXPAYER_PATH)[0]["code"], "invalid", "{answer}");
    // A right one, and the checkout is ready.
    update(
        &bridge,
        &id,
        json!({"buyer": {"taxpayer_id": {"kind": "cnpj", "value": "12.ABC.345/01DE-35"}}}),
    )
    .await;
    let ready = update(&bridge, &id, pac()).await;
    assert_eq!(ready["status"], "ready_for_complete", "{ready}");
    assert_eq!(ready["buyer"]["taxpayer_id"]["value"], "12ABC34501DE35");
    // Completing with a wrong document places nothing and keeps the right one.
    let mut completion = approve();
    completion["buyer"] = json!({"taxpayer_id": {"kind": "cpf", "value": "11111111111"}});
    let held = bridge
        .call(
            "complete_checkout",
            json!({"meta": meta_with_key(&key()), "id": id, "checkout": completion}),
        )
        .await;
    assert_eq!(held["status"], "incomplete", "{held}");
    assert!(held.get("order").is_none(), "{held}");
    assert_eq!(at(&held, TAXPAYER_PATH)[0]["code"], "invalid");
    assert_eq!(held["buyer"]["taxpayer_id"]["value"], "12ABC34501DE35");
}

/// Issue 37 items 1, 2 and 6 over REST: the same flow through `/checkout-sessions`, and the
/// seller in the order resource.
#[tokio::test]
async fn the_brazilian_flow_over_rest() {
    let bridge = TestBridge::start(&seller_config()).await;
    let (status, created) = bridge
        .rest(
            Method::POST,
            "/checkout-sessions",
            Some(&json!({"line_items": [line(SANDAL, 1)], "buyer": {"taxpayer_id": {"kind": "cnpj", "value": "11.222.333/0001-81"}}})),
            &[("idempotency-key", &key())],
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let created: Value = serde_json::from_str(&created).unwrap();
    assert_seller(&created);
    assert_eq!(
        created["buyer"]["taxpayer_id"],
        json!({"kind": "cnpj", "value": "11222333000181"})
    );
    assert!(at(&created, TAXPAYER_PATH).is_empty(), "{created}");
    let id = created["id"].as_str().unwrap().to_owned();
    let path = format!("/checkout-sessions/{id}");
    let (_, wrong) = bridge
        .rest(
            Method::PUT,
            &path,
            Some(&json!({"buyer": {"taxpayer_id": {"kind": "cpf", "value": "123"}}})),
            &[("idempotency-key", &key())],
        )
        .await;
    let wrong: Value = serde_json::from_str(&wrong).unwrap();
    assert_eq!(
        at(&wrong, TAXPAYER_PATH)[0]["severity"],
        "recoverable",
        "{wrong}"
    );
    for body in [shipping_to(quirino()), pac()] {
        let (status, answer) = bridge
            .rest(
                Method::PUT,
                &path,
                Some(&body),
                &[("idempotency-key", &key())],
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{answer}");
    }
    let (status, completed) = bridge
        .rest(
            Method::POST,
            &format!("{path}/complete"),
            Some(&approve()),
            &[("idempotency-key", &key())],
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{completed}");
    let completed: Value = serde_json::from_str(&completed).unwrap();
    assert_eq!(completed["status"], "completed", "{completed}");
    assert_seller(&completed);
    let order_id = completed["order"]["id"].as_str().unwrap();
    let (status, order) = bridge
        .rest(Method::GET, &format!("/orders/{order_id}"), None, &[])
        .await;
    assert_eq!(status, StatusCode::OK, "{order}");
    assert_seller(&serde_json::from_str(&order).unwrap());
}

/// fiscal-identity.md "Discovery" and returns.md "Discovery": declared only when configured,
/// fiscal identity extending checkout and order, the return policy in its `config`.
#[tokio::test]
async fn the_profile_declares_fiscal_identity_and_returns_only_when_configured() {
    let bridge = TestBridge::start(&seller_config()).await;
    let profile: Value = bridge.get("/.well-known/bcp").await.json().await.unwrap();
    let fiscal = &profile["ucp"]["capabilities"][FISCAL][0];
    assert_eq!(
        fiscal["extends"],
        json!(["br.dev.bcp.shopping.checkout", "br.dev.bcp.shopping.order"]),
        "{profile}"
    );
    assert!(
        fiscal["schema"]
            .as_str()
            .unwrap()
            .ends_with("/schemas/shopping/fiscal_identity.json")
    );
    let returns = &profile["ucp"]["capabilities"][RETURNS][0];
    assert_eq!(returns["extends"], "br.dev.bcp.shopping.order", "{profile}");
    assert_eq!(
        returns["config"],
        json!({"withdrawal_period_days": 10, "request_channel": "https://loja.example.com.br/devolucoes"})
    );
    // The older supported version's leaf profile declares them too.
    let leaf: Value = bridge
        .get("/.well-known/bcp/2026-07-14")
        .await
        .json()
        .await
        .unwrap();
    assert!(leaf["ucp"]["capabilities"].get(FISCAL).is_some(), "{leaf}");

    let plain = TestBridge::start(STORE).await;
    let profile: Value = plain.get("/.well-known/bcp").await.json().await.unwrap();
    assert!(
        profile["ucp"]["capabilities"].get(FISCAL).is_none(),
        "{profile}"
    );
    assert!(profile["ucp"]["capabilities"].get(RETURNS).is_none());
}

/// Without `[seller]` no answer carries seller_identity, and the buyer's document is still
/// taken (the store's requirement does not depend on the seller's section).
#[tokio::test]
async fn without_a_seller_no_answer_carries_seller_identity() {
    let bridge = TestBridge::start(STORE).await;
    let created = create(
        &bridge,
        json!({"line_items": [line(SANDAL, 1)], "buyer": {"taxpayer_id": {"kind": "cpf", "value": "39053344705"}}}),
    )
    .await;
    assert!(created.get("seller_identity").is_none(), "{created}");
    assert!(created["ucp"]["capabilities"].get(FISCAL).is_none());
    assert_eq!(created["buyer"]["taxpayer_id"]["value"], "39053344705");
    let id = created["id"].as_str().unwrap().to_owned();
    update(&bridge, &id, shipping_to(quirino())).await;
    update(&bridge, &id, pac()).await;
    let completed = bridge
        .call(
            "complete_checkout",
            json!({"meta": meta_with_key(&key()), "id": id, "checkout": approve()}),
        )
        .await;
    assert_eq!(completed["status"], "completed", "{completed}");
    assert!(completed.get("seller_identity").is_none());
    let order = bridge
        .call(
            "get_order",
            json!({"meta": meta(), "id": completed["order"]["id"]}),
        )
        .await;
    assert!(order.get("seller_identity").is_none(), "{order}");
}

/// The UCP namespace is unchanged: no taxpayer_id in its input schemas or answers, no
/// seller_identity, no Brazilian capability in its profile; the store's demand for a CPF is
/// a hand-off to its page (requires_escalation with continue_url), never a path UCP's buyer
/// lacks.
#[tokio::test]
async fn the_ucp_namespace_is_unaffected() {
    let mut bridge = TestBridge::start(&format!(
        "[server]\nprotocol = \"both\"\n{}",
        seller_config()
    ))
    .await;
    let schema_has_taxpayer = |reply: &Value| {
        reply["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|tool| tool["name"] == "create_checkout")
            .unwrap()["inputSchema"]["properties"]["checkout"]["properties"]["buyer"]["properties"]
            .get("taxpayer_id")
            .is_some()
    };
    let (_, bcp_tools) = bridge
        .rpc(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
        .await;
    assert!(schema_has_taxpayer(&bcp_tools));
    bridge.mcp_url = bridge
        .endpoints
        .iter()
        .find(|endpoint| endpoint.service == "dev.ucp.shopping")
        .unwrap()
        .mcp_url
        .clone()
        .unwrap();
    let (_, ucp_tools) = bridge
        .rpc(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}))
        .await;
    assert!(!schema_has_taxpayer(&ucp_tools));
    let profile: Value = bridge.get("/.well-known/ucp").await.json().await.unwrap();
    let names = profile["ucp"]["capabilities"].to_string();
    assert!(
        !names.contains("fiscal_identity") && !names.contains("returns"),
        "{names}"
    );

    let created = create(
        &bridge,
        json!({"line_items": [line(SANDAL, 1)], "buyer": {"email": "ana@example.com", "taxpayer_id": {"kind": "cpf", "value": "39053344705"}}}),
    )
    .await;
    let id = created["id"].as_str().unwrap().to_owned();
    assert!(created.get("seller_identity").is_none(), "{created}");
    assert!(created["buyer"].get("taxpayer_id").is_none(), "{created}");
    update(&bridge, &id, shipping_to(quirino())).await;
    let answer = update(&bridge, &id, pac()).await;
    assert!(at(&answer, TAXPAYER_PATH).is_empty(), "{answer}");
    assert_eq!(answer["status"], "requires_escalation", "{answer}");
    assert!(answer["continue_url"].is_string());
    assert!(codes(&answer).contains(&"missing".to_owned()), "{answer}");
    assert!(!answer.to_string().contains("39053344705"));
}

/// `check` names a bad `[seller]` or `[returns]` value by its key.
#[test]
fn check_names_a_bad_seller_or_returns_key() {
    let text = format!(
        "{STORE}[seller]\ncnpj = \"19.131.243/0001-98\"\nlegal_name = \"X\"\n[returns]\nwithdrawal_period_days = 6\n"
    );
    let error = bcp_bridge::startup::BridgeConfig::from_toml(&text)
        .unwrap_err()
        .to_string();
    assert!(error.contains("seller.cnpj"), "{error}");
    assert!(error.contains("returns.withdrawal_period_days"), "{error}");
    let missing =
        bcp_bridge::startup::BridgeConfig::from_toml("[seller]\ncnpj = \"19131243000197\"\n")
            .unwrap_err()
            .to_string();
    assert!(missing.contains("legal_name"), "{missing}");
}

/// Issue 37 item 7: the whole Brazilian flow at `RUST_LOG=trace`, and no CPF or CNPJ of the
/// buyer, punctuated or not (nor a refused one), in any log line.
#[tokio::test]
async fn the_brazilian_flow_at_trace_logs_no_cpf_or_cnpj() {
    const CPF: &str = "390.533.447-05";
    const CNPJ: &str = "11.222.333/0001-81";
    const WRONG: &str = "529.982.247-26";
    let mut bridge = DebugBridge::start_at("brazil-trace", &seller_config(), "trace");
    let created = bridge
        .call(
            "create_checkout",
            json!({"meta": meta_with_key(&key()), "checkout": {"line_items": [line(SANDAL, 1)],
                "buyer": {"taxpayer_id": {"kind": "cnpj", "value": CNPJ}}}}),
        )
        .await;
    let id = created["id"].as_str().unwrap().to_owned();
    for checkout in [
        json!({"buyer": {"taxpayer_id": {"kind": "cpf", "value": WRONG}}}),
        json!({"buyer": {"taxpayer_id": {"kind": "cpf", "value": CPF}}}),
        shipping_to(quirino()),
        pac(),
    ] {
        bridge
            .call(
                "update_checkout",
                json!({"meta": meta(), "id": id, "checkout": checkout}),
            )
            .await;
    }
    let completed = bridge
        .call(
            "complete_checkout",
            json!({"meta": meta_with_key(&key()), "id": id, "checkout": approve()}),
        )
        .await;
    assert_eq!(completed["status"], "completed", "{completed}");
    assert_eq!(completed["buyer"]["taxpayer_id"]["value"], "39053344705");
    bridge.assert_log_holds_none(&[
        CPF,
        "39053344705",
        CNPJ,
        "11222333000181",
        WRONG,
        "52998224726",
    ]);
}
