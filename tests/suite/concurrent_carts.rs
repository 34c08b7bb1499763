//! Several agents writing one cart at once: writes are serialised per cart, so every answer is
//! the store's cart right after that call's own write, and the cart ends as exactly one of
//! the requested line sets — on every platform.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::support::values::line;
use crate::support::{TestBridge, meta, meta_with_key, shopify_standin, values, woo_standin};
use serde_json::{Value, json};

const WRITERS: usize = 8;

/// (item id, quantity) of every line, in a stable order.
fn lines(cart: &Value) -> BTreeMap<String, u64> {
    values::lines(cart).into_iter().collect()
}

/// Writer `n` asks for two items of `pool`, with a quantity that tells the writers apart.
fn line_set(pool: &[String], n: usize) -> BTreeMap<String, u64> {
    BTreeMap::from([
        (pool[n % pool.len()].clone(), 1 + (n % 3) as u64),
        (pool[(n + 1) % pool.len()].clone(), 1),
    ])
}

fn request_lines(set: &BTreeMap<String, u64>) -> Value {
    Value::Array(
        set.iter()
            .map(|(id, quantity)| line(id, *quantity as u32))
            .collect(),
    )
}

async fn eight_writers_leave_one_requested_set(bridge: TestBridge, pool: Vec<String>) {
    let first = line_set(&pool, WRITERS);
    let created = bridge
        .call(
            "create_cart",
            json!({"meta": meta_with_key("create"), "cart": {"line_items": request_lines(&first)}}),
        )
        .await;
    let id = created["id"]
        .as_str()
        .unwrap_or_else(|| panic!("no cart: {created}"))
        .to_owned();
    let bridge = Arc::new(bridge);
    let mut writers = Vec::new();
    for n in 0..WRITERS {
        let (bridge, id, wanted) = (bridge.clone(), id.clone(), line_set(&pool, n));
        writers.push(tokio::spawn(async move {
            let answer = bridge
                .call(
                    "update_cart",
                    json!({
                        "meta": meta_with_key(&format!("writer-{n}")),
                        "id": id,
                        "cart": {"line_items": request_lines(&wanted)},
                    }),
                )
                .await;
            (wanted, answer)
        }));
    }
    let mut requested = Vec::new();
    for writer in writers {
        let (wanted, answer) = writer.await.unwrap();
        // Each answer is the store right after this call's own write: exactly its lines.
        assert_eq!(
            lines(&answer),
            wanted,
            "an answer mixed in other writers' lines"
        );
        assert!(
            answer["messages"]
                .as_array()
                .is_none_or(|messages| messages.is_empty()),
            "{answer}"
        );
        requested.push(wanted);
    }
    let stored = bridge
        .call("get_cart", json!({"meta": meta(), "id": id}))
        .await;
    let stored = lines(&stored);
    assert!(
        requested.contains(&stored),
        "the cart holds {stored:?}, which no writer asked for"
    );
}

#[tokio::test]
async fn sample_store_cart_ends_as_one_requested_set() {
    let pool = [
        "prod_abc123_blu_9",
        "prod_abc123_red_9",
        "var_xyz789",
        "prod_def456_11_blk",
        "prod_cloud_stride_blu_39",
        "prod_cloud_stride_blu_40",
        "prod_cloud_stride_wht_39",
        "prod_cloud_stride_wht_41",
    ];
    eight_writers_leave_one_requested_set(
        TestBridge::sample().await,
        pool.iter().map(|id| (*id).to_owned()).collect(),
    )
    .await;
}

#[tokio::test]
async fn woocommerce_cart_ends_as_one_requested_set() {
    let woo = woo_standin::WooStandin::start().await;
    let bridge = TestBridge::start(&woo.config("")).await;
    let pool = [30, 31, 32, 12, 13, 14, 16, 17];
    eight_writers_leave_one_requested_set(bridge, pool.iter().map(u64::to_string).collect()).await;
}

#[tokio::test]
async fn shopify_cart_ends_as_one_requested_set() {
    use shopify_standin::{CAT_FIRST_VARIANT, MUG_VARIANT, Standin, tee_variant};
    let shop = Standin::start();
    let bridge = TestBridge::start(&shop.config("")).await;
    let pool = [
        MUG_VARIANT,
        tee_variant(2, 1),
        CAT_FIRST_VARIANT,
        tee_variant(0, 0),
        tee_variant(0, 1),
        tee_variant(1, 0),
        tee_variant(1, 1),
        tee_variant(2, 0),
    ];
    eight_writers_leave_one_requested_set(
        bridge,
        pool.iter()
            .map(|id| format!("gid://shopify/ProductVariant/{id}"))
            .collect(),
    )
    .await;
}
