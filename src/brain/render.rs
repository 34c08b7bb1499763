//! Model → wire. Every product and variant the bridge emits goes through here, and every
//! merchant-written text on it through `untrusted`. The release a call is answered in is
//! written into the envelope as the answer is built (`Namespace::envelope`). The wire
//! structs borrow from the model: nothing is copied unless `untrusted` changed it.

use std::borrow::Cow;

use iso_currency::Currency;

use super::selection::{OptionSignals, option_axes};
use super::untrusted;
use crate::model::{Description, Media, OptionChoice, Product, Seller, Variant};
use crate::money::Money;
use crate::protocol::catalog::{
    AvailabilityOut, CategoryOut, DescriptionOut, InputOut, LinkOut, MediaOut, OptionOut,
    OptionValueOut, PriceRangeOut, ProductOut, RatingOut, SelectedOut, SellerOut, VariantOut,
};

fn description<'a>(description: Option<&'a Description>, fallback: &'a str) -> DescriptionOut<'a> {
    let (plain, html) = untrusted::description(
        description.and_then(|own| own.plain.as_deref()),
        description.and_then(|own| own.html.as_deref()),
        description.and_then(|own| own.markdown.as_deref()),
        fallback,
    );
    DescriptionOut {
        plain: Some(plain),
        html,
        markdown: None,
    }
}

fn tags(tags: &[String]) -> Vec<Cow<'_, str>> {
    tags.iter()
        .map(|tag| untrusted::title(tag))
        .filter(|tag| !tag.is_empty())
        .collect()
}

fn media(items: &[Media]) -> Vec<MediaOut<'_>> {
    items
        .iter()
        .map(|item| MediaOut {
            kind: &item.kind,
            url: &item.url,
            alt_text: item
                .alt_text
                .as_deref()
                .map(untrusted::title)
                .filter(|alt| !alt.is_empty()),
        })
        .collect()
}

fn seller(seller: &Seller) -> SellerOut<'_> {
    SellerOut {
        name: untrusted::title(&seller.name),
        links: seller
            .links
            .iter()
            .map(|link| LinkOut {
                kind: &link.kind,
                url: &link.url,
            })
            .collect(),
    }
}

pub fn selected(choices: &[OptionChoice]) -> Vec<SelectedOut<'_>> {
    choices
        .iter()
        .map(|choice| SelectedOut {
            name: untrusted::title(&choice.name),
            label: untrusted::title(&choice.label),
        })
        .collect()
}

pub fn variant<'a>(
    product: &'a Product,
    variant: &'a Variant,
    inputs: Option<Vec<InputOut<'a>>>,
) -> VariantOut<'a> {
    VariantOut {
        id: &variant.id,
        sku: variant.sku.as_deref(),
        title: untrusted::title(&variant.title),
        description: description(variant.description.as_ref(), &variant.title),
        url: variant.url.as_deref(),
        price: variant.price,
        list_price: variant
            .list_price
            .filter(|list| list.amount > variant.price.amount),
        availability: AvailabilityOut {
            available: variant.available,
            // UCP's well-known values (types/variant.json `availability.status`).
            status: match (variant.available, variant.backorder) {
                (true, true) => "backorder",
                (true, false) => "in_stock",
                (false, _) => "out_of_stock",
            },
        },
        options: selected(&variant.options),
        media: media(&variant.media),
        tags: tags(&variant.tags),
        seller: product.seller.as_ref().map(seller),
        metadata: variant.metadata.as_ref().map(untrusted::json),
        inputs,
    }
}

fn range(mut prices: impl Iterator<Item = Money>) -> Option<PriceRangeOut> {
    let first = prices.next()?;
    let (min, max) = prices.fold((first, first), |(min, max), price| {
        (
            if price.amount < min.amount {
                price
            } else {
                min
            },
            if price.amount > max.amount {
                price
            } else {
                max
            },
        )
    });
    Some(PriceRangeOut { min, max })
}

/// Options without availability signals (search and lookup listings).
fn plain_options(product: &Product) -> Vec<OptionOut<'_>> {
    option_axes(product)
        .into_iter()
        .filter(|axis| !axis.values.is_empty())
        .map(|axis| OptionOut {
            name: untrusted::title(axis.name),
            values: axis
                .values
                .into_iter()
                .map(|label| OptionValueOut {
                    label: untrusted::title(label),
                    available: None,
                    exists: None,
                })
                .collect(),
        })
        .collect()
}

pub fn signal_options<'a>(signals: &[OptionSignals<'a>]) -> Vec<OptionOut<'a>> {
    signals
        .iter()
        .filter(|option| !option.values.is_empty())
        .map(|option| OptionOut {
            name: untrusted::title(option.name),
            values: option
                .values
                .iter()
                .map(|value| OptionValueOut {
                    label: untrusted::title(value.label),
                    available: Some(value.available),
                    exists: Some(value.exists),
                })
                .collect(),
        })
        .collect()
}

fn list_range<'v>(variants: impl Iterator<Item = &'v Variant> + Clone) -> Option<PriceRangeOut> {
    let discounted = variants.clone().any(|variant| {
        variant
            .list_price
            .is_some_and(|list| list.amount > variant.price.amount)
    });
    if discounted {
        range(variants.map(|variant| variant.list_price.unwrap_or(variant.price)))
    } else {
        None
    }
}

/// A product with the given variants already rendered. `kept` are the variants the
/// filters let through: when they are fewer than the product's, the price ranges cover
/// only them (a `min: 5000` filter must not show a 4990 minimum); otherwise the ranges
/// cover all the product's variants (as known to the adapter), not just the ones shown.
pub fn product<'a>(
    product: &'a Product,
    variants: Vec<VariantOut<'a>>,
    kept: &[&Variant],
    store_currency: Currency,
) -> ProductOut<'a> {
    let filtered = !kept.is_empty() && kept.len() < product.variants.len();
    let (price_range, list_price_range) = if filtered {
        (
            range(kept.iter().map(|variant| variant.price)),
            list_range(kept.iter().copied()),
        )
    } else {
        (
            product
                .price_range
                .map(|(min, max)| PriceRangeOut { min, max })
                .or_else(|| range(product.variants.iter().map(|variant| variant.price)))
                .or_else(|| range(variants.iter().map(|variant| variant.price))),
            list_range(product.variants.iter()),
        )
    };
    // An adapter always hands over at least one variant or a price range; a product with
    // neither would be unsellable, and is rendered at zero rather than dropped.
    let price_range = price_range.unwrap_or_else(|| {
        let zero = Money::new(0, store_currency);
        PriceRangeOut {
            min: zero,
            max: zero,
        }
    });
    ProductOut {
        id: &product.id,
        handle: product.handle.as_deref(),
        title: untrusted::title(&product.title),
        description: description(Some(&product.description), &product.title),
        url: product.url.as_deref(),
        categories: product
            .categories
            .iter()
            .map(|category| CategoryOut {
                value: untrusted::title(&category.value),
                taxonomy: category.taxonomy.as_str(),
            })
            .collect(),
        price_range,
        list_price_range,
        media: media(&product.media),
        options: plain_options(product),
        selected: None,
        variants,
        rating: product.rating.as_ref().map(|rating| RatingOut {
            value: rating.value,
            scale_max: rating.scale_max,
            count: rating.count,
        }),
        tags: tags(&product.tags),
        metadata: product.metadata.as_ref().map(untrusted::json),
    }
}
