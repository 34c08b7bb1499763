//! Issue 36 item 2: a canceled checkout is terminal on every store, even where the store
//! forgets it (WooCommerce empties the Store API cart, VTEX the orderForm, Shopify drops the
//! cart): reads answer it `canceled`, and update, complete and cancel are refused as
//! `checkout_immutable` — 409 with the checkout over REST, the same payload over MCP — and
//! reach no store.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::support::shopify_standin::{MUG_VARIANT, Standin};
use crate::support::values::{codes, key, line, sao_paulo};
use crate::support::vtex_standin::{CLOCK_SKU, VtexStandin};
use crate::support::woo_standin::WooStandin;
use crate::support::{TestBridge, meta, meta_with_key};

async fn create(bridge: &TestBridge, item: &str) -> String {
    let created = bridge
        .call(
            "create_checkout",
            json!({"meta": meta_with_key(&key()), "checkout": {
                "line_items": [line(item, 1)], "buyer": {"email": "ana@example.com"}}}),
        )
        .await;
    created["id"]
        .as_str()
        .unwrap_or_else(|| panic!("{created}"))
        .to_owned()
}

fn refused(answer: &Value, status: &str) {
    assert_eq!(answer["status"], status, "{answer}");
    assert_eq!(codes(answer)[0], "checkout_immutable", "{answer}");
    assert!(answer.get("continue_url").is_none(), "{answer}");
}

/// Cancels `id`, then every write on it is refused and every read answers it canceled.
/// `handler`: one the store places with, `None` where the buyer pays on the store's page.
async fn canceled_stays_canceled(bridge: &TestBridge, id: &str, item: &str, handler: Option<&str>) {
    let canceled = bridge
        .call(
            "cancel_checkout",
            json!({"meta": meta_with_key(&key()), "id": id}),
        )
        .await;
    assert_eq!(canceled["status"], "canceled", "{canceled}");
    let read = bridge
        .call("get_checkout", json!({"meta": meta(), "id": id}))
        .await;
    assert_eq!(read["status"], "canceled", "{read}");
    assert_eq!(read["id"], id);
    let updated = bridge
        .call(
            "update_checkout",
            json!({"meta": meta_with_key(&key()), "id": id, "checkout": {
                "buyer": {"email": "bia@example.com"},
                "fulfillment": {"methods": [{"type": "shipping", "destinations": [sao_paulo()]}]}}}),
        )
        .await;
    refused(&updated, "canceled");
    let payment = match handler {
        Some(handler) => json!({"payment": {"instruments": [{"handler_id": handler}]}}),
        None => json!({}),
    };
    let completed = bridge
        .call(
            "complete_checkout",
            json!({"meta": meta_with_key(&key()), "id": id, "checkout": payment}),
        )
        .await;
    refused(&completed, "canceled");
    assert!(completed.get("order").is_none(), "{completed}");
    let again = bridge
        .call(
            "cancel_checkout",
            json!({"meta": meta_with_key(&key()), "id": id}),
        )
        .await;
    refused(&again, "canceled");
    let key = key();
    // A Shopify id carries `/` and `?key=`: a path segment spells it percent-encoded.
    let id: String = url::form_urlencoded::byte_serialize(id.as_bytes()).collect();
    for (method, path, body) in [
        (
            Method::PUT,
            format!("/checkout-sessions/{id}"),
            Some(json!({"line_items": [line(item, 1)], "buyer": {"email": "bia@example.com"}})),
        ),
        (
            Method::POST,
            format!("/checkout-sessions/{id}/complete"),
            Some(payment.clone()),
        ),
        (
            Method::POST,
            format!("/checkout-sessions/{id}/cancel"),
            None,
        ),
    ] {
        let (status, body) = bridge
            .rest(method, &path, body.as_ref(), &[("idempotency-key", &key)])
            .await;
        assert_eq!(status, StatusCode::CONFLICT, "{path}: {body}");
        let body: Value = serde_json::from_str(&body).unwrap();
        refused(&body, "canceled");
    }
}

#[tokio::test]
async fn a_canceled_woocommerce_checkout_refuses_every_write() {
    let woo = WooStandin::start().await;
    let bridge = TestBridge::start(&woo.config("\n[checkout]\nplace_with = [\"cod\"]")).await;
    let id = create(&bridge, "16").await;
    woo.clear_requests();
    canceled_stays_canceled(&bridge, &id, "16", Some("cod")).await;
    let writes: Vec<String> = woo
        .requests()
        .into_iter()
        .filter(|request| !request.starts_with("GET"))
        .collect();
    assert_eq!(
        writes.len(),
        1,
        "only the cancel itself reached the store: {writes:?}"
    );
}

#[tokio::test]
async fn a_canceled_shopify_checkout_refuses_every_write() {
    let standin = Standin::start();
    let bridge = TestBridge::start(&standin.config("")).await;
    let item = format!("gid://shopify/ProductVariant/{MUG_VARIANT}");
    let id = create(&bridge, &item).await;
    canceled_stays_canceled(&bridge, &id, &item, None).await;
}

#[tokio::test]
async fn a_canceled_vtex_checkout_refuses_every_write() {
    let vtex = VtexStandin::start().await;
    let bridge = TestBridge::start(&(vtex.config("") + "\n[cache]\nenabled = false\n")).await;
    let id = create(&bridge, CLOCK_SKU).await;
    canceled_stays_canceled(&bridge, &id, CLOCK_SKU, None).await;
}
