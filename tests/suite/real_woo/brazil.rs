//! Issue 37 on the real WooCommerce with Brazilian Market on WooCommerce (`.ci/real-woo.sh`
//! installs it: person type 2, CPF check digits validated; a second store requires the
//! bairro). The order lands with the CPF, the number and the bairro in the plugin's own fields
//! (read from the store's database, HPOS `wp_wc_orders_meta`); what the store refuses at
//! complete is a checkout answer with a message at the field's path, never a protocol error,
//! and the checkout stays usable.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use bcp_bridge::brain::checkout::{CheckoutBrain, CheckoutUpdate, Completion, Judged, Status};
use bcp_bridge::model::checkout::{Address, Buyer, CheckoutDraft, CheckoutSource, Stage};
use bcp_bridge::model::fiscal::{Requirement, TaxpayerId, TaxpayerKind};
use bcp_bridge::model::{BuyerContext, CartLineInput};
use bcp_bridge::platform::BuildContext;
use bcp_bridge::platform::upstream::UpstreamConfig;
use bcp_bridge::platform::woocommerce::build;
use bcp_bridge::platform::woocommerce::checkout::CheckoutConfig;
use serde_json::{Value, json};

use super::agent::{checkout_with_rate, segment, send};
use super::store::{
    RUN_WITH, RealStore, alone, bairro_store, real_store, real_store_env, shared, sql,
};
use crate::support::meta_with_key;

const CPF: &str = "39053344705";

/// These tests need the store with Brazilian Market (`.ci/real-woo.sh` installs it unless
/// `BCP_REAL_WOO_BRAZIL=off`): without it they fail rather than pass having checked nothing.
pub(super) fn assert_brazilian_market() {
    assert!(
        real_store_env("BCP_REAL_WOO_BRAZIL") != "off",
        "this test needs the store with Brazilian Market: {RUN_WITH} without BCP_REAL_WOO_BRAZIL=off"
    );
}

async fn brain(base_url: &str) -> CheckoutBrain {
    let config = CheckoutConfig {
        place_with: vec!["bacs".into()],
        pay_with: None,
    };
    let table: toml::Table = toml::from_str(&format!(
        "platform = \"woocommerce\"\nbase_url = \"{base_url}\"\ncurrency = \"BRL\"\n"
    ))
    .unwrap();
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
    CheckoutBrain::new(checkout_port(build(&table, &context).await))
}

fn buyer(document: Option<&str>) -> Buyer {
    Buyer {
        first_name: Some("Ana".into()),
        last_name: Some("Souza".into()),
        email: Some("ana.brasil@example.com".into()),
        phone_number: Some("19999990000".into()),
        taxpayer_id: document.map(|value| TaxpayerId {
            kind: TaxpayerKind::Cpf,
            value: value.into(),
        }),
    }
}

fn address(neighborhood: Option<&str>) -> Address {
    Address {
        street_address: Some("Rua Doutor Quirino".into()),
        extended_address: Some("Sala 42".into()),
        number: Some("1481".into()),
        neighborhood: neighborhood.map(str::to_owned),
        address_locality: Some("Campinas".into()),
        address_region: Some("SP".into()),
        postal_code: Some("13015-081".into()),
        address_country: Some("BR".into()),
        ..Address::default()
    }
}

/// A checkout of one bottle, addressed and with PAC selected.
async fn addressed(
    brain: &CheckoutBrain,
    store: &RealStore,
    buyer: Buyer,
    address: Address,
) -> Judged {
    let draft = CheckoutDraft {
        source: CheckoutSource::Lines(vec![CartLineInput {
            item_id: store.sid("garrafa"),
            quantity: 1,
        }]),
        context: BuyerContext::default(),
        buyer: Buyer::default(),
    };
    let id = brain.create(&draft).await.unwrap().0.state.id;
    let judged = brain
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
    let group = judged.state.fulfillment[0].groups[0].id.clone();
    brain
        .update(
            &id,
            &CheckoutUpdate {
                selections: vec![(group, store.text("rate_pac"))],
                ..CheckoutUpdate::default()
            },
        )
        .await
        .unwrap()
}

pub(super) async fn order_meta(db: &str, order: u64) -> Vec<(String, String)> {
    sql(
        db,
        &format!("SELECT meta_key, meta_value FROM wp_wc_orders_meta WHERE order_id = {order} AND meta_key LIKE '%csbmw%' ORDER BY meta_key"),
    )
    .await
    .into_iter()
    .map(|row| (row[0].clone(), row[1].clone()))
    .collect()
}

async fn orders(db: &str) -> u64 {
    sql(db, "SELECT COUNT(*) FROM wp_wc_orders").await[0][0]
        .parse()
        .unwrap()
}

/// Orders billed to `email` (other tests place orders on the same store meanwhile).
async fn orders_of(db: &str, email: &str) -> u64 {
    sql(
        db,
        &format!("SELECT COUNT(*) FROM wp_wc_orders WHERE billing_email = '{email}'"),
    )
    .await[0][0]
        .parse()
        .unwrap()
}

fn at<'a>(judged: &'a Judged, path: &str) -> Option<&'a bcp_bridge::protocol::Message> {
    judged
        .messages
        .iter()
        .find(|message| message.path.as_deref() == Some(path))
}

/// Issue 37 item 7: the order exists with the CPF, the number and the bairro in the plugin's
/// fields, and the street and complement in WooCommerce's own lines.
#[tokio::test]
#[ignore = "needs the real WooCommerce: bash .ci/real-woo.sh test"]
async fn issue_37_the_order_holds_cpf_number_and_bairro_in_the_plugins_fields() {
    let store = real_store();
    assert_brazilian_market();
    let db = real_store_env("BCP_REAL_WOO_DB");
    let _guard = shared().await;
    let brain = brain(&store.url).await;
    let ready = addressed(&brain, store, buyer(Some(CPF)), address(Some("Centro"))).await;
    // The adapter read what the store requires from its own schema.
    assert!(
        ready.state.requirements.contains(&Requirement::TaxpayerId {
            kinds: vec![TaxpayerKind::Cpf]
        }),
        "{:?}",
        ready.state.requirements
    );
    assert!(ready.state.requirements.contains(&Requirement::HouseNumber));
    assert!(
        !ready
            .state
            .requirements
            .contains(&Requirement::Neighborhood)
    );
    assert_eq!(
        ready.status,
        Status::ReadyForComplete,
        "{:?}",
        ready.messages
    );
    let done = brain
        .complete(
            &ready.state.id,
            &Completion {
                idempotency_key: format!("br-{}", uuid::Uuid::new_v4()),
                handler_id: Some("bacs".into()),
            },
        )
        .await
        .unwrap();
    assert_eq!(done.status, Status::Completed, "{:?}", done.messages);
    let Stage::Placed(reference) = &done.state.stage else {
        unreachable!("completed without an order")
    };
    let order: u64 = reference
        .id
        .trim_start_matches("wc_order_")
        .parse()
        .unwrap();
    let meta = order_meta(&db, order).await;
    for (key, value) in [
        ("_wc_billing/csbmw/neighborhood", "Centro"),
        ("_wc_billing/csbmw/number", "1481"),
        ("_wc_shipping/csbmw/neighborhood", "Centro"),
        ("_wc_shipping/csbmw/number", "1481"),
    ] {
        assert!(
            meta.contains(&(key.to_owned(), value.to_owned())),
            "{key} = {value} not in {meta:?}"
        );
    }
    let cpf = meta
        .iter()
        .find(|(key, _)| key == "_wc_other/csbmw/cpf")
        .map(|(_, value)| {
            value
                .chars()
                .filter(char::is_ascii_digit)
                .collect::<String>()
        });
    assert_eq!(cpf.as_deref(), Some(CPF), "{meta:?}");
    let lines = sql(
        &db,
        &format!("SELECT address_1, address_2 FROM wp_wc_order_addresses WHERE order_id = {order} AND address_type = 'shipping'"),
    )
    .await;
    assert_eq!(lines, [["Rua Doutor Quirino", "Sala 42"]]);
}

/// Issue 37 items 2–3: the store's 400s at complete (an invalid CPF: `invalid_cpf`; on the
/// store that requires the bairro, "Neighborhood is required") come back as messages at the
/// paths the agent fixes them at; nothing is placed, and the same checkout then completes.
#[tokio::test]
#[ignore = "needs the real WooCommerce: bash .ci/real-woo.sh test"]
async fn issue_37_the_stores_refusals_are_messages_and_the_checkout_stays_usable() {
    // The second store, which requires the bairro.
    let store = bairro_store();
    let db = real_store_env("BCP_REAL_WOO_BAIRRO_DB");
    let brain = brain(&store.url).await;
    // Wrong check digits: the store's own validation, not the bridge's, refuses it here.
    let ready = addressed(&brain, store, buyer(Some("39053344700")), address(None)).await;
    assert!(
        ready
            .state
            .requirements
            .contains(&Requirement::Neighborhood)
    );
    let before = orders(&db).await;
    let completion = Completion {
        idempotency_key: format!("br-{}", uuid::Uuid::new_v4()),
        handler_id: Some("bacs".into()),
    };
    let refused = brain.complete(&ready.state.id, &completion).await.unwrap();
    assert_eq!(refused.status, Status::Incomplete, "{:?}", refused.messages);
    assert_eq!(orders(&db).await, before, "the refused order was placed");
    // The bairro is asked for by the brain from the store's schema before any placement (or,
    // had the schema not said, from the store's 400), at the field the agent writes it in.
    let bairro = at(
        &refused,
        "$.fulfillment.methods[0].destinations[0].extended_address",
    )
    .unwrap_or_else(|| panic!("no bairro message in {:?}", refused.messages));
    assert!(
        bairro.content.contains("bairro") || bairro.content.contains("Neighborhood"),
        "{bairro:?}"
    );
    let invalid = at(&refused, "$.buyer.taxpayer_id");
    // The brain refuses a CPF with wrong check digits itself once it validates them; before,
    // the store's own `invalid_cpf` answers.
    if let Some(invalid) = invalid {
        assert!(invalid.content.contains("CPF"), "{invalid:?}");
    }
    assert!(!format!("{:?}", refused.messages).contains("39053344700"));

    let fixed = brain
        .update(
            &ready.state.id,
            &CheckoutUpdate {
                buyer: Some(buyer(Some(CPF))),
                address: Some(address(Some("Centro"))),
                ..CheckoutUpdate::default()
            },
        )
        .await
        .unwrap();
    let group = fixed.state.fulfillment[0].groups[0].id.clone();
    brain
        .update(
            &ready.state.id,
            &CheckoutUpdate {
                selections: vec![(group, store.text("rate_pac"))],
                ..CheckoutUpdate::default()
            },
        )
        .await
        .unwrap();
    let done = brain
        .complete(
            &ready.state.id,
            &Completion {
                idempotency_key: format!("br-{}", uuid::Uuid::new_v4()),
                handler_id: Some("bacs".into()),
            },
        )
        .await
        .unwrap();
    assert_eq!(done.status, Status::Completed, "{:?}", done.messages);
    assert_eq!(orders(&db).await, before + 1);
}

/// Issue 37 item 3 over both bindings: an agent that never gave a CPF gets a checkout whose
/// message names `$.buyer.taxpayer_id` (recoverable), not JSON-RPC -32602 or a 4xx, and no
/// order is placed.
#[tokio::test]
#[ignore = "needs the real WooCommerce: bash .ci/real-woo.sh test"]
async fn issue_37_a_missing_cpf_is_a_recoverable_message_over_mcp_and_rest() {
    let store = real_store();
    assert_brazilian_market();
    let db = real_store_env("BCP_REAL_WOO_DB");
    let _guard = shared().await;
    let bridge = store.bridge("[checkout]\nplace_with = [\"bacs\"]\n").await;
    let email = format!("ana.{}@example.com", uuid::Uuid::new_v4().simple());
    let destination = json!({"street_address": "Rua Doutor Quirino, 1481", "address_locality": "Campinas",
        "address_region": "SP", "postal_code": "13015-081", "address_country": "BR"});
    for binding in ["mcp", "rest"] {
        // The checkout over MCP; only the complete goes over `binding`.
        let (created, _) = checkout_with_rate(
            async |tool, id, checkout| send(&bridge, "mcp", tool, id, checkout).await,
            json!([{"item": {"id": store.sid("garrafa")}, "quantity": 1}]),
            json!({"email": email, "first_name": "Ana", "last_name": "Souza"}),
            destination.clone(),
            &store.text("rate_pac"),
        )
        .await;
        let id = created["id"].as_str().unwrap().to_owned();
        let payment =
            json!({"payment": {"instruments": [{"handler_id": "bacs", "type": "offline"}]}});
        let answer: Value = if binding == "mcp" {
            let key = uuid::Uuid::new_v4().to_string();
            let (status, reply) = bridge
                .call_raw(
                    "complete_checkout",
                    json!({"meta": meta_with_key(&key), "id": id, "checkout": payment}),
                )
                .await;
            assert_eq!(status, reqwest::StatusCode::OK);
            assert!(reply.get("error").is_none(), "a protocol error: {reply}");
            reply["result"]["structuredContent"].clone()
        } else {
            let key = uuid::Uuid::new_v4().to_string();
            let (status, body) = bridge
                .rest(
                    reqwest::Method::POST,
                    &format!("/checkout-sessions/{}/complete", segment(&id)),
                    Some(&payment),
                    &[("idempotency-key", key.as_str())],
                )
                .await;
            assert_eq!(status, reqwest::StatusCode::OK, "{body}");
            serde_json::from_str(&body).unwrap()
        };
        assert_ne!(answer["status"], "completed", "{binding}: {answer}");
        let message = answer["messages"]
            .as_array()
            .unwrap_or_else(|| panic!("{binding}: no messages in {answer}"))
            .iter()
            .find(|message| message["path"] == "$.buyer.taxpayer_id")
            .unwrap_or_else(|| panic!("{binding}: no message at $.buyer.taxpayer_id in {answer}"));
        assert_eq!(message["severity"], "recoverable", "{message}");
        assert!(
            message["content"].as_str().unwrap().contains("CPF"),
            "{message}"
        );
    }
    assert_eq!(
        orders_of(&db, &email).await,
        0,
        "an order was placed without a CPF"
    );
}

/// The schema is read once for many calls (one `OPTIONS /checkout` in the access log), beside
/// a call rather than in a round of its own.
#[tokio::test]
#[ignore = "needs the real WooCommerce: bash .ci/real-woo.sh test"]
async fn issue_37_the_checkout_schema_is_read_once_not_per_call() {
    let store = real_store();
    let _alone = alone().await;
    let mark = store.mark();
    let brain = brain(&store.url).await;
    for _ in 0..2 {
        addressed(&brain, store, buyer(Some(CPF)), address(Some("Centro"))).await;
    }
    let requests = store.requests_since(mark).await;
    let schema_reads = requests
        .iter()
        .filter(|line| line.contains("OPTIONS /wp-json/wc/store/v1/checkout"))
        .count();
    assert_eq!(schema_reads, 1, "{requests:?}");
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
