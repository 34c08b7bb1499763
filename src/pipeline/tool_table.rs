//! The tool table: name, capability, schemas and compiled validator of each tool, built once.

use std::sync::Arc;

use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use serde_json::{Value, json};

use super::agents::META_EXAMPLE;
use super::protocol_error::ProtocolError;
use super::schemas;
use crate::brain::LimitsConfig;
use crate::platform::Capabilities;
use crate::protocol::Capability;
pub use crate::protocol::tool::ToolName;

/// How MCP clients show the tool to a person.
fn title(name: ToolName) -> &'static str {
    match name {
        ToolName::SearchCatalog => "Search the catalog",
        ToolName::LookupCatalog => "Look up products by id",
        ToolName::GetProduct => "Get one product with option availability",
        ToolName::CreateCart => "Create a cart",
        ToolName::GetCart => "Get a cart",
        ToolName::UpdateCart => "Replace a cart's lines",
        ToolName::CancelCart => "Cancel a cart",
        ToolName::CreateCheckout => "Start a checkout",
        ToolName::GetCheckout => "Get a checkout",
        ToolName::UpdateCheckout => {
            "Update a checkout (buyer, address, delivery option, codes, lines)"
        }
        ToolName::CompleteCheckout => "Place the order",
        ToolName::CancelCheckout => "Cancel a checkout",
        ToolName::GetOrder => "Get an order",
    }
}

/// What the model reads to choose and call the tool: what it does, then one complete call.
fn description(name: ToolName) -> String {
    let (what, example) = match name {
        ToolName::SearchCatalog => (
            "Search the store's products by free text and/or filters (categories, price in minor units). Returns products with their featured variant and an opaque pagination cursor.",
            r#"{"meta": {"ucp-agent": {"profile": "https://your-agent.example/.well-known/ucp"}}, "catalog": {"query": "running shoes", "filters": {"price": {"max": 20000}}, "pagination": {"limit": 5}}}"#,
        ),
        ToolName::LookupCatalog => (
            "Fetch several products or variants at once by product id, variant id, SKU or handle. Each returned variant says which request ids it answers (inputs); unknown ids come back as not_found info messages.",
            r#"{"meta": {"ucp-agent": {"profile": "https://your-agent.example/.well-known/ucp"}}, "catalog": {"ids": ["prod_abc123", "var_xyz789"]}}"#,
        ),
        ToolName::GetProduct => (
            "Get one product with all its options. Pass `selected` options (and `preferences` for which to keep when a combination does not exist) to narrow variants; each option value says whether it exists and is available with the current selections.",
            r#"{"meta": {"ucp-agent": {"profile": "https://your-agent.example/.well-known/ucp"}}, "catalog": {"id": "prod_abc123", "selected": [{"name": "Color", "label": "Blue"}], "preferences": ["Color", "Size"]}}"#,
        ),
        ToolName::CreateCart => (
            "Create a cart in the store from variant ids and quantities. Returns totals in minor units and a continue_url where the buyer completes checkout on the store.",
            r#"{"meta": {"ucp-agent": {"profile": "https://your-agent.example/.well-known/ucp"}, "idempotency-key": "3f1c2a9e-7d4b-4c1e-9a65-0b8e2f6d1c47"}, "cart": {"line_items": [{"item": {"id": "prod_abc123_blu_9"}, "quantity": 1}]}}"#,
        ),
        ToolName::GetCart => (
            "Get the current state of a cart by id.",
            r#"{"meta": {"ucp-agent": {"profile": "https://your-agent.example/.well-known/ucp"}}, "id": "<the id create_cart returned>"}"#,
        ),
        ToolName::UpdateCart => (
            "Replace ALL line items of a cart (send the complete list; omitted lines are removed).",
            r#"{"meta": {"ucp-agent": {"profile": "https://your-agent.example/.well-known/ucp"}}, "id": "<the id create_cart returned>", "cart": {"line_items": [{"item": {"id": "prod_abc123_blu_9"}, "quantity": 2}]}}"#,
        ),
        ToolName::CancelCart => (
            "Cancel a cart. Returns the cart as it was; afterwards the id answers not_found. Requires meta.idempotency-key.",
            r#"{"meta": {"ucp-agent": {"profile": "https://your-agent.example/.well-known/ucp"}, "idempotency-key": "9b2d4f6a-1c3e-4a5b-8d7f-2e4c6a8b0d1f"}, "id": "<the id create_cart returned>"}"#,
        ),
        ToolName::CreateCheckout => (
            "Start a checkout from variant ids and quantities (line_items) or from an existing cart (cart_id). The answer's status says what is missing (messages with paths), and the store's totals in minor units.",
            r#"{"meta": {"ucp-agent": {"profile": "https://your-agent.example/.well-known/ucp"}, "idempotency-key": "5c7e9a1b-3d5f-4b7a-9c1e-3f5a7c9e1b3d"}, "checkout": {"cart_id": "<the id create_cart returned>", "buyer": {"email": "buyer@example.com"}}}"#,
        ),
        ToolName::GetCheckout => (
            "Get the current state of a checkout by id.",
            r#"{"meta": {"ucp-agent": {"profile": "https://your-agent.example/.well-known/ucp"}}, "id": "<the id create_checkout returned>"}"#,
        ),
        ToolName::UpdateCheckout => (
            "Update a checkout: buyer, a shipping address (fulfillment.methods[0].destinations; the answer lists the store's delivery options), a delivery option (fulfillment.methods[].groups[].selected_option_id), discount codes (the complete set), or the complete list of line items. Parts left out stay as they are.",
            r#"{"meta": {"ucp-agent": {"profile": "https://your-agent.example/.well-known/ucp"}}, "id": "<the id create_checkout returned>", "checkout": {"fulfillment": {"methods": [{"type": "shipping", "destinations": [{"street_address": "Av. Paulista 1000", "address_locality": "São Paulo", "address_region": "SP", "postal_code": "01310-100", "address_country": "BR"}]}]}, "discounts": {"codes": ["WELCOME10"]}}}"#,
        ),
        ToolName::CompleteCheckout => (
            "Place the order of a ready_for_complete checkout with one of its payment.handlers (payment.instruments[0].handler_id). A checkout in requires_escalation is handed to the buyer with continue_url instead. Requires meta.idempotency-key; a retry with the same key answers the same.",
            r#"{"meta": {"ucp-agent": {"profile": "https://your-agent.example/.well-known/ucp"}, "idempotency-key": "7d9f1b3c-5e7a-4c9b-8d1f-5a7c9e1b3d5f"}, "id": "<the id create_checkout returned>", "checkout": {"payment": {"instruments": [{"handler_id": "<one of payment.handlers[].id>"}]}}}"#,
        ),
        ToolName::CancelCheckout => (
            "Cancel an open checkout; it answers with status canceled. Requires meta.idempotency-key.",
            r#"{"meta": {"ucp-agent": {"profile": "https://your-agent.example/.well-known/ucp"}, "idempotency-key": "1e3a5c7e-9b1d-4f3a-8c5e-7a9c1e3b5d7f"}, "id": "<the id create_checkout returned>"}"#,
        ),
        ToolName::GetOrder => (
            "Get the current state of an order placed through this bridge, by the order.id a completed checkout answered with.",
            r#"{"meta": {"ucp-agent": {"profile": "https://your-agent.example/.well-known/ucp"}}, "id": "<the order.id complete_checkout returned>"}"#,
        ),
    };
    // The example stays last: clients and tests read it up to the end of the description.
    format!(
        "{what}\n\n{}\n\nExample arguments: {example}",
        crate::brain::untrusted::MERCHANT_TEXT_NOTICE
    )
}

pub struct ToolSpec {
    pub name: ToolName,
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
    fn new(name: ToolName, input: Value, output: Value) -> Result<Self, String> {
        let validator = jsonschema::options()
            .should_validate_formats(false)
            .build(&input)
            .map_err(|error| format!("input schema of {}: {error}", name.as_str()))?;
        let read_only = matches!(
            name,
            ToolName::SearchCatalog
                | ToolName::LookupCatalog
                | ToolName::GetProduct
                | ToolName::GetCart
                | ToolName::GetCheckout
                | ToolName::GetOrder
        );
        let mut annotations = ToolAnnotations::new();
        annotations.read_only_hint = Some(read_only);
        annotations.destructive_hint = Some(matches!(
            name,
            ToolName::CancelCart | ToolName::CancelCheckout | ToolName::CompleteCheckout
        ));
        annotations.idempotent_hint = Some(read_only || name == ToolName::UpdateCart);
        annotations.open_world_hint = Some(false);
        let tool = Tool::new(name.as_str(), description(name), object(input))
            .with_title(title(name))
            .with_raw_output_schema(object(output))
            .with_annotations(annotations);
        Ok(Self {
            name,
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
}

impl ToolTable {
    /// Only the tools of capabilities the store really serves; no checkout.
    pub fn new(limits: &LimitsConfig, capabilities: Capabilities) -> Result<Self, String> {
        Self::serving(limits, capabilities, false, false)
    }

    /// `checkout`: whether the platform's adapter implements the checkout port; the checkout
    /// tools (and so the capability in the profile) exist only then. `orders`: whether that
    /// port reads back the orders placed through it (`get_order`).
    pub fn serving(
        limits: &LimitsConfig,
        capabilities: Capabilities,
        checkout: bool,
        orders: bool,
    ) -> Result<Self, String> {
        let mut specs = Vec::new();
        for name in ToolName::ALL {
            let served = match name.capability() {
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
            let (input, output) = match name {
                ToolName::SearchCatalog => {
                    (schemas::search_input(limits)?, schemas::search_output())
                }
                ToolName::LookupCatalog => {
                    (schemas::lookup_input(limits)?, schemas::lookup_output())
                }
                ToolName::GetProduct => {
                    (schemas::get_product_input(), schemas::get_product_output())
                }
                ToolName::CreateCart => {
                    (schemas::create_cart_input(limits)?, schemas::cart_output())
                }
                ToolName::GetCart => (schemas::cart_id_input(false)?, schemas::cart_output()),
                ToolName::UpdateCart => {
                    (schemas::update_cart_input(limits)?, schemas::cart_output())
                }
                ToolName::CancelCart => (schemas::cart_id_input(true)?, schemas::cart_output()),
                ToolName::CreateCheckout => (
                    schemas::create_checkout_input(limits)?,
                    schemas::checkout_output(),
                ),
                ToolName::GetCheckout => (
                    schemas::checkout_id_input(false)?,
                    schemas::checkout_output(),
                ),
                ToolName::UpdateCheckout => (
                    schemas::update_checkout_input(limits, false)?,
                    schemas::checkout_output(),
                ),
                ToolName::CompleteCheckout => (
                    schemas::update_checkout_input(limits, true)?,
                    schemas::checkout_output(),
                ),
                ToolName::CancelCheckout => (
                    schemas::checkout_id_input(true)?,
                    schemas::checkout_output(),
                ),
                ToolName::GetOrder => (schemas::order_id_input(), schemas::order_output()),
            };
            specs.push(ToolSpec::new(name, input, output)?);
        }
        Ok(Self { specs })
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
            specs.push(ToolSpec::new(spec.name, input, output)?);
        }
        Ok(Self { specs })
    }

    pub fn get(&self, name: &str) -> Option<&ToolSpec> {
        self.specs.iter().find(|spec| spec.name.as_str() == name)
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
