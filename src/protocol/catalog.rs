use serde::Serialize;

use super::{Message, Ucp};
use crate::money::Money;

#[derive(Debug, Clone, Serialize)]
pub struct DescriptionOut {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plain: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub html: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub markdown: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct CategoryOut {
    pub value: String,
    pub taxonomy: &'static str,
}

#[derive(Debug, Clone, Serialize)]
pub struct MediaOut {
    #[serde(rename = "type")]
    pub kind: String,
    pub url: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub alt_text: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct PriceRangeOut {
    pub min: Money,
    pub max: Money,
}

#[derive(Debug, Clone, Serialize)]
pub struct OptionValueOut {
    pub label: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub available: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exists: Option<bool>,
}

#[derive(Debug, Clone, Serialize)]
pub struct OptionOut {
    pub name: String,
    pub values: Vec<OptionValueOut>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SelectedOut {
    pub name: String,
    pub label: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct AvailabilityOut {
    pub available: bool,
    pub status: &'static str,
}

#[derive(Debug, Clone, Serialize)]
pub struct LinkOut {
    #[serde(rename = "type")]
    pub kind: String,
    pub url: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct SellerOut {
    pub name: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub links: Vec<LinkOut>,
}

#[derive(Debug, Clone, Serialize)]
pub struct InputOut {
    pub id: String,
    #[serde(rename = "match")]
    pub matched: &'static str,
}

#[derive(Debug, Clone, Serialize)]
pub struct VariantOut {
    pub id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sku: Option<String>,
    pub title: String,
    pub description: DescriptionOut,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    pub price: Money,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub list_price: Option<Money>,
    pub availability: AvailabilityOut,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<SelectedOut>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub media: Vec<MediaOut>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seller: Option<SellerOut>,
    /// Lookup only: which request ids resolved to this variant.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub inputs: Option<Vec<InputOut>>,
}

#[derive(Debug, Clone, Serialize)]
pub struct RatingOut {
    pub value: f64,
    pub scale_max: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub count: Option<u64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ProductOut {
    pub id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub handle: Option<String>,
    pub title: String,
    pub description: DescriptionOut,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub categories: Vec<CategoryOut>,
    pub price_range: PriceRangeOut,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub list_price_range: Option<PriceRangeOut>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub media: Vec<MediaOut>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<OptionOut>,
    /// get_product only: the effective selections.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub selected: Option<Vec<SelectedOut>>,
    pub variants: Vec<VariantOut>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rating: Option<RatingOut>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<serde_json::Value>,
}

#[derive(Debug, Clone, Serialize)]
pub struct PaginationOut {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
    pub has_next_page: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total_count: Option<u64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct SearchResponse {
    pub ucp: Ucp,
    pub products: Vec<ProductOut>,
    pub pagination: PaginationOut,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub messages: Vec<Message>,
}

#[derive(Debug, Clone, Serialize)]
pub struct LookupResponse {
    pub ucp: Ucp,
    pub products: Vec<ProductOut>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub messages: Vec<Message>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ProductResponse {
    pub ucp: Ucp,
    pub product: ProductOut,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub messages: Vec<Message>,
}

/// A business outcome with no resource: `ucp.status = "error"` plus messages.
#[derive(Debug, Clone, Serialize)]
pub struct ErrorResponse {
    pub ucp: Ucp,
    pub messages: Vec<Message>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub continue_url: Option<String>,
}
