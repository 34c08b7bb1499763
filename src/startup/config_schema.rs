//! `bcp-bridge config-schema`: the JSON Schema of the configuration file, derived from the
//! section types serde reads (`BridgeConfig` and each module's own section), so it cannot
//! drift from what `check` accepts. Unknown keys are refused by both.

use schemars::{Schema, SchemaGenerator, json_schema};

use super::configure::BridgeConfig;
use crate::registry;

/// The schema as `config-schema` prints it (and `config/bcp-bridge.schema.json` holds).
pub fn render() -> String {
    let mut schema = schemars::schema_for!(BridgeConfig);
    schema.insert("title".into(), "bcp-bridge configuration".into());
    serde_json::to_string_pretty(&schema).unwrap_or_default()
}

/// `[store]`: one of the registered platforms, each with its adapter's own keys.
pub(super) fn store(generator: &mut SchemaGenerator) -> Schema {
    let platforms: Vec<Schema> = registry::PLATFORMS
        .iter()
        .map(|factory| {
            let mut schema = (factory.schema)(generator);
            if let Some(properties) = schema
                .ensure_object()
                .entry("properties")
                .or_insert_with(|| serde_json::Value::Object(Default::default()))
                .as_object_mut()
            {
                properties.insert(
                    "platform".into(),
                    serde_json::json!({"const": factory.name}),
                );
            }
            let required = schema
                .ensure_object()
                .entry("required")
                .or_insert_with(|| serde_json::Value::Array(Vec::new()));
            if let Some(required) = required.as_array_mut() {
                // Only the sample store may be implied (an empty `[store]` is the sample).
                if factory.name != "sample" {
                    required.push("platform".into());
                }
            }
            schema
        })
        .collect();
    json_schema!({
        "description": "The store: `platform` names the adapter, the other keys are its own (absent: the sample store).",
        "type": "object",
        "oneOf": platforms
    })
}
