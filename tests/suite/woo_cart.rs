//! Cart tools end to end against the Store API stand-in: the upstream cart is the cart.

use crate::support::values::{lines, total};
use crate::support::woo_standin::{self, WooStandin};
use crate::support::{TestBridge, meta, meta_with_fresh_key, meta_with_key};
use serde_json::{Value, json};

async fn setup(extra: &str) -> (WooStandin, TestBridge) {
    let woo = WooStandin::start().await;
    let bridge = TestBridge::start(&woo.config(extra)).await;
    (woo, bridge)
}

/// Requests that touch carts (catalog reads left out).
fn cart_calls(woo: &WooStandin) -> Vec<String> {
    woo.requests()
        .into_iter()
        .filter(|line| line.contains("/cart") || line.contains("/batch"))
        .collect()
}

/// The Cart-Token a BCP cart id wraps.
fn woo_standin_token(id: &str) -> String {
    let encoded = id.strip_prefix("wcc1_").unwrap();
    String::from_utf8(
        base64::Engine::decode(&base64::engine::general_purpose::URL_SAFE_NO_PAD, encoded).unwrap(),
    )
    .unwrap()
}

async fn create(bridge: &TestBridge, items: Value) -> Value {
    bridge
        .call(
            "create_cart",
            json!({"meta": meta_with_fresh_key(), "cart": {"line_items": items}}),
        )
        .await
}

#[tokio::test]
async fn create_get_update_cancel_round_trip() {
    let (woo, bridge) = setup("").await;
    let created = create(
        &bridge,
        json!([{"item": {"id": "MUG-1"}, "quantity": 2}, {"item": {"id": "16"}, "quantity": 1}]),
    )
    .await;
    // CART-029, CART-031
    assert_eq!(
        lines(&created),
        [("10".to_owned(), 2), ("16".to_owned(), 1)]
    );
    assert_eq!(created["currency"], "USD");
    assert_eq!(total(&created, "subtotal"), 4198);
    assert_eq!(total(&created, "total"), 4198);
    assert_eq!(
        created["line_items"][1]["item"]["title"],
        "Logo Tee — L, Red"
    );
    let id = created["id"].as_str().unwrap().to_owned();
    assert!(id.starts_with("wcc1_"));
    // CART-014: expiry from the Cart-Token's `exp` (48 h on WooCommerce).
    let expires = time::OffsetDateTime::parse(
        created["expires_at"].as_str().unwrap(),
        &time::format_description::well_known::Rfc3339,
    )
    .unwrap();
    let hours = (expires - time::OffsetDateTime::now_utc()).whole_hours();
    assert!((46..=48).contains(&hours), "{hours}");
    // CART-010: the checkout URL carries the session token (WooCommerce 10+ adopts it).
    let continue_url = url::Url::parse(created["continue_url"].as_str().unwrap()).unwrap();
    assert_eq!(continue_url.path(), "/checkout/");
    assert!(continue_url.query_pairs().any(|(k, _)| k == "session"));

    // Cold (no guest Nonce seen yet): one cart read for the session, then ONE batch with
    // the token on the outer request and on every sub-request (ROUND-TRIPS.md c).
    assert_eq!(
        cart_calls(&woo),
        [
            "GET /wp-json/wc/store/v1/cart",
            "POST /wp-json/wc/store/v1/batch"
        ]
    );
    let headers = woo.write_headers();
    assert_eq!(headers.len(), 1);
    assert!(headers[0].get("cart-token").is_some());
    assert_eq!(
        woo.batches(),
        [vec!["POST /wc/store/v1/cart/add-item".to_owned(); 2]]
    );

    // get_cart: one read.
    woo.clear_requests();
    let fetched = bridge
        .call("get_cart", json!({"meta": meta(), "id": id}))
        .await;
    assert_eq!(fetched["id"], id.as_str());
    assert_eq!(lines(&fetched), lines(&created));
    assert_eq!(cart_calls(&woo), ["GET /wp-json/wc/store/v1/cart"]);

    // Warm: the guest Nonce from an earlier answer creates the next cart in ONE batch, with
    // no token anywhere and the Nonce in every sub-request.
    woo.clear_requests();
    let second = create(&bridge, json!([{"item": {"id": "30"}, "quantity": 1}])).await;
    assert_eq!(lines(&second), [("30".to_owned(), 1)]);
    assert_eq!(cart_calls(&woo), ["POST /wp-json/wc/store/v1/batch"]);
    let outer = woo.write_headers().pop().unwrap();
    assert!(outer.get("cart-token").is_none());
    assert_ne!(second["id"], created["id"]);

    // CART-017: full replacement in ONE batch: read, empty, add the new lines.
    woo.clear_requests();
    let before = woo.batches().len();
    let updated = bridge
        .call(
            "update_cart",
            json!({"meta": meta_with_key("u1"), "id": id, "cart": {"line_items": [
                {"item": {"id": "10"}, "quantity": 3},
                {"item": {"id": "CUP-TEA"}, "quantity": 1}
            ]}}),
        )
        .await;
    assert_eq!(updated["id"], id.as_str());
    assert_eq!(
        lines(&updated),
        [("10".to_owned(), 3), ("31".to_owned(), 1)]
    );
    assert_eq!(total(&updated, "total"), 3 * 999 + 700);
    assert_eq!(cart_calls(&woo), ["POST /wp-json/wc/store/v1/batch"]);
    assert_eq!(
        woo.batches()[before],
        [
            "POST /wc/store/v1/cart/remove-item",
            "DELETE /wc/store/v1/cart/items",
            "POST /wc/store/v1/cart/add-item",
            "POST /wc/store/v1/cart/add-item"
        ]
    );
    let token = woo_standin_token(&id);
    assert_eq!(woo.cart_of(&token), [(10, 3), (31, 1)]);

    // The second cart was not touched by any of this.
    let second_token = woo_standin_token(second["id"].as_str().unwrap());
    assert_eq!(woo.cart_of(&second_token), [(30, 1)]);

    // CART-018, CART-019: cancel returns the cart as it was, then the id is gone.
    woo.clear_requests();
    let cancelled = bridge
        .call(
            "cancel_cart",
            json!({"meta": meta_with_key("c1"), "id": id}),
        )
        .await;
    assert_eq!(lines(&cancelled), lines(&updated));
    // One batch: the read answers the cart as it was, the DELETE empties it.
    assert_eq!(cart_calls(&woo), ["POST /wp-json/wc/store/v1/batch"]);
    assert!(woo.cart_of(&token).is_empty(), "upstream cart emptied");
    for tool in ["get_cart", "cancel_cart"] {
        let gone = bridge
            .call(tool, json!({"meta": meta_with_key("c2"), "id": id}))
            .await;
        assert_eq!(gone["ucp"]["status"], "error", "{tool}");
        assert_eq!(gone["messages"][0]["code"], "not_found");
        assert_eq!(gone["messages"][0]["severity"], "unrecoverable");
    }
    let revive = bridge
        .call(
            "update_cart",
            json!({"meta": meta_with_key("u2"), "id": id, "cart": {"line_items": [{"item": {"id": "10"}, "quantity": 1}]}}),
        )
        .await;
    assert_eq!(revive["messages"][0]["code"], "not_found");
    // The line that batch added to the emptied cart was taken out again.
    assert!(woo.cart_of(&token).is_empty());

    // A bridge restart (or another replica) sees the same: no state lives in the bridge.
    let other = TestBridge::start(&woo.config("")).await;
    let still_gone = other
        .call("get_cart", json!({"meta": meta(), "id": id}))
        .await;
    assert_eq!(still_gone["messages"][0]["code"], "not_found");
}

#[tokio::test]
async fn carts_survive_a_bridge_restart() {
    let (woo, bridge) = setup("").await;
    let created = create(&bridge, json!([{"item": {"id": "30"}, "quantity": 1}])).await;
    drop(bridge);
    let other = TestBridge::start(&woo.config("")).await;
    let fetched = other
        .call("get_cart", json!({"meta": meta(), "id": created["id"]}))
        .await;
    assert_eq!(lines(&fetched), [("30".to_owned(), 1)]);
}

#[tokio::test]
async fn store_refusals_become_line_messages() {
    let (woo, bridge) = setup("checkout = \"link\"").await;
    // The catalog said in stock, the store says otherwise by the time the line is added.
    woo.set_stock_behind_catalog(14, 0);
    let created = create(
        &bridge,
        json!([
            {"item": {"id": "10"}, "quantity": 9},
            {"item": {"id": "14"}, "quantity": 1},
            {"item": {"id": "15"}, "quantity": 1}
        ]),
    )
    .await;
    // Mug: 7 in stock → kept with 7 and a warning; 14 refused upstream; 15 refused early.
    assert_eq!(lines(&created), [("10".to_owned(), 7)]);
    let messages = created["messages"].as_array().unwrap();
    let by_path = |path: &str| {
        messages
            .iter()
            .find(|m| m["path"] == path)
            .unwrap_or_else(|| panic!("no message at {path}: {messages:?}"))
    };
    assert_eq!(by_path("$.line_items[0]")["code"], "quantity_adjusted");
    assert!(
        by_path("$.line_items[0]")["content"]
            .as_str()
            .unwrap()
            .contains('7')
    );
    assert_eq!(by_path("$.line_items[1]")["code"], "out_of_stock");
    assert!(
        by_path("$.line_items[1]")["content"]
            .as_str()
            .unwrap()
            .contains("\"Logo Tee - M, Red\""),
        "entities decoded: {messages:?}"
    );
    assert_eq!(by_path("$.line_items[2]")["code"], "out_of_stock");
    // Checkout link mode lists the cart's lines.
    let continue_url = url::Url::parse(created["continue_url"].as_str().unwrap()).unwrap();
    assert_eq!(continue_url.path(), "/checkout-link/");
    assert_eq!(
        continue_url
            .query_pairs()
            .find(|(k, _)| k == "products")
            .unwrap()
            .1,
        "10:7"
    );

    // CART-016: everything refused by the store → error, no cart handed out.
    woo.set_stock_behind_catalog(12, 0);
    let none = create(&bridge, json!([{"item": {"id": "12"}, "quantity": 1}])).await;
    assert_eq!(none["ucp"]["status"], "error");
    assert_eq!(none["messages"][0]["code"], "out_of_stock");
    assert!(none.get("id").is_none());
}

#[tokio::test]
async fn unknown_and_foreign_cart_ids_are_not_found() {
    let (woo, bridge) = setup("").await;
    let forged = format!(
        "wcc1_{}",
        base64::Engine::encode(
            &base64::engine::general_purpose::URL_SAFE_NO_PAD,
            woo_standin::token_for("t_someone", 4_000_000_000).replace("abc", "abd") + "x"
        )
    );
    for id in ["cart_123", "wcc1_", "wcc1_%2F..", forged.as_str()] {
        let result = bridge
            .call("get_cart", json!({"meta": meta(), "id": id}))
            .await;
        assert_eq!(result["messages"][0]["code"], "not_found", "{id}");
    }
    // An expired token never reaches the store.
    woo.clear_requests();
    let expired = format!(
        "wcc1_{}",
        base64::Engine::encode(
            &base64::engine::general_purpose::URL_SAFE_NO_PAD,
            woo_standin::token_for("t_old", 1_000_000)
        )
    );
    let result = bridge
        .call("get_cart", json!({"meta": meta(), "id": expired}))
        .await;
    assert_eq!(result["messages"][0]["code"], "not_found");
    assert!(woo.requests().is_empty());
}

#[tokio::test]
async fn two_spellings_of_one_product_stay_within_the_line_cap() {
    let (_woo, bridge) = setup("[limits]\nmax_line_quantity = 5\n").await;
    // "MUG-1" is product 10's SKU: the store would add both up into one cart item (7).
    let created = create(
        &bridge,
        json!([{"item": {"id": "MUG-1"}, "quantity": 4}, {"item": {"id": "10"}, "quantity": 3}]),
    )
    .await;
    assert_eq!(lines(&created), [("10".to_owned(), 5)], "{created}");
    assert!(created.get("messages").is_none(), "{created}");
}
