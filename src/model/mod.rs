//! The small normalised model every platform adapter produces and the protocol brain consumes.
//! It says what a store HAS (products, variants, carts); what the protocol DOES with it lives
//! in `brain`, and how it is spelled on the wire lives in `protocol`.

use std::sync::Arc;

use iso_currency::Currency;
use time::OffsetDateTime;

use crate::money::Money;

pub mod checkout;
pub mod fiscal;
pub mod lines;
pub mod predicates;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Taxonomy {
    Merchant,
    Shopify,
    GoogleProductCategory,
}

impl Taxonomy {
    pub fn as_str(&self) -> &'static str {
        match self {
            Self::Merchant => "merchant",
            Self::Shopify => "shopify",
            Self::GoogleProductCategory => "google_product_category",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Category {
    pub value: String,
    pub taxonomy: Taxonomy,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Description {
    pub plain: Option<String>,
    pub html: Option<String>,
    pub markdown: Option<String>,
}

impl Description {
    pub fn plain(text: impl Into<String>) -> Self {
        Self {
            plain: Some(text.into()),
            ..Self::default()
        }
    }

    pub fn is_empty(&self) -> bool {
        self.plain.is_none() && self.html.is_none() && self.markdown.is_none()
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Media {
    /// `image`, `video`, `model_3d`.
    pub kind: String,
    pub url: String,
    pub alt_text: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Rating {
    pub value: f64,
    pub scale_max: f64,
    pub count: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProductOption {
    pub name: String,
    /// Values in the merchant's display order.
    pub values: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OptionChoice {
    pub name: String,
    pub label: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SellerLink {
    pub kind: String,
    pub url: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seller {
    pub name: String,
    pub links: Vec<SellerLink>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Variant {
    /// The identifier agents use for this variant (and as `item.id` in carts).
    pub id: String,
    pub sku: Option<String>,
    pub title: String,
    pub description: Option<Description>,
    pub price: Money,
    pub list_price: Option<Money>,
    pub available: bool,
    /// Sold although none is in stock (it ships later): availability status `backorder`.
    pub backorder: bool,
    pub options: Vec<OptionChoice>,
    pub media: Vec<Media>,
    pub tags: Vec<String>,
    pub url: Option<String>,
    /// What the store says about this variant beyond the model (VTEX's card installments
    /// and cash price), rendered as the variant's `metadata`.
    pub metadata: Option<serde_json::Value>,
}

impl Variant {
    pub fn label_of(&self, option_name: &str) -> Option<&str> {
        self.options
            .iter()
            .find(|choice| choice.name == option_name)
            .map(|choice| choice.label.as_str())
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Product {
    pub id: String,
    pub handle: Option<String>,
    pub title: String,
    pub description: Description,
    pub url: Option<String>,
    pub categories: Vec<Category>,
    pub media: Vec<Media>,
    pub options: Vec<ProductOption>,
    /// For search and lookup an adapter may return only the variants it fetched; for
    /// `CatalogPort::product` it MUST return all of them.
    pub variants: Vec<Variant>,
    /// The merchant's featured variant, when the upstream names one.
    pub featured_variant: Option<String>,
    /// Range over ALL variants when the upstream knows it (it may have fetched only some).
    pub price_range: Option<(Money, Money)>,
    pub rating: Option<Rating>,
    pub tags: Vec<String>,
    pub metadata: Option<serde_json::Value>,
    pub seller: Option<Seller>,
}

impl Product {
    pub fn variant(&self, id: &str) -> Option<&Variant> {
        self.variants.iter().find(|variant| variant.id == id)
    }
}

/// Buyer signals that may change what an upstream answers (presentment currency, language,
/// market). Part of every cache key.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct BuyerContext {
    pub country: Option<String>,
    pub region: Option<String>,
    pub postal_code: Option<String>,
    pub language: Option<String>,
    pub currency: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PriceBounds {
    pub min: Option<i64>,
    pub max: Option<i64>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filters {
    /// OR-match on `categories[].value`.
    pub categories: Vec<String>,
    /// Minor units of the store currency.
    pub price: Option<PriceBounds>,
}

impl Filters {
    pub fn is_empty(&self) -> bool {
        self.categories.is_empty() && self.price.is_none()
    }
}

#[derive(Debug, Clone)]
pub struct SearchRequest {
    pub query: Option<String>,
    pub filters: Filters,
    pub context: BuyerContext,
    /// The upstream's own cursor, already unwrapped from the bridge's opaque cursor.
    pub upstream_cursor: Option<String>,
    pub limit: u32,
}

#[derive(Debug, Clone)]
pub struct SearchPage {
    /// Shared with the adapter's or the cache's copy: a call never clones catalog data.
    pub products: Vec<Arc<Product>>,
    pub next_cursor: Option<String>,
    pub total_count: Option<u64>,
}

/// How a lookup input resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolution {
    /// The input named the product (id, handle): the brain features a variant.
    Product,
    /// The input named exactly this variant (variant id, SKU).
    Variant(String),
}

#[derive(Debug, Clone)]
pub struct Resolved {
    /// The input exactly as the agent sent it.
    pub input: String,
    pub resolution: Resolution,
    pub product: Arc<Product>,
}

/// What the adapter found for `CatalogPort::product`.
#[derive(Debug, Clone)]
pub struct ProductHit {
    pub product: Arc<Product>,
    /// Set when the id named a variant: it takes precedence over the agent's selections.
    pub variant_id: Option<String>,
}

/// A lookup's answer as a product answer: the variant it named, if any, is the one shown.
impl From<Resolved> for ProductHit {
    fn from(resolved: Resolved) -> Self {
        let variant_id = match resolved.resolution {
            Resolution::Variant(id) => Some(id),
            Resolution::Product => None,
        };
        Self {
            product: resolved.product,
            variant_id,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CartLineInput {
    /// The id the line is written with: a variant id the brain confirmed or, for a store that
    /// judges lines itself (`LineJudge::Store`), the agent's `item.id` as sent. Distinct within
    /// one draft, so store problems correlate by it.
    pub item_id: String,
    pub quantity: u32,
}

/// Serialisable so a replacement's intent can be recorded before it starts (`platform::intent`).
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct CartDraft {
    pub lines: Vec<CartLineInput>,
    pub context: BuyerContext,
    /// Passed through to upstreams that keep them (cart attributes, notes).
    pub buyer: Option<serde_json::Value>,
    pub attribution: Option<serde_json::Value>,
    /// The most one line may hold (the brain's `max_line_quantity`). Lines are capped before
    /// they reach the store, but a store that judges lines itself may find two spellings of
    /// one item (a variant id and its SKU) and merge them: the merged line keeps to this cap.
    /// `None`: no cap beyond the store's own.
    pub line_cap: Option<u32>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct CartLine {
    pub id: String,
    pub variant_id: String,
    pub title: String,
    pub unit_price: i64,
    pub quantity: u32,
    /// Before line discounts.
    pub subtotal: i64,
    /// After line discounts.
    pub total: i64,
    pub image_url: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct CartState {
    pub id: String,
    pub lines: Vec<CartLine>,
    pub currency: Currency,
    pub subtotal: i64,
    /// Negative or zero.
    pub discount: i64,
    pub tax: Option<i64>,
    pub total: i64,
    pub checkout_url: Option<String>,
    pub expires_at: Option<OffsetDateTime>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LineProblemKind {
    OutOfStock,
    /// The store holds fewer than asked; the line was kept with `available` units.
    InsufficientStock {
        available: u32,
    },
    NotFound,
    /// The id names a product with several variants: the agent must pick one.
    Ambiguous,
    Invalid,
}

/// Something the upstream refused about one requested line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineProblem {
    /// The `item_id` of the draft line it is about.
    pub item_id: String,
    pub kind: LineProblemKind,
    pub message: String,
}

#[derive(Debug, Clone)]
pub struct CartOutcome {
    pub cart: CartState,
    pub problems: Vec<LineProblem>,
}
