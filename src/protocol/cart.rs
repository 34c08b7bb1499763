use schemars::JsonSchema;
use serde::Serialize;

use super::{Message, Ucp};

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct TotalOut {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub amount: i64,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ItemOut {
    pub id: String,
    pub title: String,
    /// Unit price in minor units of the cart currency.
    pub price: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub image_url: Option<String>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct LineItemOut {
    pub id: String,
    pub item: ItemOut,
    #[schemars(range(min = 1))]
    pub quantity: u32,
    pub totals: Vec<TotalOut>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct CartResponse {
    pub ucp: Ucp,
    pub id: String,
    pub line_items: Vec<LineItemOut>,
    pub currency: &'static str,
    pub totals: Vec<TotalOut>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub messages: Vec<Message>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub continue_url: Option<String>,
    /// RFC 3339.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
}
