//! Checkout against the real WooCommerce, through the checkout port and the brain's rules:
//! an order placed with an offline gateway and read back, and one that ends on the store's
//! order-pay page. Each operation's upstream requests are counted from the store's access log.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use bcp_bridge::brain::checkout::{CheckoutBrain, CheckoutUpdate, Completion, Status};
use bcp_bridge::model::checkout::{Address, Buyer, CheckoutDraft, CheckoutSource, Stage};
use bcp_bridge::model::{BuyerContext, CartLineInput};
use bcp_bridge::platform::BuildContext;
use bcp_bridge::platform::upstream::UpstreamConfig;
use bcp_bridge::platform::woocommerce::build;
use bcp_bridge::platform::woocommerce::checkout::CheckoutConfig;

use super::store::{RealStore, alone, real_store, shared};

async fn brain(store: &RealStore, config: CheckoutConfig) -> CheckoutBrain {
    let table: toml::Table = toml::from_str(&store.config("")).unwrap();
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

fn buyer() -> Buyer {
    Buyer {
        first_name: Some("Ana".into()),
        last_name: Some("Souza".into()),
        email: Some("ana.checkout@example.com".into()),
        phone_number: Some("11999990000".into()),
        // The store runs Brazilian Market, which requires a CPF (issue 37).
        taxpayer_id: Some(bcp_bridge::model::fiscal::TaxpayerId {
            kind: bcp_bridge::model::fiscal::TaxpayerKind::Cpf,
            value: "39053344705".into(),
        }),
    }
}

fn address() -> Address {
    Address {
        street_address: Some("Rua Augusta".into()),
        number: Some("100".into()),
        address_locality: Some("São Paulo".into()),
        address_region: Some("SP".into()),
        postal_code: Some("01305-000".into()),
        address_country: Some("BR".into()),
        ..Address::default()
    }
}

fn draft(store: &RealStore) -> CheckoutDraft {
    CheckoutDraft {
        source: CheckoutSource::Lines(vec![CartLineInput {
            item_id: store.sid("garrafa"),
            quantity: 2,
        }]),
        context: BuyerContext::default(),
        buyer: Buyer::default(),
    }
}

/// Requests the store served since `mark`, and a new mark.
async fn served(store: &RealStore, mark: &mut u64, what: &str) -> usize {
    let requests = store.requests_since(*mark).await;
    eprintln!(
        "upstream requests for {what}: {} {requests:?}",
        requests.len()
    );
    *mark = store.mark();
    requests.len()
}

#[tokio::test]
#[ignore = "needs the real WooCommerce: bash .ci/real-woo.sh test"]
async fn an_offline_gateway_places_a_real_order_that_reads_back() {
    let store = real_store();
    // Alone: the request counts read the shared access log.
    let _guard = alone().await;
    let brain = brain(
        store,
        CheckoutConfig {
            place_with: vec!["bacs".into()],
            pay_with: None,
        },
    )
    .await;
    let mut mark = store.mark();
    let created = brain.create(&draft(store)).await.unwrap().0;
    // GET /cart for a session, one add-item, one read of the result, and (once per bridge,
    // beside the add-item) the checkout schema that says which fields the store requires.
    assert_eq!(served(store, &mut mark, "create (1 line)").await, 4);
    assert_eq!(created.status, Status::Incomplete);
    let id = created.state.id.clone();

    let addressed = brain
        .update(
            &id,
            &CheckoutUpdate {
                buyer: Some(buyer()),
                address: Some(address()),
                ..CheckoutUpdate::default()
            },
        )
        .await
        .unwrap();
    served(store, &mut mark, "update buyer + address").await;
    let group = &addressed.state.fulfillment[0].groups[0];
    let rates: Vec<&str> = group
        .options
        .iter()
        .map(|option| option.id.as_str())
        .collect();
    assert_eq!(
        rates,
        [
            store.text("rate_pac").as_str(),
            store.text("rate_sedex").as_str(),
            store.text("rate_pickup").as_str()
        ]
    );

    // Bad input: an option the store never offered, a recoverable message at its path.
    let refused = brain
        .update(
            &id,
            &CheckoutUpdate {
                selections: vec![(group.id.clone(), "flat_rate:999".into())],
                ..CheckoutUpdate::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(
        refused.messages[0].path.as_deref(),
        Some("$.fulfillment.methods[0].groups[0].selected_option_id"),
        "{:?}",
        refused.messages
    );
    served(store, &mut mark, "select an unknown rate").await;

    let group_id = group.id.clone();
    let ready = brain
        .update(
            &id,
            &CheckoutUpdate {
                selections: vec![(group_id, store.text("rate_sedex"))],
                codes: Some(vec!["BCP10".into(), "vencido".into()]),
                ..CheckoutUpdate::default()
            },
        )
        .await
        .unwrap();
    served(store, &mut mark, "select SEDEX + two codes").await;
    assert_eq!(
        ready.status,
        Status::ReadyForComplete,
        "{:?}",
        ready.messages
    );
    assert_eq!(ready.state.totals.fulfillment, Some(2990));
    assert_eq!(ready.state.totals.discount, 1598);
    assert_eq!(ready.state.totals.total, 15980 - 1598 + 2990);
    let warning = ready
        .messages
        .iter()
        .find(|m| m.code == bcp_bridge::protocol::MessageCode::DiscountCodeExpired)
        .unwrap();
    assert_eq!(warning.content, "Coupon \"vencido\" has expired.");
    assert_eq!(warning.path.as_deref(), Some("$.discounts.codes[1]"));

    let completion = Completion {
        idempotency_key: "real-woo-bacs-1".into(),
        handler_id: Some("bacs".into()),
    };
    let done = brain.complete(&id, &completion).await.unwrap();
    served(store, &mut mark, "complete").await;
    assert_eq!(done.status, Status::Completed, "{:?}", done.messages);
    let Stage::Placed(reference) = &done.state.stage else {
        unreachable!("completed without an order")
    };
    // A replay with the same key places nothing more.
    let replay = brain.complete(&id, &completion).await.unwrap();
    assert_eq!(replay.status, Status::Completed);
    let replayed = served(store, &mut mark, "replayed complete").await;
    assert!(!store.requests_since(0).await.is_empty());
    assert_eq!(replayed, 0, "a replay reached the store");

    let order = brain.order(&reference.id).await.unwrap();
    served(store, &mut mark, "get_order").await;
    assert_eq!(order.store_status, "on-hold");
    assert_eq!(order.lines.len(), 1);
    assert_eq!(order.lines[0].sku.as_deref(), Some("GARRAFA-1"));
    assert_eq!(order.lines[0].quantity, 2);
    assert_eq!(order.totals.total, 15980 - 1598 + 2990);
    assert_eq!(order.totals.fulfillment, Some(2990));
    assert_eq!(order.codes, ["bcp10"]);
}

#[tokio::test]
#[ignore = "needs the real WooCommerce: bash .ci/real-woo.sh test"]
async fn without_an_offline_gateway_the_buyer_pays_on_the_order_pay_page() {
    let store = real_store();
    let _guard = shared().await;
    let brain = brain(
        store,
        CheckoutConfig {
            place_with: Vec::new(),
            pay_with: Some("pix_test".into()),
        },
    )
    .await;
    let created = brain.create(&draft(store)).await.unwrap().0;
    let id = created.state.id.clone();
    let addressed = brain
        .update(
            &id,
            &CheckoutUpdate {
                buyer: Some(buyer()),
                address: Some(address()),
                ..CheckoutUpdate::default()
            },
        )
        .await
        .unwrap();
    let group_id = addressed.state.fulfillment[0].groups[0].id.clone();
    let judged = brain
        .update(
            &id,
            &CheckoutUpdate {
                selections: vec![(group_id, store.text("rate_pac"))],
                ..CheckoutUpdate::default()
            },
        )
        .await
        .unwrap();
    // CHK-014: nothing missing, but the bridge cannot take the payment.
    assert_eq!(
        judged.status,
        Status::RequiresEscalation,
        "{:?}",
        judged.messages
    );
    assert!(
        judged
            .state
            .continue_url
            .as_deref()
            .unwrap()
            .contains("/checkout/?session=")
    );
    let completion = Completion {
        idempotency_key: "real-woo-pix-1".into(),
        handler_id: None,
    };
    let escalated = brain.complete(&id, &completion).await.unwrap();
    assert_eq!(escalated.status, Status::RequiresEscalation);
    let url = escalated.state.continue_url.clone().unwrap();
    assert!(url.contains("/checkout/order-pay/"), "{url}");
    let page = reqwest::get(&url).await.unwrap();
    assert_eq!(page.status(), 200);
    let html = page.text().await.unwrap();
    assert!(html.contains("id=\"order_review\""), "no order-pay form");
    assert!(html.contains("payment_method_pix_test"));
    let Stage::Placed(reference) = &escalated.state.stage else {
        unreachable!("no pending order")
    };
    assert_eq!(
        brain.order(&reference.id).await.unwrap().store_status,
        "pending"
    );
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
