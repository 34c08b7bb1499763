//! A real WordPress + WooCommerce 10.9.4 (`.ci/real-woo.sh`), with the catalog of
//! tests/suite/real_woo/catalog.php: "Tênis de Corrida" is Color × Size with Azul/42 missing,
//! Branco/40 sold out; "Cinto de Couro" has 3 left; 12 "Bermuda"s page a search. Without the
//! store a plain `cargo test` counts these scenarios ignored, and `--include-ignored` fails them.

use super::{CheckoutFixture, Ends, Fixture, Relaxation, Store};
use crate::real_woo::store::{real_store, shared};
use serde_json::json;

pub fn fixture() -> Fixture {
    let store = real_store();
    let id = |name: &str| store.sid(name);
    Fixture {
        start: || {
            Box::pin(async {
                // Scenarios share the store; request-counting tests take it alone.
                let turn = shared().await;
                let store = real_store();
                Store {
                    bridge: store.bridge("").await,
                    _upstream: Box::new(turn),
                }
            })
        },
        search: json!({"query": "bermuda"}),
        page_limit: 5,
        lookup_found: vec![
            (id("tenis"), id("tenis"), "featured"),
            (id("var_preto_40"), id("tenis"), "exact"),
            ("TENIS-PRETO-40".into(), id("tenis"), "exact"),
            ("GARRAFA-1".into(), id("garrafa"), "exact"),
        ],
        lookup_unknown: vec!["999999".into(), "nope-nope".into()],
        relaxation: Relaxation {
            product: id("tenis"),
            keep: ("Size", "42"),
            drop: ("Color", "Azul"),
            signals: vec![
                ("Color", "Preto", (true, true)),
                ("Color", "Branco", (true, true)),
                ("Color", "Azul", (false, false)),
            ],
        },
        unknown_product: "999999".into(),
        in_stock: id("garrafa"),
        other_in_stock: id("caneca"),
        sold_out: id("oculos"),
        low_stock: (id("cinto"), 3),
        unknown_item: "999999".into(),
        // The store's Brazil zone (PAC selected by the store, SEDEX chosen), its `bcp10` and
        // expired `vencido`, real orders placed with the offline `bacs` gateway.
        checkout: CheckoutFixture {
            start: || {
                Box::pin(async {
                    let turn = shared().await;
                    let store = real_store();
                    Store {
                        bridge: store.bridge("[checkout]\nplace_with = [\"bacs\"]").await,
                        _upstream: Box::new(turn),
                    }
                })
            },
            lines: vec![(id("garrafa"), 2)],
            address: json!({
                "first_name": "Ana", "last_name": "Souza",
                "street_address": "Rua Augusta 100", "address_locality": "São Paulo",
                "address_region": "SP", "postal_code": "01305-000", "address_country": "BR"
            }),
            option: (store.text("rate_sedex"), 2990),
            code: "BCP10".into(),
            refused: ("vencido".into(), "discount_code_expired"),
            ends: Ends::Places { handler: "bacs" },
            asks_email: true,
        },
    }
}
