//! Issue 37 item 2 (WooCommerce): what the checkout shows of a Brazilian address is what the
//! store's address holds in its own fields (Brazilian Market's `csbmw/number` and
//! `csbmw/neighborhood`, listed by the checkout schema and echoed by the Store API in the
//! cart's addresses), not a copy one replica remembers: a second bridge in front of the same
//! store answers the same house number and bairro.
#![allow(clippy::unwrap_used)]

use serde_json::{Value, json};

use crate::support::woo_standin::WooStandin;
use crate::support::{TestBridge, meta, meta_with_key};

fn schema() -> Value {
    let field = |label: &str, required: bool| json!({"description": label, "type": "string", "required": required});
    let address = json!({"properties": {"address_1": field("Address", true),
        "csbmw/number": field("Number", true), "csbmw/neighborhood": field("Neighborhood", false)}});
    json!({"schema": {"properties": {
        "additional_fields": {"type": "object", "properties": {"csbmw/cpf": field("CPF", true)}},
        "billing_address": address.clone(),
        "shipping_address": address,
    }}})
}

#[tokio::test]
async fn issue_37_another_replica_reads_number_and_bairro_from_the_stores_fields() {
    let woo = WooStandin::start().await;
    woo.set_checkout_schema(schema());
    let config = woo.config("\n[checkout]\nplace_with = [\"bacs\"]");
    let first = TestBridge::start(&config).await;
    let created = first
        .call(
            "create_checkout",
            json!({"meta": meta_with_key("br-fields"), "checkout": {
                "line_items": [{"item": {"id": "16"}, "quantity": 1}],
                "buyer": {"email": "ana@example.com", "first_name": "Ana", "last_name": "Souza",
                    "taxpayer_id": {"kind": "cpf", "value": "39053344705"}},
                "fulfillment": {"methods": [{"type": "shipping", "destinations": [{
                    "street_address": "Rua Doutor Quirino, 1481", "extended_address": "Sala 42 - Bairro Centro",
                    "address_locality": "Campinas", "address_region": "SP", "postal_code": "13015-081",
                    "address_country": "BR"}]}]}}}),
        )
        .await;
    let id = created["id"].as_str().unwrap();
    let written = &created["fulfillment"]["methods"][0]["destinations"][0];
    assert_eq!(written["street_address"], "Rua Doutor Quirino, 1481");

    // A replica that never saw the agent's address reads it from the store.
    let second = TestBridge::start(&config).await;
    let read = second
        .call("get_checkout", json!({"meta": meta(), "id": id}))
        .await;
    let destination = &read["fulfillment"]["methods"][0]["destinations"][0];
    assert_eq!(
        destination["street_address"], "Rua Doutor Quirino, 1481",
        "{read}"
    );
    assert_eq!(destination["extended_address"], "Sala 42 - Bairro Centro");
    // Nothing asks for the number or bairro again: the store holds them.
    let asked = read["messages"].as_array().cloned().unwrap_or_default();
    assert!(
        !asked.iter().any(|message| message["path"]
            .as_str()
            .is_some_and(|path| path.contains("destinations"))),
        "{read}"
    );
}
