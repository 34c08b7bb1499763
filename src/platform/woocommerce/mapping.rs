//! Store API JSON → the bridge's model. Pure functions, so they are tested on real payloads.

use std::collections::HashMap;

use iso_currency::Currency;

use super::categories::CategoryTree;
use super::rest_v3::DefaultAttribute;
use super::text::{decode_entities, plain_text};
use super::wire::{Prices, StoreCart, StoreProduct, VariationRef};
use crate::model::{
    CartLine, CartState, Category, Description, Media, OptionChoice, Product, ProductOption,
    Rating, Taxonomy, Variant,
};
use crate::money::{Money, parse_currency};
use crate::platform::port::PlatformError;

/// Minor-unit string at the store's precision → ISO minor units; "" is zero.
pub fn minor(value: &str, exponent: u32, currency: Currency) -> Result<i64, PlatformError> {
    if value.trim().is_empty() {
        return Ok(0);
    }
    Money::from_minor_str(value, exponent, currency)
        .map(|money| money.amount)
        .map_err(|error| PlatformError::BadResponse(format!("price: {error}")))
}

fn currency_of(code: &str, fallback: Currency) -> Currency {
    parse_currency(code).unwrap_or(fallback)
}

fn money(value: &str, prices: &Prices, fallback: Currency) -> Option<Money> {
    if value.trim().is_empty() {
        return None;
    }
    let currency = currency_of(&prices.currency_code, fallback);
    Money::from_minor_str(value, prices.currency_minor_unit, currency).ok()
}

fn list_price(prices: &Prices, price: &Money, fallback: Currency) -> Option<Money> {
    money(&prices.regular_price, prices, fallback).filter(|regular| regular.amount > price.amount)
}

fn media(product: &StoreProduct) -> Vec<Media> {
    product
        .images
        .iter()
        .filter(|image| !image.src.is_empty())
        .map(|image| Media {
            kind: "image".to_owned(),
            url: image.src.clone(),
            alt_text: (!image.alt.is_empty()).then(|| image.alt.clone()),
        })
        .collect()
}

fn description(product: &StoreProduct) -> Description {
    let html = [&product.description, &product.short_description]
        .into_iter()
        .find(|text| !text.trim().is_empty());
    match html {
        Some(html) => Description {
            plain: Some(plain_text(html)),
            html: Some(html.clone()),
            markdown: None,
        },
        None => Description::default(),
    }
}

fn available(product: &StoreProduct) -> bool {
    product.is_purchasable && (product.is_in_stock || product.is_on_backorder)
}

/// The label a variation's attribute value stands for: Woo lists global attribute values by
/// term slug, while buyers see the term name.
fn label(product: &StoreProduct, attribute: &str, value: &str) -> String {
    product
        .attributes
        .iter()
        .find(|candidate| candidate.name == attribute)
        .and_then(|candidate| {
            candidate
                .terms
                .iter()
                .find(|term| term.slug == value)
                .or_else(|| candidate.terms.iter().find(|term| term.name == value))
        })
        .map(|term| decode_entities(&term.name))
        .unwrap_or_else(|| decode_entities(value))
}

fn choices(product: &StoreProduct, reference: &VariationRef) -> Vec<OptionChoice> {
    reference
        .attributes
        .iter()
        // An empty value means "any value" for that attribute: it narrows nothing.
        .filter(|pair| !pair.value.is_empty())
        .map(|pair| OptionChoice {
            name: decode_entities(&pair.name),
            label: label(product, &pair.name, &pair.value),
        })
        .collect()
}

fn variant(
    parent: &StoreProduct,
    own: &StoreProduct,
    options: Vec<OptionChoice>,
    fallback: Currency,
) -> Option<Variant> {
    let Some(price) = money(&own.prices.price, &own.prices, fallback) else {
        tracing::debug!(id = own.id, "variant without a price skipped");
        return None;
    };
    let title = if options.is_empty() {
        decode_entities(&parent.name)
    } else {
        options
            .iter()
            .map(|choice| choice.label.as_str())
            .collect::<Vec<_>>()
            .join(" / ")
    };
    Some(Variant {
        id: own.id.to_string(),
        sku: (!own.sku.is_empty()).then(|| own.sku.clone()),
        title,
        description: None,
        list_price: list_price(&own.prices, &price, fallback),
        price,
        available: available(own),
        backorder: false,
        options,
        media: if own.id == parent.id {
            Vec::new()
        } else {
            media(own)
        },
        tags: Vec::new(),
        metadata: None,
        url: (!own.permalink.is_empty()).then(|| own.permalink.clone()),
    })
}

pub fn is_variable(product: &StoreProduct) -> bool {
    !product.variations.is_empty()
}

/// A product with the variations given; `variations` may hold other products' too.
pub fn product(
    parent: &StoreProduct,
    variations: &HashMap<u64, StoreProduct>,
    tree: &CategoryTree,
    fallback: Currency,
) -> Product {
    let variants: Vec<Variant> = if is_variable(parent) {
        parent
            .variations
            .iter()
            .filter_map(|reference| {
                let own = variations.get(&reference.id)?;
                variant(parent, own, choices(parent, reference), fallback)
            })
            .collect()
    } else {
        variant(parent, parent, Vec::new(), fallback)
            .into_iter()
            .collect()
    };
    let options = parent
        .attributes
        .iter()
        .filter(|attribute| attribute.has_variations && is_variable(parent))
        .map(|attribute| ProductOption {
            name: decode_entities(&attribute.name),
            values: attribute
                .terms
                .iter()
                .map(|term| decode_entities(&term.name))
                .collect(),
        })
        .collect();
    let price_range = match &parent.prices.price_range {
        Some(range) => money(&range.min_amount, &parent.prices, fallback).zip(money(
            &range.max_amount,
            &parent.prices,
            fallback,
        )),
        None => money(&parent.prices.price, &parent.prices, fallback).map(|price| (price, price)),
    };
    let rating = (parent.review_count > 0)
        .then(|| parent.average_rating.trim().parse::<f64>().ok())
        .flatten()
        .map(|value| Rating {
            value,
            scale_max: 5.0,
            count: Some(parent.review_count),
        });
    Product {
        id: parent.id.to_string(),
        handle: (!parent.slug.is_empty()).then(|| parent.slug.clone()),
        title: decode_entities(&parent.name),
        description: description(parent),
        url: (!parent.permalink.is_empty()).then(|| parent.permalink.clone()),
        categories: parent
            .categories
            .iter()
            .map(|category| Category {
                value: tree.path(category.id, &category.name),
                taxonomy: Taxonomy::Merchant,
            })
            .collect(),
        media: media(parent),
        options,
        variants,
        featured_variant: None,
        price_range,
        rating,
        tags: parent
            .tags
            .iter()
            .map(|tag| decode_entities(&tag.name))
            .collect(),
        metadata: None,
        seller: None,
    }
}

pub fn cart(
    id: String,
    cart: &StoreCart,
    fallback: Currency,
    checkout_url: Option<String>,
    expires_at: Option<time::OffsetDateTime>,
) -> Result<CartState, PlatformError> {
    let totals = &cart.totals;
    let currency = currency_of(&totals.currency_code, fallback);
    let exponent = totals.currency_minor_unit;
    let mut lines = Vec::with_capacity(cart.items.len());
    for item in &cart.items {
        let item_currency = currency_of(&item.prices.currency_code, currency);
        let item_exponent = item.prices.currency_minor_unit;
        let values: Vec<String> = item
            .variation
            .iter()
            .map(|pair| decode_entities(&pair.value))
            .collect();
        let name = decode_entities(&item.name);
        lines.push(CartLine {
            id: item.key.clone(),
            variant_id: item.id.to_string(),
            title: if values.is_empty() {
                name
            } else {
                format!("{name} — {}", values.join(", "))
            },
            unit_price: minor(&item.prices.price, item_exponent, item_currency)?,
            quantity: item.quantity,
            subtotal: minor(&item.totals.line_subtotal, item_exponent, item_currency)?,
            total: minor(&item.totals.line_total, item_exponent, item_currency)?,
            image_url: item.images.first().map(|image| image.src.clone()),
        });
    }
    let tax = minor(&totals.total_tax, exponent, currency)?;
    Ok(CartState {
        id,
        lines,
        currency,
        subtotal: minor(&totals.total_items, exponent, currency)?,
        discount: -minor(&totals.total_discount, exponent, currency)?.abs(),
        tax: (!totals.total_tax.trim().is_empty()).then_some(tax),
        total: minor(&totals.total_price, exponent, currency)?,
        checkout_url,
        expires_at,
    })
}

/// The variant the merchant set as the default selection (REST v3 `default_attributes`).
pub fn featured_variant(product: &Product, defaults: &[DefaultAttribute]) -> Option<String> {
    if defaults.is_empty() {
        return None;
    }
    product
        .variants
        .iter()
        .find(|variant| {
            defaults.iter().all(|wanted| {
                let option = decode_entities(&wanted.option);
                variant.options.iter().any(|choice| {
                    choice
                        .name
                        .eq_ignore_ascii_case(&decode_entities(&wanted.name))
                        && choice.label.eq_ignore_ascii_case(&option)
                })
            })
        })
        .map(|variant| variant.id.clone())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    const PRODUCTS: &str =
        include_str!("../../../tests/support/woo_standin/fixtures/store-products.json");
    const VARIATIONS: &str = include_str!(
        "../../../tests/support/woo_standin/fixtures/store-products-variations-of-11.json"
    );
    const CART: &str =
        include_str!("../../../tests/support/woo_standin/fixtures/store-cart-add-item.json");

    fn usd() -> Currency {
        parse_currency("USD").unwrap()
    }

    #[test]
    fn real_variable_product_maps_to_options_and_variants() {
        let products: Vec<StoreProduct> = serde_json::from_str(PRODUCTS).unwrap();
        let variations: Vec<StoreProduct> = serde_json::from_str(VARIATIONS).unwrap();
        let by_id = variations.into_iter().map(|v| (v.id, v)).collect();
        let tee = product(&products[0], &by_id, &CategoryTree::default(), usd());
        assert_eq!(tee.options[0].values, ["S", "M", "L"]);
        assert_eq!(tee.options[1].values, ["Red", "Blue"]);
        assert_eq!(tee.variants.len(), 6);
        let m_blue = tee.variant("15").unwrap();
        assert!(!m_blue.available);
        assert_eq!(m_blue.sku.as_deref(), Some("TEE-M-BLUE"));
        assert_eq!(m_blue.price.amount, 2000);
        assert_eq!(m_blue.label_of("Color"), Some("Blue"));
        let (min, max) = tee.price_range.unwrap();
        assert_eq!((min.amount, max.amount), (2000, 2200));
        assert_eq!(tee.categories[0].value, "T-Shirts");

        let mug = product(
            &products[1],
            &HashMap::new(),
            &CategoryTree::default(),
            usd(),
        );
        assert_eq!(mug.variants.len(), 1);
        assert_eq!(mug.variants[0].id, "10");
        assert_eq!(mug.variants[0].price.amount, 999);
        assert_eq!(mug.variants[0].list_price.unwrap().amount, 1250);
    }

    #[test]
    fn real_cart_maps_to_lines_and_totals() {
        let cart: StoreCart = serde_json::from_str(CART).unwrap();
        let state = super::cart("c".into(), &cart, usd(), None, None).unwrap();
        assert_eq!(state.lines.len(), 1);
        let line = &state.lines[0];
        assert_eq!(line.id, "d3d9446802a44259755d38e6d163e820");
        assert_eq!(
            (line.unit_price, line.quantity, line.subtotal),
            (999, 2, 1998)
        );
        assert_eq!(
            (state.subtotal, state.discount, state.total),
            (1998, 0, 1998)
        );
        assert_eq!(state.tax, Some(0));
    }

    #[test]
    fn minor_units_rescale_to_the_iso_exponent() {
        let jpy = parse_currency("JPY").unwrap();
        assert_eq!(minor("150000", 2, jpy).unwrap(), 1500);
        assert_eq!(minor("", 2, usd()).unwrap(), 0);
        assert!(minor("12,50", 2, usd()).is_err());
    }
}
