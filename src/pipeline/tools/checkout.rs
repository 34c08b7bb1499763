//! Checkout and the order it places: create_checkout, get_checkout, update_checkout,
//! complete_checkout, cancel_checkout, get_order.

use schemars::Schema;
use serde_json::json;

use super::schema::{at, quantity_bound};
use super::{BodyRole, Declaration, Effect, Rest, RestMethod, ToolName, Typed, answer};
use crate::brain::LimitsConfig;
use crate::protocol::Capability;
use crate::protocol::checkout::{CheckoutResponse, OrderResponse};
use crate::protocol::request::{
    CheckoutIdArgs, CreateCheckoutArgs, OrderIdArgs, UpdateCheckoutArgs,
};

pub static CREATE_CHECKOUT: Declaration = Declaration {
    name: ToolName::new("create_checkout", Capability::Checkout, Effect::Changes),
    title: "Start a checkout",
    what: "Start a checkout from variant ids and quantities (line_items) or from an existing cart (cart_id). The answer's status says what is missing (messages with paths), and the store's totals in minor units.",
    example: r#"{"meta": {"ucp-agent": {"profile": "https://your-agent.example/.well-known/ucp"}, "idempotency-key": "5c7e9a1b-3d5f-4b7a-9c1e-3f5a7c9e1b3d"}, "checkout": {"cart_id": "<the id create_cart returned>", "buyer": {"email": "buyer@example.com"}}}"#,
    destructive: false,
    idempotent: false,
    requires_key: false,
    refuses_payload_id: None,
    rest: Rest::new(RestMethod::Post, "/checkout-sessions", BodyRole::Checkout).creating(),
    limits: checkout_limits,
    entry: &Typed::<CreateCheckoutArgs, CheckoutResponse>::new(|brain, args, call| {
        answer(brain.create_checkout(args.checkout, call.release))
    }),
};

pub static GET_CHECKOUT: Declaration = Declaration {
    name: ToolName::new("get_checkout", Capability::Checkout, Effect::Reads),
    title: "Get a checkout",
    what: "Get the current state of a checkout by id.",
    example: r#"{"meta": {"ucp-agent": {"profile": "https://your-agent.example/.well-known/ucp"}}, "id": "<the id create_checkout returned>"}"#,
    destructive: false,
    idempotent: true,
    requires_key: false,
    refuses_payload_id: None,
    rest: Rest::new(RestMethod::Get, "/checkout-sessions/{id}", BodyRole::None),
    limits: super::no_limits,
    entry: &Typed::<CheckoutIdArgs, CheckoutResponse>::new(|brain, args, call| {
        answer(async move { brain.get_checkout(&args.id, call.release).await })
    }),
};

pub static UPDATE_CHECKOUT: Declaration = Declaration {
    name: ToolName::new("update_checkout", Capability::Checkout, Effect::Changes),
    title: "Update a checkout (buyer, address, delivery option, codes, lines)",
    what: "Update a checkout: buyer, a shipping address (fulfillment.methods[0].destinations; the answer lists the store's delivery options), a delivery option (fulfillment.methods[].groups[].selected_option_id), discount codes (the complete set), or the complete list of line items. Parts left out stay as they are.",
    example: r#"{"meta": {"ucp-agent": {"profile": "https://your-agent.example/.well-known/ucp"}}, "id": "<the id create_checkout returned>", "checkout": {"fulfillment": {"methods": [{"type": "shipping", "destinations": [{"street_address": "Av. Paulista 1000", "address_locality": "São Paulo", "address_region": "SP", "postal_code": "01310-100", "address_country": "BR"}]}]}, "discounts": {"codes": ["WELCOME10"]}}}"#,
    destructive: false,
    idempotent: false,
    requires_key: false,
    refuses_payload_id: Some("checkout"),
    rest: Rest::new(
        RestMethod::Put,
        "/checkout-sessions/{id}",
        BodyRole::Checkout,
    ),
    limits: checkout_limits,
    entry: &Typed::<UpdateCheckoutArgs, CheckoutResponse>::new(|brain, args, call| {
        answer(async move {
            brain
                .update_checkout(&args.id, args.checkout, call.release)
                .await
        })
    }),
};

pub static COMPLETE_CHECKOUT: Declaration = Declaration {
    name: ToolName::new("complete_checkout", Capability::Checkout, Effect::Completes),
    title: "Place the order",
    what: "Place the order of a ready_for_complete checkout with one of its payment.handlers (payment.instruments[0].handler_id). A checkout in requires_escalation is handed to the buyer with continue_url instead. Requires meta.idempotency-key; a retry with the same key answers the same.",
    example: r#"{"meta": {"ucp-agent": {"profile": "https://your-agent.example/.well-known/ucp"}, "idempotency-key": "7d9f1b3c-5e7a-4c9b-8d1f-5a7c9e1b3d5f"}, "id": "<the id create_checkout returned>", "checkout": {"payment": {"instruments": [{"handler_id": "<one of payment.handlers[].id>"}]}}}"#,
    destructive: true,
    idempotent: false,
    // checkout-mcp.md: a retried completion is recognised as the same call.
    requires_key: true,
    refuses_payload_id: Some("checkout"),
    rest: Rest::new(
        RestMethod::Post,
        "/checkout-sessions/{id}/complete",
        BodyRole::Checkout,
    ),
    limits: checkout_limits,
    entry: &Typed::<UpdateCheckoutArgs, CheckoutResponse>::new(|brain, args, call| {
        answer(async move {
            brain
                .complete_checkout(
                    &args.id,
                    args.checkout,
                    args.meta.idempotency_key,
                    call.release,
                    call.webhook_url,
                )
                .await
        })
    }),
};

pub static CANCEL_CHECKOUT: Declaration = Declaration {
    name: ToolName::new("cancel_checkout", Capability::Checkout, Effect::Changes),
    title: "Cancel a checkout",
    what: "Cancel an open checkout; it answers with status canceled. Requires meta.idempotency-key.",
    example: r#"{"meta": {"ucp-agent": {"profile": "https://your-agent.example/.well-known/ucp"}, "idempotency-key": "1e3a5c7e-9b1d-4f3a-8c5e-7a9c1e3b5d7f"}, "id": "<the id create_checkout returned>"}"#,
    destructive: true,
    idempotent: false,
    requires_key: true,
    refuses_payload_id: None,
    rest: Rest::new(
        RestMethod::Post,
        "/checkout-sessions/{id}/cancel",
        BodyRole::None,
    ),
    limits: super::no_limits,
    entry: &Typed::<CheckoutIdArgs, CheckoutResponse>::new(|brain, args, call| {
        answer(async move { brain.cancel_checkout(&args.id, call.release).await })
    }),
};

pub static GET_ORDER: Declaration = Declaration {
    name: ToolName::new("get_order", Capability::Order, Effect::Reads),
    title: "Get an order",
    what: "Get the current state of an order placed through this bridge, by the order.id a completed checkout answered with.",
    example: r#"{"meta": {"ucp-agent": {"profile": "https://your-agent.example/.well-known/ucp"}}, "id": "<the order.id complete_checkout returned>"}"#,
    destructive: false,
    idempotent: true,
    requires_key: false,
    refuses_payload_id: None,
    rest: Rest::new(RestMethod::Get, "/orders/{id}", BodyRole::None),
    limits: super::no_limits,
    entry: &Typed::<OrderIdArgs, OrderResponse>::new(|brain, args, call| {
        answer(async move { brain.get_order(&args.id, call.release).await })
    }),
};

/// The checkout payload's line bounds, as the cart's: the configured count and quantity.
fn checkout_limits(schema: &mut Schema, limits: &LimitsConfig) -> Result<(), String> {
    let lines = at(schema, "/properties/checkout/properties/line_items")?;
    lines.insert("maxItems".into(), json!(limits.max_cart_lines));
    quantity_bound(
        schema,
        "/properties/checkout/properties/line_items/items/properties/quantity",
        limits,
    )
}
