//! The VTEX stand-in (tests/support/vtex_standin/): "Camiseta Gato" is Cor × Tamanho with
//! Amarelo/M sold out; five "Caneca Gato" mugs page the search; the fountain is sold out and
//! the dry food has 2 units (the catalog only says "available": AvailableQuantity is capped).

use super::{Fixture, Relaxation, Store};
use crate::support::TestBridge;
use crate::support::vtex_standin::{
    CLOCK, CLOCK_SKU, FOOD_SKU, FOUNTAIN_SKU, MUG_FIRST, MUG_SKU_FIRST, TEE, TEE_SKUS, VtexStandin,
};
use serde_json::json;

pub fn fixture(_scenario: &str) -> Option<Fixture> {
    Some(Fixture {
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
    })
}
