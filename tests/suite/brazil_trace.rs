//! Issue 37 item 7 on every platform (the sample store's is in brazil.rs): the whole
//! Brazilian flow — a CNPJ, a CPF with wrong check digits, the right CPF, a Brazilian address,
//! complete — through the real binary at `RUST_LOG=trace` in front of each platform's
//! stand-in, and no CPF or CNPJ of the buyer, punctuated or not, in any log line (BCP
//! fiscal-identity.md "Privacy": the document is personal data; LGPD minimisation).
#![allow(clippy::unwrap_used)]

use serde_json::{Value, json};

use crate::support::debug_bridge::DebugBridge;
use crate::support::shopify_standin::{MUG_VARIANT, Standin as ShopifyStandin};
use crate::support::values::{key, line};
use crate::support::vtex_standin::{CLOCK_SKU, VtexStandin};
use crate::support::woo_standin::WooStandin;
use crate::support::{meta, meta_with_key};

const CPF: &str = "390.533.447-05";
const CNPJ: &str = "11.222.333/0001-81";
const WRONG: &str = "529.982.247-26";
const SECRETS: [&str; 6] = [
    CPF,
    "39053344705",
    CNPJ,
    "11222333000181",
    WRONG,
    "52998224726",
];

fn quirino() -> Value {
    json!({
        "first_name": "Ana", "last_name": "Souza",
        "street_address": "Rua Doutor Quirino, 1481", "extended_address": "Sala 42 - Bairro Centro",
        "address_locality": "Campinas", "address_region": "SP", "postal_code": "13015-081",
        "address_country": "BR"
    })
}

/// The flow on `bridge`, for `item`, completed with `payment`; the completion's answer.
async fn flow(bridge: &mut DebugBridge, item: &str, payment: Value) -> Value {
    let created = bridge
        .call(
            "create_checkout",
            json!({"meta": meta_with_key(&key()), "checkout": {"line_items": [line(item, 1)],
                "buyer": {"email": "ana@example.com", "first_name": "Ana", "last_name": "Souza",
                    "taxpayer_id": {"kind": "cnpj", "value": CNPJ}}}}),
        )
        .await;
    let id = created["id"]
        .as_str()
        .unwrap_or_else(|| panic!("{created}"))
        .to_owned();
    let mut last = Value::Null;
    for checkout in [
        json!({"buyer": {"taxpayer_id": {"kind": "cpf", "value": WRONG}}}),
        json!({"buyer": {"taxpayer_id": {"kind": "cpf", "value": CPF}}}),
        json!({"fulfillment": {"methods": [{"type": "shipping", "destinations": [quirino()]}]}}),
    ] {
        last = bridge
            .call(
                "update_checkout",
                json!({"meta": meta(), "id": id, "checkout": checkout}),
            )
            .await;
    }
    // The store's first option, where it offers one for the address.
    let method = &last["fulfillment"]["methods"][0];
    if let Some(option) = method["groups"][0]["options"][0]["id"].as_str() {
        bridge
            .call(
                "update_checkout",
                json!({"meta": meta(), "id": id, "checkout": {"fulfillment": {"methods": [{"id": method["id"],
                    "groups": [{"id": method["groups"][0]["id"], "selected_option_id": option}]}]}}}),
            )
            .await;
    }
    bridge
        .call(
            "complete_checkout",
            json!({"meta": meta_with_key(&key()), "id": id, "checkout": payment}),
        )
        .await
}

#[tokio::test]
async fn issue_37_woocommerce_at_trace_logs_no_cpf_or_cnpj() {
    let woo = WooStandin::start().await;
    // Brazilian Market's fields: the CPF goes to the store in `additional_fields`.
    let field = |required: bool| json!({"type": "string", "required": required});
    woo.set_checkout_schema(json!({"schema": {"properties": {
        "additional_fields": {"type": "object", "properties": {"csbmw/cpf": field(true)}},
        "billing_address": {"properties": {"csbmw/number": field(true), "csbmw/neighborhood": field(false)}},
        "shipping_address": {"properties": {"csbmw/number": field(true), "csbmw/neighborhood": field(false)}},
    }}}));
    let config = woo.config("\n[checkout]\nplace_with = [\"bacs\"]");
    let mut bridge = DebugBridge::start_at("brazil-trace-woo", &config, "trace");
    let done = flow(
        &mut bridge,
        "16",
        json!({"payment": {"instruments": [{"handler_id": "bacs", "type": "offline"}]}}),
    )
    .await;
    assert_eq!(done["status"], "completed", "{done}");
    bridge.assert_log_holds_none(&SECRETS);
}

#[tokio::test]
async fn issue_37_vtex_at_trace_logs_no_cpf_or_cnpj() {
    let vtex = VtexStandin::start().await;
    // With the app key: the order is then looked for by the buyer's email in the Orders
    // API's query string, which no log line may show either.
    let keys = "app_key = \"vtexappkey-loja-TEST\"\napp_token = \"TOKEN-TEST\"";
    let mut bridge = DebugBridge::start_at("brazil-trace-vtex", &vtex.config(keys), "trace");
    let done = flow(&mut bridge, CLOCK_SKU, json!({})).await;
    assert_eq!(done["status"], "requires_escalation", "{done}");
    assert_eq!(done["buyer"]["taxpayer_id"]["value"], "39053344705");
    let id = done["id"].as_str().unwrap().to_owned();
    vtex.pay(&id);
    let placed = bridge
        .call("get_checkout", json!({"meta": meta(), "id": id}))
        .await;
    assert_eq!(placed["status"], "completed", "{placed}");
    let order = bridge
        .call(
            "get_order",
            json!({"meta": meta(), "id": placed["order"]["id"]}),
        )
        .await;
    assert_eq!(order["checkout_id"], id.as_str(), "{order}");
    let mut secrets = SECRETS.to_vec();
    secrets.extend(["ana@example.com", "ana%40example.com"]);
    bridge.assert_log_holds_none(&secrets);
}

#[tokio::test]
async fn issue_37_shopify_at_trace_logs_no_cpf_or_cnpj() {
    let standin = ShopifyStandin::start();
    let mut bridge = DebugBridge::start_at("brazil-trace-shopify", &standin.config(""), "trace");
    let done = flow(
        &mut bridge,
        &format!("gid://shopify/ProductVariant/{MUG_VARIANT}"),
        json!({}),
    )
    .await;
    assert!(done["id"].is_string(), "a checkout answer: {done}");
    bridge.assert_log_holds_none(&SECRETS);
}
