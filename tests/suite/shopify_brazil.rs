//! Brazilian addresses on a Shopify store (issue 37 item 2), through the Shopify checkout port
//! against the Storefront stand-in: the house number and bairro the brain splits off reach
//! Shopify's two street lines the way its Brazilian checkout writes them, and read back split.
//! Shopify's Storefront API has no field for a CPF/CNPJ: the store reports no requirement
//! for it, and its checkout page (where every Shopify checkout ends) collects it.

use bcp_bridge::model::checkout::{Address, Buyer, CheckoutDraft, CheckoutSource};
use bcp_bridge::model::fiscal::{TaxpayerId, TaxpayerKind};
use bcp_bridge::model::{BuyerContext, CartLineInput};
use bcp_bridge::platform::BuildContext;
use bcp_bridge::platform::checkout::{CheckoutConfig, SharedCheckout};
use bcp_bridge::platform::upstream::UpstreamConfig;

use crate::support::shopify_standin::*;

async fn port(standin: &Standin) -> SharedCheckout {
    let table: toml::Table = toml::from_str(&standin.config("")).unwrap();
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
    let platform = (bcp_bridge::platform::shopify::FACTORY.build)(
        table["store"].as_table().unwrap(),
        &context,
    )
    .await
    .unwrap_or_else(|problems| panic!("{problems:?}"));
    platform.checkout.clone().unwrap()
}

fn quirino() -> Address {
    Address {
        first_name: Some("Ana".into()),
        last_name: Some("Souza".into()),
        street_address: Some("Rua Doutor Quirino".into()),
        number: Some("1481".into()),
        extended_address: Some("Sala 42".into()),
        neighborhood: Some("Centro".into()),
        address_locality: Some("Campinas".into()),
        address_region: Some("SP".into()),
        postal_code: Some("13015-081".into()),
        address_country: Some("BR".into()),
        ..Address::default()
    }
}

#[tokio::test]
async fn number_and_bairro_reach_shopifys_lines_as_its_brazilian_checkout_writes_them() {
    let standin = Standin::start();
    let port = port(&standin).await;
    let created = port
        .create_checkout(&CheckoutDraft {
            source: CheckoutSource::Lines(vec![CartLineInput {
                item_id: format!("gid://shopify/ProductVariant/{MUG_VARIANT}"),
                quantity: 1,
            }]),
            context: BuyerContext::default(),
            buyer: Buyer {
                email: Some("ana@example.com".into()),
                taxpayer_id: Some(TaxpayerId {
                    kind: TaxpayerKind::Cpf,
                    value: "52998224725".into(),
                }),
                ..Buyer::default()
            },
        })
        .await
        .unwrap()
        .checkout;
    assert!(
        created.requirements.is_empty(),
        "the Storefront API cannot carry a document; Shopify's page collects it: {:?}",
        created.requirements
    );
    let state = port
        .set_destination(&created.id, &quirino())
        .await
        .unwrap()
        .unwrap();
    let sent = standin
        .bodies()
        .into_iter()
        .find(|body| body.contains(r#""operationName":"CheckoutAddressReplace""#))
        .unwrap();
    assert!(
        sent.contains(r#""address1":"Rua Doutor Quirino, 1481""#),
        "{sent}"
    );
    assert!(sent.contains(r#""address2":"Sala 42, Centro""#), "{sent}");
    assert!(
        !standin
            .bodies()
            .iter()
            .any(|body| body.contains("52998224725")),
        "the document goes nowhere in Shopify's cart"
    );
    let read = state.address.unwrap();
    assert_eq!(read.street_address.as_deref(), Some("Rua Doutor Quirino"));
    assert_eq!(read.number.as_deref(), Some("1481"));
    assert_eq!(read.extended_address.as_deref(), Some("Sala 42"));
    assert_eq!(read.neighborhood.as_deref(), Some("Centro"));
}
