//! The tool table: the declared tools a store serves, each with its published MCP entry and
//! compiled input validator, built once.

use std::sync::Arc;

use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use serde_json::{Value, json};

use super::agents::META_EXAMPLE;
use super::protocol_error::ProtocolError;
use super::tools::{DECLARED, Declaration, schema};
use crate::brain::LimitsConfig;
use crate::platform::Capabilities;
use crate::protocol::Capability;
pub use crate::protocol::tool::ToolName;

/// What the model reads to choose and call the tool: what it does, then one complete call.
fn description(declaration: &Declaration) -> String {
    // The example stays last: clients and tests read it up to the end of the description.
    format!(
        "{}\n\n{}\n\nExample arguments: {}",
        declaration.what,
        crate::brain::untrusted::MERCHANT_TEXT_NOTICE,
        declaration.example
    )
}

pub struct ToolSpec {
    pub name: ToolName,
    pub declaration: &'static Declaration,
    pub tool: Tool,
    validator: jsonschema::Validator,
}

fn object(value: Value) -> Arc<JsonObject> {
    match value {
        Value::Object(map) => Arc::new(map),
        _ => Arc::new(JsonObject::new()),
    }
}

/// JSON Pointer (`/catalog/ids/3`) → the JSONPath agents read (`$.catalog.ids[3]`).
fn json_path(pointer: &str) -> String {
    let mut path = String::from("$");
    for segment in pointer.split('/').skip(1) {
        let segment = segment.replace("~1", "/").replace("~0", "~");
        if segment.bytes().all(|byte| byte.is_ascii_digit()) && !segment.is_empty() {
            path.push_str(&format!("[{segment}]"));
        } else if segment
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || byte == b'_')
        {
            path.push('.');
            path.push_str(&segment);
        } else {
            path.push_str(&format!("['{segment}']"));
        }
    }
    path
}

impl ToolSpec {
    fn new(declaration: &'static Declaration, input: Value, output: Value) -> Result<Self, String> {
        let name = declaration.name;
        let validator = jsonschema::options()
            .should_validate_formats(false)
            .build(&input)
            .map_err(|error| format!("input schema of {}: {error}", name.as_str()))?;
        let read_only = declaration.read_only();
        let mut annotations = ToolAnnotations::new();
        annotations.read_only_hint = Some(read_only);
        annotations.destructive_hint = Some(declaration.destructive);
        annotations.idempotent_hint = Some(read_only || declaration.idempotent);
        annotations.open_world_hint = Some(false);
        let tool = Tool::new(name.as_str(), description(declaration), object(input))
            .with_title(declaration.title)
            .with_raw_output_schema(object(output))
            .with_annotations(annotations);
        Ok(Self {
            name,
            declaration,
            tool,
            validator,
        })
    }

    /// Checks arguments against the input schema; the error names each offending JSON path.
    pub fn validate(&self, arguments: &Value) -> Result<(), ProtocolError> {
        let errors: Vec<(String, String)> = self
            .validator
            .iter_errors(arguments)
            .take(10)
            .map(|error| {
                (
                    json_path(error.instance_path().as_str()),
                    error.masked().to_string(),
                )
            })
            .collect();
        let Some((first_path, first_message)) = errors.first() else {
            return Ok(());
        };
        // The one mistake every stock MCP client makes first: say exactly what to send.
        let hint = if first_path.starts_with("$.meta")
            || (first_path == "$" && first_message.contains("\"meta\""))
        {
            format!(
                ". Every call carries the calling agent's profile URL: {META_EXAMPLE} (the store can also name a default with [agents] default_profile)"
            )
        } else {
            String::new()
        };
        Err(ProtocolError::InvalidParams {
            message: format!("{first_path}: {first_message}{hint}"),
            data: Some(json!({
                "path": first_path,
                "errors": errors
                    .iter()
                    .map(|(path, message)| json!({"path": path, "message": message}))
                    .collect::<Vec<_>>()
            })),
        })
    }
}

pub struct ToolTable {
    specs: Vec<ToolSpec>,
    /// Every declared tool, served or not: its name is a metrics label.
    declared: Vec<&'static str>,
}

impl ToolTable {
    /// Only the bridge's tools of capabilities the store really serves; no checkout.
    pub fn new(limits: &LimitsConfig, capabilities: Capabilities) -> Result<Self, String> {
        Self::serving(&DECLARED, limits, capabilities, false, false)
    }

    /// The `declared` tools the store serves. `checkout`: whether the platform's adapter
    /// implements the checkout port; the checkout tools (and so the capability in the
    /// profile) exist only then. `orders`: whether that port reads back the orders placed
    /// through it (`get_order`).
    pub fn serving(
        declared: &[&'static Declaration],
        limits: &LimitsConfig,
        capabilities: Capabilities,
        checkout: bool,
        orders: bool,
    ) -> Result<Self, String> {
        let mut specs = Vec::new();
        for declaration in declared.iter().copied() {
            let served = match declaration.capability() {
                Capability::CatalogSearch => capabilities.search,
                Capability::CatalogLookup => capabilities.lookup,
                Capability::Cart => capabilities.cart,
                Capability::Checkout => checkout,
                Capability::Order => checkout && orders,
                // No tool of its own: extensions ride on checkout's tools.
                Capability::Fulfillment | Capability::Discount => false,
            };
            if !served {
                continue;
            }
            let input = schema::input_of(declaration, limits)?;
            specs.push(ToolSpec::new(
                declaration,
                input,
                schema::output_of(declaration),
            )?);
        }
        let declared = declared
            .iter()
            .map(|declared| declared.name.as_str())
            .collect();
        Ok(Self { specs, declared })
    }

    /// The same tools with `buyer.taxpayer_id` (BCP's fiscal identity) left out of the
    /// checkout inputs: the UCP door's buyer is UCP's.
    pub fn without_taxpayer_id(self) -> Result<Self, String> {
        let mut specs = Vec::with_capacity(self.specs.len());
        for spec in self.specs {
            let mut input = Value::Object((*spec.tool.input_schema).clone());
            let Some(buyer) = input
                .pointer_mut("/properties/checkout/properties/buyer/properties")
                .and_then(Value::as_object_mut)
            else {
                specs.push(spec);
                continue;
            };
            buyer.remove("taxpayer_id");
            let output = spec
                .tool
                .output_schema
                .as_deref()
                .map_or_else(|| json!({}), |output| Value::Object(output.clone()));
            specs.push(ToolSpec::new(spec.declaration, input, output)?);
        }
        Ok(Self {
            specs,
            declared: self.declared,
        })
    }

    pub fn get(&self, name: &str) -> Option<&ToolSpec> {
        self.specs.iter().find(|spec| spec.name.as_str() == name)
    }

    /// The name of a declared tool, served or not.
    pub fn declared(&self, name: &str) -> Option<&'static str> {
        self.declared
            .iter()
            .copied()
            .find(|declared| *declared == name)
    }

    /// The declarations of the tools served, in the order they are published.
    pub fn declarations(&self) -> impl Iterator<Item = &'static Declaration> + '_ {
        self.specs.iter().map(|spec| spec.declaration)
    }

    pub fn tools(&self) -> Vec<Tool> {
        self.specs.iter().map(|spec| spec.tool.clone()).collect()
    }

    pub fn capabilities(&self) -> Vec<Capability> {
        let mut capabilities: Vec<Capability> = self
            .specs
            .iter()
            .map(|spec| spec.name.capability())
            .collect();
        capabilities.dedup();
        if capabilities.contains(&Capability::Checkout) {
            capabilities.extend(Capability::CHECKOUT_EXTENSIONS);
        }
        capabilities
    }
}

#[cfg(test)]
mod tests {
    use super::json_path;

    #[test]
    fn pointers_become_json_paths() {
        assert_eq!(json_path(""), "$");
        assert_eq!(json_path("/catalog/ids/3"), "$.catalog.ids[3]");
        assert_eq!(json_path("/meta/ucp-agent"), "$.meta['ucp-agent']");
        assert_eq!(json_path("/a~1b"), "$['a/b']");
    }
}
