//! Shopify product shapes → the bridge model. Every operation module of `wire` has its own copy
//! of the fragment types, so they are first lifted into the plain `Raw*` structs below by one
//! macro (identical field names, checked by the compiler for every module), then mapped once.

use iso_currency::Currency;
use serde::Serialize;

use super::taxonomy;
use super::wire;
use crate::model::{
    Category, Description, Media, OptionChoice, Product, ProductOption, Taxonomy, Variant,
};
use crate::money::{Money, parse_currency};
use crate::platform::port::PlatformError;

#[derive(Debug, Clone)]
pub struct RawMoney {
    pub amount: String,
    pub currency: String,
}

#[derive(Debug, Clone)]
pub struct RawImage {
    pub url: String,
    pub alt: Option<String>,
}

#[derive(Debug, Clone)]
pub struct RawVariant {
    pub id: String,
    pub sku: Option<String>,
    pub title: String,
    pub available: bool,
    /// `currentlyNotInStock` of a variant still for sale.
    pub backorder: bool,
    pub price: RawMoney,
    pub compare_at: Option<RawMoney>,
    pub options: Vec<(String, String)>,
    pub image: Option<RawImage>,
}

#[derive(Debug, Clone, Default)]
pub struct RawVariantPage {
    pub variants: Vec<RawVariant>,
    /// Set when more variants follow.
    pub next: Option<String>,
}

#[derive(Debug, Clone)]
pub struct RawProduct {
    pub id: String,
    pub handle: String,
    pub title: String,
    pub description: String,
    pub description_html: String,
    pub product_type: String,
    pub vendor: String,
    pub tags: Vec<String>,
    pub url: Option<String>,
    pub category: Option<(String, String)>,
    pub collections: Vec<String>,
    pub options: Vec<(String, Vec<String>)>,
    pub price_range: (RawMoney, RawMoney),
    pub featured_variant: Option<String>,
    pub images: Vec<RawImage>,
    pub variants: RawVariantPage,
}

/// The wire spelling of a generated enum (`CurrencyCode::USD` → "USD").
pub fn enum_name<T: Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(name)) => name,
        _ => String::new(),
    }
}

/// Every generated operation has its own `Money` type; they all become one `RawMoney`.
macro_rules! lift_money {
    ($m:ident) => {
        impl From<wire::$m::Money> for RawMoney {
            fn from(money: wire::$m::Money) -> Self {
                Self {
                    amount: money.amount,
                    currency: enum_name(&money.currency_code),
                }
            }
        }
    };
}
pub(super) use lift_money;

macro_rules! lift {
    ($m:ident) => {
        lift_money!($m);

        impl From<wire::$m::VariantFields> for RawVariant {
            fn from(variant: wire::$m::VariantFields) -> Self {
                Self {
                    id: variant.id,
                    sku: variant.sku,
                    title: variant.title,
                    available: variant.available_for_sale,
                    backorder: variant.available_for_sale && variant.currently_not_in_stock,
                    price: variant.price.into(),
                    compare_at: variant.compare_at_price.map(Into::into),
                    options: variant
                        .selected_options
                        .into_iter()
                        .map(|option| (option.name, option.value))
                        .collect(),
                    image: variant.image.map(|image| RawImage {
                        url: image.url,
                        alt: image.alt_text,
                    }),
                }
            }
        }

        impl From<wire::$m::VariantPage> for RawVariantPage {
            fn from(page: wire::$m::VariantPage) -> Self {
                Self {
                    variants: page.nodes.into_iter().map(Into::into).collect(),
                    next: page
                        .page_info
                        .end_cursor
                        .filter(|_| page.page_info.has_next_page),
                }
            }
        }
    };
}

macro_rules! lift_product {
    ($m:ident) => {
        lift!($m);

        impl RawProduct {
            #[allow(dead_code)]
            pub fn $m(product: wire::$m::ProductFields, variants: wire::$m::VariantPage) -> Self {
                Self {
                    id: product.id,
                    handle: product.handle,
                    title: product.title,
                    description: product.description,
                    description_html: product.description_html,
                    product_type: product.product_type,
                    vendor: product.vendor,
                    tags: product.tags,
                    url: product.online_store_url,
                    category: product
                        .category
                        .map(|category| (category.id, category.name)),
                    collections: product
                        .collections
                        .nodes
                        .into_iter()
                        .map(|collection| collection.title)
                        .collect(),
                    options: product
                        .options
                        .into_iter()
                        .map(|option| {
                            (
                                option.name,
                                option
                                    .option_values
                                    .into_iter()
                                    .map(|value| value.name)
                                    .collect(),
                            )
                        })
                        .collect(),
                    price_range: (
                        product.price_range.min_variant_price.into(),
                        product.price_range.max_variant_price.into(),
                    ),
                    featured_variant: product
                        .selected_or_first_available_variant
                        .map(|variant| variant.id),
                    images: product
                        .images
                        .nodes
                        .into_iter()
                        .map(|image| RawImage {
                            url: image.url,
                            alt: image.alt_text,
                        })
                        .collect(),
                    variants: variants.into(),
                }
            }
        }
    };
}

lift_product!(search_products);
lift_product!(browse_products);
lift_product!(nodes);
lift!(product_variants);

fn money(raw: &RawMoney, fallback: Currency) -> Result<Money, PlatformError> {
    let currency = if raw.currency.is_empty() {
        fallback
    } else {
        parse_currency(&raw.currency)
            .map_err(|error| PlatformError::BadResponse(error.to_string()))?
    };
    Money::from_major_str(&raw.amount, currency)
        .map_err(|error| PlatformError::BadResponse(error.to_string()))
}

/// Products without options carry Shopify's placeholder option `Title: Default Title`; it is
/// not a choice a buyer makes, so it is not shown as one.
fn is_placeholder(name: &str, value: &str) -> bool {
    name == "Title" && value == "Default Title"
}

fn variant(
    raw: &RawVariant,
    product: &RawProduct,
    currency: Currency,
) -> Result<Variant, PlatformError> {
    let price = money(&raw.price, currency)?;
    let list_price = raw
        .compare_at
        .as_ref()
        .map(|compare| money(compare, currency))
        .transpose()?
        .filter(|compare| compare.currency == price.currency && compare.amount > price.amount);
    let options: Vec<OptionChoice> = raw
        .options
        .iter()
        .filter(|(name, value)| !is_placeholder(name, value))
        .map(|(name, value)| OptionChoice {
            name: name.clone(),
            label: value.clone(),
        })
        .collect();
    let title = if options.is_empty() {
        product.title.clone()
    } else {
        raw.title.clone()
    };
    Ok(Variant {
        id: raw.id.clone(),
        sku: raw.sku.clone().filter(|sku| !sku.trim().is_empty()),
        title,
        description: None,
        price,
        list_price,
        available: raw.available,
        backorder: raw.backorder,
        options,
        media: raw
            .image
            .iter()
            .map(|image| Media {
                kind: "image".to_owned(),
                url: image.url.clone(),
                alt_text: image.alt.clone(),
            })
            .collect(),
        tags: Vec::new(),
        metadata: None,
        url: None,
    })
}

fn categories(raw: &RawProduct) -> Vec<Category> {
    let mut out = Vec::new();
    let mut merchant = |value: &str| {
        let value = value.trim();
        if !value.is_empty()
            && !out
                .iter()
                .any(|category: &Category| category.value == value)
        {
            out.push(Category {
                value: value.to_owned(),
                taxonomy: Taxonomy::Merchant,
            });
        }
    };
    merchant(&raw.product_type);
    for collection in &raw.collections {
        merchant(collection);
    }
    if let Some(key) = raw
        .category
        .as_ref()
        .and_then(|(id, _)| taxonomy::category_key(id))
    {
        out.push(Category {
            value: key.to_owned(),
            taxonomy: Taxonomy::Shopify,
        });
        if let Some(google) = taxonomy::google_category(key) {
            out.push(Category {
                value: google.to_owned(),
                taxonomy: Taxonomy::GoogleProductCategory,
            });
        }
    }
    out
}

/// Maps a product. `variants` replaces the fetched first page when the caller paginated.
pub fn product(raw: &RawProduct, currency: Currency) -> Result<Product, PlatformError> {
    let variants = raw
        .variants
        .variants
        .iter()
        .map(|item| variant(item, raw, currency))
        .collect::<Result<Vec<_>, _>>()?;
    let options = raw
        .options
        .iter()
        .filter(|(name, values)| !(values.len() == 1 && is_placeholder(name, &values[0])))
        .map(|(name, values)| ProductOption {
            name: name.clone(),
            values: values.clone(),
        })
        .collect();
    let price_range = (
        money(&raw.price_range.0, currency)?,
        money(&raw.price_range.1, currency)?,
    );
    let mut description = Description::default();
    if !raw.description.trim().is_empty() {
        description.plain = Some(raw.description.clone());
    }
    if !raw.description_html.trim().is_empty() {
        description.html = Some(raw.description_html.clone());
    }
    Ok(Product {
        id: raw.id.clone(),
        handle: Some(raw.handle.clone()).filter(|handle| !handle.is_empty()),
        title: raw.title.clone(),
        description,
        url: raw.url.clone(),
        categories: categories(raw),
        media: raw
            .images
            .iter()
            .map(|image| Media {
                kind: "image".to_owned(),
                url: image.url.clone(),
                alt_text: image.alt.clone(),
            })
            .collect(),
        options,
        variants,
        featured_variant: raw.featured_variant.clone(),
        price_range: Some(price_range),
        rating: None,
        tags: raw.tags.clone(),
        metadata: (!raw.vendor.is_empty()).then(|| serde_json::json!({"vendor": raw.vendor})),
        seller: None,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn raw_money(amount: &str) -> RawMoney {
        RawMoney {
            amount: amount.into(),
            currency: "USD".into(),
        }
    }

    #[test]
    fn maps_money_exactly_and_hides_the_placeholder_option() {
        let raw = RawProduct {
            id: "gid://shopify/Product/1".into(),
            handle: "mug".into(),
            title: "Mug".into(),
            description: "".into(),
            description_html: "".into(),
            product_type: "Kitchen".into(),
            vendor: "".into(),
            tags: vec![],
            url: None,
            category: Some(("gid://shopify/TaxonomyCategory/aa".into(), "Apparel".into())),
            collections: vec!["Kitchen".into(), "Gifts".into()],
            options: vec![("Title".into(), vec!["Default Title".into()])],
            price_range: (raw_money("10.3"), raw_money("10.3")),
            featured_variant: None,
            images: vec![],
            variants: RawVariantPage {
                variants: vec![RawVariant {
                    id: "gid://shopify/ProductVariant/2".into(),
                    sku: Some("".into()),
                    title: "Default Title".into(),
                    available: true,
                    backorder: false,
                    price: raw_money("10.3"),
                    compare_at: Some(raw_money("5.0")),
                    options: vec![("Title".into(), "Default Title".into())],
                    image: None,
                }],
                next: None,
            },
        };
        let product = product(&raw, Currency::USD).unwrap();
        assert!(product.options.is_empty());
        let variant = &product.variants[0];
        assert_eq!(variant.price.amount, 1030);
        assert_eq!(variant.list_price, None);
        assert_eq!(variant.sku, None);
        assert_eq!(variant.title, "Mug");
        let values: Vec<(&str, &str)> = product
            .categories
            .iter()
            .map(|category| (category.taxonomy.as_str(), category.value.as_str()))
            .collect();
        assert_eq!(
            values,
            [
                ("merchant", "Kitchen"),
                ("merchant", "Gifts"),
                ("shopify", "aa"),
                ("google_product_category", "166")
            ]
        );
    }
}
