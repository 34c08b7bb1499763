//! Catalog filters and buyer context: from the wire into the model. The predicates that define
//! the filters live in `model::predicates`, below every store that pushes them down.

use iso_currency::Currency;

use super::BrainError;
use crate::model::{BuyerContext, Filters, PriceBounds};
use crate::protocol::request::{ContextIn, FiltersIn};
use crate::protocol::{Message, MessageCode};

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
                    MessageCode::FilterIgnored,
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
