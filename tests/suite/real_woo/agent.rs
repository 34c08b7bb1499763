//! An agent's way to an order on the real WooCommerce with Brazilian Market, shared by the
//! tests that place one (issue 37 over the wire, issue 38's Pix): a checkout created with the
//! buyer and the destination, its rate selected, then completed with the instrument the test
//! names. Each step goes through `speak` (tool, checkout id, `checkout` body), so a test picks
//! its binding (MCP or REST) and its agent's `meta`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::support::{TestBridge, meta, meta_with_key};

/// A CPF with valid check digits, as a buyer types it.
pub(super) const CPF_TYPED: &str = "390.533.447-05";

/// The buyer with `email` and the CPF (which the store requires).
pub(super) fn buyer_with_cpf(email: &str) -> Value {
    json!({"email": email, "first_name": "Ana", "last_name": "Souza", "phone_number": "19999990000",
        "taxpayer_id": {"kind": "cpf", "value": CPF_TYPED}})
}

/// A destination as UCP writes it: the house number in the street line, the bairro beside the
/// complement.
pub(super) fn destination_in_campinas() -> Value {
    json!({"first_name": "Ana", "last_name": "Souza",
        "street_address": "Rua Doutor Quirino, 1481", "extended_address": "Sala 42 - Bairro Centro",
        "address_locality": "Campinas", "address_region": "SP", "postal_code": "13015-081",
        "address_country": "BR"})
}

/// One call over `binding` with the test suite's agent: an MCP tool, or its REST operation.
pub(super) async fn send(
    bridge: &TestBridge,
    binding: &str,
    tool: &str,
    id: Option<&str>,
    checkout: Value,
) -> Value {
    if binding == "mcp" {
        let mut arguments =
            json!({"meta": meta_with_key(&uuid::Uuid::new_v4().to_string()), "checkout": checkout});
        if tool == "update_checkout" {
            arguments["meta"] = meta();
        }
        if let Some(id) = id {
            arguments["id"] = json!(id);
        }
        return bridge.call(tool, arguments).await;
    }
    let (method, path) = match (tool, id) {
        ("create_checkout", _) => (Method::POST, "/checkout-sessions".to_owned()),
        ("update_checkout", Some(id)) => {
            (Method::PUT, format!("/checkout-sessions/{}", segment(id)))
        }
        ("complete_checkout", Some(id)) => (
            Method::POST,
            format!("/checkout-sessions/{}/complete", segment(id)),
        ),
        other => unreachable!("{other:?}"),
    };
    let key = uuid::Uuid::new_v4().to_string();
    let (status, body) = bridge
        .rest(method, &path, Some(&checkout), &[("idempotency-key", &key)])
        .await;
    assert!(
        status == StatusCode::OK || status == StatusCode::CREATED,
        "{tool} over REST: {status} {body}"
    );
    serde_json::from_str(&body).unwrap()
}

/// A checkout of `line_items` for `buyer` to `destination`, with `rate` selected in its first
/// group: the checkout as created and as it answers after the selection (its status is the
/// caller's to check).
pub(super) async fn checkout_with_rate(
    speak: impl AsyncFn(&str, Option<&str>, Value) -> Value,
    line_items: Value,
    buyer: Value,
    destination: Value,
    rate: &str,
) -> (Value, Value) {
    let created = speak(
        "create_checkout",
        None,
        json!({"line_items": line_items, "buyer": buyer,
            "fulfillment": {"methods": [{"type": "shipping", "destinations": [destination]}]}}),
    )
    .await;
    let id = created["id"]
        .as_str()
        .unwrap_or_else(|| panic!("no checkout: {created}"))
        .to_owned();
    let method = &created["fulfillment"]["methods"][0];
    assert!(method["id"].is_string(), "no fulfillment method: {created}");
    let selected = speak(
        "update_checkout",
        Some(&id),
        json!({"fulfillment": {"methods": [{"id": method["id"], "groups": [{"id": method["groups"][0]["id"],
            "selected_option_id": rate}]}]}}),
    )
    .await;
    (created, selected)
}

/// A checkout id as one path segment.
pub(super) fn segment(id: &str) -> String {
    id.bytes()
        .map(|byte| match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (byte as char).to_string()
            }
            _ => format!("%{byte:02X}"),
        })
        .collect()
}
