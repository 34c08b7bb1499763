//! The embedded sample store (no upstream): "Blue Runner Pro" (prod_abc123) is Color ×
//! Size, where Red/15 does not exist and Red/11 is sold out; the kettle is sold out and the
//! moka pot has 2 left.

use super::{CheckoutFixture, Ends, Fixture, Relaxation, Store};
use crate::support::TestBridge;
use serde_json::json;

pub fn fixture() -> Fixture {
    Fixture {
        start: || {
            Box::pin(async {
                Store {
                    bridge: TestBridge::sample().await,
                    _upstream: Box::new(()),
                }
            })
        },
        search: json!({"filters": {"price": {"min": 0, "max": 10_000_000}}}),
        page_limit: 7,
        lookup_found: vec![
            ("prod_abc123".into(), "prod_abc123".into(), "featured"),
            ("prod_abc123_red_12".into(), "prod_abc123".into(), "exact"),
            ("BRP-BLU-10".into(), "prod_abc123".into(), "exact"),
            ("var_xyz789".into(), "prod_def456".into(), "exact"),
        ],
        lookup_unknown: vec!["prod_notfound1".into(), "../../etc/passwd".into()],
        relaxation: Relaxation {
            product: "prod_abc123".into(),
            keep: ("Color", "Red"),
            drop: ("Size", "15"),
            signals: vec![
                ("Size", "15", (false, false)),
                ("Size", "11", (true, false)),
                ("Size", "12", (true, true)),
            ],
        },
        unknown_product: "prod_invalid".into(),
        in_stock: "item_123".into(),
        other_in_stock: "prod_abc123_blu_10".into(),
        sold_out: "prod_electric_kettle_default".into(),
        low_stock: ("prod_moka_pot_default".into(), 2),
        unknown_item: "no_such_item".into(),
        // The sample store's own checkout: Correios rates for Brazil (none selected until
        // the buyer chooses), BEMVINDO10, VERAO2025 expired, orders placed with its test
        // handler. Under R$ 300 of items, so shipping is not free.
        checkout: CheckoutFixture {
            start: || {
                Box::pin(async {
                    Store {
                        bridge: TestBridge::sample().await,
                        _upstream: Box::new(()),
                    }
                })
            },
            lines: vec![
                ("item_123".into(), 1),
                ("prod_chinelo_praia_azm_3334".into(), 2),
            ],
            address: json!({
                "first_name": "Ana", "last_name": "Souza",
                "street_address": "Rua Augusta 100", "address_locality": "São Paulo",
                "address_region": "SP", "postal_code": "01305-000", "address_country": "BR"
            }),
            option: ("sedex".into(), 2990),
            code: "bemvindo10".into(),
            refused: ("VERAO2025".into(), "discount_code_expired"),
            ends: Ends::Places {
                handler: "sample_test_approve",
            },
            asks_email: false,
        },
    }
}
