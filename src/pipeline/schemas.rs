//! Input and output JSON Schemas of the tools, built once at start-up. They are inlined (no
//! `$ref`) and use only standard keywords so every MCP client can read them; the input
//! schemas are also what arguments are validated against, with the configured limits.
//!
//! The input schemas are derived from the request types (`protocol::request`), then the
//! configured limits and the per-tool differences of a shared type are written into them.

use schemars::generate::SchemaSettings;
use schemars::transform::{RecursiveTransform, Transform};
use schemars::{JsonSchema, Schema};
use serde_json::{Value, json};

use crate::brain::LimitsConfig;
use crate::protocol::request::{
    CartIdArgs, CatalogArgs, CheckoutIdArgs, CreateCartArgs, CreateCheckoutArgs, GetProductIn,
    LookupIn, OrderIdArgs, SearchIn, UpdateCartArgs, UpdateCheckoutArgs,
};

/// Keeps the derived schemas to what the hand-written ones said, for clients that read only
/// plain JSON Schema: `Option` means "may be absent", never `null` (serde would read `null` as
/// absent, but the contract always refused it); schemars' integer widths (`uint32`, `int64`)
/// are not standard formats; and decoding defaults are the brain's business, not a promise to
/// agents.
fn portable(schema: &mut Schema) {
    if let Some(Value::Array(types)) = schema.get_mut("type") {
        types.retain(|kind| kind != "null");
        if let [only] = types.as_slice() {
            let only = only.clone();
            schema.insert("type".into(), only);
        }
    }
    if schema.get("type").is_some_and(|kind| kind == "integer") {
        schema.remove("format");
    }
    schema.remove("default");
}

fn derive<T: JsonSchema>() -> Schema {
    let mut generator = SchemaSettings::draft2020_12()
        .with(|settings| {
            settings.inline_subschemas = true;
            settings.meta_schema = None;
        })
        .into_generator();
    // `json_schema` rather than a root schema: no `title` naming the Rust type.
    let mut schema = T::json_schema(&mut generator);
    RecursiveTransform(portable).transform(&mut schema);
    schema
}

/// The member at `pointer`, which the request types guarantee: a miss is a start-up error.
fn at<'a>(
    schema: &'a mut Schema,
    pointer: &str,
) -> Result<&'a mut serde_json::Map<String, Value>, String> {
    schema
        .pointer_mut(pointer)
        .and_then(Value::as_object_mut)
        .ok_or_else(|| format!("derived input schema has no object at {pointer}"))
}

pub fn search_input(limits: &LimitsConfig) -> Result<Value, String> {
    let mut schema = derive::<CatalogArgs<SearchIn>>();
    at(
        &mut schema,
        "/properties/catalog/properties/pagination/properties/limit",
    )?
    .insert(
        "description".into(),
        json!(format!(
            "Page size, default {}; larger values are clamped to {}.",
            limits.default_page_size, limits.max_page_size
        )),
    );
    Ok(schema.to_value())
}

pub fn lookup_input(limits: &LimitsConfig) -> Result<Value, String> {
    let mut schema = derive::<CatalogArgs<LookupIn>>();
    at(&mut schema, "/properties/catalog/properties/ids")?
        .insert("maxItems".into(), json!(limits.max_lookup_batch));
    Ok(schema.to_value())
}

pub fn get_product_input() -> Value {
    derive::<CatalogArgs<GetProductIn>>().to_value()
}

/// The cart payload's line bounds: `min_lines` is the tool's (create needs one line, update
/// may empty the cart), the rest the configuration's.
fn cart_limits(schema: &mut Schema, limits: &LimitsConfig, min_lines: u32) -> Result<(), String> {
    let lines = at(schema, "/properties/cart/properties/line_items")?;
    lines.insert("minItems".into(), json!(min_lines));
    lines.insert("maxItems".into(), json!(limits.max_cart_lines));
    quantity_bound(
        schema,
        "/properties/cart/properties/line_items/items/properties/quantity",
        limits,
    )?;
    Ok(())
}

/// The configured line quantity is the store's rule, not the request's shape: a larger one is
/// revised down with a `quantity_adjusted` warning (`brain::cart`), so the schema only says so.
fn quantity_bound(schema: &mut Schema, pointer: &str, limits: &LimitsConfig) -> Result<(), String> {
    at(schema, pointer)?.insert(
        "description".into(),
        json!(format!(
            "Units of the item. A line holds at most {}: a larger quantity is set to that, with a quantity_adjusted warning.",
            limits.max_line_quantity
        )),
    );
    Ok(())
}

pub fn create_cart_input(limits: &LimitsConfig) -> Result<Value, String> {
    let mut schema = derive::<CreateCartArgs>();
    cart_limits(&mut schema, limits, 1)?;
    Ok(schema.to_value())
}

pub fn update_cart_input(limits: &LimitsConfig) -> Result<Value, String> {
    let mut schema = derive::<UpdateCartArgs>();
    cart_limits(&mut schema, limits, 0)?;
    Ok(schema.to_value())
}

/// get_cart and cancel_cart share `CartIdArgs`; only cancel_cart, the destructive one, makes
/// the key mandatory so a retried cancel is recognised as the same call.
pub fn cart_id_input(require_idempotency_key: bool) -> Result<Value, String> {
    let mut schema = derive::<CartIdArgs>();
    if require_idempotency_key {
        require_key(&mut schema)?;
    }
    Ok(schema.to_value())
}

fn require_key(schema: &mut Schema) -> Result<(), String> {
    let meta = at(schema, "/properties/meta")?;
    match meta.get_mut("required") {
        Some(Value::Array(required)) => required.push(json!("idempotency-key")),
        _ => return Err("derived meta schema has no required list".into()),
    }
    Ok(())
}

/// The checkout payload's line bounds, as the cart's: the configured count and quantity.
fn checkout_limits(schema: &mut Schema, limits: &LimitsConfig) -> Result<(), String> {
    let lines = at(schema, "/properties/checkout/properties/line_items")?;
    lines.insert("maxItems".into(), json!(limits.max_cart_lines));
    quantity_bound(
        schema,
        "/properties/checkout/properties/line_items/items/properties/quantity",
        limits,
    )?;
    Ok(())
}

pub fn create_checkout_input(limits: &LimitsConfig) -> Result<Value, String> {
    let mut schema = derive::<CreateCheckoutArgs>();
    checkout_limits(&mut schema, limits)?;
    Ok(schema.to_value())
}

/// update_checkout and complete_checkout share `UpdateCheckoutArgs`; complete requires the
/// idempotency key (checkout-mcp.md), so a retried completion is recognised as the same call.
pub fn update_checkout_input(
    limits: &LimitsConfig,
    require_idempotency_key: bool,
) -> Result<Value, String> {
    let mut schema = derive::<UpdateCheckoutArgs>();
    checkout_limits(&mut schema, limits)?;
    if require_idempotency_key {
        require_key(&mut schema)?;
    }
    Ok(schema.to_value())
}

/// get_checkout and cancel_checkout; cancel requires the key.
pub fn checkout_id_input(require_idempotency_key: bool) -> Result<Value, String> {
    let mut schema = derive::<CheckoutIdArgs>();
    if require_idempotency_key {
        require_key(&mut schema)?;
    }
    Ok(schema.to_value())
}

// ---- outputs -------------------------------------------------------------------------------

fn money() -> Value {
    json!({
        "type": "object",
        "required": ["amount", "currency"],
        "properties": {
            "amount": {"type": "integer", "description": "ISO 4217 minor units."},
            "currency": {"type": "string", "pattern": "^[A-Z]{3}$"}
        }
    })
}

fn ucp_envelope() -> Value {
    json!({
        "type": "object",
        "required": ["version"],
        "properties": {
            "version": {"type": "string", "pattern": "^\\d{4}-\\d{2}-\\d{2}$"},
            "status": {"type": "string", "enum": ["success", "error"]},
            "capabilities": {"type": "object"}
        }
    })
}

fn messages() -> Value {
    json!({
        "type": "array",
        "items": {
            "type": "object",
            "required": ["type", "content"],
            "properties": {
                "type": {"type": "string", "enum": ["error", "warning", "info"]},
                "code": {"type": "string"},
                "content": {"type": "string"},
                "severity": {"type": "string", "enum": ["recoverable", "requires_buyer_input", "requires_buyer_review", "unrecoverable"]},
                "path": {"type": "string"}
            }
        }
    })
}

fn selected_options() -> Value {
    json!({
        "type": "array",
        "items": {
            "type": "object",
            "required": ["name", "label"],
            "properties": {"name": {"type": "string"}, "label": {"type": "string"}}
        }
    })
}

fn variant() -> Value {
    json!({
        "type": "object",
        "required": ["id", "title", "description", "price"],
        "properties": {
            "id": {"type": "string"},
            "sku": {"type": "string"},
            "title": {"type": "string"},
            "description": {"type": "object"},
            "url": {"type": "string"},
            "price": money(),
            "list_price": money(),
            "availability": {
                "type": "object",
                "properties": {"available": {"type": "boolean"}, "status": {"type": "string"}}
            },
            "options": selected_options(),
            "media": {"type": "array", "items": {"type": "object"}},
            "tags": {"type": "array", "items": {"type": "string"}},
            "seller": {"type": "object"},
            "inputs": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["id"],
                    "properties": {"id": {"type": "string"}, "match": {"type": "string"}}
                }
            }
        }
    })
}

fn product() -> Value {
    json!({
        "type": "object",
        "required": ["id", "title", "description", "price_range", "variants"],
        "properties": {
            "id": {"type": "string"},
            "handle": {"type": "string"},
            "title": {"type": "string"},
            "description": {"type": "object"},
            "url": {"type": "string"},
            "categories": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["value"],
                    "properties": {"value": {"type": "string"}, "taxonomy": {"type": "string"}}
                }
            },
            "price_range": {
                "type": "object",
                "required": ["min", "max"],
                "properties": {"min": money(), "max": money()}
            },
            "media": {"type": "array", "items": {"type": "object"}},
            "options": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["name", "values"],
                    "properties": {
                        "name": {"type": "string"},
                        "values": {
                            "type": "array",
                            "items": {
                                "type": "object",
                                "required": ["label"],
                                "properties": {
                                    "label": {"type": "string"},
                                    "available": {"type": "boolean"},
                                    "exists": {"type": "boolean"}
                                }
                            }
                        }
                    }
                }
            },
            "selected": selected_options(),
            "variants": {"type": "array", "items": variant()},
            "rating": {"type": "object"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "metadata": {"type": "object"}
        }
    })
}

/// Every tool answers either its resource or an error response (`ucp.status: "error"` with
/// messages), so only `ucp` is required at the top.
fn output(properties: Value) -> Value {
    let mut schema = json!({
        "type": "object",
        "required": ["ucp"],
        "properties": {
            "ucp": ucp_envelope(),
            "messages": messages(),
            "continue_url": {"type": "string"}
        }
    });
    if let (Some(target), Value::Object(extra)) = (
        schema.get_mut("properties").and_then(Value::as_object_mut),
        properties,
    ) {
        target.extend(extra);
    }
    schema
}

pub fn search_output() -> Value {
    output(json!({
        "products": {"type": "array", "items": product()},
        "pagination": {
            "type": "object",
            "required": ["has_next_page"],
            "properties": {
                "cursor": {"type": "string"},
                "has_next_page": {"type": "boolean"},
                "total_count": {"type": "integer", "minimum": 0}
            }
        }
    }))
}

pub fn lookup_output() -> Value {
    output(json!({"products": {"type": "array", "items": product()}}))
}

pub fn get_product_output() -> Value {
    output(json!({"product": product()}))
}

pub fn cart_output() -> Value {
    let total = json!({
        "type": "object",
        "required": ["type", "amount"],
        "properties": {"type": {"type": "string"}, "amount": {"type": "integer"}, "display_text": {"type": "string"}}
    });
    output(json!({
        "id": {"type": "string"},
        "line_items": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["id", "item", "quantity", "totals"],
                "properties": {
                    "id": {"type": "string"},
                    "item": {
                        "type": "object",
                        "required": ["id", "title", "price"],
                        "properties": {
                            "id": {"type": "string"},
                            "title": {"type": "string"},
                            "price": {"type": "integer"},
                            "image_url": {"type": "string"}
                        }
                    },
                    "quantity": {"type": "integer", "minimum": 1},
                    "totals": {"type": "array", "items": total.clone()}
                }
            }
        },
        "currency": {"type": "string"},
        "totals": {"type": "array", "items": total},
        "expires_at": {"type": "string"}
    }))
}

pub fn order_id_input() -> Value {
    derive::<OrderIdArgs>().to_value()
}

/// The Order object's top level (`schemas/shopping/order.json`).
pub fn order_output() -> Value {
    output(json!({
        "id": {"type": "string"},
        "checkout_id": {"type": "string"},
        "permalink_url": {"type": "string"},
        "line_items": {"type": "array"},
        "fulfillment": {"type": "object"},
        "currency": {"type": "string"},
        "totals": {"type": "array"}
    }))
}

/// The Checkout object's top level; the nested shapes are the UCP schema's
/// (`schemas/shopping/checkout.json`), checked by the suite rather than restated here.
pub fn checkout_output() -> Value {
    output(json!({
        "id": {"type": "string"},
        "status": {
            "type": "string",
            "enum": ["incomplete", "requires_escalation", "ready_for_complete", "complete_in_progress", "completed", "canceled"]
        },
        "line_items": {"type": "array"},
        "currency": {"type": "string"},
        "totals": {"type": "array"},
        "links": {"type": "array"},
        "continue_url": {"type": "string"},
        "fulfillment": {"type": "object"},
        "discounts": {"type": "object"},
        "payment": {"type": "object"},
        "order": {"type": "object"},
        "expires_at": {"type": "string"}
    }))
}
