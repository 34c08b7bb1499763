//! The catalog answers' wire shapes. They borrow from the model they are rendered from
//! (products live for the whole call): ids, handles, URLs and kinds as `&str`, merchant text
//! as `Cow`, owned only where sanitising changed it. Each answer is serialised once and
//! dropped before the call returns, so nothing here outlives what it borrows.

use std::borrow::Cow;

use schemars::JsonSchema;
use serde::Serialize;

use super::{Message, Ucp};
use crate::money::Money;

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct DescriptionOut<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plain: Option<Cow<'a, str>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub html: Option<Cow<'a, str>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub markdown: Option<Cow<'a, str>>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct CategoryOut<'a> {
    pub value: Cow<'a, str>,
    pub taxonomy: &'static str,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct MediaOut<'a> {
    #[serde(rename = "type")]
    pub kind: &'a str,
    pub url: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub alt_text: Option<Cow<'a, str>>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct PriceRangeOut {
    pub min: Money,
    pub max: Money,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct OptionValueOut<'a> {
    pub label: Cow<'a, str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub available: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exists: Option<bool>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct OptionOut<'a> {
    pub name: Cow<'a, str>,
    pub values: Vec<OptionValueOut<'a>>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct SelectedOut<'a> {
    pub name: Cow<'a, str>,
    pub label: Cow<'a, str>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct AvailabilityOut {
    pub available: bool,
    pub status: &'static str,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct LinkOut<'a> {
    #[serde(rename = "type")]
    pub kind: &'a str,
    pub url: &'a str,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SellerOut<'a> {
    pub name: Cow<'a, str>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub links: Vec<LinkOut<'a>>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct InputOut<'a> {
    pub id: &'a str,
    #[serde(rename = "match")]
    pub matched: &'static str,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct VariantOut<'a> {
    pub id: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sku: Option<&'a str>,
    pub title: Cow<'a, str>,
    pub description: DescriptionOut<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<&'a str>,
    pub price: Money,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub list_price: Option<Money>,
    pub availability: AvailabilityOut,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<SelectedOut<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub media: Vec<MediaOut<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<Cow<'a, str>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seller: Option<SellerOut<'a>>,
    /// Merchant data beyond the model: a JSON object.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub metadata: Option<serde_json::Value>,
    /// Lookup only: which request ids resolved to this variant.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub inputs: Option<Vec<InputOut<'a>>>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct RatingOut {
    pub value: f64,
    pub scale_max: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub count: Option<u64>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ProductOut<'a> {
    pub id: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub handle: Option<&'a str>,
    pub title: Cow<'a, str>,
    pub description: DescriptionOut<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<&'a str>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub categories: Vec<CategoryOut<'a>>,
    pub price_range: PriceRangeOut,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub list_price_range: Option<PriceRangeOut>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub media: Vec<MediaOut<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<OptionOut<'a>>,
    /// get_product only: the effective selections.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub selected: Option<Vec<SelectedOut<'a>>>,
    pub variants: Vec<VariantOut<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rating: Option<RatingOut>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<Cow<'a, str>>,
    /// Merchant data beyond the model: a JSON object.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub metadata: Option<serde_json::Value>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct PaginationOut {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
    pub has_next_page: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total_count: Option<u64>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SearchResponse<'a> {
    pub ucp: Ucp,
    pub products: Vec<ProductOut<'a>>,
    pub pagination: PaginationOut,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub messages: Vec<Message>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct LookupResponse<'a> {
    pub ucp: Ucp,
    pub products: Vec<ProductOut<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub messages: Vec<Message>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ProductResponse<'a> {
    pub ucp: Ucp,
    pub product: ProductOut<'a>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub messages: Vec<Message>,
}

/// A business outcome with no resource: `ucp.status = "error"` plus messages.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ErrorResponse {
    pub ucp: Ucp,
    pub messages: Vec<Message>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub continue_url: Option<String>,
}
