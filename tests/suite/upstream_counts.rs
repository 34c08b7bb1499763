//! Upstream requests and latency per tool call against the Shopify and WooCommerce
//! stand-ins, product cache off, for `bench/round_trips.sh` (called by bench/run.sh):
//! `cargo test --release --test suite upstream_counts -- --ignored --nocapture`.
//! Each call is made cold (a fresh bridge: no category tree, no guest Nonce) and then warm
//! (the same call again on that bridge), with every upstream request delayed 150 ms by the
//! stand-in, and printed as `ROUNDTRIP <platform> <call> <cold> <warm> <cold ms> <warm ms>`
//! (plus the older `UPSTREAM <platform> <call> <cold>` lines). Ignored in the normal suite:
//! `shopify_fixes::round_trips_at_the_floor`, `shopify_fixes::cart_lines_cost_…` and
//! `woo_round_trips` assert the counts that matter.
#![allow(clippy::print_stdout)]

use std::rc::Rc;
use std::time::{Duration, Instant};

use crate::support::shopify_standin::{
    CANDLE_VARIANT, CAT_FIRST_VARIANT, Fault, MUG, MUG_VARIANT, SOCK_FIRST, Standin, TEE,
};
use crate::support::woo_standin::{self, WooStandin};
use crate::support::{TestBridge, meta, meta_with_fresh_key};
use serde_json::{Value, json};

const NO_CACHE: &str = "\n[cache]\nenabled = false\n";
const DELAY: Duration = Duration::from_millis(150);

/// One stand-in as the measurement sees it.
struct Upstream {
    platform: &'static str,
    config: String,
    count: Box<dyn Fn() -> usize>,
    reset: Box<dyn Fn()>,
    delay: Box<dyn Fn(bool)>,
}

/// The arguments of a measured call, from the prepared carts and the round.
type Arguments = Box<dyn Fn(&[String], usize) -> Value>;

/// One measured call: `arguments(carts, round)` for round 0 (cold) and 1 (warm); a cart
/// call gets two carts made beforehand with `cart_lines`, one per round.
struct Call {
    label: &'static str,
    tool: &'static str,
    arguments: Arguments,
    needs_carts: bool,
}

fn catalog(label: &'static str, tool: &'static str, catalog: Value) -> Call {
    Call {
        label,
        tool,
        arguments: Box::new(move |_, _| json!({"meta": meta(), "catalog": catalog.clone()})),
        needs_carts: false,
    }
}

fn lines(ids: &[&str]) -> Value {
    Value::Array(
        ids.iter()
            .map(|id| json!({"item": {"id": id}, "quantity": 1}))
            .collect(),
    )
}

fn carts(label: &'static str, tool: &'static str, replacement: Option<Value>) -> Call {
    Call {
        label,
        tool,
        arguments: Box::new(move |carts, round| {
            let mut arguments = json!({"meta": meta_with_fresh_key(), "id": carts[round]});
            if let Some(lines) = &replacement {
                arguments["cart"] = json!({"line_items": lines});
            }
            arguments
        }),
        needs_carts: true,
    }
}

fn create(label: &'static str, line_items: Value) -> Call {
    Call {
        label,
        tool: "create_cart",
        arguments: Box::new(
            move |_, _| json!({"meta": meta_with_fresh_key(), "cart": {"line_items": line_items}}),
        ),
        needs_carts: false,
    }
}

async fn measure(upstream: &Upstream, calls: &[Call], cart_lines: &Value) {
    for call in calls {
        let mut made = Vec::new();
        if call.needs_carts {
            let setup = TestBridge::start(&upstream.config).await;
            for _ in 0..2 {
                let created = setup
                    .call(
                        "create_cart",
                        json!({"meta": meta_with_fresh_key(), "cart": {"line_items": cart_lines}}),
                    )
                    .await;
                made.push(created["id"].as_str().unwrap().to_owned());
            }
        }
        let bridge = TestBridge::start(&upstream.config).await;
        (upstream.delay)(true);
        let mut counts = Vec::new();
        let mut times = Vec::new();
        for round in 0..2 {
            (upstream.reset)();
            let started = Instant::now();
            bridge.call(call.tool, (call.arguments)(&made, round)).await;
            times.push(started.elapsed().as_millis());
            counts.push((upstream.count)());
        }
        (upstream.delay)(false);
        println!(
            "ROUNDTRIP {} {} {} {} {} {}",
            upstream.platform, call.label, counts[0], counts[1], times[0], times[1]
        );
        println!(
            "UPSTREAM {} {} {}",
            upstream.platform, call.label, counts[0]
        );
    }
}

#[tokio::test]
#[ignore = "a measurement, not a test: bash bench/round_trips.sh (CI skips measure_*)"]
async fn measure_upstream_requests_per_tool_call() {
    shopify().await;
    woocommerce().await;
}

async fn shopify() {
    let shop = Rc::new(Standin::start());
    let upstream = Upstream {
        platform: "shopify",
        config: shop.config("currency = \"USD\"") + NO_CACHE,
        count: {
            let shop = Rc::clone(&shop);
            Box::new(move || shop.requests())
        },
        reset: {
            let shop = Rc::clone(&shop);
            Box::new(move || shop.reset_counts())
        },
        delay: {
            let shop = Rc::clone(&shop);
            Box::new(move |on| shop.set_fault(on.then_some(Fault::Slow(DELAY))))
        },
    };
    let variant = |id: u64| format!("gid://shopify/ProductVariant/{id}");
    // 50 mixed ids: product gids, numbers, handles, SKUs, one unknown.
    let mut ids: Vec<String> = (0..20)
        .map(|index| format!("gid://shopify/Product/{}", SOCK_FIRST + index))
        .collect();
    ids.extend((20..30).map(|index| (SOCK_FIRST + index + 100_000).to_string()));
    ids.extend((30..40).map(|index| format!("sock-{index}")));
    ids.extend((40..49).map(|index| format!("SOCK-{index}")));
    ids.push("gid://shopify/Product/424242".to_owned());
    let (mug, candle, cat) = (
        variant(MUG_VARIANT),
        variant(CANDLE_VARIANT),
        variant(CAT_FIRST_VARIANT),
    );
    let calls = [
        catalog("search_catalog", "search_catalog", json!({"query": "sock"})),
        catalog(
            "lookup_catalog_50_ids",
            "lookup_catalog",
            json!({"ids": ids}),
        ),
        catalog(
            "get_product",
            "get_product",
            json!({"id": format!("gid://shopify/Product/{MUG}")}),
        ),
        catalog(
            "get_product_300_variants",
            "get_product",
            json!({"id": format!("gid://shopify/Product/{TEE}")}),
        ),
        create("create_cart_2_lines", lines(&[&mug, &candle])),
        create("create_cart_sku_line", lines(&["SOCK-7"])),
        carts("get_cart", "get_cart", None),
        carts(
            "update_cart_replace",
            "update_cart",
            Some(
                json!([{"item": {"id": mug}, "quantity": 3}, {"item": {"id": cat}, "quantity": 1}]),
            ),
        ),
        carts("cancel_cart", "cancel_cart", None),
    ];
    // The stand-in parses the full Storefront schema on its first request: not a cost of
    // any tool, so it is paid before measuring.
    TestBridge::start(&upstream.config)
        .await
        .catalog("search_catalog", json!({"query": "sock"}))
        .await;
    measure(&upstream, &calls, &lines(&[&mug, &candle])).await;
}

async fn woocommerce() {
    let woo = Rc::new(WooStandin::start().await);
    let upstream = Upstream {
        platform: "woocommerce",
        config: woo.config("") + NO_CACHE,
        count: {
            let woo = Rc::clone(&woo);
            Box::new(move || woo.requests().len())
        },
        reset: {
            let woo = Rc::clone(&woo);
            Box::new(move || woo.clear_requests())
        },
        delay: {
            let woo = Rc::clone(&woo);
            Box::new(move |on| {
                woo.set_fault(if on {
                    woo_standin::Fault::Slow(DELAY)
                } else {
                    woo_standin::Fault::None
                })
            })
        },
    };
    // The stand-in's catalog (captured from WooCommerce 7.9) is small: 50 ids mix its
    // products, variations, SKUs and slugs with unknown numeric ids, all in one batch.
    let mut ids: Vec<String> = ["10", "11", "16", "30", "TEE-S-BLUE", "MUG-1", "zip-hoodie"]
        .iter()
        .map(|id| (*id).to_owned())
        .collect();
    ids.extend((1000..1043).map(|id| id.to_string()));
    let calls = [
        catalog(
            "search_page_simple_hits",
            "search_catalog",
            json!({"query": "cup"}),
        ),
        catalog(
            "search_page_variable_hits",
            "search_catalog",
            json!({"query": "e"}),
        ),
        catalog(
            "lookup_catalog_50_ids",
            "lookup_catalog",
            json!({"ids": ids}),
        ),
        catalog("get_product_variable", "get_product", json!({"id": "11"})),
        catalog(
            "get_product_variation_id",
            "get_product",
            json!({"id": "21"}),
        ),
        catalog("get_product_sku", "get_product", json!({"id": "HOOD-GRN"})),
        create("create_cart_3_lines", lines(&["10", "21", "30"])),
        create("create_cart_sku_line", lines(&["MUG-1"])),
        carts("get_cart", "get_cart", None),
        carts(
            "update_cart_2_lines",
            "update_cart",
            Some(lines(&["31", "22"])),
        ),
        carts("cancel_cart", "cancel_cart", None),
    ];
    measure(&upstream, &calls, &lines(&["10", "21", "30"])).await;
}
