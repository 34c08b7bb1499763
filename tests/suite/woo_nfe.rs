//! `br.dev.bcp.shopping.nfe` on a WooCommerce store whose NF-e plugin keeps the invoice in
//! order meta named by `[store.nfe_meta]` (issue 37 item 4, nfe.md), over MCP against the
//! Store API stand-in: the BCP profile declares the extension extending order, and
//! `get_order` renders `order.nfe`; without `[store.nfe_meta]` neither happens.
#![allow(clippy::unwrap_used)]

use serde_json::{Value, json};

use crate::support::woo_standin::{RATES, V3_KEY, V3_SECRET, WooStandin};
use crate::support::{TestBridge, meta, meta_with_key};

const NFE: &str = "br.dev.bcp.shopping.nfe";
const ACCESS_KEY: &str = "35170608530528000184550000000154301000771569";

fn config(woo: &WooStandin, invoices: bool) -> String {
    let nfe_meta = if invoices {
        "[store.nfe_meta]\naccess_key = \"_nfe_chave\"\ndanfe_url = \"_nfe_danfe\"\nxml_url = \"_nfe_xml\"\nissued_at = \"_nfe_emissao\"\n"
    } else {
        ""
    };
    woo.config(&format!(
        "consumer_key = \"{V3_KEY}\"\nconsumer_secret = \"{V3_SECRET}\"\nrest_v3_tls_proxy = true\n{nfe_meta}\n[checkout]\nplace_with = [\"bacs\"]\n[seller]\ncnpj = \"19.131.243/0001-97\"\nlegal_name = \"Loja Exemplo Ltda\"\n"
    ))
}

/// An order placed with `bacs` over MCP; its handle.
async fn placed(bridge: &TestBridge) -> String {
    let created = bridge
        .call(
            "create_checkout",
            json!({"meta": meta_with_key(&uuid::Uuid::new_v4().to_string()), "checkout": {
                "line_items": [{"item": {"id": "16"}, "quantity": 1}],
                "buyer": {"email": "ana@example.com", "first_name": "Ana", "last_name": "Souza"},
                "fulfillment": {"methods": [{"type": "shipping", "destinations": [{"street_address": "Rua Doutor Quirino, 1481",
                    "address_locality": "Campinas", "address_region": "SP", "postal_code": "13015-081", "address_country": "BR"}]}]}}}),
        )
        .await;
    let id = created["id"].as_str().unwrap().to_owned();
    let method = &created["fulfillment"]["methods"][0];
    bridge
        .call(
            "update_checkout",
            json!({"meta": meta(), "id": id, "checkout": {"fulfillment": {"methods": [{"id": method["id"], "groups": [{"id": method["groups"][0]["id"], "selected_option_id": RATES[0].0}]}]}}}),
        )
        .await;
    let completed = bridge
        .call(
            "complete_checkout",
            json!({"meta": meta_with_key(&uuid::Uuid::new_v4().to_string()), "id": id, "checkout": {"payment": {"instruments": [{"handler_id": "bacs", "type": "offline"}]}}}),
        )
        .await;
    assert_eq!(completed["status"], "completed", "{completed}");
    completed["order"]["id"].as_str().unwrap().to_owned()
}

/// Issue 37 item 4 (WooCommerce): the profile and the order answer name the NF-e extension
/// while `[store.nfe_meta]` is configured, and the order carries the plugin's invoice.
#[tokio::test]
async fn issue_37_get_order_renders_the_nfe_the_store_meta_holds() {
    let woo = WooStandin::start().await;
    woo.set_order_meta(json!([
        {"id": 1, "key": "_nfe_chave", "value": ACCESS_KEY},
        {"id": 2, "key": "_nfe_danfe", "value": "https://nfe.example/danfe/7.pdf"},
        {"id": 3, "key": "_nfe_xml", "value": "https://nfe.example/xml/7.xml"},
        {"id": 4, "key": "_nfe_emissao", "value": "2026-12-07 14:30:00"},
    ]));
    let bridge = TestBridge::start(&config(&woo, true)).await;
    let profile: Value = bridge.get("/.well-known/bcp").await.json().await.unwrap();
    let declared = &profile["ucp"]["capabilities"][NFE][0];
    assert_eq!(
        declared["extends"], "br.dev.bcp.shopping.order",
        "{profile}"
    );
    assert!(
        declared["spec"]
            .as_str()
            .unwrap()
            .ends_with("/specification/nfe"),
        "{declared}"
    );

    let handle = placed(&bridge).await;
    let order = bridge
        .call("get_order", json!({"meta": meta(), "id": handle}))
        .await;
    assert!(order["ucp"]["capabilities"].get(NFE).is_some(), "{order}");
    assert_eq!(
        order["nfe"],
        json!({"access_key": ACCESS_KEY, "danfe_url": "https://nfe.example/danfe/7.pdf",
            "xml_url": "https://nfe.example/xml/7.xml", "issued_at": "2026-12-07T14:30:00Z"}),
        "{order}"
    );
    assert_eq!(order["seller_identity"]["cnpj"], "19131243000197");
}

/// Without `[store.nfe_meta]` the extension is neither declared nor rendered, even when the
/// order's meta holds something that looks like a key.
#[tokio::test]
async fn without_nfe_meta_no_nfe_is_declared_or_rendered() {
    let woo = WooStandin::start().await;
    woo.set_order_meta(json!([{"id": 1, "key": "_nfe_chave", "value": ACCESS_KEY}]));
    let bridge = TestBridge::start(&config(&woo, false)).await;
    let profile: Value = bridge.get("/.well-known/bcp").await.json().await.unwrap();
    assert!(!profile.to_string().contains(NFE), "{profile}");
    let handle = placed(&bridge).await;
    let order = bridge
        .call("get_order", json!({"meta": meta(), "id": handle}))
        .await;
    assert!(order.get("nfe").is_none(), "{order}");
    assert!(!order.to_string().contains(NFE), "{order}");
}
