//! The VTEX stand-in (tests/support/vtex_standin/): "Camiseta Gato" is Cor × Tamanho with
//! Amarelo/M sold out; five "Caneca Gato" mugs page the search; the fountain is sold out and
//! the dry food has 2 units (the catalog only says "available": AvailableQuantity is capped).

use super::{CheckoutFixture, Ends, Fixture, Relaxation, Store};
use crate::support::TestBridge;
use crate::support::vtex_standin::{
    CLOCK, CLOCK_SKU, CODE, FOOD_SKU, FOUNTAIN_SKU, MUG_FIRST, MUG_SKU_FIRST, TEE, TEE_SKUS,
    VtexStandin,
};
use serde_json::json;

pub fn fixture() -> Fixture {
    Fixture {
        start: || {
            Box::pin(async {
                let vtex = VtexStandin::start().await;
                let bridge = TestBridge::start(&vtex.config("")).await;
                Store {
                    bridge,
                    _upstream: Box::new(vtex),
                }
            })
        },
        search: json!({"query": "caneca"}),
        page_limit: 2,
        lookup_found: vec![
            (TEE.into(), TEE.into(), "featured"),
            (TEE_SKUS[2].0.into(), TEE.into(), "exact"),
            (
                format!("REF-{}", MUG_SKU_FIRST + 1),
                (MUG_FIRST + 1).to_string(),
                "exact",
            ),
            (
                format!("789100{}", MUG_SKU_FIRST + 2),
                (MUG_FIRST + 2).to_string(),
                "exact",
            ),
            ("wood-clock".into(), CLOCK.into(), "featured"),
        ],
        lookup_unknown: vec!["999999".into(), "not an id".into()],
        relaxation: Relaxation {
            product: TEE.into(),
            keep: ("Tamanho", "M"),
            drop: ("Cor", "Verde"),
            signals: vec![
                ("Cor", "Amarelo", (true, false)),
                ("Cor", "Vermelho", (true, true)),
            ],
        },
        unknown_product: "999999".into(),
        in_stock: CLOCK_SKU.into(),
        other_in_stock: MUG_SKU_FIRST.to_string(),
        sold_out: FOUNTAIN_SKU.into(),
        low_stock: (FOOD_SKU.into(), 2),
        unknown_item: "777777".into(),
        // The orderForm is the checkout: the store's SLAs for the address (VTEX selects its
        // best delivery one itself), its coupons; the buyer pays on the store's checkout page
        // for the orderForm, which the stand-in serves from its own state.
        checkout: CheckoutFixture {
            start: || {
                Box::pin(async {
                    let vtex = VtexStandin::start().await;
                    let bridge =
                        TestBridge::start(&(vtex.config("") + "\n[cache]\nenabled = false\n"))
                            .await;
                    Store {
                        bridge,
                        _upstream: Box::new(vtex),
                    }
                })
            },
            lines: vec![(CLOCK_SKU.into(), 1), (MUG_SKU_FIRST.to_string(), 2)],
            address: json!({
                "first_name": "Ana", "last_name": "Souza",
                "street_address": "Rua Augusta 100", "address_locality": "São Paulo",
                "address_region": "SP", "postal_code": "01305-000", "address_country": "BR"
            }),
            // Per unit × the 3 units the group ships.
            option: ("Expressa".into(), 9_000),
            code: CODE.to_lowercase(),
            refused: ("NOPE10".into(), "discount_code_invalid"),
            ends: Ends::HandsOff,
            asks_email: true,
        },
    }
}
