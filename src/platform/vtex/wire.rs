//! VTEX JSON as the search and checkout APIs send it. Search prices are decimal reais as JSON
//! numbers: they are kept as their exact text (`Amount`), never parsed into a float.

use serde::{Deserialize, Deserializer};
use serde_json::Value;
use serde_json::value::RawValue;

/// A JSON number (or numeric string) kept as the text the store wrote.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Amount(pub String);

/// An amount in major units ("19.90"), as money of `currency`; none when blank or unreadable.
pub fn major(amount: &Amount, currency: iso_currency::Currency) -> Option<crate::money::Money> {
    let text = amount.0.trim();
    if text.is_empty() {
        return None;
    }
    crate::money::Money::from_major_str(text, currency).ok()
}

impl<'de> Deserialize<'de> for Amount {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = Box::<RawValue>::deserialize(deserializer)?;
        let text = raw.get().trim();
        let text = text
            .strip_prefix('"')
            .and_then(|inner| inner.strip_suffix('"'))
            .unwrap_or(text);
        Ok(Self(if text == "null" {
            String::new()
        } else {
            text.to_owned()
        }))
    }
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Range {
    pub high_price: Option<Amount>,
    pub low_price: Option<Amount>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct PriceRange {
    pub selling_price: Option<Range>,
    pub list_price: Option<Range>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Named {
    pub name: String,
    pub original_name: Option<String>,
}

impl Named {
    /// The canonical name, which stays the same whatever the locale.
    pub fn key(&self) -> &str {
        self.original_name
            .as_deref()
            .filter(|name| !name.is_empty())
            .unwrap_or(&self.name)
    }
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct SkuSpecification {
    pub field: Named,
    pub values: Vec<Named>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Offer {
    #[serde(rename = "Price")]
    pub price: Option<Amount>,
    #[serde(rename = "ListPrice")]
    pub list_price: Option<Amount>,
    /// A capped flag (10000 = available, 0 = not), not a stock count.
    #[serde(rename = "AvailableQuantity")]
    pub available_quantity: Option<Amount>,
    /// The cash (boleto/Pix) price, where the store sets one.
    #[serde(rename = "spotPrice")]
    pub spot_price: Option<Amount>,
    /// The card plans the store offers for this price; `null` where it computes none.
    #[serde(rename = "Installments", deserialize_with = "null_as_empty")]
    pub installments: Vec<Installment>,
}

/// One card plan: `NumberOfInstallments` × `Value`, decimal reais like every search price.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Installment {
    #[serde(rename = "Value")]
    pub value: Option<Amount>,
    #[serde(rename = "InterestRate")]
    pub interest_rate: Option<Amount>,
    #[serde(rename = "TotalValuePlusInterestRate")]
    pub total: Option<Amount>,
    #[serde(rename = "NumberOfInstallments")]
    pub count: u32,
    #[serde(rename = "PaymentSystemName")]
    pub payment_system: Option<String>,
}

fn null_as_empty<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
    deserializer: D,
) -> Result<Vec<T>, D::Error> {
    Ok(Option::<Vec<T>>::deserialize(deserializer)?.unwrap_or_default())
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Seller {
    pub seller_id: String,
    pub seller_name: String,
    pub seller_default: bool,
    pub commertial_offer: Offer,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Image {
    pub image_url: String,
    pub image_label: Option<String>,
    pub image_text: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct Reference {
    #[serde(rename = "Key", default)]
    pub key: String,
    #[serde(rename = "Value", default)]
    pub value: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Item {
    pub item_id: String,
    pub name: String,
    pub name_complete: String,
    pub ean: Option<String>,
    pub reference_id: Vec<Reference>,
    pub images: Vec<Image>,
    /// Intelligent Search: `[{name, originalName?, values}]`; legacy search: axis names,
    /// each value being a top-level key of the item (read by `LegacyAxes`).
    pub variations: Vec<Value>,
    pub sellers: Vec<Seller>,
}

impl Item {
    pub fn ref_id(&self) -> Option<&str> {
        self.reference_id
            .iter()
            .find(|reference| reference.key.eq_ignore_ascii_case("RefId"))
            .and_then(|reference| reference.value.as_deref())
            .filter(|value| !value.is_empty())
    }
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Product {
    pub product_id: String,
    pub product_name: String,
    pub description: String,
    pub link_text: String,
    pub link: String,
    pub brand: String,
    pub categories: Vec<String>,
    pub categories_ids: Vec<String>,
    pub price_range: Option<PriceRange>,
    pub sku_specifications: Vec<SkuSpecification>,
    pub items: Vec<Item>,
}

/// The legacy search flattens each SKU's axis values into top-level keys (`"Cor": ["Azul"]`):
/// the same product read again, untyped, for those keys only.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct LegacyAxes {
    pub items: Vec<serde_json::Map<String, Value>>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Page {
    pub products: Vec<Box<RawValue>>,
    #[serde(rename = "recordsFiltered")]
    pub records_filtered: Option<u64>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct CategoryNode {
    pub id: u64,
    pub name: String,
    pub url: String,
    pub children: Vec<CategoryNode>,
}

/// Checkout amounts are integer cents.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct PriceDefinition {
    pub total: Option<i64>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct CartItem {
    pub unique_id: String,
    pub id: String,
    pub product_id: String,
    pub name: String,
    pub sku_name: String,
    pub price: Option<i64>,
    pub list_price: Option<i64>,
    pub selling_price: Option<i64>,
    pub quantity: u32,
    pub seller: String,
    pub image_url: Option<String>,
    pub availability: String,
    pub price_definition: Option<PriceDefinition>,
    /// The promotions and manual prices that changed the line, each its whole line's amount.
    pub price_tags: Vec<PriceTag>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct PriceTag {
    /// `discount@price-<promotion>#…`, `DISCOUNT@MANUALPRICE`…
    pub name: String,
    /// Cents, negative for a discount.
    pub value: i64,
    /// The promotion's id (`ratesAndBenefitsData.rateAndBenefitsIdentifiers[].id`).
    pub identifier: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Totalizer {
    pub id: String,
    pub name: String,
    pub value: i64,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct CartMessage {
    pub code: Option<String>,
    pub text: String,
    pub status: String,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct StorePreferences {
    pub currency_code: String,
    /// The store's own country (ISO 3166-1 alpha-3): what its checkout's rules follow.
    pub country_code: String,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct OrderForm {
    pub order_form_id: String,
    pub value: i64,
    pub items: Vec<CartItem>,
    pub totalizers: Vec<Totalizer>,
    pub messages: Vec<CartMessage>,
    pub store_preferences_data: StorePreferences,
    pub client_profile_data: Option<Value>,
    pub shipping_data: Option<ShippingData>,
    pub marketing_data: Option<MarketingData>,
    pub rates_and_benefits_data: Option<RatesAndBenefits>,
}

/// A postal address as the orderForm spells it (`country` is ISO 3166-1 alpha-3).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct VtexAddress {
    pub address_type: Option<String>,
    pub receiver_name: Option<String>,
    pub postal_code: Option<String>,
    pub city: Option<String>,
    pub state: Option<String>,
    pub country: Option<String>,
    pub street: Option<String>,
    pub number: Option<String>,
    pub neighborhood: Option<String>,
    pub complement: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct PickupStoreInfo {
    pub friendly_name: Option<String>,
    pub address: Option<VtexAddress>,
    pub additional_info: Option<String>,
}

/// One way an item can be delivered or collected; `price` is the item's share, in cents.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Sla {
    pub id: String,
    pub name: String,
    /// `delivery` or `pickup-in-point`.
    pub delivery_channel: String,
    pub price: i64,
    /// `3bd` (business days), `2d`, `4h`…
    pub shipping_estimate: Option<String>,
    pub shipping_estimate_date: Option<String>,
    pub pickup_point_id: Option<String>,
    pub pickup_store_info: Option<PickupStoreInfo>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct LogisticsInfo {
    pub item_index: usize,
    pub item_id: String,
    pub selected_sla: Option<String>,
    pub selected_delivery_channel: Option<String>,
    pub slas: Vec<Sla>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ShippingData {
    pub address: Option<VtexAddress>,
    pub logistics_info: Vec<LogisticsInfo>,
    /// Sent back as they are when only the selection changes.
    pub selected_addresses: Vec<Value>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct MarketingData {
    /// One code, or several joined by commas where the store allows several.
    pub coupon: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct RatesAndBenefits {
    /// `{id, name, matchedParameters{"couponCode@Marketing": code}…}` per promotion that
    /// applied; untyped because VTEX documents the items loosely.
    pub rate_and_benefits_identifiers: Vec<Value>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ErrorDetail {
    pub code: String,
    pub message: String,
}

/// `{"error":{"code":"CHK0xxx","message":"…","exception":null}}`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ErrorBody {
    pub error: ErrorDetail,
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn amounts_keep_the_text_the_store_wrote() {
        let offer: Offer =
            serde_json::from_str(r#"{"Price":197.99,"ListPrice":"0.1","AvailableQuantity":10000}"#)
                .unwrap();
        assert_eq!(offer.price.unwrap().0, "197.99");
        assert_eq!(offer.list_price.unwrap().0, "0.1");
        assert_eq!(offer.available_quantity.unwrap().0, "10000");
    }
}
