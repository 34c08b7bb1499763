//! Tool arguments. They are validated against the tool's JSON Schema before they are decoded
//! here, so these structs only need to be as strict as the brain's needs.

use serde::Deserialize;
use serde_json::Value;

/// What the bridge reads of `arguments.meta` before the arguments are validated: parsed once
/// at the MCP edge and handed to every check (access, negotiation, limits, idempotency).
/// Lenient on purpose: a missing or malformed `meta` is the schema's to report, with its path.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CallMeta {
    pub profile: Option<String>,
    pub idempotency_key: Option<String>,
}

impl CallMeta {
    pub fn from_arguments(arguments: &Value) -> Self {
        let meta = arguments.get("meta");
        let text = |value: Option<&Value>| value.and_then(Value::as_str).map(str::to_owned);
        Self {
            profile: text(
                meta.and_then(|meta| meta.get("ucp-agent"))
                    .and_then(|agent| agent.get("profile")),
            ),
            idempotency_key: text(meta.and_then(|meta| meta.get("idempotency-key"))),
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
pub struct AgentMeta {
    #[serde(rename = "ucp-agent")]
    pub agent: AgentRef,
    #[serde(rename = "idempotency-key")]
    pub idempotency_key: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct AgentRef {
    pub profile: String,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct ContextIn {
    pub address_country: Option<String>,
    pub address_region: Option<String>,
    pub postal_code: Option<String>,
    pub intent: Option<String>,
    pub currency: Option<String>,
    pub language: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct PriceFilterIn {
    pub min: Option<i64>,
    pub max: Option<i64>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct FiltersIn {
    #[serde(default)]
    pub categories: Vec<String>,
    pub price: Option<PriceFilterIn>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct PaginationIn {
    pub cursor: Option<String>,
    pub limit: Option<u32>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct SearchIn {
    pub query: Option<String>,
    pub filters: Option<FiltersIn>,
    #[serde(default)]
    pub context: ContextIn,
    #[serde(default)]
    pub pagination: PaginationIn,
}

#[derive(Debug, Clone, Deserialize)]
pub struct LookupIn {
    pub ids: Vec<String>,
    pub filters: Option<FiltersIn>,
    #[serde(default)]
    pub context: ContextIn,
}

#[derive(Debug, Clone, Deserialize)]
pub struct SelectedIn {
    pub name: String,
    pub label: String,
}

#[derive(Debug, Clone, Deserialize)]
pub struct GetProductIn {
    pub id: String,
    #[serde(default)]
    pub selected: Vec<SelectedIn>,
    #[serde(default)]
    pub preferences: Vec<String>,
    pub filters: Option<FiltersIn>,
    #[serde(default)]
    pub context: ContextIn,
}

#[derive(Debug, Clone, Deserialize)]
pub struct ItemRefIn {
    pub id: String,
    /// The sale basis the agent asserts (UCP 2026-08-25); absent asserts nothing.
    #[serde(default)]
    pub quantity_unit: Option<QuantityUnitIn>,
}

/// Only the machine identity (`unit`, effective `scale`) takes part in matching;
/// `display_text` and `increment` are ignored.
#[derive(Debug, Clone, Deserialize)]
pub struct QuantityUnitIn {
    pub unit: String,
    #[serde(default)]
    pub scale: u32,
}

impl QuantityUnitIn {
    /// Every store the bridge serves sells by the piece: UN/CEFACT `C62` at scale 0.
    pub fn is_each(&self) -> bool {
        self.unit == "C62" && self.scale == 0
    }
}

#[derive(Debug, Clone, Deserialize)]
pub struct LineItemIn {
    pub item: ItemRefIn,
    pub quantity: u32,
}

#[derive(Debug, Clone, Deserialize)]
pub struct CartIn {
    pub line_items: Vec<LineItemIn>,
    #[serde(default)]
    pub context: ContextIn,
    pub buyer: Option<serde_json::Value>,
    pub attribution: Option<serde_json::Value>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct CatalogArgs<T> {
    pub meta: AgentMeta,
    pub catalog: T,
}

#[derive(Debug, Clone, Deserialize)]
pub struct CreateCartArgs {
    pub meta: AgentMeta,
    pub cart: CartIn,
}

#[derive(Debug, Clone, Deserialize)]
pub struct CartIdArgs {
    pub meta: AgentMeta,
    pub id: String,
}

#[derive(Debug, Clone, Deserialize)]
pub struct UpdateCartArgs {
    pub meta: AgentMeta,
    pub id: String,
    pub cart: CartIn,
}
