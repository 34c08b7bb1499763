//! The tools' JSON Schemas, derived from their input and output types once at start-up. They
//! are inlined (no `$ref`) and use only standard keywords so every MCP client can read them;
//! the input schemas are also what arguments are validated against, with the configured
//! limits each declaration writes into its own.

use schemars::generate::{Contract, SchemaSettings};
use schemars::transform::{RecursiveTransform, Transform};
use schemars::{JsonSchema, Schema};
use serde_json::{Map, Value, json};

use super::Declaration;
use crate::brain::LimitsConfig;
use crate::protocol::catalog::ErrorResponse;

/// The input schema a declaration publishes: derived from its input type, with the
/// configured limits and its key rule.
pub fn input_of(declaration: &Declaration, limits: &LimitsConfig) -> Result<Value, String> {
    let mut schema = declaration.entry.input();
    (declaration.limits)(&mut schema, limits)?;
    if declaration.requires_key {
        let meta = at(&mut schema, "/properties/meta")?;
        match meta.get_mut("required") {
            Some(Value::Array(required)) => required.push(json!("idempotency-key")),
            _ => return Err("derived meta schema has no required list".into()),
        }
    }
    Ok(schema.to_value())
}

/// The output schema a declaration publishes. Every tool answers either its resource or an
/// error response (`ucp.status: "error"` with messages), so the schema is their common
/// shape: the members of both, and only what both require (`ucp`).
pub fn output_of(declaration: &Declaration) -> Value {
    let resource = declaration.entry.output().to_value();
    let error = output::<ErrorResponse>().to_value();
    let mut properties = members(&resource, "properties");
    for (name, member) in members(&error, "properties") {
        properties.entry(name).or_insert(member);
    }
    let both = |name: &Value| {
        error
            .get("required")
            .and_then(Value::as_array)
            .is_some_and(|required| required.contains(name))
    };
    let required: Vec<Value> = resource
        .get("required")
        .and_then(Value::as_array)
        .map(|required| required.iter().filter(|name| both(name)).cloned().collect())
        .unwrap_or_default();
    json!({"type": "object", "required": required, "properties": properties})
}

fn members(schema: &Value, key: &str) -> Map<String, Value> {
    schema
        .get(key)
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default()
}

/// Keeps the derived input schemas to what the hand-written ones said, for clients that read
/// only plain JSON Schema: `Option` means "may be absent", never `null` (serde would read
/// `null` as absent, but the contract always refused it); schemars' integer widths (`uint32`,
/// `int64`) are not standard formats; and decoding defaults are the brain's business, not a
/// promise to agents.
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

/// The same for answers, whose `null`s are real: a member serde may leave out (an `Option`
/// skipped when `None`) is never `null` when present, while one it always writes may be.
/// Widths of numbers are not standard formats either, and the types' doc comments are
/// written for the bridge's developers, not for agents.
fn answered(schema: &mut Schema) {
    schema.remove("description");
    if schema
        .get("type")
        .is_some_and(|kind| kind == "integer" || kind == "number")
    {
        schema.remove("format");
    }
    let required: Vec<Value> = schema
        .get("required")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let Some(Value::Object(properties)) = schema.get_mut("properties") else {
        return;
    };
    for (name, member) in properties.iter_mut() {
        if !required.iter().any(|required| required == name.as_str()) {
            never_null(member);
        }
    }
}

fn never_null(member: &mut Value) {
    if let Some(Value::Array(values)) = member.get_mut("enum") {
        values.retain(|value| !value.is_null());
    }
    if let Some(Value::Array(types)) = member.get_mut("type") {
        types.retain(|kind| kind != "null");
        if let [only] = types.as_slice() {
            let only = only.clone();
            if let Some(object) = member.as_object_mut() {
                object.insert("type".into(), only);
            }
        }
    }
    if let Some(Value::Array(choices)) = member.get_mut("anyOf") {
        choices.retain(|choice| choice.get("type").is_none_or(|kind| kind != "null"));
        if let [only] = choices.as_slice()
            && let (Value::Object(only), Some(object)) = (only.clone(), member.as_object_mut())
        {
            object.remove("anyOf");
            for (key, value) in only {
                object.entry(key).or_insert(value);
            }
        }
    }
}

fn settings(contract: Contract) -> SchemaSettings {
    SchemaSettings::draft2020_12().with(|settings| {
        settings.inline_subschemas = true;
        settings.meta_schema = None;
        settings.contract = contract;
    })
}

/// The schema of a tool's arguments, as agents send them.
pub fn input<T: JsonSchema>() -> Schema {
    let mut generator = settings(Contract::Deserialize).into_generator();
    // `json_schema` rather than a root schema: no `title` naming the Rust type.
    let mut schema = T::json_schema(&mut generator);
    RecursiveTransform(portable).transform(&mut schema);
    schema
}

/// The schema of a tool's answer, as the brain writes it.
pub fn output<T: JsonSchema>() -> Schema {
    let mut generator = settings(Contract::Serialize).into_generator();
    let mut schema = T::json_schema(&mut generator);
    RecursiveTransform(answered).transform(&mut schema);
    schema
}

/// The member at `pointer`, which the request types guarantee: a miss is a start-up error.
pub fn at<'a>(schema: &'a mut Schema, pointer: &str) -> Result<&'a mut Map<String, Value>, String> {
    schema
        .pointer_mut(pointer)
        .and_then(Value::as_object_mut)
        .ok_or_else(|| format!("derived input schema has no object at {pointer}"))
}

/// The configured line quantity is the store's rule, not the request's shape: a larger one is
/// revised down with a `quantity_adjusted` warning (`brain::cart`), so the schema only says so.
pub fn quantity_bound(
    schema: &mut Schema,
    pointer: &str,
    limits: &LimitsConfig,
) -> Result<(), String> {
    at(schema, pointer)?.insert(
        "description".into(),
        json!(format!(
            "Units of the item. A line holds at most {}: a larger quantity is set to that, with a quantity_adjusted warning.",
            limits.max_line_quantity
        )),
    );
    Ok(())
}
