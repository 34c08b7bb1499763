//! Brazil on a VTEX store (issue 37 items 2, 4 and 5), over real HTTP on loopback against the
//! VTEX stand-in: the buyer's CPF or CNPJ reaches `clientProfileData`, the house number,
//! complement and bairro the orderForm's address, a CEP without a street is completed by the
//! store's own postal-code route, the store's requirements are reported for the brain to ask,
//! a document the store refuses leaves the checkout asking for one (no error), the order's
//! NF-e is read from the Orders API's packages with the app key, and catalog answers carry
//! the store's installments and cash price in the variant's `metadata`.
//!
//! The checkout port is driven directly where the brain's side of the BCP fiscal identity
//! (accepting `buyer.taxpayer_id`) is not what is under test.

use bcp_bridge::model::checkout::{Address, Buyer, CheckoutDraft, CheckoutSource};
use bcp_bridge::model::fiscal::{Requirement, TaxpayerId, TaxpayerKind};
use bcp_bridge::model::{BuyerContext, CartLineInput};
use bcp_bridge::platform::BuildContext;
use bcp_bridge::platform::checkout::{CheckoutConfig, SharedCheckout};
use bcp_bridge::platform::upstream::UpstreamConfig;
use serde_json::{Value, json};

use crate::support::TestBridge;
use crate::support::vtex_standin::{
    AUGUSTA, CEP, CLOCK_SKU, REFUSED_CPF, TEE, TEE_SKUS, VtexStandin,
};

/// A valid CPF and CNPJ (check digits right), as the brain hands them: digits only.
const CPF: &str = "52998224725";
const CNPJ: &str = "11222333000181";
/// An NF-e access key with its check digit (SP, 2026-12, model 55).
const ACCESS_KEY: &str = "35261211222333000181550010000012351000012354";
const KEYS: &str = "app_key = \"vtexappkey-loja-TEST\"\napp_token = \"TOKEN-TEST\"";

async fn port(vtex: &VtexStandin, extra: &str) -> SharedCheckout {
    let table: toml::Table = toml::from_str(&vtex.config(extra)).unwrap();
    let upstream = UpstreamConfig::default();
    let checkout = CheckoutConfig::default();
    let context = BuildContext {
        unpaid_gateway: None,
        upstream: &upstream,
        max_response_bytes: 4 << 20,
        public_base_url: "http://127.0.0.1".into(),
        shared_budget: None,
        shared: None,
        checkout: &checkout,
        guard: Default::default(),
    };
    let platform =
        (bcp_bridge::platform::vtex::FACTORY.build)(table["store"].as_table().unwrap(), &context)
            .await
            .unwrap_or_else(|problems| panic!("{problems:?}"));
    platform.checkout.clone().unwrap()
}

fn buyer(kind: TaxpayerKind, value: &str) -> Buyer {
    Buyer {
        first_name: Some("Ana".into()),
        last_name: Some("Souza".into()),
        email: Some("ana@example.com".into()),
        phone_number: None,
        taxpayer_id: Some(TaxpayerId {
            kind,
            value: value.into(),
        }),
    }
}

async fn checkout(port: &SharedCheckout, buyer: Buyer) -> String {
    let outcome = port
        .create_checkout(&CheckoutDraft {
            source: CheckoutSource::Lines(vec![CartLineInput {
                item_id: CLOCK_SKU.into(),
                quantity: 1,
            }]),
            context: BuyerContext::default(),
            buyer,
        })
        .await
        .unwrap();
    outcome.checkout.id
}

/// The CEP of Rua Doutor Quirino with only the number, complement and city given.
fn by_cep() -> Address {
    Address {
        first_name: Some("Ana".into()),
        last_name: Some("Souza".into()),
        number: Some("1481".into()),
        extended_address: Some("Sala 42".into()),
        postal_code: Some("13015-081".into()),
        address_country: Some("BR".into()),
        ..Address::default()
    }
}

/// Issue 37 item 2 (VTEX): the CPF in `clientProfileData`, the number, complement and bairro
/// in the address, and the street and bairro the store's postal-code route gives for the CEP.
#[tokio::test]
async fn a_cpf_and_a_brazilian_address_reach_the_order_forms_own_fields() {
    let vtex = VtexStandin::start().await;
    let port = port(&vtex, "").await;
    let id = checkout(&port, buyer(TaxpayerKind::Cpf, CPF)).await;
    let profile = vtex.profile_of(&id);
    assert_eq!(profile["documentType"], "cpf", "{profile:?}");
    assert_eq!(profile["document"], CPF);
    assert_eq!(profile["isCorporate"], false);
    vtex.take();
    let state = port.set_destination(&id, &by_cep()).await.unwrap().unwrap();
    let asked = vtex.take();
    assert!(
        asked
            .iter()
            .any(|request| request == &format!("GET /api/checkout/pub/postal-code/BRA/{}", CEP.0)),
        "{asked:?}"
    );
    let sent = vtex.address_of(&id).unwrap();
    assert_eq!(sent["street"], CEP.1, "{sent}");
    assert_eq!(sent["number"], "1481");
    assert_eq!(sent["complement"], "Sala 42");
    assert_eq!(sent["neighborhood"], CEP.2);
    assert_eq!(sent["city"], CEP.3);
    assert_eq!(sent["state"], CEP.4);
    assert_eq!(sent["country"], "BRA");
    // The checkout shows the address as the store holds it, and the buyer's document.
    let address = state.address.clone().unwrap();
    assert_eq!(address.street_address.as_deref(), Some(CEP.1));
    assert_eq!(address.neighborhood.as_deref(), Some(CEP.2));
    assert_eq!(address.number.as_deref(), Some("1481"));
    assert_eq!(
        state.buyer.taxpayer_id.as_ref().map(|id| id.kind),
        Some(TaxpayerKind::Cpf)
    );
    // What the Brazilian store requires, for the brain to ask (issue 37 item 3).
    assert!(
        matches!(&state.requirements[..], [Requirement::TaxpayerId { kinds }, Requirement::HouseNumber, Requirement::Neighborhood] if kinds.contains(&TaxpayerKind::Cpf) && kinds.contains(&TaxpayerKind::Cnpj)),
        "{:?}",
        state.requirements
    );
    // The same address again is not sent again (it would reset the store's SLA selection).
    vtex.take();
    port.set_destination(&id, &by_cep()).await.unwrap().unwrap();
    assert!(
        !vtex
            .take()
            .iter()
            .any(|request| request.contains("shippingData")),
        "the unchanged address was written again"
    );
}

/// Issue 37 item 2 (VTEX): a CNPJ makes the profile a legal entity's.
#[tokio::test]
async fn a_cnpj_makes_the_profile_a_companys() {
    let vtex = VtexStandin::start().await;
    let port = port(&vtex, "").await;
    let id = checkout(&port, buyer(TaxpayerKind::Cnpj, CNPJ)).await;
    let profile = vtex.profile_of(&id);
    assert_eq!(profile["documentType"], "cnpj", "{profile:?}");
    assert_eq!(profile["corporateDocument"], CNPJ);
    assert_eq!(profile["isCorporate"], true);
    assert!(
        !profile.contains_key("corporateName"),
        "no company name is made up from the buyer's: {profile:?}"
    );
    let state = port.get_checkout(&id).await.unwrap().unwrap();
    assert_eq!(
        state.buyer.taxpayer_id,
        Some(TaxpayerId {
            kind: TaxpayerKind::Cnpj,
            value: CNPJ.into()
        })
    );
}

/// A CEP the store does not know leaves the address as the agent gave it; a street the agent
/// gave is never replaced.
#[tokio::test]
async fn an_unknown_cep_or_a_given_street_is_left_as_given() {
    let vtex = VtexStandin::start().await;
    let port = port(&vtex, "").await;
    let id = checkout(&port, buyer(TaxpayerKind::Cpf, CPF)).await;
    let unknown = Address {
        postal_code: Some("69900-000".into()),
        address_locality: Some("Rio Branco".into()),
        ..by_cep()
    };
    let state = port.set_destination(&id, &unknown).await.unwrap().unwrap();
    let sent = vtex.address_of(&id).unwrap();
    assert_eq!(sent["city"], "Rio Branco", "{sent}");
    assert!(sent["street"].is_null(), "{sent}");
    assert!(sent["neighborhood"].is_null(), "{sent}");
    assert_eq!(state.address.unwrap().neighborhood, None);
    vtex.take();
    let given = Address {
        street_address: Some("Avenida Paulista".into()),
        neighborhood: Some("Bela Vista".into()),
        ..by_cep()
    };
    port.set_destination(&id, &given).await.unwrap().unwrap();
    assert!(
        !vtex
            .take()
            .iter()
            .any(|request| request.contains("postal-code")),
        "a street was given: no lookup"
    );
    let sent = vtex.address_of(&id).unwrap();
    assert_eq!(sent["street"], "Avenida Paulista");
    assert_eq!(sent["neighborhood"], "Bela Vista");
    // A street without its bairro: the CEP gives the bairro, the street stays the agent's.
    let no_bairro = Address {
        street_address: Some("R. Augusta".into()),
        number: Some("100".into()),
        postal_code: Some("01305-000".into()),
        ..Address::default()
    };
    let state = port
        .set_destination(&id, &no_bairro)
        .await
        .unwrap()
        .unwrap();
    let sent = vtex.address_of(&id).unwrap();
    assert_eq!(sent["street"], "R. Augusta", "{sent}");
    assert_eq!(sent["neighborhood"], AUGUSTA.2);
    assert_eq!(sent["city"], AUGUSTA.3);
    assert_eq!(
        state.address.unwrap().neighborhood.as_deref(),
        Some(AUGUSTA.2)
    );
}

/// Issue 37 item 3: a document the store refuses is not an error the agent cannot act on:
/// the buyer is attached without it, the checkout shows none, and the store's requirement of
/// one stays for the brain to ask again.
#[tokio::test]
async fn a_document_the_store_refuses_leaves_the_checkout_asking_for_one() {
    let vtex = VtexStandin::start().await;
    let port = port(&vtex, "").await;
    let id = checkout(&port, buyer(TaxpayerKind::Cpf, REFUSED_CPF)).await;
    let profile = vtex.profile_of(&id);
    assert!(!profile.contains_key("document"), "{profile:?}");
    assert_eq!(profile["email"], "ana@example.com", "the rest is attached");
    let state = port.get_checkout(&id).await.unwrap().unwrap();
    assert_eq!(state.buyer.taxpayer_id, None);
    assert_eq!(state.buyer.email.as_deref(), Some("ana@example.com"));
    assert!(
        state
            .requirements
            .iter()
            .any(|needed| matches!(needed, Requirement::TaxpayerId { .. })),
        "{:?}",
        state.requirements
    );
    // A good document afterwards goes through.
    let state = port
        .set_buyer(&id, &buyer(TaxpayerKind::Cpf, CPF))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        state.buyer.taxpayer_id.map(|id| id.value).as_deref(),
        Some(CPF)
    );
    assert_eq!(vtex.profile_of(&id)["document"], CPF);
}

/// Issue 37 item 4 (VTEX): the order the buyer paid for on the store's page, read from the
/// Orders API with the app key, carries the NF-e its package was invoiced with.
#[tokio::test]
async fn the_orders_invoice_is_read_into_its_nfe_with_the_app_key() {
    let vtex = VtexStandin::start().await;
    let port = port(&vtex, KEYS).await;
    assert!(port.reads_invoices());
    let id = checkout(&port, buyer(TaxpayerKind::Cpf, CPF)).await;
    port.set_destination(&id, &by_cep()).await.unwrap().unwrap();
    let order_id = vtex.pay(&id);
    let order = port.order(&order_id).await.unwrap().unwrap();
    assert_eq!(order.checkout_id, id);
    assert!(order.paid);
    assert_eq!(order.nfe, None, "not invoiced yet");
    vtex.invoice(
        &order_id,
        ACCESS_KEY,
        "https://nfe.loja.example/danfe/1235.pdf",
    );
    let order = port.order(&order_id).await.unwrap().unwrap();
    let nfe = order.nfe.unwrap();
    assert_eq!(nfe.access_key, ACCESS_KEY);
    assert_eq!(
        nfe.danfe_url.as_deref(),
        Some("https://nfe.loja.example/danfe/1235.pdf")
    );
    assert_eq!(nfe.issued_at.unwrap().unix_timestamp(), 1_796_724_000);
    assert_eq!(order.totals.total, 19_799 + 1_500);
    assert!(port.order("1468780599999-01").await.unwrap().is_none());
    assert!(port.order("../../checkout").await.unwrap().is_none());
    // An access key with a wrong check digit is no NF-e.
    let other = vtex.pay(&id);
    vtex.invoice(
        &other,
        &format!("{}5", &ACCESS_KEY[..43]),
        "https://x.example/1.pdf",
    );
    assert_eq!(port.order(&other).await.unwrap().unwrap().nfe, None);
}

/// Without the app key the Orders API is not called: the adapter says it reads no invoices.
#[tokio::test]
async fn without_the_app_key_no_invoice_is_read() {
    let vtex = VtexStandin::start().await;
    let port = port(&vtex, "").await;
    assert!(!port.reads_invoices());
    assert!(port.order("1468780500454-01").await.unwrap().is_none());
    assert!(
        !vtex
            .requests()
            .iter()
            .any(|request| request.contains("/oms/")),
        "{:?}",
        vtex.requests()
    );
}

/// Issue 37 item 5: the store's installments and cash/Pix price in the variant's `metadata`,
/// in minor units; a variant whose offer names none has no such keys.
#[tokio::test]
async fn installments_and_the_cash_price_are_in_the_variants_metadata() {
    let vtex = VtexStandin::start().await;
    let bridge = TestBridge::start(&(vtex.config("") + "\n[cache]\nenabled = false\n")).await;
    let answer = bridge.catalog("get_product", json!({"id": TEE})).await;
    let variant = answer["product"]["variants"]
        .as_array()
        .unwrap()
        .iter()
        .find(|variant| variant["id"] == TEE_SKUS[0].0)
        .unwrap_or_else(|| panic!("{answer}"));
    assert_eq!(variant["price"]["amount"], 5_990, "{variant}");
    let metadata = &variant["metadata"];
    assert_eq!(metadata["spot_price"], 5_690, "{variant}");
    assert_eq!(
        metadata["installments"],
        json!([
            {"count": 1, "value": 5990, "total": 5990, "interest_free": true, "payment_system": "Visa"},
            {"count": 3, "value": 1996, "total": 5990, "interest_free": true, "payment_system": "Visa"},
            {"count": 6, "value": 1068, "total": 6408, "interest_free": false, "payment_system": "Visa"}
        ])
    );
    // The example clock's offer has `Installments: null`: no plan is invented for it.
    let clock = bridge
        .catalog("lookup_catalog", json!({"ids": [CLOCK_SKU]}))
        .await;
    let clock: &Value = &clock["products"][0]["variants"][0];
    assert!(clock["metadata"]["installments"].is_null(), "{clock}");
}
