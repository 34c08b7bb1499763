//! Catalog filters and buyer context: from the wire into the model, and the predicates that
//! define them (used by the brain to post-filter and by in-process stores to push down).

use iso_currency::Currency;

use super::BrainError;
use crate::model::{BuyerContext, Filters, PriceBounds, Product, Variant};
use crate::protocol::Message;
use crate::protocol::request::{ContextIn, FiltersIn};

pub fn buyer_context(context: &ContextIn) -> BuyerContext {
    let clean = |value: &Option<String>| {
        value
            .as_deref()
            .map(str::trim)
            .filter(|value| !value.is_empty())
            .map(str::to_owned)
    };
    BuyerContext {
        country: clean(&context.address_country).map(|value| value.to_ascii_uppercase()),
        region: clean(&context.address_region),
        postal_code: clean(&context.postal_code),
        language: clean(&context.language),
        currency: clean(&context.currency).map(|value| value.to_ascii_uppercase()),
    }
}

/// Turns wire filters into model filters. A price filter denominated in another currency than
/// the store's is ignored with a warning, as the UCP price-filter schema asks.
pub fn build_filters(
    filters: Option<&FiltersIn>,
    context: &BuyerContext,
    store_currency: Currency,
    path: &str,
) -> Result<(Filters, Vec<Message>), BrainError> {
    let mut messages = Vec::new();
    let Some(filters) = filters else {
        return Ok((Filters::default(), messages));
    };
    let categories: Vec<String> = filters
        .categories
        .iter()
        .map(|value| value.trim().to_owned())
        .filter(|value| !value.is_empty())
        .collect();
    let mut price = None;
    if let Some(bounds) = &filters.price
        && (bounds.min.is_some() || bounds.max.is_some())
    {
        if let (Some(min), Some(max)) = (bounds.min, bounds.max)
            && min > max
        {
            return Err(BrainError::invalid(
                format!("{path}.filters.price"),
                "min must not be greater than max",
            ));
        }
        match context.currency.as_deref() {
            Some(code) if code != store_currency.code() => messages.push(
                Message::warning(
                    "filter_ignored",
                    format!(
                        "The price filter was ignored: it is in {code}, this store prices in {}",
                        store_currency.code()
                    ),
                )
                .at("$.filters.price"),
            ),
            _ => {
                price = Some(PriceBounds {
                    min: bounds.min,
                    max: bounds.max,
                })
            }
        }
    }
    Ok((Filters { categories, price }, messages))
}

/// OR over the requested categories; a value also matches any deeper merchant path
/// ("Footwear" matches "Footwear > Running"), the way shoppers browse a category tree.
pub fn product_in_categories(product: &Product, wanted: &[String]) -> bool {
    if wanted.is_empty() {
        return true;
    }
    product.categories.iter().any(|category| {
        wanted.iter().any(|want| {
            category.value.eq_ignore_ascii_case(want)
                || (category
                    .value
                    .get(..want.len())
                    .is_some_and(|head| head.eq_ignore_ascii_case(want))
                    && category.value[want.len()..].trim_start().starts_with('>'))
        })
    })
}

pub fn variant_in_price(variant: &Variant, price: Option<&PriceBounds>) -> bool {
    let Some(bounds) = price else {
        return true;
    };
    bounds.min.is_none_or(|min| variant.price.amount >= min)
        && bounds.max.is_none_or(|max| variant.price.amount <= max)
}

pub fn variant_passes(variant: &Variant, filters: &Filters) -> bool {
    variant_in_price(variant, filters.price.as_ref())
}

/// A product passes when it is in a wanted category and at least one variant passes.
pub fn product_passes(product: &Product, filters: &Filters) -> bool {
    product_in_categories(product, &filters.categories)
        && (filters.price.is_none()
            || product
                .variants
                .iter()
                .any(|variant| variant_passes(variant, filters)))
}
