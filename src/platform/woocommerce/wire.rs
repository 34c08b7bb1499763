//! The Store API's JSON, as far as the adapter reads it. Unknown fields are ignored and most
//! fields default, because WooCommerce versions and extensions add and drop fields freely.

use serde::Deserialize;

#[derive(Debug, Clone, Deserialize, Default)]
#[serde(default)]
pub struct Prices {
    pub price: String,
    pub regular_price: String,
    pub sale_price: String,
    pub price_range: Option<PriceRange>,
    pub currency_code: String,
    pub currency_minor_unit: u32,
}

#[derive(Debug, Clone, Deserialize, Default)]
#[serde(default)]
pub struct PriceRange {
    pub min_amount: String,
    pub max_amount: String,
}

#[derive(Debug, Clone, Deserialize, Default)]
#[serde(default)]
pub struct Image {
    pub src: String,
    pub alt: String,
}

#[derive(Debug, Clone, Deserialize, Default)]
#[serde(default)]
pub struct CategoryRef {
    pub id: u64,
    pub name: String,
}

#[derive(Debug, Clone, Deserialize, Default)]
#[serde(default)]
pub struct Term {
    pub name: String,
    pub slug: String,
}

#[derive(Debug, Clone, Deserialize, Default)]
#[serde(default)]
pub struct Attribute {
    pub name: String,
    pub taxonomy: Option<String>,
    pub has_variations: bool,
    pub terms: Vec<Term>,
}

#[derive(Debug, Clone, Deserialize, Default)]
#[serde(default)]
pub struct NameValue {
    pub name: String,
    pub value: String,
}

#[derive(Debug, Clone, Deserialize, Default)]
#[serde(default)]
pub struct VariationRef {
    pub id: u64,
    pub attributes: Vec<NameValue>,
}

#[derive(Debug, Clone, Deserialize, Default)]
#[serde(default)]
pub struct Tag {
    pub name: String,
}

/// One entry of `GET /products` (a product or, with `type=variation`, a variation).
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(default)]
pub struct StoreProduct {
    pub id: u64,
    pub name: String,
    pub slug: String,
    pub parent: u64,
    #[serde(rename = "type")]
    pub kind: String,
    pub permalink: String,
    pub sku: String,
    pub short_description: String,
    pub description: String,
    pub prices: Prices,
    pub average_rating: String,
    pub review_count: u64,
    pub images: Vec<Image>,
    pub categories: Vec<CategoryRef>,
    pub tags: Vec<Tag>,
    pub attributes: Vec<Attribute>,
    pub variations: Vec<VariationRef>,
    pub is_purchasable: bool,
    pub is_in_stock: bool,
    pub is_on_backorder: bool,
}

#[derive(Debug, Clone, Deserialize, Default)]
#[serde(default)]
pub struct StoreCategory {
    pub id: u64,
    pub name: String,
    pub parent: u64,
}

#[derive(Debug, Clone, Deserialize, Default)]
#[serde(default)]
pub struct ItemTotals {
    pub line_subtotal: String,
    pub line_total: String,
}

#[derive(Debug, Clone, Deserialize, Default)]
#[serde(default)]
pub struct ItemVariation {
    pub attribute: String,
    pub value: String,
}

#[derive(Debug, Clone, Deserialize, Default)]
#[serde(default)]
pub struct CartItem {
    pub key: String,
    pub id: u64,
    pub quantity: u32,
    pub name: String,
    pub images: Vec<Image>,
    pub variation: Vec<ItemVariation>,
    pub prices: Prices,
    pub totals: ItemTotals,
}

#[derive(Debug, Clone, Deserialize, Default)]
#[serde(default)]
pub struct CartTotals {
    pub total_items: String,
    pub total_discount: String,
    pub total_price: String,
    pub total_tax: String,
    pub currency_code: String,
    pub currency_minor_unit: u32,
}

#[derive(Debug, Clone, Deserialize, Default)]
#[serde(default)]
pub struct StoreCart {
    pub items: Vec<CartItem>,
    pub totals: CartTotals,
}

/// WordPress REST error body: `{"code","message","data":{"status"}}`.
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(default)]
pub struct ErrorBody {
    pub code: String,
    pub message: String,
}
