//! Orders on a VTEX store with the app key (issue 37 items 2 and 4, over MCP against the VTEX
//! stand-in): the buyer handed off by complete pays on the store's page, the checkout then
//! answers `completed` with the order, and `get_order` reads it from the Orders API with the
//! seller's identity, the buyer's document carried and, once the ERP invoiced it, its NF-e
//! (nfe.md: `br.dev.bcp.shopping.nfe` extends order, declared in the profile).
#![allow(clippy::unwrap_used)]

use serde_json::{Value, json};

use crate::support::update_checkout as update;
use crate::support::values::{key, line, sao_paulo};
use crate::support::vtex_standin::{CLOCK_SKU, VtexStandin};
use crate::support::{TestBridge, meta, meta_with_key};

const KEYS: &str = "app_key = \"vtexappkey-loja-TEST\"\napp_token = \"TOKEN-TEST\"";
const NFE: &str = "br.dev.bcp.shopping.nfe";
const CPF: &str = "52998224725";
/// An NF-e access key with its check digit (SP, 2026-12, model 55).
const ACCESS_KEY: &str = "35261211222333000181550010000012351000012354";
const SELLER: &str = "\n[seller]\ncnpj = \"19.131.243/0001-97\"\nlegal_name = \"Loja Exemplo Ltda\"\n[cache]\nenabled = false\n";

async fn bridge(vtex: &VtexStandin, keys: &str) -> TestBridge {
    TestBridge::start(&(vtex.config(keys) + SELLER)).await
}

/// A checkout with the buyer's CPF and address and a shipping option, completed: handed off.
async fn handed_off(bridge: &TestBridge) -> String {
    let created = bridge
        .call(
            "create_checkout",
            json!({"meta": meta_with_key(&key()), "checkout": {
                "line_items": [line(CLOCK_SKU, 1)],
                "buyer": {"email": "ana@example.com", "first_name": "Ana", "last_name": "Souza",
                    "taxpayer_id": {"kind": "cpf", "value": CPF}},
                "fulfillment": {"methods": [{"type": "shipping", "destinations": [sao_paulo()]}]}
            }}),
        )
        .await;
    let id = created["id"].as_str().unwrap().to_owned();
    update(
        bridge,
        &id,
        json!({"fulfillment": {"methods": [{"groups": [{"id": "shipping_items", "selected_option_id": "Expressa"}]}]}}),
    )
    .await;
    let completed = bridge
        .call(
            "complete_checkout",
            json!({"meta": meta_with_key(&key()), "id": id, "checkout": {}}),
        )
        .await;
    assert_eq!(completed["status"], "requires_escalation", "{completed}");
    id
}

async fn get(bridge: &TestBridge, tool: &str, id: &str) -> Value {
    bridge.call(tool, json!({"meta": meta(), "id": id})).await
}

#[tokio::test]
async fn issue_37_the_profile_declares_nfe_on_orders_only_with_the_app_key() {
    let vtex = VtexStandin::start().await;
    let keyed = bridge(&vtex, KEYS).await;
    let profile: Value = keyed.get("/.well-known/bcp").await.json().await.unwrap();
    let nfe = &profile["ucp"]["capabilities"][NFE][0];
    assert_eq!(nfe["extends"], "br.dev.bcp.shopping.order", "{profile}");
    assert!(
        nfe["schema"].as_str().unwrap().ends_with("/nfe.json"),
        "{nfe}"
    );
    // UCP has no NF-e: its profile never names it.
    let ucp: Value = keyed.get("/.well-known/ucp").await.json().await.unwrap();
    assert!(!ucp.to_string().contains(NFE), "{ucp}");
    let (_, tools) = keyed
        .rpc(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
        .await;
    assert!(tools.to_string().contains("\"get_order\""), "{tools}");

    // Without the app key the Orders API cannot be read: no orders, no NF-e.
    let plain = bridge(&vtex, "").await;
    let profile: Value = plain.get("/.well-known/bcp").await.json().await.unwrap();
    assert!(!profile.to_string().contains(NFE), "{profile}");
    let (_, tools) = plain
        .rpc(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
        .await;
    assert!(!tools.to_string().contains("\"get_order\""), "{tools}");
}

/// Issue 37 items 2 and 4 (VTEX): the order the buyer paid for is answered by the checkout
/// and by `get_order`, with `seller_identity` (fiscal-identity.md rule 1), the CPF it was
/// placed with, and `order.nfe` once invoiced (nfe.md rule 1).
#[tokio::test]
async fn issue_37_an_order_paid_on_the_store_page_is_answered_with_its_nfe() {
    let vtex = VtexStandin::start().await;
    let bridge = bridge(&vtex, KEYS).await;
    let id = handed_off(&bridge).await;
    let waiting = get(&bridge, "get_checkout", &id).await;
    assert_eq!(waiting["status"], "requires_escalation", "{waiting}");
    assert!(waiting.get("order").is_none(), "{waiting}");

    let store_order = vtex.pay(&id);
    let completed = get(&bridge, "get_checkout", &id).await;
    assert_eq!(completed["status"], "completed", "{completed}");
    assert_eq!(completed["buyer"]["taxpayer_id"]["value"], CPF);
    assert_eq!(completed["seller_identity"]["cnpj"], "19131243000197");
    let handle = completed["order"]["id"].as_str().unwrap().to_owned();
    assert_ne!(handle, store_order, "agents get an unguessable handle");

    let order = get(&bridge, "get_order", &handle).await;
    assert_eq!(order["id"], handle.as_str(), "{order}");
    assert_eq!(order["checkout_id"], id.as_str());
    assert_eq!(order["seller_identity"]["cnpj"], "19131243000197");
    assert!(order["ucp"]["capabilities"].get(NFE).is_some(), "{order}");
    assert!(order.get("nfe").is_none(), "not invoiced yet: {order}");
    let shipped = &order["fulfillment"]["expectations"][0]["destination"];
    assert_eq!(shipped["postal_code"], "01305-000", "{order}");

    vtex.invoice(
        &store_order,
        ACCESS_KEY,
        "https://nfe.loja.example/danfe/1235.pdf",
    );
    let invoiced = get(&bridge, "get_order", &handle).await;
    assert_eq!(invoiced["nfe"]["access_key"], ACCESS_KEY, "{invoiced}");
    assert_eq!(
        invoiced["nfe"]["danfe_url"],
        "https://nfe.loja.example/danfe/1235.pdf"
    );
    assert_eq!(invoiced["nfe"]["issued_at"], "2026-12-08T10:00:00Z");
    // nfe.md rule 2: the block carries document references only, no buyer data.
    assert!(!invoiced["nfe"].to_string().contains(CPF));

    // The store's own order number is not a handle: not found, as any guess.
    let (_, guessed) = bridge
        .call_raw("get_order", json!({"meta": meta(), "id": store_order}))
        .await;
    assert!(guessed.to_string().contains("not_found"), "{guessed}");
}

/// A checkout the agent never completed is not looked for in the Orders API (the search is
/// by the buyer's email, so only after the hand-off), and another checkout's order is never
/// taken for this one's.
#[tokio::test]
async fn only_a_handed_off_checkout_is_matched_to_its_own_order() {
    let vtex = VtexStandin::start().await;
    let bridge = bridge(&vtex, KEYS).await;
    let first = handed_off(&bridge).await;
    let second = handed_off(&bridge).await;
    vtex.pay(&first);
    let other = get(&bridge, "get_checkout", &second).await;
    assert_eq!(other["status"], "requires_escalation", "{other}");
    let paid = get(&bridge, "get_checkout", &first).await;
    assert_eq!(paid["status"], "completed", "{paid}");

    let created = bridge
        .call(
            "create_checkout",
            json!({"meta": meta_with_key(&key()), "checkout": {"line_items": [line(CLOCK_SKU, 1)],
                "buyer": {"email": "ana@example.com"}}}),
        )
        .await;
    let open = created["id"].as_str().unwrap();
    vtex.take();
    get(&bridge, "get_checkout", open).await;
    assert!(
        !vtex.take().iter().any(|call| call.contains("/oms/")),
        "an open checkout reads no orders"
    );
}
