//! The Storefront stand-in (tests/support/shopify_standin.rs): "Cat" is Fur × Size with every
//! combination listed and Mega Fluff sold out but in Medium; the desk lamp is sold out and
//! the soy candle has 2 left.

use super::{CheckoutFixture, Ends, Fixture, Relaxation, Store};
use crate::support::TestBridge;
use crate::support::shopify_standin::{
    CANDLE_VARIANT, CAT, EXPRESS, GOOD_CODE, INACTIVE_CODE, LAMP_VARIANT, MUG, MUG_VARIANT,
    SOCK_FIRST, Standin, tee_variant,
};
use serde_json::json;

fn product(id: u64) -> String {
    format!("gid://shopify/Product/{id}")
}

fn variant(id: u64) -> String {
    format!("gid://shopify/ProductVariant/{id}")
}

pub fn fixture() -> Fixture {
    Fixture {
        start: || {
            Box::pin(async {
                let standin = Standin::start();
                let bridge = TestBridge::start(&standin.config("")).await;
                Store {
                    bridge,
                    _upstream: Box::new(standin),
                }
            })
        },
        search: json!({"query": "sock"}),
        page_limit: 25,
        lookup_found: vec![
            (product(CAT), product(CAT), "featured"),
            (variant(MUG_VARIANT), product(MUG), "exact"),
            ("SOCK-3".into(), product(SOCK_FIRST + 3), "exact"),
        ],
        lookup_unknown: vec![product(999_999), "not an id".into()],
        relaxation: Relaxation {
            product: product(CAT),
            keep: ("Fur", "Mega Fluff"),
            drop: ("Size", "Huge"),
            signals: vec![
                ("Size", "Small", (true, false)),
                ("Size", "Medium", (true, true)),
            ],
        },
        unknown_product: product(999_999),
        in_stock: variant(MUG_VARIANT),
        other_in_stock: variant(tee_variant(0, 0)),
        sold_out: variant(LAMP_VARIANT),
        low_stock: (variant(CANDLE_VARIANT), 2),
        unknown_item: variant(777),
        // A checkout is the Storefront cart: the store's delivery options (none selected
        // until chosen), SAVE10, SUMMER2024 inactive; the buyer pays on the cart's
        // checkoutUrl, a myshopify.com page the stand-in does not serve.
        checkout: CheckoutFixture {
            start: || {
                Box::pin(async {
                    let standin = Standin::start();
                    // Shopify's page is on the stand-in: the hand-off lands where a browser can
                    // open it (the merchant's `checkout_base_url`, as for a shop's own domain).
                    let config = format!(
                        "{}\n[cart]\ncheckout_base_url = \"http://{}\"\n",
                        standin.config(""),
                        standin.addr
                    );
                    let bridge = TestBridge::start(&config).await;
                    Store {
                        bridge,
                        _upstream: Box::new(standin),
                    }
                })
            },
            lines: vec![(variant(MUG_VARIANT), 2), (variant(tee_variant(0, 0)), 1)],
            address: json!({
                "first_name": "Ana", "last_name": "Souza",
                "street_address": "350 5th Ave", "address_locality": "New York",
                "address_region": "NY", "postal_code": "10118", "address_country": "US"
            }),
            option: (EXPRESS.into(), 1550),
            code: GOOD_CODE.to_lowercase(),
            refused: (INACTIVE_CODE.into(), "discount_code_expired"),
            ends: Ends::HandsOff,
            asks_email: true,
        },
    }
}
