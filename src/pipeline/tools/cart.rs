//! The cart: create_cart, get_cart, update_cart, cancel_cart.

use schemars::Schema;
use serde_json::json;

use super::schema::{at, quantity_bound};
use super::{BodyRole, Declaration, Effect, Rest, RestMethod, ToolName, Typed, answer};
use crate::brain::LimitsConfig;
use crate::protocol::Capability;
use crate::protocol::cart::CartResponse;
use crate::protocol::request::{CartIdArgs, CreateCartArgs, UpdateCartArgs};

pub static CREATE_CART: Declaration = Declaration {
    name: ToolName::new("create_cart", Capability::Cart, Effect::Changes),
    title: "Create a cart",
    what: "Create a cart in the store from variant ids and quantities. Returns totals in minor units and a continue_url where the buyer completes checkout on the store.",
    example: r#"{"meta": {"ucp-agent": {"profile": "https://your-agent.example/.well-known/ucp"}, "idempotency-key": "3f1c2a9e-7d4b-4c1e-9a65-0b8e2f6d1c47"}, "cart": {"line_items": [{"item": {"id": "prod_abc123_blu_9"}, "quantity": 1}]}}"#,
    destructive: false,
    idempotent: false,
    requires_key: false,
    refuses_payload_id: None,
    rest: Rest::new(RestMethod::Post, "/carts", BodyRole::Cart).creating(),
    // A new cart needs a line.
    limits: |schema, limits| cart_limits(schema, limits, 1),
    entry: &Typed::<CreateCartArgs, CartResponse>::new(|brain, args, call| {
        answer(brain.create_cart(args.cart, call.release))
    }),
};

pub static GET_CART: Declaration = Declaration {
    name: ToolName::new("get_cart", Capability::Cart, Effect::Reads),
    title: "Get a cart",
    what: "Get the current state of a cart by id.",
    example: r#"{"meta": {"ucp-agent": {"profile": "https://your-agent.example/.well-known/ucp"}}, "id": "<the id create_cart returned>"}"#,
    destructive: false,
    idempotent: true,
    requires_key: false,
    refuses_payload_id: Some("cart"),
    rest: Rest::new(RestMethod::Get, "/carts/{id}", BodyRole::None),
    limits: super::no_limits,
    entry: &Typed::<CartIdArgs, CartResponse>::new(|brain, args, call| {
        answer(async move { brain.get_cart(&args.id, call.release).await })
    }),
};

pub static UPDATE_CART: Declaration = Declaration {
    name: ToolName::new("update_cart", Capability::Cart, Effect::Changes),
    title: "Replace a cart's lines",
    what: "Replace ALL line items of a cart (send the complete list; omitted lines are removed).",
    example: r#"{"meta": {"ucp-agent": {"profile": "https://your-agent.example/.well-known/ucp"}}, "id": "<the id create_cart returned>", "cart": {"line_items": [{"item": {"id": "prod_abc123_blu_9"}, "quantity": 2}]}}"#,
    destructive: false,
    // A full replacement: sending it twice leaves the cart as once.
    idempotent: true,
    requires_key: false,
    refuses_payload_id: Some("cart"),
    rest: Rest::new(RestMethod::Put, "/carts/{id}", BodyRole::Cart),
    // An update may empty the cart.
    limits: |schema, limits| cart_limits(schema, limits, 0),
    entry: &Typed::<UpdateCartArgs, CartResponse>::new(|brain, args, call| {
        answer(async move { brain.update_cart(&args.id, args.cart, call.release).await })
    }),
};

pub static CANCEL_CART: Declaration = Declaration {
    name: ToolName::new("cancel_cart", Capability::Cart, Effect::Changes),
    title: "Cancel a cart",
    what: "Cancel a cart. Returns the cart as it was; afterwards the id answers not_found. Requires meta.idempotency-key.",
    example: r#"{"meta": {"ucp-agent": {"profile": "https://your-agent.example/.well-known/ucp"}, "idempotency-key": "9b2d4f6a-1c3e-4a5b-8d7f-2e4c6a8b0d1f"}, "id": "<the id create_cart returned>"}"#,
    destructive: true,
    idempotent: false,
    requires_key: true,
    refuses_payload_id: Some("cart"),
    rest: Rest::new(RestMethod::Post, "/carts/{id}/cancel", BodyRole::None),
    limits: super::no_limits,
    entry: &Typed::<CartIdArgs, CartResponse>::new(|brain, args, call| {
        answer(async move { brain.cancel_cart(&args.id, call.release).await })
    }),
};

/// The cart payload's line bounds: `min_lines` is the tool's, the rest the configuration's.
fn cart_limits(schema: &mut Schema, limits: &LimitsConfig, min_lines: u32) -> Result<(), String> {
    let lines = at(schema, "/properties/cart/properties/line_items")?;
    lines.insert("minItems".into(), json!(min_lines));
    lines.insert("maxItems".into(), json!(limits.max_cart_lines));
    quantity_bound(
        schema,
        "/properties/cart/properties/line_items/items/properties/quantity",
        limits,
    )
}
