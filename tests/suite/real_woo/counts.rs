//! Upstream requests per tool call, cold: each call on a fresh bridge with the cache off,
//! counted from the store's access log (the lines the call added). The numbers are what the
//! adapter makes today; issue 10 lowers them toward the floor, and then these change with it.

use serde_json::{Value, json};

use super::store::{RealStore, alone, items, real_store};
use crate::support::{meta, meta_with_key};

const COLD: &str = "[cache]\nenabled = false\n";

struct Count {
    call: &'static str,
    requests: Vec<String>,
    answer: Value,
}

async fn counted(store: &RealStore, call: &'static str, tool: &str, arguments: Value) -> Count {
    let bridge = store.bridge(COLD).await;
    let mark = store.mark();
    let answer = bridge.call(tool, arguments).await;
    let requests = store.requests_since(mark).await;
    Count {
        call,
        requests,
        answer,
    }
}

/// Fifty ids: 12 product ids, 8 variation ids, 10 SKUs, 10 slugs and 10 unknown ids.
fn fifty_ids(store: &RealStore) -> Vec<String> {
    let mut ids: Vec<String> = (1..=12)
        .map(|i| store.sid(&format!("bermuda{i}")))
        .collect();
    for color in ["preto", "branco", "azul"] {
        for size in ["38", "40", "42"] {
            if !(color == "azul" && size == "42") {
                ids.push(store.sid(&format!("var_{color}_{size}")));
            }
        }
    }
    ids.extend((1..=10).map(|i| format!("BERMUDA-{i}")));
    ids.extend((3..=12).map(|i| format!("bermuda-{i}")));
    ids.extend((0..10).map(|i| (90_000 + i).to_string()));
    assert_eq!(ids.len(), 50);
    ids
}

#[tokio::test]
async fn upstream_requests_per_tool_cold() {
    let Some(store) = real_store("upstream_requests_per_tool_cold") else {
        return;
    };
    let _alone = alone().await;
    let catalog = |catalog: Value| json!({"meta": meta(), "catalog": catalog});
    let mut counts = vec![
        counted(
            store,
            "search_catalog, 5 simple products",
            "search_catalog",
            catalog(json!({"query": "bermuda", "pagination": {"limit": 5}})),
        )
        .await,
        counted(
            store,
            "search_catalog, 1 variable product",
            "search_catalog",
            catalog(json!({"query": "tenis"})),
        )
        .await,
        counted(
            store,
            "lookup_catalog, 50 mixed ids",
            "lookup_catalog",
            catalog(json!({"ids": fifty_ids(store)})),
        )
        .await,
        counted(
            store,
            "get_product, variable product",
            "get_product",
            catalog(json!({"id": store.sid("tenis")})),
        )
        .await,
        counted(
            store,
            "get_product, variation id",
            "get_product",
            catalog(json!({"id": store.sid("var_preto_40")})),
        )
        .await,
        counted(
            store,
            "get_product, simple product",
            "get_product",
            catalog(json!({"id": store.sid("garrafa")})),
        )
        .await,
    ];
    let three = [
        (store.sid("garrafa"), 1),
        (store.sid("caneca"), 2),
        (store.sid("var_preto_38"), 1),
    ];
    let created = counted(
        store,
        "create_cart, 3 lines",
        "create_cart",
        json!({"meta": meta_with_key("count-create"), "cart": {"line_items": items(&three)}}),
    )
    .await;
    let id = created.answer["id"].as_str().unwrap().to_owned();
    counts.push(created);
    counts.push(
        counted(
            store,
            "get_cart",
            "get_cart",
            json!({"meta": meta(), "id": id}),
        )
        .await,
    );
    // Full replacement: one kept with a new quantity, one kept as is, one removed, one added.
    let replaced = [
        (store.sid("caneca"), 3),
        (store.sid("var_preto_38"), 1),
        (store.sid("bermuda2"), 1),
    ];
    counts.push(
        counted(
            store,
            "update_cart, full replacement (3 lines → 3)",
            "update_cart",
            json!({"meta": meta_with_key("count-update"), "id": id, "cart": {"line_items": items(&replaced)}}),
        )
        .await,
    );
    counts.push(
        counted(
            store,
            "cancel_cart",
            "cancel_cart",
            json!({"meta": meta_with_key("count-cancel"), "id": id}),
        )
        .await,
    );
    // A 1-line cart to compare with N lines.
    counts.push(
        counted(
            store,
            "create_cart, 1 line",
            "create_cart",
            json!({"meta": meta_with_key("count-create-1"), "cart": {"line_items": items(&[(store.sid("garrafa"), 1)])}}),
        )
        .await,
    );

    let mut table =
        String::from("| tool (cache off, fresh bridge) | upstream requests |\n|---|---:|\n");
    for count in &counts {
        table.push_str(&format!("| {} | {} |\n", count.call, count.requests.len()));
    }
    eprintln!("{table}");
    for count in &counts {
        eprintln!("{}:\n  {}", count.call, count.requests.join("\n  "));
        assert!(
            count.answer.get("messages").is_none_or(|m| m
                .as_array()
                .unwrap()
                .iter()
                .all(|m| m["code"] == "not_found")),
            "{}: {}",
            count.call,
            count.answer
        );
    }
    let measured: Vec<(&str, usize)> = counts
        .iter()
        .map(|count| (count.call, count.requests.len()))
        .collect();
    assert_eq!(
        measured,
        [
            ("search_catalog, 5 simple products", 2),
            ("search_catalog, 1 variable product", 3),
            ("lookup_catalog, 50 mixed ids", 8),
            ("get_product, variable product", 7),
            ("get_product, variation id", 8),
            ("get_product, simple product", 6),
            ("create_cart, 3 lines", 12),
            ("get_cart", 1),
            ("update_cart, full replacement (3 lines → 3)", 12),
            ("cancel_cart", 2),
            ("create_cart, 1 line", 8),
        ],
        "{table}"
    );
}
