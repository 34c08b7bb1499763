//! Cart rules over the sample store: create/get/update/cancel, stock outcomes, expiry.

use crate::support::values::{line, totals};
use crate::support::{TestBridge, meta, meta_with_key};
use serde_json::{Value, json};

async fn create(bridge: &TestBridge, lines: Vec<Value>) -> Value {
    bridge
        .call(
            "create_cart",
            json!({"meta": meta(), "cart": {"line_items": lines, "context": {"address_country": "BR", "address_region": "SP", "postal_code": "01310-100"}}}),
        )
        .await
}

fn assert_cart_shape(cart: &Value) {
    // CART-029, CART-031, CART-033, TOT-005, TOT-006.
    for key in ["ucp", "id", "line_items", "currency", "totals"] {
        assert!(cart.get(key).is_some(), "{key} missing in {cart}");
    }
    assert_eq!(
        cart["ucp"]["capabilities"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        ["br.dev.bcp.shopping.cart"]
    );
    let kinds: Vec<String> = totals(cart).into_iter().map(|(kind, _)| kind).collect();
    assert_eq!(kinds.iter().filter(|kind| *kind == "subtotal").count(), 1);
    assert_eq!(kinds.iter().filter(|kind| *kind == "total").count(), 1);
    for item in cart["line_items"].as_array().unwrap() {
        for key in ["id", "item", "quantity", "totals"] {
            assert!(item.get(key).is_some(), "{key} missing in {item}");
        }
        for key in ["id", "title", "price"] {
            assert!(item["item"].get(key).is_some(), "item.{key} missing");
        }
        assert!(item["quantity"].as_u64().unwrap() >= 1);
    }
}

#[tokio::test]
async fn create_get_update_cancel_round_trip() {
    let bridge = TestBridge::sample().await;
    let cart = create(&bridge, vec![line("item_123", 2)]).await;
    assert_cart_shape(&cart);
    let id = cart["id"].as_str().unwrap().to_owned();
    assert_eq!(cart["currency"], "BRL");
    let item = &cart["line_items"][0]["item"];
    assert_eq!(
        (&item["id"], &item["title"], &item["price"]),
        (&json!("item_123"), &json!("Red T-Shirt"), &json!(2500))
    );
    assert_eq!(
        totals(&cart),
        [("subtotal".to_owned(), 5000), ("total".to_owned(), 5000)]
    );
    assert!(cart["continue_url"].as_str().unwrap().contains(&id));
    assert!(cart["expires_at"].as_str().unwrap().ends_with('Z'));

    let fetched = bridge
        .call("get_cart", json!({"meta": meta(), "id": id}))
        .await;
    assert_eq!(fetched["line_items"], cart["line_items"]);

    // CART-017: full replacement — item_123 changes quantity (same line id), item_456 is new.
    let updated = bridge
        .call(
            "update_cart",
            json!({"meta": meta(), "id": id, "cart": {"line_items": [line("item_123", 3), line("item_456", 1)]}}),
        )
        .await;
    assert_cart_shape(&updated);
    assert_eq!(updated["line_items"][0]["id"], cart["line_items"][0]["id"]);
    assert_eq!(updated["line_items"][0]["quantity"], 3);
    assert_eq!(updated["line_items"][1]["item"]["price"], 7500);
    assert_eq!(
        totals(&updated),
        [("subtotal".to_owned(), 15000), ("total".to_owned(), 15000)]
    );

    // Lines left out are removed.
    let replaced = bridge
        .call(
            "update_cart",
            json!({"meta": meta(), "id": id, "cart": {"line_items": [line("item_456", 2)]}}),
        )
        .await;
    assert_eq!(replaced["line_items"].as_array().unwrap().len(), 1);
    assert_eq!(replaced["line_items"][0]["item"]["id"], "item_456");

    // CART-018: cancel returns the state before cancelling.
    let cancelled = bridge
        .call(
            "cancel_cart",
            json!({"meta": meta_with_key("660e8400-e29b-41d4-a716-446655440001"), "id": id}),
        )
        .await;
    assert_eq!(cancelled["line_items"], replaced["line_items"]);
    assert_eq!(cancelled["id"], json!(id));

    // CART-019: afterwards every operation answers not_found.
    for (tool, args) in [
        ("get_cart", json!({"meta": meta(), "id": id})),
        (
            "update_cart",
            json!({"meta": meta(), "id": id, "cart": {"line_items": [line("item_123", 1)]}}),
        ),
        (
            "cancel_cart",
            json!({"meta": meta_with_key("k2"), "id": id}),
        ),
    ] {
        let answer = bridge.call(tool, args).await;
        assert_eq!(answer["ucp"]["status"], "error", "{tool}");
        assert_eq!(answer["messages"][0]["code"], "not_found");
        assert_eq!(answer["messages"][0]["severity"], "unrecoverable");
        assert!(answer.get("id").is_none());
    }
}

#[tokio::test]
async fn all_items_out_of_stock_creates_no_cart() {
    let bridge = TestBridge::sample().await;
    // CART-016: an error response, out_of_stock, continue_url, no cart.
    let answer = create(
        &bridge,
        vec![
            line("prod_electric_kettle_default", 1),
            line("prod_carnival_hoodie_vam_p", 1),
        ],
    )
    .await;
    assert_eq!(answer["ucp"]["status"], "error");
    assert!(answer.get("id").is_none());
    assert_eq!(answer["messages"][0]["code"], "out_of_stock");
    assert_eq!(answer["messages"][0]["severity"], "unrecoverable");
    assert_eq!(answer["messages"][1]["path"], "$.line_items[0]");
    assert_eq!(answer["messages"][2]["path"], "$.line_items[1]");
    assert!(
        answer["continue_url"]
            .as_str()
            .unwrap()
            .starts_with("https://")
    );
}

#[tokio::test]
async fn some_items_unavailable_keeps_the_rest_with_messages() {
    let bridge = TestBridge::sample().await;
    let cart = create(
        &bridge,
        vec![
            line("item_123", 1),
            line("prod_electric_kettle_default", 1),
            line("no_such_item", 1),
            line("prod_abc123", 1),
        ],
    )
    .await;
    assert_cart_shape(&cart);
    assert!(cart["ucp"].get("status").is_none());
    assert_eq!(cart["line_items"].as_array().unwrap().len(), 1);
    let messages = cart["messages"].as_array().unwrap();
    let by_path = |path: &str| {
        messages
            .iter()
            .find(|message| message["path"] == path)
            .unwrap_or_else(|| panic!("no message for {path}: {messages:?}"))
    };
    assert_eq!(by_path("$.line_items[1]")["code"], "out_of_stock");
    assert_eq!(by_path("$.line_items[2]")["code"], "not_found");
    // A product id with several variants is ambiguous.
    assert_eq!(by_path("$.line_items[3]")["code"], "item_unavailable");
}

#[tokio::test]
async fn quantity_beyond_stock_is_cut_down_with_a_warning() {
    let bridge = TestBridge::sample().await;
    let cart = create(&bridge, vec![line("prod_moka_pot_default", 5)]).await;
    assert_eq!(cart["line_items"][0]["quantity"], 2);
    assert_eq!(cart["messages"][0]["type"], "warning");
    assert_eq!(cart["messages"][0]["code"], "quantity_adjusted");
    assert_eq!(cart["messages"][0]["path"], "$.line_items[0]");
}

#[tokio::test]
async fn repeated_items_merge_into_one_line_and_skus_work() {
    let bridge = TestBridge::sample().await;
    let cart = create(
        &bridge,
        vec![
            line("prod_abc123_blu_10", 1),
            line("BRP-BLU-10", 2),
            line("prod_abc123_blu_10", 1),
        ],
    )
    .await;
    assert_eq!(cart["line_items"].as_array().unwrap().len(), 1);
    assert_eq!(cart["line_items"][0]["quantity"], 4);
    assert_eq!(cart["line_items"][0]["item"]["id"], "prod_abc123_blu_10");
    assert_eq!(totals(&cart)[0], ("subtotal".to_owned(), 48000));
}

#[tokio::test]
async fn unknown_cart_is_not_found() {
    let bridge = TestBridge::sample().await;
    for id in ["cart_doesnotexist", "../../admin", "cart?x=1"] {
        let answer = bridge
            .call("get_cart", json!({"meta": meta(), "id": id}))
            .await;
        assert_eq!(answer["messages"][0]["code"], "not_found", "{id}");
        assert_eq!(
            answer["messages"][0]["content"],
            "Cart not found or has expired"
        );
    }
}

#[tokio::test]
async fn expired_carts_are_not_found() {
    let bridge = TestBridge::start("[store]\nplatform = \"sample\"\ncart_ttl_secs = 1\n").await;
    let cart = create(&bridge, vec![line("item_123", 1)]).await;
    let id = cart["id"].as_str().unwrap().to_owned();
    tokio::time::sleep(std::time::Duration::from_millis(1200)).await;
    let answer = bridge
        .call("get_cart", json!({"meta": meta(), "id": id}))
        .await;
    assert_eq!(answer["messages"][0]["code"], "not_found");
}

#[tokio::test]
async fn continue_url_follows_the_rewrite_rules() {
    let bridge = TestBridge::start(
        "[cart]\ncheckout_base_url = \"https://checkout.loja.example\"\n[cart.checkout_params]\nutm_source = \"bcp\"\n",
    )
    .await;
    let cart = create(&bridge, vec![line("item_123", 1)]).await;
    let url = cart["continue_url"].as_str().unwrap();
    let id = cart["id"].as_str().unwrap();
    assert_eq!(
        url,
        format!("https://checkout.loja.example/checkout?cart={id}&utm_source=bcp")
    );
}
