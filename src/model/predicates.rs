//! What the catalog filters mean, as predicates over the model: the brain post-filters with
//! them and in-process stores push them down with the very same definitions.

use super::{Filters, PriceBounds, Product, Variant};

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
