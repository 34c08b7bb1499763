//! Issue 37 item 7 over the wire: an agent speaking MCP, and one speaking REST, each place an
//! order on the real WooCommerce with Brazilian Market, giving the CPF (punctuated) in
//! `buyer.taxpayer_id` and the address as UCP writes it (street "Rua Doutor Quirino, 1481",
//! complement and bairro "Sala 42 - Bairro Centro"); the store's database then holds the CPF,
//! the house number and the bairro in the plugin's own fields (HPOS `wp_wc_orders_meta`:
//! `_wc_other/csbmw/cpf`, `_wc_{billing,shipping}/csbmw/{number,neighborhood}`), and the
//! street and complement alone in WooCommerce's address lines.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;

use super::agent::{buyer_with_cpf, checkout_with_rate, destination_in_campinas, send};
use super::brazil::{assert_brazilian_market, order_meta};
use super::store::{RealStore, real_store, real_store_env, shared, sql};
use crate::support::TestBridge;

const CPF: &str = "39053344705";

/// The order placed over `binding` for a new buyer; the store's order id.
async fn place(bridge: &TestBridge, store: &RealStore, db: &str, binding: &str) -> u64 {
    let email = format!(
        "ana.{binding}.{}@example.com",
        uuid::Uuid::new_v4().simple()
    );
    let (created, ready) = checkout_with_rate(
        async |tool, id, checkout| send(bridge, binding, tool, id, checkout).await,
        json!([{"item": {"id": store.sid("garrafa")}, "quantity": 1}]),
        buyer_with_cpf(&email),
        destination_in_campinas(),
        &store.text("rate_pac"),
    )
    .await;
    let id = created["id"].as_str().unwrap();
    assert_eq!(
        created["buyer"]["taxpayer_id"],
        json!({"kind": "cpf", "value": CPF}),
        "{binding}: {created}"
    );
    assert_eq!(ready["status"], "ready_for_complete", "{binding}: {ready}");
    let done = send(
        bridge,
        binding,
        "complete_checkout",
        Some(id),
        json!({"payment": {"instruments": [{"handler_id": "bacs", "type": "offline"}]}}),
    )
    .await;
    assert_eq!(done["status"], "completed", "{binding}: {done}");
    let found = sql(
        db,
        &format!("SELECT id FROM wp_wc_orders WHERE billing_email = '{email}'"),
    )
    .await;
    assert_eq!(
        found.len(),
        1,
        "{binding}: one order for {email}: {found:?}"
    );
    found[0][0].parse().unwrap()
}

#[tokio::test]
#[ignore = "needs the real WooCommerce: bash .ci/real-woo.sh test"]
async fn issue_37_agents_over_mcp_and_rest_place_orders_holding_cpf_number_and_bairro() {
    let store = real_store();
    assert_brazilian_market();
    let db = real_store_env("BCP_REAL_WOO_DB");
    let _guard = shared().await;
    let bridge = store.bridge("[checkout]\nplace_with = [\"bacs\"]\n").await;
    for binding in ["mcp", "rest"] {
        let order = place(&bridge, store, &db, binding).await;
        let meta = order_meta(&db, order).await;
        for (key, value) in [
            ("_wc_billing/csbmw/neighborhood", "Centro"),
            ("_wc_billing/csbmw/number", "1481"),
            ("_wc_shipping/csbmw/neighborhood", "Centro"),
            ("_wc_shipping/csbmw/number", "1481"),
        ] {
            assert!(
                meta.contains(&(key.to_owned(), value.to_owned())),
                "{binding}: {key} = {value} not in {meta:?}"
            );
        }
        let cpf = meta
            .iter()
            .find(|(key, _)| key == "_wc_other/csbmw/cpf")
            .map(|(_, value)| {
                value
                    .chars()
                    .filter(char::is_ascii_digit)
                    .collect::<String>()
            });
        assert_eq!(cpf.as_deref(), Some(CPF), "{binding}: {meta:?}");
        let lines = sql(
            &db,
            &format!("SELECT address_1, address_2 FROM wp_wc_order_addresses WHERE order_id = {order} AND address_type = 'shipping'"),
        )
        .await;
        assert_eq!(lines, [["Rua Doutor Quirino", "Sala 42"]], "{binding}");
    }
}
