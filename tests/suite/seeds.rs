//! Every example request of the BCP seeds (catalog and cart MCP bindings), sent to the sample
//! store, answers with the shape the seed shows: every key the seed's response has is there,
//! with the same JSON type, recursively. Copies of the seed examples live in
//! tests/fixtures/seeds/.

use crate::support::TestBridge;
use reqwest::StatusCode;
use serde_json::{Value, json};

fn seed(name: &str) -> Value {
    let path = format!(
        "{}/tests/fixtures/seeds/{name}.json",
        env!("CARGO_MANIFEST_DIR")
    );
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

/// Keys the seeds show that this bridge deliberately does not send, and why.
const NOT_SENT: &[(&str, &str)] = &[
    // The sample store has product tags only; variant tags are optional in UCP.
    (
        "$.products[].variants[].tags",
        "no variant tags in the sample data",
    ),
    // OVR-005: only capabilities relevant to the operation (and served) are listed; the
    // bridge hands checkout to the store, it does not serve the checkout capability.
    (
        "$.ucp.capabilities.br.dev.bcp.shopping.checkout",
        "checkout is not served",
    ),
    // CAT-002: the cursor is there exactly when has_next_page is true; the seed query matches
    // a single sample product (catalog.rs walks pages with cursors).
    ("$.pagination.cursor", "only when there is a next page"),
];

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn assert_shape(seed: &Value, ours: &Value, path: &str, problems: &mut Vec<String>) {
    if NOT_SENT.iter().any(|(skipped, _)| *skipped == path) {
        return;
    }
    if kind(seed) != kind(ours) {
        problems.push(format!(
            "{path}: seed has {}, bridge has {}",
            kind(seed),
            kind(ours)
        ));
        return;
    }
    match (seed, ours) {
        (Value::Object(seed), Value::Object(ours)) => {
            for (key, seed_value) in seed {
                let child = format!("{path}.{key}");
                match ours.get(key) {
                    Some(our_value) => assert_shape(seed_value, our_value, &child, problems),
                    None if NOT_SENT.iter().any(|(skipped, _)| *skipped == child) => {}
                    None => problems.push(format!("{child}: missing")),
                }
            }
        }
        (Value::Array(seed), Value::Array(ours)) if !seed.is_empty() => {
            if ours.is_empty() {
                problems.push(format!("{path}: empty, the seed has items"));
            }
            // Item by item as far as both go: optional fields vary between items.
            for (seed_item, our_item) in seed.iter().zip(ours) {
                assert_shape(seed_item, our_item, &format!("{path}[]"), problems);
            }
        }
        _ => {}
    }
}

fn check(seed_response: &Value, ours: &Value) {
    let mut problems = Vec::new();
    assert_shape(
        &seed_response["result"]["structuredContent"],
        ours,
        "$",
        &mut problems,
    );
    assert!(
        problems.is_empty(),
        "shape differs from the seed:\n{}\nours: {ours:#}",
        problems.join("\n")
    );
}

async fn send(bridge: &TestBridge, request: &Value) -> Value {
    let (status, reply) = bridge.rpc(request.clone()).await;
    assert_eq!(status, StatusCode::OK, "{reply}");
    assert_eq!(reply["id"], request["id"]);
    assert_eq!(reply["jsonrpc"], "2.0");
    let result = &reply["result"];
    let text: Value = serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(text, result["structuredContent"]);
    result["structuredContent"].clone()
}

#[tokio::test]
async fn search_example() {
    let bridge = TestBridge::sample().await;
    let ours = send(&bridge, &seed("search.request")).await;
    check(&seed("search.response"), &ours);
}

#[tokio::test]
async fn lookup_examples() {
    let bridge = TestBridge::sample().await;
    let ours = send(&bridge, &seed("lookup.request")).await;
    check(&seed("lookup.response"), &ours);

    let mut partial = seed("lookup.request");
    partial["params"]["arguments"]["catalog"]["ids"] =
        json!(["prod_abc123", "prod_notfound1", "prod_notfound2"]);
    let ours = send(&bridge, &partial).await;
    check(&seed("lookup-partial.response"), &ours);
    assert_eq!(
        ours["messages"],
        seed("lookup-partial.response")["result"]["structuredContent"]["messages"]
    );

    let mut none = seed("lookup.request");
    none["params"]["arguments"]["catalog"]["ids"] = json!(["prod_invalid"]);
    let ours = send(&bridge, &none).await;
    check(&seed("lookup-none_found.response"), &ours);
    assert_eq!(ours["products"], json!([]));
}

#[tokio::test]
async fn get_product_examples() {
    let bridge = TestBridge::sample().await;
    let ours = send(&bridge, &seed("get_product.request")).await;
    check(&seed("get_product.response"), &ours);
    assert_eq!(
        ours["product"]["selected"],
        json!([{"name": "Color", "label": "Blue"}])
    );

    let mut missing = seed("get_product.request");
    missing["params"]["arguments"]["catalog"] = json!({"id": "prod_invalid"});
    let ours = send(&bridge, &missing).await;
    check(&seed("get_product-not_found.response"), &ours);
    assert_eq!(
        ours["messages"],
        seed("get_product-not_found.response")["result"]["structuredContent"]["messages"]
    );
}

#[tokio::test]
async fn cart_examples() {
    let bridge = TestBridge::sample().await;
    let created = send(&bridge, &seed("create_cart.request")).await;
    check(&seed("create_cart.response"), &created);
    // Same numbers as the seed: item_123 is the R$ 25,00 Red T-Shirt, two of them.
    assert_eq!(
        created["totals"],
        seed("create_cart.response")["result"]["structuredContent"]["totals"]
    );
    let id = created["id"].clone();

    let mut get = seed("get_cart.request");
    get["params"]["arguments"]["id"] = id.clone();
    let ours = send(&bridge, &get).await;
    check(&seed("get_cart.response"), &ours);

    let mut update = seed("update_cart.request");
    update["params"]["arguments"]["id"] = id.clone();
    let ours = send(&bridge, &update).await;
    check(&seed("update_cart.response"), &ours);
    assert_eq!(
        ours["totals"],
        seed("update_cart.response")["result"]["structuredContent"]["totals"]
    );

    let mut cancel = seed("cancel_cart.request");
    cancel["params"]["arguments"]["id"] = id.clone();
    let ours = send(&bridge, &cancel).await;
    check(&seed("cancel_cart.response"), &ours);

    let ours = send(&bridge, &get).await;
    check(&seed("get_cart-not_found.response"), &ours);
    check(&seed("cart-not_found.response"), &ours);

    let mut sold_out = seed("create_cart.request");
    sold_out["params"]["arguments"]["cart"]["line_items"] =
        json!([{"item": {"id": "prod_electric_kettle_default"}, "quantity": 1}]);
    let ours = send(&bridge, &sold_out).await;
    check(&seed("create_cart-out_of_stock.response"), &ours);
    assert_eq!(
        ours["messages"][0],
        seed("create_cart-out_of_stock.response")["result"]["structuredContent"]["messages"][0]
    );
}
