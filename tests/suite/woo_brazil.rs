//! Issue 37 on the Store API stand-in: the adapter reads what the store requires from the
//! checkout route's own schema (`OPTIONS /checkout`), once for many calls and again after the
//! store refused an order for a field; a store 400 at complete is a checkout answer with a
//! message at the field's path (over MCP: no JSON-RPC error); `doctor` lists the fields.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use bcp_bridge::brain::checkout::{CheckoutBrain, CheckoutUpdate, Completion, Status};
use bcp_bridge::model::checkout::{Address, Buyer, CheckoutDraft, CheckoutSource};
use bcp_bridge::model::fiscal::{Requirement, TaxpayerId, TaxpayerKind};
use bcp_bridge::model::{BuyerContext, CartLineInput};
use bcp_bridge::platform::BuildContext;
use bcp_bridge::platform::upstream::UpstreamConfig;
use bcp_bridge::platform::woocommerce::build;
use bcp_bridge::platform::woocommerce::checkout::CheckoutConfig;
use serde_json::{Value, json};

use crate::support::woo_standin::{RATES, WooStandin};
use crate::support::{TestBridge, meta, meta_with_key};

/// Brazilian Market's fields as the real 10.9.4 lists them, and (`foreign`) a required field
/// of another plugin the bridge cannot fill.
fn schema_with(foreign: bool) -> Value {
    let field = |label: &str, required: bool| json!({"description": label, "type": "string", "required": required});
    let mut additional = json!({"csbmw/cpf": field("CPF", true)});
    if foreign {
        additional["acme/gift-note"] = field("Gift note", true);
    }
    json!({"schema": {"properties": {
        "additional_fields": {"type": "object", "properties": additional},
        "billing_address": {"properties": {"address_1": field("Address", true), "csbmw/number": field("Number", true), "csbmw/neighborhood": field("Neighborhood", false)}},
        "shipping_address": {"properties": {"address_1": field("Address", true), "csbmw/number": field("Number", true), "csbmw/neighborhood": field("Neighborhood", false)}},
    }}})
}

/// The store's answer to an order with wrong CPF check digits (real 10.9.4, Brazilian Market).
fn invalid_cpf() -> Value {
    json!({"code": "rest_invalid_param", "message": "Invalid parameter(s): additional_fields", "data": {"status": 400,
        "params": {"additional_fields": "Invalid CPF. Please provide a valid CPF."},
        "details": {"additional_fields": {"code": "invalid_cpf", "message": "Invalid CPF. Please provide a valid CPF.", "data": {"location": "contact", "key": "csbmw/cpf"}}}}})
}

fn schema() -> Value {
    schema_with(true)
}

async fn brain(woo: &WooStandin) -> CheckoutBrain {
    let config = CheckoutConfig {
        place_with: vec!["bacs".into()],
        pay_with: None,
    };
    let table: toml::Table = toml::from_str(&woo.config("")).unwrap();
    let upstream = UpstreamConfig::default();
    let context = BuildContext {
        unpaid_gateway: None,
        upstream: &upstream,
        max_response_bytes: 4 << 20,
        public_base_url: "http://127.0.0.1".into(),
        shared_budget: None,
        shared: None,
        checkout: &config,
        guard: Default::default(),
    };
    let port = checkout_port(build(table["store"].as_table().unwrap(), &context).await);
    CheckoutBrain::new(port as Arc<_>)
}

fn schema_reads(woo: &WooStandin) -> usize {
    woo.requests()
        .iter()
        .filter(|line| line.starts_with("OPTIONS ") && line.ends_with("/checkout"))
        .count()
}

#[tokio::test]
async fn issue_37_requirements_come_from_the_schema_read_once_and_again_after_a_refusal() {
    let woo = WooStandin::start().await;
    // A field only the store's page collects would hand the checkout off before any
    // placement (see the MCP test below); here every required field is one the bridge fills.
    woo.set_checkout_schema(schema_with(false));
    let brain = brain(&woo).await;
    let draft = CheckoutDraft {
        source: CheckoutSource::Lines(vec![CartLineInput {
            item_id: "16".into(),
            quantity: 1,
        }]),
        context: BuyerContext::default(),
        buyer: Buyer::default(),
    };
    let created = brain.create(&draft).await.unwrap().0;
    let id = created.state.id.clone();
    assert_eq!(
        created.state.requirements,
        [
            Requirement::TaxpayerId {
                kinds: vec![TaxpayerKind::Cpf]
            },
            Requirement::HouseNumber,
        ]
    );
    let buyer = Buyer {
        email: Some("ana@example.com".into()),
        first_name: Some("Ana".into()),
        taxpayer_id: Some(TaxpayerId {
            kind: TaxpayerKind::Cpf,
            value: "39053344700".into(),
        }),
        ..Buyer::default()
    };
    let address = Address {
        street_address: Some("Rua Doutor Quirino".into()),
        number: Some("1481".into()),
        address_locality: Some("Campinas".into()),
        address_region: Some("SP".into()),
        postal_code: Some("13015-081".into()),
        address_country: Some("BR".into()),
        ..Address::default()
    };
    let addressed = brain
        .update(
            &id,
            &CheckoutUpdate {
                buyer: Some(buyer),
                address: Some(address),
                ..CheckoutUpdate::default()
            },
        )
        .await
        .unwrap();
    let group = addressed.state.fulfillment[0].groups[0].id.clone();
    brain
        .update(
            &id,
            &CheckoutUpdate {
                selections: vec![(group, RATES[1].0.into())],
                ..CheckoutUpdate::default()
            },
        )
        .await
        .unwrap();
    brain.get(&id).await.unwrap();
    // Five calls on the store's checkout, one read of its schema, beside the first of them.
    assert_eq!(schema_reads(&woo), 1, "{:?}", woo.requests());

    woo.refuse_next_checkout(invalid_cpf());
    let completion = Completion {
        idempotency_key: "br-standin-1".into(),
        handler_id: Some("bacs".into()),
    };
    let refused = brain.complete(&id, &completion).await.unwrap();
    assert_ne!(refused.status, Status::Completed);
    let message = refused
        .messages
        .iter()
        .find(|message| message.path.as_deref() == Some("$.buyer.taxpayer_id"))
        .unwrap_or_else(|| panic!("{:?}", refused.messages));
    assert_eq!(message.content, "Invalid CPF. Please provide a valid CPF.");
    assert_eq!(
        message.severity,
        Some(bcp_bridge::protocol::Severity::Recoverable)
    );
    // The refusal may mean the merchant changed the fields: the schema was read again.
    assert_eq!(schema_reads(&woo), 2, "{:?}", woo.requests());

    // Nothing was placed and the checkout is still usable: the next completion places it.
    let placed = brain
        .complete(
            &id,
            &Completion {
                idempotency_key: "br-standin-2".into(),
                handler_id: Some("bacs".into()),
            },
        )
        .await
        .unwrap();
    assert_eq!(placed.status, Status::Completed, "{:?}", placed.messages);
    let sent = woo
        .requests()
        .iter()
        .filter(|line| line.starts_with("POST ") && line.ends_with("/checkout"))
        .count();
    assert_eq!(sent, 2);
}

/// Over MCP the refusal is a checkout answer, not JSON-RPC -32602 (issue 37's report).
#[tokio::test]
async fn issue_37_a_store_400_at_complete_is_never_a_protocol_error() {
    let woo = WooStandin::start().await;
    woo.set_checkout_schema(schema_with(false));
    let bridge = TestBridge::start(&woo.config("\n[checkout]\nplace_with = [\"bacs\"]")).await;
    let created = bridge
        .call(
            "create_checkout",
            json!({"meta": meta_with_key("br-mcp-create"), "checkout": {
                "line_items": [{"item": {"id": "16"}, "quantity": 1}],
                "buyer": {"email": "ana@example.com", "first_name": "Ana", "last_name": "Souza",
                    "taxpayer_id": {"kind": "cpf", "value": "39053344705"}},
                "fulfillment": {"methods": [{"type": "shipping", "destinations": [{"street_address": "Rua Doutor Quirino, 1481",
                    "address_locality": "Campinas", "address_region": "SP", "postal_code": "13015-081", "address_country": "BR"}]}]}}}),
        )
        .await;
    let id = created["id"].as_str().unwrap().to_owned();
    let method = &created["fulfillment"]["methods"][0];
    bridge
        .call(
            "update_checkout",
            json!({"meta": meta(), "id": id, "checkout": {"fulfillment": {"methods": [{"id": method["id"], "groups": [{"id": method["groups"][0]["id"], "selected_option_id": RATES[0].0}]}]}}}),
        )
        .await;
    woo.refuse_next_checkout(json!({"code": "rest_missing_callback_param", "message": "Missing parameter(s): additional_fields", "data": {"status": 400, "params": ["additional_fields"]}}));
    let (status, reply) = bridge
        .call_raw(
            "complete_checkout",
            json!({"meta": meta_with_key("br-mcp-complete"), "id": id, "checkout": {"payment": {"instruments": [{"handler_id": "bacs", "type": "offline"}]}}}),
        )
        .await;
    assert_eq!(status, reqwest::StatusCode::OK);
    assert!(reply.get("error").is_none(), "a protocol error: {reply}");
    let answer = &reply["result"]["structuredContent"];
    assert_ne!(answer["status"], "completed", "{answer}");
    let messages = answer["messages"].as_array().unwrap();
    let cpf = messages
        .iter()
        .find(|message| message["path"] == "$.buyer.taxpayer_id")
        .unwrap_or_else(|| panic!("{answer}"));
    assert_eq!(cpf["severity"], "recoverable");
    assert_eq!(cpf["code"], "missing");
    assert!(cpf["content"].as_str().unwrap().contains("CPF"), "{cpf}");
}

#[tokio::test]
async fn issue_37_doctor_lists_the_required_fields_and_which_the_bridge_fills() {
    let woo = WooStandin::start().await;
    woo.set_checkout_schema(schema());
    let config = bcp_bridge::startup::BridgeConfig::from_toml(
        &woo.config("\n[checkout]\nplace_with = [\"bacs\"]"),
    )
    .unwrap();
    let report = bcp_bridge::doctor::run(&config, false).await;
    let check = report
        .checks
        .iter()
        .find(|check| check.name == "checkout fields")
        .unwrap_or_else(|| panic!("{}", report.render()));
    assert!(check.passed);
    for listed in [
        "csbmw/cpf (CPF, required): filled from buyer.taxpayer_id",
        "csbmw/number (Number, required): filled from the address's house number",
        "csbmw/neighborhood (Neighborhood, optional): filled from the address's bairro",
        "acme/gift-note (Gift note, required): NOT filled by the bridge",
    ] {
        assert!(
            check.detail.contains(listed),
            "{listed} not in {}",
            check.detail
        );
    }
    // WooCommerce's own address lines are not a plugin's fields.
    assert!(!check.detail.contains("address_1"), "{}", check.detail);
}

/// Issue 37 item 4: with `[store.nfe_meta]` naming an NF-e plugin's order meta keys (and the
/// REST v3 read key), `get_order` carries the order's NF-e; without them it carries none.
#[tokio::test]
async fn issue_37_the_order_carries_the_nfe_from_the_named_meta_keys() {
    use crate::support::woo_standin::{V3_KEY, V3_SECRET};
    let woo = WooStandin::start().await;
    woo.set_order_meta(json!([
        {"id": 1, "key": "_nfe_chave", "value": "3517 0608 5305 2800 0184 5500 0000 0154 3010 0077 1569"},
        {"id": 2, "key": "_nfe_danfe", "value": "https://nfe.example/danfe/7.pdf"},
        {"id": 3, "key": "_nfe_emissao", "value": "2026-12-07 14:30:00"},
        {"id": 4, "key": "_unrelated", "value": {"nested": true}},
    ]));
    let config = CheckoutConfig {
        place_with: vec!["bacs".into()],
        pay_with: None,
    };
    let upstream = UpstreamConfig::default();
    let context = BuildContext {
        unpaid_gateway: None,
        upstream: &upstream,
        max_response_bytes: 4 << 20,
        public_base_url: "http://127.0.0.1".into(),
        shared_budget: None,
        shared: None,
        checkout: &config,
        guard: Default::default(),
    };
    let placed_with = async |store: &str| {
        let table: toml::Table = toml::from_str(store).unwrap();
        checkout_port(build(table["store"].as_table().unwrap(), &context).await)
    };
    let invoiced = placed_with(&format!(
        "{}\n[store.nfe_meta]\naccess_key = \"_nfe_chave\"\ndanfe_url = \"_nfe_danfe\"\nissued_at = \"_nfe_emissao\"\n",
        woo.config(&format!(
            "consumer_key = \"{V3_KEY}\"\nconsumer_secret = \"{V3_SECRET}\""
        ))
    ))
    .await;
    let plain = placed_with(&woo.config("")).await;
    assert!(invoiced.reads_invoices());
    assert!(!plain.reads_invoices());
    for (port, invoices) in [(invoiced, true), (plain, false)] {
        let brain = CheckoutBrain::new(port as Arc<_>);
        let draft = CheckoutDraft {
            source: CheckoutSource::Lines(vec![CartLineInput {
                item_id: "16".into(),
                quantity: 1,
            }]),
            context: BuyerContext::default(),
            buyer: Buyer::default(),
        };
        let id = brain.create(&draft).await.unwrap().0.state.id;
        let address = Address {
            street_address: Some("Rua Doutor Quirino".into()),
            address_locality: Some("Campinas".into()),
            address_region: Some("SP".into()),
            postal_code: Some("13015-081".into()),
            address_country: Some("BR".into()),
            ..Address::default()
        };
        let addressed = brain
            .update(
                &id,
                &CheckoutUpdate {
                    buyer: Some(Buyer {
                        email: Some("ana@example.com".into()),
                        ..Buyer::default()
                    }),
                    address: Some(address),
                    ..CheckoutUpdate::default()
                },
            )
            .await
            .unwrap();
        let group = addressed.state.fulfillment[0].groups[0].id.clone();
        brain
            .update(
                &id,
                &CheckoutUpdate {
                    selections: vec![(group, RATES[0].0.into())],
                    ..CheckoutUpdate::default()
                },
            )
            .await
            .unwrap();
        let done = brain
            .complete(
                &id,
                &Completion {
                    idempotency_key: format!("nfe-{invoices}"),
                    handler_id: Some("bacs".into()),
                },
            )
            .await
            .unwrap();
        let bcp_bridge::model::checkout::Stage::Placed(reference) = &done.state.stage else {
            panic!("not placed: {:?}", done.messages)
        };
        let order = brain.order(&reference.id).await.unwrap();
        if invoices {
            let nfe = order.nfe.expect("the order's NF-e");
            assert_eq!(
                nfe.access_key,
                "35170608530528000184550000000154301000771569"
            );
            assert_eq!(
                nfe.danfe_url.as_deref(),
                Some("https://nfe.example/danfe/7.pdf")
            );
            assert_eq!(nfe.xml_url, None);
            assert_eq!(
                nfe.issued_at.map(|at| at.unix_timestamp()),
                Some(1_796_653_800)
            );
        } else {
            assert!(order.nfe.is_none());
        }
    }
    // The key pair went in a header, never in a URL the store's logs keep.
    assert!(
        woo.requests()
            .iter()
            .any(|line| line.starts_with("GET /wp-json/wc/v3/orders/"))
    );
    assert!(!woo.requests().iter().any(|line| line.contains(V3_KEY)));
}

/// The checkout port of a WooCommerce platform built as the bridge builds it.
fn checkout_port(
    platform: Result<
        bcp_bridge::platform::SharedPlatform,
        Vec<bcp_bridge::settings::ConfigProblem>,
    >,
) -> bcp_bridge::platform::checkout::SharedCheckout {
    platform
        .unwrap_or_else(|problems| panic!("{problems:?}"))
        .checkout
        .clone()
        .unwrap()
}
