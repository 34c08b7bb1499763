//! One set of catalog and cart scenarios every platform must pass, in the style of
//! object_store's `integration.rs`: each scenario is a function taking the store under test.
//! A store is a real bridge on loopback configured for one platform (its stand-in behind it
//! where it has one), driven over MCP as agents drive it, so every scenario goes through the
//! brain and the `Platform` seam. What differs between platforms is data, not steps: each
//! platform file describes its store with one `Fixture` (how to start it, which ids play
//! which role).

mod brazil;
mod checkout;
mod real_woocommerce;
mod sample;
mod shopify;
mod vtex;
mod woocommerce;

use std::any::Any;
use std::collections::HashSet;

use futures_util::future::LocalBoxFuture;
use reqwest::StatusCode;
use serde_json::{Value, json};

use checkout::*;
pub use checkout::{CheckoutFixture, Ends};

use crate::support::values::{line, lines};
use crate::support::{TestBridge, meta, meta_with_fresh_key, meta_with_key};

/// Every platform the suite runs on; adding one is one line here (plus its fixture file). A
/// platform that needs an outside part carries its `#[ignore = "why: the command that runs it"]`.
macro_rules! platforms {
    ($($(#[$attr:meta])* $platform:ident),* $(,)?) => {
        /// The scenarios, as tests per platform: `conformance::on::<platform>::<scenario>`.
        mod on {$(
            mod $platform {
                scenarios!(super::super::$platform::fixture; [$(#[$attr])*]);
            }
        )*}
    };
}

/// One `#[tokio::test]` per scenario for the fixture `$fixture`, each with the attributes `$attrs`.
macro_rules! scenarios {
    ($fixture:path; $attrs:tt) => {
        scenarios!(@each $fixture; $attrs; catalog_start;
            search_walks_every_page_once,
            lookup_correlates_mixed_ids_and_reports_unknowns,
            get_product_relaxes_and_signals,
            cart_with_a_sold_out_line,
            over_stock_is_clamped,
            update_replaces_every_line,
            cancel_then_not_found,
            idempotent_replay,
            rest_answers_as_mcp_does,
        );
        scenarios!(@each $fixture; $attrs; checkout_start;
            checkout_from_a_cart_has_the_carts_lines,
            address_options_select_reprices,
            code_applied_then_refused,
            complete_then_replayed,
            cancel_an_open_checkout,
        );
    };
    (@each $fixture:path; $attrs:tt; $start:ident; $($scenario:ident),* $(,)?) => {$(
        scenarios!(@one $fixture; $attrs; $start; $scenario);
    )*};
    (@one $fixture:path; [$(#[$attr:meta])*]; $start:ident; $scenario:ident) => {
        #[tokio::test]
        $(#[$attr])*
        async fn $scenario() {
            let fixture = $fixture();
            let store = crate::conformance::$start(&fixture)().await;
            crate::conformance::$scenario(&store.bridge, &fixture).await;
        }
    };
}

platforms!(
    sample,
    shopify,
    woocommerce,
    #[ignore = "needs the real WooCommerce: bash .ci/real-woo.sh test"]
    real_woocommerce,
    vtex,
);

/// CHK-005 where the buyer finishes on the store's page: only the platforms that hand off at
/// complete (the others place the order, and `complete_then_replayed` checks that no page is
/// named), each with a stand-in that serves the page at `continue_url`.
mod escalation_page {
    macro_rules! hand_off_platforms {
        ($($platform:ident),* $(,)?) => {$(
            #[tokio::test]
            #[ignore = "needs Chromium: cargo test -- --include-ignored with chromium on the PATH (.ci/run installs it)"]
            async fn $platform() {
                let fixture = crate::conformance::$platform::fixture();
                let store = (fixture.checkout.start)().await;
                crate::conformance::escalation_page_shows_the_same_items_and_total(
                    &store.bridge,
                    &fixture,
                )
                .await;
            }
        )*};
    }

    hand_off_platforms!(shopify, vtex);
}

fn catalog_start(fixture: &Fixture) -> fn() -> LocalBoxFuture<'static, Store> {
    fixture.start
}

fn checkout_start(fixture: &Fixture) -> fn() -> LocalBoxFuture<'static, Store> {
    fixture.checkout.start
}

/// A running store under test: the bridge, and whatever must stay alive behind it.
pub struct Store {
    pub bridge: TestBridge,
    pub _upstream: Box<dyn Any>,
}

/// One platform as the scenarios see it. Ids are spelt as the bridge hands them to agents.
pub struct Fixture {
    /// Starts the stand-in (if any) and a bridge configured for it.
    pub start: fn() -> LocalBoxFuture<'static, Store>,
    /// A search (`catalog` object) matching more products than one page of `page_limit`.
    pub search: Value,
    pub page_limit: u64,
    /// Lookup inputs that resolve: (input, product id it resolves to, expected `match`).
    pub lookup_found: Vec<(String, String, &'static str)>,
    /// Lookup inputs that resolve to nothing.
    pub lookup_unknown: Vec<String>,
    pub relaxation: Relaxation,
    /// A product id get_product does not know.
    pub unknown_product: String,
    /// Cart items: two purchasable ones with stock to spare, a sold-out one, one with
    /// `units` left, and one that does not exist.
    pub in_stock: String,
    pub other_in_stock: String,
    pub sold_out: String,
    pub low_stock: (String, u64),
    pub unknown_item: String,
    /// The checkout scenarios' store and data (checkout.rs).
    pub checkout: CheckoutFixture,
}

/// get_product on a product with two option axes: `keep` and `drop` cannot both be met, so
/// `drop` is relaxed away (it is later in `preferences`); `signals` are the (exists,
/// available) of values of the other axis, relative to `keep`.
pub struct Relaxation {
    pub product: String,
    pub keep: (&'static str, &'static str),
    pub drop: (&'static str, &'static str),
    pub signals: Vec<(&'static str, &'static str, (bool, bool))>,
}

/// Follows every page at `page_limit` and at 50: the same products in the same order, none
/// twice, as many as `total_count` says. // CAT-001 CAT-002 CAT-003
pub async fn search_walks_every_page_once(bridge: &TestBridge, fixture: &Fixture) {
    let (paged, totals) = bridge
        .walk(fixture.search.clone(), fixture.page_limit)
        .await;
    assert!(
        totals.len() > 1,
        "the fixture's search spans several pages: {paged:?}"
    );
    let (large, _) = bridge.walk(fixture.search.clone(), 50).await;
    assert_eq!(paged, large, "same order, no gap, no duplicate");
    let unique: HashSet<_> = paged.iter().collect();
    assert_eq!(unique.len(), paged.len(), "{paged:?}");
    assert!(
        totals.iter().all(|total| *total as usize == paged.len()),
        "total_count {totals:?} for {} products",
        paged.len()
    );
}

/// Known ids of every kind, one of them twice, and unknown ones: each known input is
/// correlated once, on a variant of the product it names; each unknown one is one info
/// `not_found`. // CAT-013 CAT-017 CAT-018 CAT-021
pub async fn lookup_correlates_mixed_ids_and_reports_unknowns(
    bridge: &TestBridge,
    fixture: &Fixture,
) {
    let mut inputs: Vec<String> = fixture
        .lookup_found
        .iter()
        .map(|(input, _, _)| input.clone())
        .collect();
    inputs.extend(fixture.lookup_unknown.iter().cloned());
    inputs.push(fixture.lookup_found[0].0.clone());
    let answer = bridge
        .catalog("lookup_catalog", json!({"ids": inputs}))
        .await;
    let mut correlated = Vec::new();
    for product in answer["products"].as_array().unwrap() {
        for variant in product["variants"].as_array().unwrap() {
            let inputs = variant["inputs"].as_array().unwrap();
            assert!(!inputs.is_empty(), "no variant without inputs: {variant}");
            for input in inputs {
                correlated.push((
                    input["id"].as_str().unwrap().to_owned(),
                    product["id"].as_str().unwrap().to_owned(),
                    input["match"].as_str().unwrap().to_owned(),
                ));
            }
        }
    }
    for (input, product, kind) in &fixture.lookup_found {
        let hits: Vec<_> = correlated.iter().filter(|(id, _, _)| id == input).collect();
        assert_eq!(
            hits,
            [&(input.clone(), product.clone(), (*kind).to_owned())],
            "{input} in {correlated:?}"
        );
    }
    let not_found: Vec<&Value> = answer["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|message| message["code"] == "not_found")
        .collect();
    assert_eq!(
        not_found.len(),
        fixture.lookup_unknown.len(),
        "{not_found:?}"
    );
    for (message, unknown) in not_found.iter().zip(&fixture.lookup_unknown) {
        assert_eq!(message["type"], "info", "{message}");
        assert_eq!(message["content"], json!(unknown));
    }
    assert!(answer["ucp"].get("status").is_none(), "{answer}");
}

fn option_value<'a>(product: &'a Value, option: &str, label: &str) -> &'a Value {
    product["options"]
        .as_array()
        .unwrap()
        .iter()
        .find(|candidate| candidate["name"] == option)
        .and_then(|option| {
            option["values"]
                .as_array()
                .unwrap()
                .iter()
                .find(|value| value["label"] == label)
        })
        .unwrap_or_else(|| panic!("{option}: {label} in {product}"))
}

/// A selection that cannot be met keeps the preferred option and drops the other; signals
/// are judged relative to what was kept; an unknown product is a not_found result.
/// // CAT-014 CAT-019 CAT-033
pub async fn get_product_relaxes_and_signals(bridge: &TestBridge, fixture: &Fixture) {
    let relaxation = &fixture.relaxation;
    let (keep, drop) = (relaxation.keep, relaxation.drop);
    let answer = bridge
        .catalog(
            "get_product",
            json!({
                "id": relaxation.product,
                "selected": [{"name": keep.0, "label": keep.1}, {"name": drop.0, "label": drop.1}],
                "preferences": [keep.0, drop.0]
            }),
        )
        .await;
    let product = &answer["product"];
    assert_eq!(product["id"], json!(relaxation.product), "{answer}");
    assert_eq!(
        product["selected"],
        json!([{"name": keep.0, "label": keep.1}])
    );
    assert!(!product["variants"].as_array().unwrap().is_empty());
    for (option, label, (exists, available)) in &relaxation.signals {
        let value = option_value(product, option, label);
        assert_eq!(
            (value["exists"].as_bool(), value["available"].as_bool()),
            (Some(*exists), Some(*available)),
            "{option}: {label} relative to {keep:?}: {value}"
        );
    }

    let missing = bridge
        .catalog("get_product", json!({"id": fixture.unknown_product}))
        .await;
    assert_eq!(missing["ucp"]["status"], "error", "{missing}");
    assert!(missing.get("product").is_none());
    assert_eq!(missing["messages"][0]["code"], "not_found");
}

async fn create(bridge: &TestBridge, items: Vec<Value>) -> Value {
    bridge
        .call(
            "create_cart",
            json!({"meta": meta_with_fresh_key(), "cart": {"line_items": items}}),
        )
        .await
}

fn message_at<'a>(answer: &'a Value, path: &str) -> &'a Value {
    answer["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|message| message["path"] == path)
        .unwrap_or_else(|| panic!("no message at {path}: {answer}"))
}

/// A sold-out and an unknown line are refused with a message each, the rest is the cart;
/// with nothing purchasable there is no cart. // CART-016
pub async fn cart_with_a_sold_out_line(bridge: &TestBridge, fixture: &Fixture) {
    let cart = create(
        bridge,
        vec![
            line(&fixture.in_stock, 1),
            line(&fixture.sold_out, 1),
            line(&fixture.unknown_item, 1),
        ],
    )
    .await;
    assert!(cart["id"].is_string(), "{cart}");
    assert_eq!(lines(&cart), [(fixture.in_stock.clone(), 1)]);
    assert_eq!(message_at(&cart, "$.line_items[1]")["code"], "out_of_stock");
    assert_eq!(message_at(&cart, "$.line_items[2]")["code"], "not_found");

    let none = create(bridge, vec![line(&fixture.sold_out, 1)]).await;
    assert_eq!(none["ucp"]["status"], "error", "{none}");
    assert!(none.get("id").is_none());
    assert_eq!(none["messages"][0]["code"], "out_of_stock");
}

/// More than the store has is cut down to what it has, with a warning.
pub async fn over_stock_is_clamped(bridge: &TestBridge, fixture: &Fixture) {
    let (item, units) = &fixture.low_stock;
    let cart = create(bridge, vec![line(item, *units as u32 + 3)]).await;
    assert_eq!(lines(&cart), [(item.clone(), *units)], "{cart}");
    let message = message_at(&cart, "$.line_items[0]");
    assert_eq!(message["type"], "warning");
    assert_eq!(message["code"], "quantity_adjusted");
}

/// update_cart's lines replace the cart's lines: nothing of the old ones stays, and
/// get_cart agrees.
pub async fn update_replaces_every_line(bridge: &TestBridge, fixture: &Fixture) {
    let cart = create(bridge, vec![line(&fixture.in_stock, 2)]).await;
    let id = cart["id"].as_str().unwrap().to_owned();
    let updated = bridge
        .call(
            "update_cart",
            json!({"meta": meta_with_fresh_key(), "id": id, "cart": {"line_items": [line(&fixture.other_in_stock, 1)]}}),
        )
        .await;
    assert_eq!(updated["id"], json!(id));
    assert_eq!(lines(&updated), [(fixture.other_in_stock.clone(), 1)]);
    let got = bridge
        .call("get_cart", json!({"meta": meta(), "id": id}))
        .await;
    assert_eq!(lines(&got), lines(&updated));
}

/// cancel_cart answers with the cart as it was; afterwards the cart is not found.
pub async fn cancel_then_not_found(bridge: &TestBridge, fixture: &Fixture) {
    let cart = create(bridge, vec![line(&fixture.in_stock, 1)]).await;
    let id = cart["id"].as_str().unwrap().to_owned();
    let cancelled = bridge
        .call(
            "cancel_cart",
            json!({"meta": meta_with_fresh_key(), "id": id}),
        )
        .await;
    assert_eq!(cancelled["id"], json!(id));
    assert_eq!(lines(&cancelled), lines(&cart));
    for tool in ["get_cart", "cancel_cart"] {
        let gone = bridge
            .call(tool, json!({"meta": meta_with_fresh_key(), "id": id}))
            .await;
        assert_eq!(gone["messages"][0]["code"], "not_found", "{tool}: {gone}");
    }
}

/// The same idempotency key with the same payload answers the first answer again (no
/// second cart); with another payload it is refused with 409. // CART-025 CART-026
pub async fn idempotent_replay(bridge: &TestBridge, fixture: &Fixture) {
    let key = uuid::Uuid::new_v4().to_string();
    let send = |quantity: u32| {
        bridge.call_raw(
            "create_cart",
            json!({"meta": meta_with_key(&key), "cart": {"line_items": [line(&fixture.in_stock, quantity)]}}),
        )
    };
    let (status, first) = send(1).await;
    assert_eq!(status, StatusCode::OK, "{first}");
    assert!(
        first["result"]["structuredContent"]["id"].is_string(),
        "{first}"
    );
    let (_, again) = send(1).await;
    assert_eq!(again["result"], first["result"]);
    let (status, conflict) = send(2).await;
    assert_eq!(status, StatusCode::CONFLICT, "{conflict}");
    assert_eq!(conflict["error"]["code"], -32000);
}

/// A cart id as one path segment: everything but RFC 3986's unreserved characters escaped
/// (platform cart ids may hold `/`, `?` or `:`).
fn segment(id: &str) -> String {
    id.bytes()
        .map(|byte| match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (byte as char).to_string()
            }
            other => format!("%{other:02X}"),
        })
        .collect()
}

/// The REST binding over this platform (issue 23): each operation answers the bytes MCP
/// answers for the same call; a cart made, changed and cancelled over REST reads back the
/// same over MCP. // CAT-022 CAT-023 CART-017 SIG-044
pub async fn rest_answers_as_mcp_does(bridge: &TestBridge, fixture: &Fixture) {
    use reqwest::Method;
    let search = fixture.search.clone();
    let (status, rest) = bridge
        .rest(Method::POST, "/catalog/search", Some(&search), &[])
        .await;
    assert_eq!(status, StatusCode::OK, "{rest}");
    let mcp = bridge
        .structured_bytes("search_catalog", json!({"meta": meta(), "catalog": search}))
        .await;
    assert_eq!(rest, mcp);

    let mut ids: Vec<String> = fixture
        .lookup_found
        .iter()
        .map(|(input, _, _)| input.clone())
        .collect();
    ids.extend(fixture.lookup_unknown.iter().cloned());
    let lookup = json!({"ids": ids});
    let (status, rest) = bridge
        .rest(Method::POST, "/catalog/lookup", Some(&lookup), &[])
        .await;
    assert_eq!(status, StatusCode::OK, "{rest}");
    let mcp = bridge
        .structured_bytes("lookup_catalog", json!({"meta": meta(), "catalog": lookup}))
        .await;
    assert_eq!(rest, mcp);

    for id in [&fixture.relaxation.product, &fixture.unknown_product] {
        let product = json!({"id": id});
        let (status, rest) = bridge
            .rest(Method::POST, "/catalog/product", Some(&product), &[])
            .await;
        assert_eq!(status, StatusCode::OK, "{rest}");
        let mcp = bridge
            .structured_bytes("get_product", json!({"meta": meta(), "catalog": product}))
            .await;
        assert_eq!(rest, mcp);
    }

    let key = uuid::Uuid::new_v4().to_string();
    let create = json!({"line_items": [line(&fixture.in_stock, 2)]});
    let (status, created) = bridge
        .rest(
            Method::POST,
            "/carts",
            Some(&create),
            &[("idempotency-key", &key)],
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let cart: Value = serde_json::from_str(&created).unwrap();
    let id = cart["id"].as_str().unwrap().to_owned();
    let path = format!("/carts/{}", segment(&id));
    let read_back = || async {
        let (status, rest) = bridge.rest(Method::GET, &path, None, &[]).await;
        assert_eq!(status, StatusCode::OK, "{rest}");
        let mcp = bridge
            .structured_bytes("get_cart", json!({"meta": meta(), "id": id}))
            .await;
        assert_eq!(rest, mcp);
        serde_json::from_str::<Value>(&rest).unwrap()
    };
    assert_eq!(lines(&read_back().await), [(fixture.in_stock.clone(), 2)]);

    let update = json!({"id": id, "line_items": [line(&fixture.other_in_stock, 1)]});
    let (status, updated) = bridge
        .rest(
            Method::PUT,
            &path,
            Some(&update),
            &[("idempotency-key", &uuid::Uuid::new_v4().to_string())],
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{updated}");
    assert_eq!(
        lines(&read_back().await),
        [(fixture.other_in_stock.clone(), 1)]
    );

    let key = uuid::Uuid::new_v4().to_string();
    let (status, cancelled) = bridge
        .rest(
            Method::POST,
            &format!("{path}/cancel"),
            None,
            &[("idempotency-key", &key)],
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{cancelled}");
    let replay = bridge
        .structured_bytes(
            "cancel_cart",
            json!({"meta": meta_with_key(&key), "id": id}),
        )
        .await;
    assert_eq!(cancelled, replay);
}
