//! The Brazilian scenarios every platform runs (issue 37 items 1–3 and 7), on each platform's
//! checkout store from the conformance fixtures: a buyer's CPF and a Brazilian address
//! ("Rua Augusta, 100", "Apto 12 - Bairro Consolação") reach the store's own fields, or, where
//! the store's API cannot carry them, the store's page collects them; a store that requires a
//! CPF/CNPJ and has none asks for it with a recoverable message at `$.buyer.taxpayer_id`
//! (never a protocol error); a document with wrong check digits is refused at that path and
//! never reaches the store. BCP fiscal-identity.md: `taxpayer_id` digits only on the wire.
//!
//! What differs per platform is `Brazil`: whether its store requires a document the bridge
//! can see, and how to read what reached the store behind it (where a stand-in can say).

use std::any::Any;

use serde_json::{Value, json};

use super::{Fixture, Store};
use crate::support::shopify_standin::Standin as ShopifyStandin;
use crate::support::values::{key, line};
use crate::support::vtex_standin::VtexStandin;
use crate::support::{TestBridge, meta, meta_with_key};

const TAXPAYER_PATH: &str = "$.buyer.taxpayer_id";
const CPF: &str = "52998224725";
/// The same CPF with its last check digit wrong.
const WRONG_CPF: &str = "52998224726";

/// What reached the store's own fields, as its stand-in holds them.
#[derive(Debug, Default, PartialEq)]
pub struct Held {
    pub document: Option<String>,
    pub number: Option<String>,
    pub complement: Option<String>,
    pub bairro: Option<String>,
}

/// One platform's Brazil, as data.
pub struct Brazil {
    /// The store requires a CPF/CNPJ the bridge can see (and so asks the agent for it);
    /// `None` where it depends on the store's settings the fixture does not fix.
    pub requires_document: Option<bool>,
    /// Reads the store behind the bridge after a checkout; `None` where no stand-in says.
    pub held: Option<fn(&dyn Any, &str) -> Held>,
}

fn vtex_held(upstream: &dyn Any, checkout: &str) -> Held {
    let vtex = upstream.downcast_ref::<VtexStandin>().unwrap();
    let profile = vtex.profile_of(checkout);
    let address = vtex.address_of(checkout).unwrap_or(Value::Null);
    let text = |value: &Value| value.as_str().map(str::to_owned);
    Held {
        document: profile.get("document").and_then(text),
        number: text(&address["number"]),
        complement: text(&address["complement"]),
        bairro: text(&address["neighborhood"]),
    }
}

/// Shopify keeps no document (its Storefront API has no field for one); the number and
/// bairro are in its two street lines, the Brazilian way.
fn shopify_held(upstream: &dyn Any, _checkout: &str) -> Held {
    let shopify = upstream.downcast_ref::<ShopifyStandin>().unwrap();
    let sent = shopify
        .bodies()
        .into_iter()
        .rfind(|body| body.contains(r#""operationName":"CheckoutAddressReplace""#))
        .map(|body| serde_json::from_str::<Value>(&body).unwrap())
        .unwrap_or(Value::Null);
    let address = &sent["variables"]["addresses"][0]["address"]["deliveryAddress"];
    let line1 = address["address1"].as_str().unwrap_or_default();
    let line2 = address["address2"].as_str().unwrap_or_default();
    let (_, number) = line1.rsplit_once(", ").unwrap_or_default();
    let (complement, bairro) = line2.rsplit_once(", ").unwrap_or_default();
    let some = |text: &str| (!text.is_empty()).then(|| text.to_owned());
    Held {
        document: shopify
            .bodies()
            .iter()
            .any(|body| body.contains(CPF))
            .then(|| CPF.to_owned()),
        number: some(number),
        complement: some(complement),
        bairro: some(bairro),
    }
}

fn brazil(platform: &str) -> Brazil {
    match platform {
        "vtex" => Brazil {
            requires_document: Some(true),
            held: Some(vtex_held),
        },
        "shopify" => Brazil {
            requires_document: Some(false),
            held: Some(shopify_held),
        },
        // The sample store and WooCommerce are Brazilian or not by their settings (the
        // sample's `brazilian_checkout`, the Woo store's plugin): the invariants only.
        _ => Brazil {
            requires_document: None,
            held: None,
        },
    }
}

fn augusta() -> Value {
    json!({
        "first_name": "Ana", "last_name": "Souza",
        "street_address": "Rua Augusta, 100", "extended_address": "Apto 12 - Bairro Consolação",
        "address_locality": "São Paulo", "address_region": "SP", "postal_code": "01305-000",
        "address_country": "BR"
    })
}

fn buyer(document: Option<&str>) -> Value {
    let mut buyer = json!({"email": "ana@example.com", "first_name": "Ana", "last_name": "Souza"});
    if let Some(document) = document {
        buyer["taxpayer_id"] = json!({"kind": "cpf", "value": document});
    }
    buyer
}

/// A checkout of the fixture's lines for `buyer`, shipping to Rua Augusta, in one create.
async fn create(bridge: &TestBridge, fixture: &Fixture, buyer: Value) -> Value {
    let lines: Vec<Value> = fixture
        .checkout
        .lines
        .iter()
        .map(|(id, quantity)| line(id, *quantity))
        .collect();
    let created = bridge
        .call(
            "create_checkout",
            json!({"meta": meta_with_key(&key()), "checkout": {
                "line_items": lines, "buyer": buyer,
                "fulfillment": {"methods": [{"type": "shipping", "destinations": [augusta()]}]}
            }}),
        )
        .await;
    assert!(
        created["id"].is_string(),
        "a checkout, not an error: {created}"
    );
    created
}

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

/// Issue 37 items 1 and 2: the CPF is echoed digits-only and reaches the store's document
/// field; the house number, complement and bairro reach the store's own fields (or its
/// street lines); nothing is asked for again.
pub async fn taxpayer_id_and_brazilian_address_reach_the_store(
    store: &Store,
    fixture: &Fixture,
    platform: &str,
) {
    let created = create(&store.bridge, fixture, buyer(Some("529.982.247-25"))).await;
    // Echoed digits-only where the store holds it; a store whose page collects it (Shopify)
    // holds none, and the checkout does not pretend it does.
    if brazil(platform).requires_document != Some(false) {
        assert_eq!(
            created["buyer"]["taxpayer_id"],
            json!({"kind": "cpf", "value": CPF}),
            "{created}"
        );
    }
    assert!(at(&created, TAXPAYER_PATH).is_empty(), "{created}");
    let street = "$.fulfillment.methods[0].destinations[0].street_address";
    let extended = "$.fulfillment.methods[0].destinations[0].extended_address";
    assert!(at(&created, street).is_empty(), "{created}");
    assert!(at(&created, extended).is_empty(), "{created}");
    let id = created["id"].as_str().unwrap();
    if let Some(held) = brazil(platform).held {
        let held = held(store._upstream.as_ref(), id);
        let document = brazil(platform)
            .requires_document
            .unwrap_or(true)
            .then(|| CPF.to_owned());
        assert_eq!(
            held,
            Held {
                document,
                number: Some("100".into()),
                complement: Some("Apto 12".into()),
                bairro: Some("Consolação".into()),
            }
        );
    }
}

/// Issue 37 item 3: a store that requires a CPF/CNPJ asks for it — one recoverable `missing`
/// message at `$.buyer.taxpayer_id`, the checkout `incomplete` — and giving one clears it. A
/// store whose page collects it asks nothing here. Never a protocol error.
pub async fn a_missing_taxpayer_id_is_asked_for_recoverably(
    store: &Store,
    fixture: &Fixture,
    platform: &str,
) {
    let created = create(&store.bridge, fixture, buyer(None)).await;
    let asked = at(&created, TAXPAYER_PATH);
    match brazil(platform).requires_document {
        Some(true) => assert_eq!(asked.len(), 1, "{created}"),
        Some(false) => assert!(asked.is_empty(), "{created}"),
        None => {}
    }
    for message in &asked {
        assert_eq!(message["type"], "error", "{message}");
        assert_eq!(message["code"], "missing", "{message}");
        assert_eq!(message["severity"], "recoverable", "{message}");
        assert_eq!(created["status"], "incomplete", "{created}");
    }
    let id = created["id"].as_str().unwrap();
    let updated = store
        .bridge
        .call(
            "update_checkout",
            json!({"meta": meta(), "id": id, "checkout": {"buyer": buyer(Some(CPF))}}),
        )
        .await;
    assert!(updated["id"].is_string(), "{updated}");
    assert!(at(&updated, TAXPAYER_PATH).is_empty(), "{updated}");
}

/// fiscal-identity.md: a CPF whose check digits are wrong is refused at its path (recoverable)
/// and never reaches the store.
pub async fn a_wrong_check_digit_is_refused_at_its_path(
    store: &Store,
    fixture: &Fixture,
    platform: &str,
) {
    let created = create(&store.bridge, fixture, buyer(Some(WRONG_CPF))).await;
    let refused: Vec<&Value> = at(&created, TAXPAYER_PATH)
        .into_iter()
        .filter(|message| message["code"] == "invalid")
        .collect();
    assert_eq!(refused.len(), 1, "{created}");
    assert_eq!(refused[0]["severity"], "recoverable", "{created}");
    // A store that requires a document may also say it still has none, at the same path.
    assert!(
        at(&created, TAXPAYER_PATH)
            .iter()
            .all(|message| message["severity"] == "recoverable"),
        "{created}"
    );
    assert!(created["buyer"]["taxpayer_id"].is_null(), "{created}");
    if let Some(held) = brazil(platform).held {
        let held = held(store._upstream.as_ref(), created["id"].as_str().unwrap());
        assert_eq!(
            held.document, None,
            "the refused document reached the store"
        );
    }
}

/// One `#[tokio::test]` per platform and scenario, on the platform's checkout store.
macro_rules! brazil_scenarios {
    ($($(#[$attr:meta])* $platform:ident),* $(,)?) => {$(
        mod $platform {
            brazil_scenarios!(@each $platform; [$(#[$attr])*];
                taxpayer_id_and_brazilian_address_reach_the_store,
                a_missing_taxpayer_id_is_asked_for_recoverably,
                a_wrong_check_digit_is_refused_at_its_path,
            );
        }
    )*};
    (@each $platform:ident; $attrs:tt; $($scenario:ident),* $(,)?) => {$(
        brazil_scenarios!(@one $platform; $attrs; $scenario);
    )*};
    (@one $platform:ident; [$(#[$attr:meta])*]; $scenario:ident) => {
        #[tokio::test]
        $(#[$attr])*
        async fn $scenario() {
            let fixture = crate::conformance::$platform::fixture();
            let store = (fixture.checkout.start)().await;
            crate::conformance::brazil::$scenario(&store, &fixture, stringify!($platform)).await;
        }
    };
}

mod on {
    brazil_scenarios!(
        sample,
        shopify,
        woocommerce,
        #[ignore = "needs the real WooCommerce: bash .ci/real-woo.sh test"]
        real_woocommerce,
        vtex,
    );
}
