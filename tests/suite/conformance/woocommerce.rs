//! The Store API stand-in (tests/support/woo_standin/): "Logo Tee" (11) is Size × Color with
//! M/Blue (15) sold out; the stand-in is told Logo Tee S/Blue (13) has 2 left.

use super::{CheckoutFixture, Ends, Fixture, Relaxation, Store};
use crate::support::TestBridge;
use crate::support::woo_standin::{COUPON, EXPIRED_COUPON, RATES, WooStandin};
use serde_json::json;

pub fn fixture() -> Fixture {
    Fixture {
        start: || {
            Box::pin(async {
                let woo = WooStandin::start().await;
                woo.set_stock(13, 2);
                let bridge = TestBridge::start(&woo.config("")).await;
                Store {
                    bridge,
                    _upstream: Box::new(woo),
                }
            })
        },
        search: json!({"query": "cup"}),
        page_limit: 2,
        lookup_found: vec![
            ("11".into(), "11".into(), "featured"),
            ("16".into(), "11".into(), "exact"),
            ("TEE-S-BLUE".into(), "11".into(), "exact"),
            ("MUG-1".into(), "10".into(), "exact"),
        ],
        lookup_unknown: vec!["999".into(), "nope".into()],
        relaxation: Relaxation {
            product: "11".into(),
            keep: ("Size", "M"),
            drop: ("Color", "Green"),
            signals: vec![
                ("Color", "Blue", (true, false)),
                ("Color", "Red", (true, true)),
            ],
        },
        unknown_product: "999".into(),
        in_stock: "10".into(),
        other_in_stock: "12".into(),
        sold_out: "15".into(),
        low_stock: ("13".into(), 2),
        unknown_item: "999".into(),
        // The Store API checkout routes (update-customer, select-shipping-rate, apply-coupon,
        // checkout, order): the zone's rates with the first (PAC) selected by the store,
        // `bcp10`, `vencido` expired, orders placed with the offline `bacs` gateway.
        checkout: CheckoutFixture {
            start: || {
                Box::pin(async {
                    let woo = WooStandin::start().await;
                    let bridge =
                        TestBridge::start(&woo.config("\n[checkout]\nplace_with = [\"bacs\"]"))
                            .await;
                    Store {
                        bridge,
                        _upstream: Box::new(woo),
                    }
                })
            },
            lines: vec![("10".into(), 2), ("16".into(), 1)],
            address: json!({
                "first_name": "Ana", "last_name": "Souza",
                "street_address": "Rua Augusta 100", "address_locality": "São Paulo",
                "address_region": "SP", "postal_code": "01305-000", "address_country": "BR"
            }),
            option: (RATES[1].0.into(), RATES[1].4),
            code: COUPON.to_uppercase(),
            refused: (EXPIRED_COUPON.into(), "discount_code_expired"),
            ends: Ends::Places { handler: "bacs" },
            asks_email: true,
        },
    }
}
