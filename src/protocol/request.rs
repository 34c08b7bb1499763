//! Tool arguments. The tools' input schemas are derived from these types (`JsonSchema`), and
//! arguments are validated against them before serde decodes them here; so the `schemars`
//! attributes carry the wire contract agents read, while the Rust types only need to be as
//! strict as the brain's needs. Limits that come from the configuration (batch sizes, line
//! quantities, page sizes) are applied to the derived schema by each tool's declaration (`pipeline::tools`).
//!
//! Members the brain never reads but agents may send (`signals`, `eligibility`, …) are fields
//! of type `Option<IgnoredAny>`: published in the schema (`with`), skipped when decoding.

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::Value;

/// Longest product, variant or cart id an agent may send.
const MAX_ID_LEN: u32 = 512;
/// Longest option name, option label, option id or category an agent may send.
const MAX_NAME_LEN: u32 = 256;

/// Members typed only as "a JSON object" (`{"type": "object"}`): open bags the store passes
/// on or ignores. A serde_json map would publish `additionalProperties: true` as well.
enum AnyObject {}

impl JsonSchema for AnyObject {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> std::borrow::Cow<'static, str> {
        "AnyObject".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({"type": "object"})
    }
}

/// What the bridge reads of `arguments.meta` before the arguments are validated (read once by
/// the pipeline, `pipeline::agents::read_meta`) and hands to every check (access,
/// negotiation, limits, idempotency).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CallMeta {
    pub profile: Option<String>,
    pub idempotency_key: Option<String>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[schemars(
    description = "Protocol metadata. `ucp-agent.profile` is the URL of the calling platform's profile."
)]
pub struct AgentMeta {
    #[serde(rename = "ucp-agent")]
    pub agent: AgentRef,
    #[serde(rename = "idempotency-key")]
    #[schemars(
        length(min = 1, max = 255),
        description = "Retry-safety key (a UUID is recommended)."
    )]
    pub idempotency_key: Option<String>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct AgentRef {
    #[schemars(
        length(min = 1, max = 2048),
        description = "URL of the agent platform's UCP/BCP profile."
    )]
    pub profile: String,
}

#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[schemars(description = "Provisional buyer signals for relevance and localisation.")]
pub struct ContextIn {
    #[schemars(length(max = 64), description = "ISO 3166-1 alpha-2 country, e.g. BR.")]
    pub address_country: Option<String>,
    #[schemars(length(max = 128))]
    pub address_region: Option<String>,
    #[schemars(length(max = 32))]
    pub postal_code: Option<String>,
    #[schemars(length(max = 2000))]
    pub intent: Option<String>,
    #[schemars(length(max = 35), description = "BCP 47 tag, e.g. pt-BR.")]
    pub language: Option<String>,
    #[schemars(
        regex(pattern = r"^[A-Za-z]{3}$"),
        description = "ISO 4217 code; also the denomination of price filters."
    )]
    pub currency: Option<String>,
    #[schemars(with = "Option<Vec<String>>")]
    pub eligibility: Option<IgnoredAny>,
    // UCP 2026-08-25 members: unknown values must be ignored without error (CAT-046), so they
    // are typed only loosely, and the store does not use them.
    #[schemars(
        with = "Option<Value>",
        description = "Business location id hint (UCP 2026-08-25); accepted, not used."
    )]
    pub location: Option<IgnoredAny>,
    #[schemars(
        with = "Option<Value>",
        description = "Preferred payment handlers (UCP 2026-08-25); accepted, not used."
    )]
    pub payment: Option<IgnoredAny>,
}

#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
pub struct PriceFilterIn {
    #[schemars(range(min = 0), description = "Minor units (cents).")]
    pub min: Option<i64>,
    #[schemars(range(min = 0), description = "Minor units (cents).")]
    pub max: Option<i64>,
}

#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[schemars(description = "All filters combine with AND.")]
pub struct FiltersIn {
    #[serde(default)]
    #[schemars(
        length(max = 50),
        inner(length(max = MAX_NAME_LEN)),
        description = "OR-match on categories[].value; a merchant path also matches its sub-categories."
    )]
    pub categories: Vec<String>,
    pub price: Option<PriceFilterIn>,
}

// `limit`'s description names the configured page sizes: `pipeline::tools` writes it.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
pub struct PaginationIn {
    #[schemars(
        length(max = 4096),
        description = "Opaque cursor from the previous page."
    )]
    pub cursor: Option<String>,
    #[schemars(range(min = 1))]
    pub limit: Option<u32>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[schemars(description = "Give a query, filters, or both.")]
pub struct SearchIn {
    #[schemars(length(max = 1000), description = "Free-text search.")]
    pub query: Option<String>,
    pub filters: Option<FiltersIn>,
    #[serde(default)]
    pub context: ContextIn,
    #[schemars(with = "Option<AnyObject>")]
    pub signals: Option<IgnoredAny>,
    #[schemars(with = "Option<AnyObject>")]
    pub attribution: Option<IgnoredAny>,
    #[serde(default)]
    pub pagination: PaginationIn,
    /// The cursor where spck-conformance 0.4.0 sends it (the top of the body), read only when
    /// `pagination.cursor` is absent: ignored, it would silently restart the walk at page one.
    /// Unpublished, so agents keep learning the spec's place.
    #[serde(default)]
    #[schemars(skip)]
    pub cursor: Option<String>,
}

impl SearchIn {
    /// The page cursor and the path it came from, for errors.
    pub fn cursor(&self) -> Option<(&str, &'static str)> {
        match (&self.pagination.cursor, &self.cursor) {
            (Some(cursor), _) => Some((cursor, "catalog.pagination.cursor")),
            (None, Some(cursor)) => Some((cursor, "catalog.cursor")),
            (None, None) => None,
        }
    }
}

// `ids`' upper bound is the configured batch limit: `pipeline::tools` writes it.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct LookupIn {
    #[schemars(
        length(min = 1),
        inner(length(min = 1, max = MAX_ID_LEN)),
        description = "Product ids, variant ids, SKUs or handles."
    )]
    pub ids: Vec<String>,
    pub filters: Option<FiltersIn>,
    #[serde(default)]
    pub context: ContextIn,
    #[schemars(with = "Option<AnyObject>")]
    pub signals: Option<IgnoredAny>,
    #[schemars(with = "Option<AnyObject>")]
    pub attribution: Option<IgnoredAny>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct SelectedIn {
    #[schemars(length(min = 1, max = MAX_NAME_LEN))]
    pub name: String,
    #[schemars(length(max = MAX_NAME_LEN))]
    pub label: String,
    #[schemars(with = "Option<String>", length(max = MAX_NAME_LEN))]
    pub id: Option<IgnoredAny>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct GetProductIn {
    #[schemars(
        length(min = 1, max = MAX_ID_LEN),
        description = "Product or variant id."
    )]
    pub id: String,
    #[serde(default)]
    #[schemars(
        length(max = 20),
        description = "Option selections, each option name at most once."
    )]
    pub selected: Vec<SelectedIn>,
    #[serde(default)]
    #[schemars(
        length(max = 20),
        inner(length(max = MAX_NAME_LEN)),
        description = "Option names in relaxation priority: when no variant matches every selection, the last ones are dropped first."
    )]
    pub preferences: Vec<String>,
    pub filters: Option<FiltersIn>,
    #[serde(default)]
    pub context: ContextIn,
    #[schemars(with = "Option<AnyObject>")]
    pub signals: Option<IgnoredAny>,
    #[schemars(with = "Option<AnyObject>")]
    pub attribution: Option<IgnoredAny>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct ItemRefIn {
    #[schemars(
        length(min = 1, max = MAX_ID_LEN),
        description = "Variant id (or SKU)."
    )]
    pub id: String,
    // The sale basis the agent asserts; absent asserts nothing.
    #[serde(default)]
    #[schemars(
        description = "Optional sale-basis assertion (UCP 2026-08-25). This store sells by the piece (unit C62, scale 0); any other unit is refused for that line."
    )]
    pub quantity_unit: Option<QuantityUnitIn>,
}

// Only the machine identity (`unit`, effective `scale`) takes part in matching;
// `display_text` and `increment` are checked by the schema and otherwise ignored.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct QuantityUnitIn {
    #[schemars(length(min = 1, max = 64))]
    pub unit: String,
    #[serde(default)]
    #[schemars(range(max = 15))]
    pub scale: u32,
    #[schemars(with = "Option<String>", length(max = MAX_NAME_LEN))]
    pub display_text: Option<IgnoredAny>,
    #[schemars(with = "Option<u64>", range(min = 1))]
    pub increment: Option<IgnoredAny>,
}

impl QuantityUnitIn {
    /// Every store the bridge serves sells by the piece: UN/CEFACT `C62` at scale 0.
    pub fn is_each(&self) -> bool {
        self.unit == "C62" && self.scale == 0
    }
}

/// The largest quantity a request may carry: 2^53 − 1, line_item.json's own bound (UCP
/// 2026-08-25), so every integer a JSON number holds exactly. The store's own bound (the
/// configured `limits.max_line_quantity`) is a business rule: a line above it is revised
/// down with a message, not refused by the schema (checkout.md "Quantity and sale basis").
pub const MAX_REQUEST_QUANTITY: u64 = (1 << 53) - 1;

#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct LineItemIn {
    pub item: ItemRefIn,
    #[schemars(range(min = 1, max = MAX_REQUEST_QUANTITY))]
    pub quantity: u64,
}

// `line_items`' bounds depend on the tool (create needs a line, update may empty the cart)
// and on the configured line count: `pipeline::tools` writes them.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct CartIn {
    #[schemars(description = "The complete list of lines (full replacement on update).")]
    pub line_items: Vec<LineItemIn>,
    #[serde(default)]
    pub context: ContextIn,
    #[schemars(with = "Option<AnyObject>")]
    pub buyer: Option<serde_json::Value>,
    #[schemars(with = "Option<AnyObject>")]
    pub signals: Option<IgnoredAny>,
    #[schemars(with = "Option<AnyObject>")]
    pub attribution: Option<serde_json::Value>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct CatalogArgs<T> {
    pub meta: AgentMeta,
    pub catalog: T,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct CreateCartArgs {
    pub meta: AgentMeta,
    pub cart: CartIn,
}

// The arguments of get_cart and cancel_cart; cancel_cart also requires
// `meta.idempotency-key`, which its declaration adds to its schema.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct CartIdArgs {
    pub meta: AgentMeta,
    #[schemars(
        length(min = 1, max = MAX_ID_LEN),
        description = "The cart id returned by create_cart."
    )]
    pub id: String,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct UpdateCartArgs {
    pub meta: AgentMeta,
    #[schemars(
        length(min = 1, max = MAX_ID_LEN),
        description = "The cart id returned by create_cart."
    )]
    pub id: String,
    pub cart: CartIn,
}

// ---- checkout ------------------------------------------------------------------------------
//
// The Checkout payload as an agent sends it (checkout.json create/update/complete, with the
// fulfillment and discount extensions). Buyer members are personal data: these types derive
// no `Debug`, so a stray `{:?}` cannot print them.

/// Longest buyer or address field an agent may send.
const MAX_FIELD_LEN: u32 = 512;

#[derive(Clone, Default, Deserialize, JsonSchema)]
#[schemars(description = "The buyer; each member optional, built up over updates.")]
pub struct BuyerIn {
    #[schemars(length(max = MAX_FIELD_LEN))]
    pub first_name: Option<String>,
    #[schemars(length(max = MAX_FIELD_LEN))]
    pub last_name: Option<String>,
    #[schemars(length(max = MAX_FIELD_LEN))]
    pub email: Option<String>,
    #[schemars(length(max = 64))]
    pub phone_number: Option<String>,
    /// BCP only (`br.dev.bcp.shopping.fiscal_identity`); the UCP door's schema leaves it out.
    pub taxpayer_id: Option<super::fiscal::TaxpayerIdIn>,
}

#[derive(Clone, Default, Deserialize, JsonSchema)]
#[schemars(
    description = "A postal address (a shipping destination). In Brazil: the house number after the street in street_address (\"Rua Doutor Quirino, 1481\", or \", s/n\"), the complement in extended_address, and the bairro there too as \"Bairro <name>\" (\"Sala 42 - Bairro Centro\")."
)]
pub struct AddressIn {
    #[schemars(length(max = MAX_FIELD_LEN))]
    pub id: Option<String>,
    #[serde(rename = "type")]
    #[schemars(
        with = "Option<String>",
        description = "shipping_address (UCP 2026-08-25); accepted, implied."
    )]
    pub kind: Option<IgnoredAny>,
    #[schemars(length(max = MAX_FIELD_LEN))]
    pub first_name: Option<String>,
    #[schemars(length(max = MAX_FIELD_LEN))]
    pub last_name: Option<String>,
    #[schemars(length(max = MAX_FIELD_LEN))]
    pub street_address: Option<String>,
    #[schemars(length(max = MAX_FIELD_LEN))]
    pub extended_address: Option<String>,
    #[schemars(length(max = MAX_FIELD_LEN))]
    pub address_locality: Option<String>,
    #[schemars(length(max = MAX_FIELD_LEN))]
    pub address_region: Option<String>,
    #[schemars(length(max = 32))]
    pub postal_code: Option<String>,
    #[schemars(
        regex(pattern = r"^[A-Za-z]{2}$"),
        description = "ISO 3166-1 alpha-2, e.g. BR."
    )]
    pub address_country: Option<String>,
    #[schemars(length(max = 64))]
    pub phone_number: Option<String>,
}

#[derive(Clone, Deserialize, JsonSchema)]
pub struct GroupIn {
    /// fulfillment_group.json: omitted on create (the store makes the groups; a selection
    /// sent with the creation is matched to them by position), required on update.
    #[schemars(
        length(min = 1, max = MAX_ID_LEN),
        description = "The group's id as the checkout handed it out; omitted on create."
    )]
    pub id: Option<String>,
    #[schemars(
        length(min = 1, max = MAX_ID_LEN),
        description = "One of this group's options[].id."
    )]
    pub selected_option_id: Option<String>,
}

#[derive(Clone, Deserialize, JsonSchema)]
pub struct MethodIn {
    #[schemars(
        length(min = 1, max = MAX_ID_LEN),
        description = "The method id the checkout handed out (absent on the first address)."
    )]
    pub id: Option<String>,
    #[serde(rename = "type")]
    #[schemars(with = "Option<String>", description = "shipping or pickup.")]
    pub kind: Option<String>,
    #[schemars(with = "Option<Vec<String>>")]
    pub line_item_ids: Option<IgnoredAny>,
    #[serde(default)]
    #[schemars(
        length(max = 1),
        description = "The buyer's shipping address; the store answers with its options."
    )]
    pub destinations: Vec<AddressIn>,
    #[schemars(length(min = 1, max = MAX_ID_LEN))]
    pub selected_destination_id: Option<String>,
    #[serde(default)]
    #[schemars(length(max = 20))]
    pub groups: Vec<GroupIn>,
}

#[derive(Clone, Deserialize, JsonSchema)]
pub struct FulfillmentIn {
    #[serde(default)]
    #[schemars(length(max = 5))]
    pub methods: Vec<MethodIn>,
}

#[derive(Clone, Deserialize, JsonSchema)]
pub struct DiscountsIn {
    #[serde(default)]
    #[schemars(
        length(max = 10),
        inner(length(min = 1, max = 128)),
        description = "The complete set of codes to apply (replaces the submitted set; [] clears it)."
    )]
    pub codes: Vec<String>,
}

#[derive(Clone, Deserialize, JsonSchema)]
pub struct InstrumentIn {
    #[schemars(
        length(min = 1, max = MAX_ID_LEN),
        description = "One of the checkout's payment.handlers[].id."
    )]
    pub handler_id: String,
    // Credentials are never read, kept or echoed: the test handlers need none.
    #[schemars(with = "Option<AnyObject>")]
    pub credential: Option<IgnoredAny>,
    #[schemars(with = "Option<String>")]
    pub id: Option<IgnoredAny>,
    #[serde(rename = "type")]
    #[schemars(with = "Option<String>")]
    pub kind: Option<IgnoredAny>,
}

#[derive(Clone, Deserialize, JsonSchema)]
pub struct PaymentIn {
    #[serde(default)]
    #[schemars(length(max = 1))]
    pub instruments: Vec<InstrumentIn>,
}

// `line_items`' bounds are the configured ones: `pipeline::tools` writes them.
#[derive(Clone, Default, Deserialize, JsonSchema)]
pub struct CheckoutIn {
    #[schemars(
        description = "The lines (create: give these or cart_id; update: full replacement)."
    )]
    pub line_items: Option<Vec<LineItemIn>>,
    #[schemars(
        length(min = 1, max = MAX_ID_LEN),
        description = "Create the checkout from this cart (create_checkout only)."
    )]
    pub cart_id: Option<String>,
    pub buyer: Option<BuyerIn>,
    #[serde(default)]
    pub context: ContextIn,
    pub fulfillment: Option<FulfillmentIn>,
    pub discounts: Option<DiscountsIn>,
    pub payment: Option<PaymentIn>,
    #[schemars(
        with = "Option<String>",
        description = "ISO 4217; the store's currency is used."
    )]
    pub currency: Option<IgnoredAny>,
    #[schemars(with = "Option<AnyObject>")]
    pub signals: Option<IgnoredAny>,
    #[schemars(with = "Option<AnyObject>")]
    pub attribution: Option<IgnoredAny>,
}

#[derive(Clone, Deserialize, JsonSchema)]
pub struct CreateCheckoutArgs {
    pub meta: AgentMeta,
    pub checkout: CheckoutIn,
}

// get_checkout and cancel_checkout; cancel also requires `meta.idempotency-key`, which
// its declaration adds.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct CheckoutIdArgs {
    pub meta: AgentMeta,
    #[schemars(
        length(min = 1, max = MAX_ID_LEN),
        description = "The checkout id returned by create_checkout."
    )]
    pub id: String,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct OrderIdArgs {
    pub meta: AgentMeta,
    #[schemars(
        length(min = 1, max = MAX_ID_LEN),
        description = "The order id a completed checkout answered with (order.id)."
    )]
    pub id: String,
}

// update_checkout and complete_checkout; complete also requires `meta.idempotency-key`.
#[derive(Clone, Deserialize, JsonSchema)]
pub struct UpdateCheckoutArgs {
    pub meta: AgentMeta,
    #[schemars(
        length(min = 1, max = MAX_ID_LEN),
        description = "The checkout id returned by create_checkout."
    )]
    pub id: String,
    pub checkout: CheckoutIn,
}
