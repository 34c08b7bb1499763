//! Builders for request pieces and readers for tool answers, shared by every module so each
//! reads a cart or a product list the same way.

use serde_json::{Value, json};

/// The tools every store serves, in the order `tools/list` lists them, written out from the
/// specs rather than read from the bridge's declarations.
pub const CATALOG_AND_CART_TOOLS: [&str; 7] = [
    "search_catalog",
    "lookup_catalog",
    "get_product",
    "create_cart",
    "get_cart",
    "update_cart",
    "cancel_cart",
];

/// The tools a store with checkout serves besides those, in `tools/list` order.
pub const CHECKOUT_TOOLS: [&str; 6] = [
    "create_checkout",
    "get_checkout",
    "update_checkout",
    "complete_checkout",
    "cancel_checkout",
    "get_order",
];

/// Every tool of a store with checkout (the sample store's), in `tools/list` order.
pub fn checkout_store_tools() -> Vec<&'static str> {
    [CATALOG_AND_CART_TOOLS.as_slice(), CHECKOUT_TOOLS.as_slice()].concat()
}

/// One cart line item as agents send it.
pub fn line(id: &str, quantity: u32) -> Value {
    json!({"item": {"id": id}, "quantity": quantity})
}

/// The `id` of every product in a `products` array, in order.
pub fn ids(products: &Value) -> Vec<String> {
    products
        .as_array()
        .unwrap()
        .iter()
        .map(|product| product["id"].as_str().unwrap().to_owned())
        .collect()
}

/// A cart's lines as (item id, quantity), in order.
pub fn lines(cart: &Value) -> Vec<(String, u64)> {
    cart["line_items"]
        .as_array()
        .unwrap_or_else(|| panic!("no line_items in {cart}"))
        .iter()
        .map(|line| {
            (
                line["item"]["id"].as_str().unwrap().to_owned(),
                line["quantity"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// A cart's totals as (type, amount in minor units), in order.
pub fn totals(cart: &Value) -> Vec<(String, i64)> {
    cart["totals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|total| {
            (
                total["type"].as_str().unwrap().to_owned(),
                total["amount"].as_i64().unwrap(),
            )
        })
        .collect()
}

/// The amount of the cart total of type `kind`; panics when the cart has none.
pub fn total(cart: &Value, kind: &str) -> i64 {
    cart["totals"]
        .as_array()
        .unwrap()
        .iter()
        .find(|total| total["type"] == kind)
        .unwrap()["amount"]
        .as_i64()
        .unwrap()
}

/// The amount of the total of type `kind`, if the answer has one.
pub fn amount(checkout: &Value, kind: &str) -> Option<i64> {
    totals(checkout)
        .into_iter()
        .find(|(found, _)| found == kind)
        .map(|(_, amount)| amount)
}

/// `(code, path)` of every message (empty where a message has none).
pub fn messages(answer: &Value) -> Vec<(String, String)> {
    answer["messages"]
        .as_array()
        .map(|messages| {
            messages
                .iter()
                .map(|message| {
                    (
                        message["code"].as_str().unwrap_or_default().to_owned(),
                        message["path"].as_str().unwrap_or_default().to_owned(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The message codes of an answer.
pub fn codes(answer: &Value) -> Vec<String> {
    messages(answer)
        .into_iter()
        .map(|(code, _)| code)
        .filter(|code| !code.is_empty())
        .collect()
}

/// The message paths of an answer.
pub fn paths(answer: &Value) -> Vec<String> {
    messages(answer)
        .into_iter()
        .map(|(_, path)| path)
        .filter(|path| !path.is_empty())
        .collect()
}

/// A fresh idempotency key.
pub fn key() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// A buyer's address in São Paulo, which every Brazilian test store ships to.
pub fn sao_paulo() -> Value {
    json!({
        "first_name": "Ana", "last_name": "Souza",
        "street_address": "Rua Augusta 100", "address_locality": "São Paulo",
        "address_region": "SP", "postal_code": "01305-000", "address_country": "BR"
    })
}
