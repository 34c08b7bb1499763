//! Issue 36 item 1 on the real WooCommerce: an agent that sends its whole checkout back on
//! every update (update is a full replacement; `line_items` required) goes buyer → address →
//! option → code → complete over MCP and REST, and the order exists. Sending the checkout
//! back unchanged writes nothing to the store; a new quantity reaches the store's cart and the
//! option and code stay. Store requests are read from its access log.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};

use super::store::{RealStore, alone, real_store, token_of};
use crate::full_replacement::{
    Front, choosing, complete, create, full, quantities, shipping_to, update, with_quantity,
};
use crate::support::meta;
use crate::support::values::{line, sao_paulo};

/// Store requests since `mark` that were not reads.
async fn writes(store: &RealStore, mark: u64) -> Vec<String> {
    store
        .requests_since(mark)
        .await
        .into_iter()
        .filter(|request| !request.starts_with("GET"))
        .collect()
}

async fn journey(store: &RealStore, front: Front) {
    let bridge = store.bridge("\n[checkout]\nplace_with = [\"bacs\"]").await;
    let (garrafa, bolsa) = (store.sid("garrafa"), store.sid("bolsa"));
    let created = create(
        &bridge,
        front,
        json!({"line_items": [line(&garrafa, 1), line(&bolsa, 1)]}),
    )
    .await;
    let id = created["id"]
        .as_str()
        .unwrap_or_else(|| panic!("{created}"))
        .to_owned();
    let token = token_of(&id);

    let mut body = full(&created);
    body["buyer"] = json!({"email": "ana.replace@example.com", "first_name": "Ana", "last_name": "Souza", "phone_number": "11999990000",
        "taxpayer_id": {"kind": "cpf", "value": "39053344705"}});
    let named = update(&bridge, front, &id, body).await;
    let addressed = update(&bridge, front, &id, shipping_to(full(&named), sao_paulo())).await;
    let sedex = store.text("rate_sedex");
    let chosen = update(&bridge, front, &id, choosing(full(&addressed), &sedex)).await;
    let mut body = full(&chosen);
    body["discounts"] = json!({"codes": ["BCP10"]});
    let ready = update(&bridge, front, &id, body).await;
    assert_eq!(ready["status"], "ready_for_complete", "{ready}");

    // The same checkout back: the store is only read.
    let mark = store.mark();
    let again = update(&bridge, front, &id, full(&ready)).await;
    assert_eq!(writes(store, mark).await, Vec::<String>::new());
    assert_eq!(again["totals"], ready["totals"]);

    // A new quantity: the store's cart follows; the option and the code are kept.
    let mark = store.mark();
    let more = update(&bridge, front, &id, with_quantity(full(&ready), 0, 3)).await;
    assert!(!writes(store, mark).await.is_empty());
    assert_eq!(more["status"], "ready_for_complete", "{more}");
    let held: Vec<(String, u64)> = {
        let mut held: Vec<(String, u64)> = store
            .store_lines(&token)
            .await
            .into_iter()
            .map(|(item, quantity)| (item.to_string(), quantity))
            .collect();
        held.sort();
        held
    };
    assert_eq!(held, quantities(&more));
    let wanted = {
        let mut wanted = vec![(garrafa.clone(), 3), (bolsa.clone(), 1)];
        wanted.sort();
        wanted
    };
    assert_eq!(quantities(&more), wanted);
    assert_eq!(
        more["fulfillment"]["methods"][0]["groups"][0]["selected_option_id"],
        json!(sedex),
        "{more}"
    );
    assert_eq!(more["discounts"]["codes"], json!(["BCP10"]), "{more}");
    let cart = store.store_cart(&token).await;
    assert_eq!(cart["coupons"][0]["code"], "bcp10", "{cart}");

    let done = complete(&bridge, front, &id, "bacs").await;
    assert_eq!(done["status"], "completed", "{done}");
    let order: Value = bridge
        .call(
            "get_order",
            json!({"meta": meta(), "id": done["order"]["id"]}),
        )
        .await;
    assert_eq!(order["id"], done["order"]["id"], "{order}");
    let ordered: Vec<u64> = order["line_items"]
        .as_array()
        .unwrap_or_else(|| panic!("{order}"))
        .iter()
        .map(|held| held["quantity"]["original"].as_u64().unwrap())
        .collect();
    assert_eq!(ordered.iter().sum::<u64>(), 4, "{order}");
}

#[tokio::test]
#[ignore = "needs the real WooCommerce: bash .ci/real-woo.sh test"]
async fn a_full_checkout_on_every_update_completes_on_the_real_store_over_mcp_and_rest() {
    let store = real_store();
    // Alone: the write counts read the shared access log.
    let _guard = alone().await;
    journey(store, Front::Mcp).await;
    journey(store, Front::Rest).await;
}
