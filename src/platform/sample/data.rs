//! The sample store's data file and its translation into the model. The file format is the
//! bridge's own (documented by `store.json` itself), kept close to what merchants see in
//! their admin: decimal prices, option labels per variant, stock counts.

use std::collections::{BTreeMap, HashSet};

use iso_currency::Currency;
use serde::Deserialize;

use crate::model::{
    Category, Description, Media, OptionChoice, Product, ProductOption, Rating, Seller, SellerLink,
    Taxonomy, Variant,
};
use crate::money::{Money, parse_currency};

pub const EMBEDDED: &str = include_str!("store.json");

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StoreFile {
    pub name: String,
    pub currency: String,
    pub storefront_url: String,
    pub seller: Option<SellerFile>,
    pub products: Vec<ProductFile>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SellerFile {
    pub name: String,
    #[serde(default)]
    pub links: Vec<LinkFile>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkFile {
    #[serde(rename = "type")]
    pub kind: String,
    pub url: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CategoriesFile {
    pub merchant: String,
    pub shopify: Option<String>,
    pub google: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MediaFile {
    pub url: String,
    pub alt: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OptionFile {
    pub name: String,
    pub values: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RatingFile {
    pub value: f64,
    pub scale_max: f64,
    pub count: Option<u64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VariantFile {
    pub id: String,
    pub sku: Option<String>,
    pub options: Vec<String>,
    pub price: String,
    pub list_price: Option<String>,
    /// `None` = unlimited.
    pub stock: Option<u32>,
    #[serde(default)]
    pub media: Vec<MediaFile>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProductFile {
    pub id: String,
    pub handle: String,
    pub title: String,
    pub description: String,
    pub description_html: Option<String>,
    pub categories: CategoriesFile,
    #[serde(default)]
    pub tags: Vec<String>,
    #[serde(default)]
    pub media: Vec<MediaFile>,
    #[serde(default)]
    pub options: Vec<OptionFile>,
    pub variants: Vec<VariantFile>,
    pub featured_variant: Option<String>,
    pub rating: Option<RatingFile>,
    pub metadata: Option<serde_json::Value>,
}

/// A loaded store: the model plus the stock counts only the sample knows.
pub struct LoadedStore {
    pub name: String,
    pub currency: Currency,
    pub storefront_url: String,
    pub products: Vec<Product>,
    pub stock: BTreeMap<String, Option<u32>>,
}

fn media(items: &[MediaFile]) -> Vec<Media> {
    items
        .iter()
        .map(|item| Media {
            kind: "image".to_owned(),
            url: item.url.clone(),
            alt_text: item.alt.clone(),
        })
        .collect()
}

/// Parses and checks a store file; every problem is reported with the product it concerns.
pub fn load(text: &str) -> Result<LoadedStore, String> {
    let file: StoreFile =
        serde_json::from_str(text).map_err(|error| format!("not a store file: {error}"))?;
    let currency = parse_currency(&file.currency).map_err(|error| error.to_string())?;
    let seller = file.seller.as_ref().map(|seller| Seller {
        name: seller.name.clone(),
        links: seller
            .links
            .iter()
            .map(|link| SellerLink {
                kind: link.kind.clone(),
                url: link.url.clone(),
            })
            .collect(),
    });
    let mut seen = HashSet::new();
    let mut products = Vec::with_capacity(file.products.len());
    let mut stock = BTreeMap::new();
    for product in &file.products {
        let context = |message: String| format!("product {}: {message}", product.id);
        if !seen.insert(product.id.clone()) {
            return Err(context("duplicate id".to_owned()));
        }
        if product.variants.is_empty() {
            return Err(context("has no variants".to_owned()));
        }
        let mut categories = vec![Category {
            value: product.categories.merchant.clone(),
            taxonomy: Taxonomy::Merchant,
        }];
        if let Some(value) = &product.categories.shopify {
            categories.push(Category {
                value: value.clone(),
                taxonomy: Taxonomy::Shopify,
            });
        }
        if let Some(value) = &product.categories.google {
            categories.push(Category {
                value: value.clone(),
                taxonomy: Taxonomy::GoogleProductCategory,
            });
        }
        let options: Vec<ProductOption> = product
            .options
            .iter()
            .map(|option| ProductOption {
                name: option.name.clone(),
                values: option.values.clone(),
            })
            .collect();
        let mut variants = Vec::with_capacity(product.variants.len());
        for variant in &product.variants {
            if !seen.insert(variant.id.clone()) {
                return Err(context(format!("duplicate variant id {}", variant.id)));
            }
            if variant.options.len() != options.len() {
                return Err(context(format!(
                    "variant {} has {} option labels for {} options",
                    variant.id,
                    variant.options.len(),
                    options.len()
                )));
            }
            let price = Money::from_major_str(&variant.price, currency)
                .map_err(|error| context(error.to_string()))?;
            let list_price = variant
                .list_price
                .as_deref()
                .map(|value| Money::from_major_str(value, currency))
                .transpose()
                .map_err(|error| context(error.to_string()))?;
            let choices: Vec<OptionChoice> = options
                .iter()
                .zip(&variant.options)
                .map(|(option, label)| OptionChoice {
                    name: option.name.clone(),
                    label: label.clone(),
                })
                .collect();
            let title = if choices.is_empty() {
                product.title.clone()
            } else {
                choices
                    .iter()
                    .map(|choice| choice.label.as_str())
                    .collect::<Vec<_>>()
                    .join(" / ")
            };
            stock.insert(variant.id.clone(), variant.stock);
            variants.push(Variant {
                id: variant.id.clone(),
                sku: variant.sku.clone(),
                description: Some(Description::plain(format!("{} — {title}", product.title))),
                title,
                price,
                list_price,
                available: variant.stock != Some(0),
                backorder: false,
                options: choices,
                media: media(&variant.media),
                tags: Vec::new(),
                metadata: None,
                url: Some(format!(
                    "{}products/{}?variant={}",
                    file.storefront_url, product.handle, variant.id
                )),
            });
        }
        products.push(Product {
            id: product.id.clone(),
            handle: Some(product.handle.clone()),
            title: product.title.clone(),
            description: Description {
                plain: Some(product.description.clone()),
                html: product.description_html.clone(),
                markdown: None,
            },
            url: Some(format!(
                "{}products/{}",
                file.storefront_url, product.handle
            )),
            categories,
            media: media(&product.media),
            options,
            variants,
            featured_variant: product.featured_variant.clone(),
            price_range: None,
            rating: product.rating.as_ref().map(|rating| Rating {
                value: rating.value,
                scale_max: rating.scale_max,
                count: rating.count,
            }),
            tags: product.tags.clone(),
            metadata: product.metadata.clone(),
            seller: seller.clone(),
        });
    }
    Ok(LoadedStore {
        name: file.name,
        currency,
        storefront_url: file.storefront_url,
        products,
        stock,
    })
}
