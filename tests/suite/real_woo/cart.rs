//! Cart tools against real Store API carts: every answer is checked against the cart the
//! store itself holds for the token.

use serde_json::{Value, json};

use super::store::{RealStore, bcp_lines, items, real_store, shared, token_of};
use crate::support::{TestBridge, meta, meta_with_key};

pub async fn create(bridge: &TestBridge, lines: &[(String, u64)]) -> Value {
    bridge
        .call(
            "create_cart",
            json!({"meta": meta_with_key(&uuid::Uuid::new_v4().to_string()), "cart": {"line_items": items(lines)}}),
        )
        .await
}

fn message<'a>(cart: &'a Value, path: &str) -> &'a Value {
    cart["messages"]
        .as_array()
        .unwrap_or_else(|| panic!("no messages: {cart}"))
        .iter()
        .find(|m| m["path"] == path)
        .unwrap_or_else(|| panic!("no message at {path}: {cart}"))
}

fn line(store: &RealStore, name: &str, quantity: u64) -> (String, u64) {
    (store.sid(name), quantity)
}

#[tokio::test]
#[ignore = "needs the real WooCommerce: bash .ci/real-woo.sh test"]
async fn create_with_a_sold_out_line_and_an_over_stock_clamp() {
    let store = real_store();
    let _shared = shared().await;
    let bridge = store.bridge("").await;
    // CART-029, CART-031: Branco/40 is sold out, Azul/38 has 2 units, Cinto 3.
    let created = create(
        &bridge,
        &[
            line(store, "garrafa", 1),
            line(store, "var_branco_40", 1),
            line(store, "var_azul_38", 5),
            line(store, "cinto", 4),
        ],
    )
    .await;
    let id = created["id"]
        .as_str()
        .unwrap_or_else(|| panic!("{created}"));
    let mut expected = vec![
        (store.id("garrafa"), 1),
        (store.id("var_azul_38"), 2),
        (store.id("cinto"), 3),
    ];
    expected.sort_unstable();
    assert_eq!(bcp_lines(&created), expected, "{created}");
    assert_eq!(store.store_lines(&token_of(id)).await, expected);
    assert_eq!(created["currency"], "BRL");
    // A variation's line names its options by term name, as the store's cart item does.
    let azul = created["line_items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["item"]["id"] == store.sid("var_azul_38"))
        .unwrap();
    assert_eq!(azul["item"]["title"], "Tênis de Corrida — Azul, 38");
    assert_eq!(message(&created, "$.line_items[1]")["code"], "out_of_stock");
    let clamp = message(&created, "$.line_items[2]");
    assert_eq!(clamp["code"], "quantity_adjusted");
    assert!(clamp["content"].as_str().unwrap().contains('2'), "{clamp}");
    assert_eq!(
        message(&created, "$.line_items[3]")["code"],
        "quantity_adjusted"
    );
    // 79.90 + 2 × 299.90 + 3 × 59.99 = 859.67
    let total = created["totals"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["type"] == "subtotal")
        .unwrap();
    assert_eq!(total["amount"], 85967, "{created}");

    // CART-016: only a sold-out line → error, no cart.
    let none = create(&bridge, &[line(store, "oculos", 1)]).await;
    assert_eq!(none["ucp"]["status"], "error", "{none}");
    assert_eq!(none["messages"][0]["code"], "out_of_stock");
    assert!(none.get("id").is_none());
}

#[tokio::test]
#[ignore = "needs the real WooCommerce: bash .ci/real-woo.sh test"]
async fn update_replaces_every_line_then_cancel_ends_the_cart() {
    let store = real_store();
    let _shared = shared().await;
    let bridge = store.bridge("").await;
    let created = create(
        &bridge,
        &[
            line(store, "garrafa", 1),
            line(store, "caneca", 2),
            line(store, "var_preto_38", 1),
        ],
    )
    .await;
    let id = created["id"].as_str().unwrap().to_owned();
    let token = token_of(&id);

    // CART-017: full replacement: one line kept with a new quantity, one dropped, one new.
    let updated = bridge
        .call(
            "update_cart",
            json!({"meta": meta_with_key("real-u1"), "id": id, "cart": {"line_items": items(&[
                line(store, "caneca", 3),
                line(store, "var_preto_38", 1),
                line(store, "bermuda1", 1),
            ])}}),
        )
        .await;
    assert_eq!(updated["id"], id.as_str());
    let mut expected = vec![
        (store.id("caneca"), 3),
        (store.id("var_preto_38"), 1),
        (store.id("bermuda1"), 1),
    ];
    expected.sort_unstable();
    assert_eq!(bcp_lines(&updated), expected, "{updated}");
    assert_eq!(store.store_lines(&token).await, expected);
    let fetched = bridge
        .call("get_cart", json!({"meta": meta(), "id": id}))
        .await;
    assert_eq!(bcp_lines(&fetched), expected);

    // CART-018, CART-019: cancel answers the cart as it was; then the id is not found.
    let cancelled = bridge
        .call(
            "cancel_cart",
            json!({"meta": meta_with_key("real-c1"), "id": id}),
        )
        .await;
    assert_eq!(bcp_lines(&cancelled), expected);
    assert!(
        store.store_lines(&token).await.is_empty(),
        "store cart emptied"
    );
    for tool in ["get_cart", "cancel_cart"] {
        let gone = bridge
            .call(tool, json!({"meta": meta_with_key("real-c2"), "id": id}))
            .await;
        assert_eq!(gone["ucp"]["status"], "error", "{tool}: {gone}");
        assert_eq!(gone["messages"][0]["code"], "not_found", "{tool}");
    }
    let revive = bridge
        .call(
            "update_cart",
            json!({"meta": meta_with_key("real-u2"), "id": id, "cart": {"line_items": items(&[line(store, "garrafa", 1)])}}),
        )
        .await;
    assert_eq!(revive["messages"][0]["code"], "not_found", "{revive}");
    assert!(store.store_lines(&token).await.is_empty());
}
