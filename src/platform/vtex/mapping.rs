//! VTEX JSON → the bridge's model. Search prices are decimal reais (exact text), checkout
//! amounts integer cents; neither goes through a float.

use iso_currency::Currency;
use rust_decimal::Decimal;
use url::Url;

pub use super::wire::major;
use super::wire::{self, CartItem, LegacyAxes, OrderForm};
use crate::model::{
    CartLine, CartState, Category, Description, Media, OptionChoice, Product, ProductOption,
    Taxonomy, Variant,
};
use crate::money::{Money, parse_currency};
use crate::platform::port::PlatformError;

/// Checkout amounts are in cents whatever the currency ("monetary values have cents as their
/// units"); they are re-scaled to the currency's ISO exponent.
const CHECKOUT_EXPONENT: u32 = 2;

pub fn cents(value: i64, currency: Currency) -> Result<i64, PlatformError> {
    Money::from_minor_str(&value.to_string(), CHECKOUT_EXPONENT, currency)
        .map(|money| money.amount)
        .map_err(|error| PlatformError::BadResponse(format!("cart amount: {error}")))
}

/// `AvailableQuantity` says only whether the seller sells the SKU now: any positive value.
pub fn in_stock(offer: &wire::Offer) -> bool {
    offer
        .available_quantity
        .as_ref()
        .and_then(|amount| Decimal::from_str_exact(amount.0.trim()).ok())
        .is_some_and(|quantity| quantity > Decimal::ZERO)
}

/// The seller a SKU is sold by: the store's default one, else the first that offers it.
pub fn seller(item: &wire::Item) -> Option<&wire::Seller> {
    item.sellers
        .iter()
        .find(|seller| seller.seller_default)
        .or_else(|| item.sellers.first())
}

/// "/Home & Decor/Clocks/" → "Home & Decor > Clocks".
fn category_path(raw: &str) -> Option<String> {
    let names: Vec<&str> = raw
        .split('/')
        .map(str::trim)
        .filter(|name| !name.is_empty())
        .collect();
    (!names.is_empty()).then(|| names.join(" > "))
}

fn description(text: &str) -> Description {
    let text = text.trim();
    if text.is_empty() {
        Description::default()
    } else if text.contains('<') {
        Description {
            html: Some(text.to_owned()),
            ..Description::default()
        }
    } else {
        Description::plain(text)
    }
}

fn media(item: &wire::Item) -> Vec<Media> {
    item.images
        .iter()
        .filter(|image| !image.image_url.is_empty())
        .map(|image| Media {
            kind: "image".to_owned(),
            url: image.image_url.clone(),
            alt_text: image
                .image_text
                .clone()
                .or_else(|| image.image_label.clone())
                .filter(|text| !text.is_empty()),
        })
        .collect()
}

/// One option axis: its canonical key (`originalName`), display name, values in order as
/// `(canonical, display)`.
struct Axis {
    key: String,
    name: String,
    values: Vec<(String, String)>,
}

fn axes_from_specifications(product: &wire::Product) -> Vec<Axis> {
    product
        .sku_specifications
        .iter()
        .map(|spec| Axis {
            key: spec.field.key().to_owned(),
            name: spec.field.name.clone(),
            values: spec
                .values
                .iter()
                .map(|value| (value.key().to_owned(), value.name.clone()))
                .collect(),
        })
        .collect()
}

/// One SKU's `(canonical axis, value)` pairs: Intelligent Search's `variations` objects, or
/// the legacy search's axis names plus their flattened top-level keys.
fn item_choices(
    item: &wire::Item,
    legacy: Option<&serde_json::Map<String, serde_json::Value>>,
) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    for variation in &item.variations {
        match variation {
            serde_json::Value::Object(object) => {
                let name = object
                    .get("name")
                    .and_then(|value| value.as_str())
                    .unwrap_or_default();
                let key = object
                    .get("originalName")
                    .and_then(|value| value.as_str())
                    .filter(|value| !value.is_empty())
                    .unwrap_or(name);
                let value = object
                    .get("values")
                    .and_then(|values| values.as_array())
                    .and_then(|values| values.first())
                    .and_then(|value| value.as_str());
                if let Some(value) = value
                    && !name.is_empty()
                {
                    out.push((key.to_owned(), name.to_owned(), value.to_owned()));
                }
            }
            serde_json::Value::String(name) => {
                let value = legacy
                    .and_then(|keys| keys.get(name))
                    .and_then(|values| values.as_array())
                    .and_then(|values| values.first())
                    .and_then(|value| value.as_str());
                if let Some(value) = value {
                    out.push((name.clone(), name.clone(), value.to_owned()));
                }
            }
            _ => {}
        }
    }
    out
}

pub struct Context<'a> {
    pub currency: Currency,
    pub storefront: &'a Url,
}

pub fn product(raw: &wire::Product, legacy: Option<&LegacyAxes>, context: &Context<'_>) -> Product {
    let currency = context.currency;
    let mut axes = axes_from_specifications(raw);
    let choices: Vec<Vec<(String, String, String)>> = raw
        .items
        .iter()
        .enumerate()
        .map(|(index, item)| item_choices(item, legacy.and_then(|axes| axes.items.get(index))))
        .collect();
    // Axes and values the SKUs use but `skuSpecifications` does not list (legacy search, or
    // a store that hides them), in the order the SKUs name them.
    for (key, name, value) in choices.iter().flatten() {
        let position = match axes.iter().position(|axis| axis.key == *key) {
            Some(position) => position,
            None => {
                axes.push(Axis {
                    key: key.clone(),
                    name: name.clone(),
                    values: Vec::new(),
                });
                axes.len() - 1
            }
        };
        let axis = &mut axes[position];
        if !axis.values.iter().any(|(known, _)| known == value) {
            axis.values.push((value.clone(), value.clone()));
        }
    }
    let url = context
        .storefront
        .join(&format!("{}/p", raw.link_text))
        .ok()
        .filter(|_| !raw.link_text.is_empty())
        .map(String::from);
    let mut variants = Vec::new();
    for (item, choices) in raw.items.iter().zip(&choices) {
        let Some(seller) = seller(item) else {
            continue;
        };
        let offer = &seller.commertial_offer;
        let Some(price) = offer
            .price
            .as_ref()
            .and_then(|price| major(price, currency))
        else {
            continue;
        };
        let list_price = offer
            .list_price
            .as_ref()
            .and_then(|list| major(list, currency))
            .filter(|list| list.amount > price.amount);
        let options = choices
            .iter()
            .filter_map(|(key, _, value)| {
                let axis = axes.iter().find(|axis| axis.key == *key)?;
                let label = axis
                    .values
                    .iter()
                    .find(|(canonical, display)| canonical == value || display == value)
                    .map_or(value.clone(), |(_, display)| display.clone());
                Some(OptionChoice {
                    name: axis.name.clone(),
                    label,
                })
            })
            .collect();
        variants.push(Variant {
            id: item.item_id.clone(),
            sku: item.ref_id().map(str::to_owned),
            title: if item.name.is_empty() {
                item.name_complete.clone()
            } else {
                item.name.clone()
            },
            description: None,
            price,
            list_price,
            // A SKU with no price is not for sale whatever the flag says.
            available: in_stock(offer) && price.amount > 0,
            backorder: false,
            options,
            media: media(item),
            tags: Vec::new(),
            url: url
                .as_ref()
                .map(|url| format!("{url}?skuId={}", item.item_id)),
            metadata: super::installments::metadata(offer, currency).map(serde_json::Value::Object),
        });
    }
    let price_range = raw
        .price_range
        .as_ref()
        .and_then(|range| range.selling_price.as_ref())
        .and_then(|range| {
            let low = major(range.low_price.as_ref()?, currency)?;
            let high = major(range.high_price.as_ref()?, currency)?;
            Some((low, high))
        });
    let mut categories: Vec<Category> = Vec::new();
    for value in raw.categories.iter().filter_map(|raw| category_path(raw)) {
        if !categories.iter().any(|known| known.value == value) {
            categories.push(Category {
                value,
                taxonomy: Taxonomy::Merchant,
            });
        }
    }
    Product {
        id: raw.product_id.clone(),
        handle: (!raw.link_text.is_empty()).then(|| raw.link_text.clone()),
        title: raw.product_name.clone(),
        description: description(&raw.description),
        url,
        categories,
        media: raw.items.first().map(media).unwrap_or_default(),
        options: axes
            .into_iter()
            .filter(|axis| !axis.values.is_empty())
            .map(|axis| ProductOption {
                name: axis.name,
                values: axis
                    .values
                    .into_iter()
                    .map(|(_, display)| display)
                    .collect(),
            })
            .collect(),
        featured_variant: variants
            .iter()
            .find(|variant| variant.available)
            .map(|variant| variant.id.clone()),
        variants,
        price_range,
        rating: None,
        tags: Vec::new(),
        metadata: (!raw.brand.is_empty()).then(|| serde_json::json!({"brand": raw.brand})),
        seller: None,
    }
}

fn line(item: &CartItem, currency: Currency) -> Result<CartLine, PlatformError> {
    let quantity = i64::from(item.quantity);
    let listed = cents(item.price.unwrap_or_default(), currency)?;
    let selling = match item.selling_price {
        Some(selling) => cents(selling, currency)?,
        None => listed,
    };
    let total = match item.price_definition.as_ref().and_then(|def| def.total) {
        Some(total) => cents(total, currency)?,
        None => selling.saturating_mul(quantity),
    };
    Ok(CartLine {
        id: item.unique_id.clone(),
        variant_id: item.id.clone(),
        title: if item.name.is_empty() {
            item.sku_name.clone()
        } else {
            item.name.clone()
        },
        unit_price: listed,
        quantity: item.quantity,
        subtotal: listed.saturating_mul(quantity),
        total,
        image_url: item.image_url.clone().filter(|url| !url.is_empty()),
    })
}

pub fn cart(
    form: &OrderForm,
    fallback: Currency,
    checkout_url: Option<String>,
) -> Result<CartState, PlatformError> {
    let currency = parse_currency(&form.store_preferences_data.currency_code).unwrap_or(fallback);
    let lines = form
        .items
        .iter()
        .map(|item| line(item, currency))
        .collect::<Result<Vec<_>, _>>()?;
    let totalizer = |id: &str| form.totalizers.iter().find(|total| total.id == id);
    let subtotal = match totalizer("Items") {
        Some(items) => cents(items.value, currency)?,
        None => lines.iter().map(|line| line.subtotal).sum(),
    };
    let discount = match totalizer("Discounts") {
        Some(discounts) => cents(discounts.value, currency)?.min(0),
        None => 0,
    };
    let tax = match totalizer("Tax") {
        Some(tax) => Some(cents(tax.value, currency)?),
        None => None,
    };
    Ok(CartState {
        id: form.order_form_id.clone(),
        lines,
        currency,
        subtotal,
        discount,
        tax,
        total: cents(form.value, currency)?,
        checkout_url,
        expires_at: None,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    const SEARCH: &str =
        include_str!("../../../tests/support/vtex_standin/fixtures/is-v1-product-search.json");

    #[test]
    fn the_example_product_maps_with_exact_reais() {
        let page: wire::Page = serde_json::from_str(SEARCH).unwrap();
        let raw: wire::Product = serde_json::from_str(page.products[0].get()).unwrap();
        let storefront = Url::parse("https://loja.example/").unwrap();
        let brl = parse_currency("BRL").unwrap();
        let product = product(
            &raw,
            None,
            &Context {
                currency: brl,
                storefront: &storefront,
            },
        );
        assert_eq!(product.id, "2000003");
        assert_eq!(product.variants[0].id, "2000534");
        assert_eq!(product.variants[0].price.amount, 19799);
        assert!(product.variants[0].available);
        assert_eq!(product.categories[0].value, "Home & Decor");
        assert_eq!(
            product.url.as_deref(),
            Some("https://loja.example/wood-clock/p")
        );
    }

    #[test]
    fn checkout_cents_rescale_to_the_currency() {
        let brl = parse_currency("BRL").unwrap();
        let jpy = parse_currency("JPY").unwrap();
        assert_eq!(cents(15000, brl).unwrap(), 15000);
        assert_eq!(cents(150000, jpy).unwrap(), 1500);
    }
}
