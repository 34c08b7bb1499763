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

fn cart_writes(woo: &WooStandin) -> Vec<String> {
    woo.requests()
        .into_iter()
        .filter(|line| line.contains("/cart") && !line.starts_with("GET"))
        .collect()
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

    // Every write carried the latest Cart-Token and a Nonce (WooCommerce 7.9 demands it).
    let headers = woo.write_headers();
    assert_eq!(headers.len(), 2);
    for h in &headers {
        assert!(h.get("nonce").is_some() && h.get("cart-token").is_some());
    }

    let fetched = bridge
        .call("get_cart", json!({"meta": meta(), "id": id}))
        .await;
    assert_eq!(fetched["id"], id.as_str());
    assert_eq!(lines(&fetched), lines(&created));

    // CART-017: full replacement with the fewest writes: one update, one remove, one add.
    woo.clear_requests();
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
    let writes = cart_writes(&woo);
    assert_eq!(writes.len(), 3, "{writes:?}");
    assert!(writes[0].ends_with("/cart/remove-item"));
    assert!(writes[1].ends_with("/cart/update-item"));
    assert!(writes[2].ends_with("/cart/add-item"));

    // CART-018, CART-019: cancel returns the cart as it was, then the id is gone.
    let cancelled = bridge
        .call(
            "cancel_cart",
            json!({"meta": meta_with_key("c1"), "id": id}),
        )
        .await;
    assert_eq!(lines(&cancelled), lines(&updated));
    assert!(
        woo.session_items().iter().all(|n| *n == 0),
        "upstream cart emptied"
    );
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
