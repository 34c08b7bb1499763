//! The Store API stand-in (tests/support/woo_standin/): "Logo Tee" (11) is Size × Color with
//! M/Blue (15) sold out; the stand-in is told Logo Tee S/Blue (13) has 2 left.

use super::{Fixture, Relaxation, Store};
use crate::support::TestBridge;
use crate::support::woo_standin::WooStandin;
use serde_json::json;

pub fn fixture(_scenario: &str) -> Option<Fixture> {
    Some(Fixture {
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
    })
}
