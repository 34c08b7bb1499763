//! Cart tools end to end: agent → bridge → Shopify adapter → Storefront stand-in carts.

use crate::support::shopify_standin::*;
use crate::support::values::{line, lines, total};
use crate::support::{TestBridge, meta_with_fresh_key};
use serde_json::json;

fn variant(id: u64) -> String {
    format!("gid://shopify/ProductVariant/{id}")
}

async fn setup() -> (Standin, TestBridge) {
    let standin = Standin::start();
    let bridge = TestBridge::start(&standin.config("")).await;
    standin.reset_counts();
    (standin, bridge)
}

#[tokio::test]
async fn create_get_update_cancel() {
    let (standin, bridge) = setup().await;
    let cat_extra_fluffy = CAT_FIRST_VARIANT + 3;
    let created = bridge
        .call(
            "create_cart",
            json!({"meta": meta_with_fresh_key(), "cart": {"line_items": [line(&variant(MUG_VARIANT), 2), line(&variant(cat_extra_fluffy), 1)]}}),
        )
        .await;
    let id = created["id"].as_str().unwrap().to_owned();
    assert!(id.starts_with("gid://shopify/Cart/"), "{id}");
    assert_eq!(created["currency"], "USD");
    assert_eq!(
        lines(&created),
        [(variant(MUG_VARIANT), 2), (variant(cat_extra_fluffy), 1)]
    );
    // 2 × "18.0" + 1 × "5.0". // CART-029 CART-031 CART-033 TOT-005 TOT-006
    assert_eq!(total(&created, "subtotal"), 4100);
    assert_eq!(total(&created, "total"), 4100);
    assert_eq!(created["line_items"][0]["item"]["price"], 1800);
    assert_eq!(created["line_items"][0]["item"]["title"], "Ceramic Mug");
    assert_eq!(
        created["line_items"][1]["item"]["title"],
        "Cat — Extra Fluffy / Medium"
    );
    assert!(
        created["continue_url"]
            .as_str()
            .unwrap()
            .starts_with("https://standin-shop.myshopify.com/cart/c/")
    );
    // CART-014: Shopify's ten days from the last update.
    assert_eq!(created["expires_at"], "2026-12-09T12:00:00Z");
    // Shopify judges the lines: one cartCreate, nothing read first.
    assert_eq!(standin.operations(), ["CartCreate"]);

    let got = bridge
        .call("get_cart", json!({"meta": meta_with_fresh_key(), "id": id}))
        .await;
    assert_eq!(lines(&got), lines(&created));

    // Full replacement with the fewest writes: the update (quantity change + removal) and the
    // add go out as one document.
    standin.reset_counts();
    let updated = bridge
        .call(
            "update_cart",
            json!({"meta": meta_with_fresh_key(), "id": id, "cart": {"line_items": [line(&variant(MUG_VARIANT), 1), line(&variant(SOCK_FIRST + 100_000), 3)]}}),
        )
        .await;
    assert_eq!(
        lines(&updated),
        [
            (variant(MUG_VARIANT), 1),
            (variant(SOCK_FIRST + 100_000), 3)
        ]
    );
    assert_eq!(total(&updated, "subtotal"), 1800 + 900);
    assert_eq!(standin.operations(), ["CartGet", "CartReplace"]);

    // The same lines again: nothing to write.
    standin.reset_counts();
    bridge
        .call(
            "update_cart",
            json!({"meta": meta_with_fresh_key(), "id": id, "cart": {"line_items": [line(&variant(MUG_VARIANT), 1), line(&variant(SOCK_FIRST + 100_000), 3)]}}),
        )
        .await;
    // Only the cart is read.
    assert_eq!(standin.operations(), ["CartGet"]);

    // Cancel returns the cart as it was, then the cart is gone. // CART-018 CART-019
    let cancelled = bridge
        .call(
            "cancel_cart",
            json!({"meta": meta_with_fresh_key(), "id": id}),
        )
        .await;
    assert_eq!(lines(&cancelled), lines(&updated));
    assert!(
        standin
            .cart_attributes(&id)
            .iter()
            .any(|(key, _)| key == "_bcp_cancelled")
    );
    assert_eq!(
        standin.cart_line_count(&id),
        0,
        "the Shopify cart was emptied"
    );
    for (tool, arguments) in [
        ("get_cart", json!({"meta": meta_with_fresh_key(), "id": id})),
        (
            "cancel_cart",
            json!({"meta": meta_with_fresh_key(), "id": id}),
        ),
        (
            "update_cart",
            json!({"meta": meta_with_fresh_key(), "id": id, "cart": {"line_items": [line(&variant(MUG_VARIANT), 1)]}}),
        ),
    ] {
        let result = bridge.call(tool, arguments).await;
        assert_eq!(result["ucp"]["status"], "error", "{tool}");
        assert_eq!(result["messages"][0]["code"], "not_found");
        assert_eq!(result["messages"][0]["severity"], "unrecoverable");
    }

    // The mark lives in Shopify: a restarted bridge (or another replica) agrees.
    let other = TestBridge::start(&standin.config("currency = \"USD\"")).await;
    let result = other
        .call("get_cart", json!({"meta": meta_with_fresh_key(), "id": id}))
        .await;
    assert_eq!(result["messages"][0]["code"], "not_found");
}

#[tokio::test]
async fn stock_limits_become_line_messages() {
    let (_standin, bridge) = setup().await;
    let created = bridge
        .call(
            "create_cart",
            json!({"meta": meta_with_fresh_key(), "cart": {"line_items": [line(&variant(CANDLE_VARIANT), 5), line(&variant(GHOST_VARIANT), 1), line(&variant(MUG_VARIANT), 1)]}}),
        )
        .await;
    assert_eq!(
        lines(&created),
        [(variant(CANDLE_VARIANT), 2), (variant(MUG_VARIANT), 1)]
    );
    let messages = created["messages"].as_array().unwrap();
    let find = |code: &str| {
        messages
            .iter()
            .find(|message| message["code"] == code)
            .unwrap_or_else(|| panic!("{code} in {messages:?}"))
    };
    assert_eq!(find("quantity_adjusted")["path"], "$.line_items[0]");
    assert_eq!(find("out_of_stock")["path"], "$.line_items[1]");
}

#[tokio::test]
// CART-016
async fn all_lines_refused_means_no_cart() {
    let (_standin, bridge) = setup().await;
    // Sold out: Shopify leaves the line out, and the empty cart is never handed on.
    let result = bridge
        .call(
            "create_cart",
            json!({"meta": meta_with_fresh_key(), "cart": {"line_items": [line(&variant(LAMP_VARIANT), 1)]}}),
        )
        .await;
    assert_eq!(result["ucp"]["status"], "error");
    assert_eq!(result["messages"][0]["code"], "out_of_stock");
    assert!(result.get("id").is_none());
    // Available in the catalog but refused by the cart: the same.
    let result = bridge
        .call(
            "create_cart",
            json!({"meta": meta_with_fresh_key(), "cart": {"line_items": [line(&variant(GHOST_VARIANT), 1)]}}),
        )
        .await;
    assert_eq!(result["ucp"]["status"], "error");
    assert_eq!(result["messages"][0]["code"], "out_of_stock");
    assert!(result.get("id").is_none());
    assert!(result["continue_url"].is_string());
}

#[tokio::test]
async fn unknown_items_and_carts() {
    let (standin, bridge) = setup().await;
    let created = bridge
        .call(
            "create_cart",
            json!({"meta": meta_with_fresh_key(), "cart": {"line_items": [line(&variant(MUG_VARIANT), 1), {"item": {"id": "gid://shopify/ProductVariant/777"}, "quantity": 1}]}}),
        )
        .await;
    assert_eq!(lines(&created), [(variant(MUG_VARIANT), 1)]);
    assert_eq!(created["messages"][0]["code"], "not_found");
    assert_eq!(created["messages"][0]["path"], "$.line_items[1]");

    standin.reset_counts();
    for id in [
        "gid://shopify/Cart/unknown?key=nope",
        "gid://shopify/Cart/x?key=a&b=c",
        "https://evil.example/",
        "cart_1",
    ] {
        let result = bridge
            .call("get_cart", json!({"meta": meta_with_fresh_key(), "id": id}))
            .await;
        assert_eq!(result["messages"][0]["code"], "not_found", "{id}");
    }
    // Only the well-formed id was sent to Shopify.
    assert_eq!(standin.operations(), ["CartGet"]);
}

#[tokio::test]
async fn products_with_one_variant_can_be_added_by_product_id_and_sku() {
    let (_standin, bridge) = setup().await;
    let created = bridge
        .call(
            "create_cart",
            json!({"meta": meta_with_fresh_key(), "cart": {"line_items": [
                {"item": {"id": format!("gid://shopify/Product/{MUG}")}, "quantity": 1},
                {"item": {"id": "SOCK-7"}, "quantity": 2},
            ]}}),
        )
        .await;
    assert_eq!(
        lines(&created),
        [
            (variant(MUG_VARIANT), 1),
            (variant(SOCK_FIRST + 7 + 100_000), 2)
        ]
    );
}

#[tokio::test]
async fn two_spellings_of_one_variant_stay_within_the_line_cap() {
    let standin = Standin::start();
    let bridge = TestBridge::start(&standin.config("[limits]\nmax_line_quantity = 5\n")).await;
    // The product gid of a one-variant product and that variant's gid: one line for Shopify,
    // which would otherwise add the two up (7).
    let created = bridge
        .call(
            "create_cart",
            json!({"meta": meta_with_fresh_key(), "cart": {"line_items": [
                {"item": {"id": format!("gid://shopify/Product/{MUG}")}, "quantity": 4},
                line(&variant(MUG_VARIANT), 3),
            ]}}),
        )
        .await;
    assert_eq!(lines(&created), [(variant(MUG_VARIANT), 5)], "{created}");
}

#[tokio::test]
async fn a_line_shopify_refuses_does_not_sink_the_cart() {
    let (standin, bridge) = setup().await;
    // The catalog still lists the mug, but Shopify's cart refuses it: cartCreate fails as a
    // whole, so the adapter retries once without the refused line.
    standin.reject_in_carts(MUG_VARIANT);
    let created = bridge
        .call(
            "create_cart",
            json!({"meta": meta_with_fresh_key(), "cart": {"line_items": [line(&variant(CANDLE_VARIANT), 1), line(&variant(MUG_VARIANT), 1)]}}),
        )
        .await;
    assert_eq!(lines(&created), [(variant(CANDLE_VARIANT), 1)]);
    assert_eq!(created["messages"][0]["code"], "not_found");
    assert_eq!(created["messages"][0]["path"], "$.line_items[1]");
    assert_eq!(standin.operations(), ["CartCreate", "CartCreate"]);

    // The same refusal on update: cartLinesAdd names the line.
    let id = created["id"].as_str().unwrap();
    let updated = bridge
        .call(
            "update_cart",
            json!({"meta": meta_with_fresh_key(), "id": id, "cart": {"line_items": [line(&variant(CANDLE_VARIANT), 2), line(&variant(MUG_VARIANT), 1)]}}),
        )
        .await;
    assert_eq!(lines(&updated), [(variant(CANDLE_VARIANT), 2)]);
    assert_eq!(updated["messages"][0]["code"], "not_found");
    assert_eq!(updated["messages"][0]["path"], "$.line_items[1]");
}
