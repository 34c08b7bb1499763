//! What a kept checkout, order or buyer weighs in memory, near enough for a byte bound: the
//! maps adapters keep per checkout are keyed by agent input, so they are bounded by what their
//! entries weigh rather than by how many there are (one entry may carry a hundred lines).

use std::mem::size_of;

use crate::model::CartLine;
use crate::model::checkout::{Address, Buyer, CheckoutState, Order, Stage};

fn text(value: &str) -> usize {
    size_of::<String>() + value.len()
}

fn maybe(value: Option<&String>) -> usize {
    value.map_or(size_of::<Option<String>>(), |value| text(value))
}

fn texts(values: &[String]) -> usize {
    values.iter().map(|value| text(value)).sum()
}

pub fn buyer(buyer: &Buyer) -> usize {
    [
        &buyer.first_name,
        &buyer.last_name,
        &buyer.email,
        &buyer.phone_number,
    ]
    .into_iter()
    .map(|field| maybe(field.as_ref()))
    .sum()
}

pub fn address(address: &Address) -> usize {
    [
        &address.first_name,
        &address.last_name,
        &address.street_address,
        &address.extended_address,
        &address.address_locality,
        &address.address_region,
        &address.postal_code,
        &address.address_country,
        &address.phone_number,
    ]
    .into_iter()
    .map(|field| maybe(field.as_ref()))
    .sum()
}

pub fn lines(lines: &[CartLine]) -> usize {
    lines
        .iter()
        .map(|line| {
            size_of::<CartLine>()
                + line.id.len()
                + line.variant_id.len()
                + line.title.len()
                + line.image_url.as_ref().map_or(0, String::len)
        })
        .sum()
}

pub fn checkout(state: &CheckoutState) -> usize {
    let fulfillment: usize = state
        .fulfillment
        .iter()
        .map(|method| {
            text(&method.id)
                + texts(&method.line_ids)
                + method
                    .destinations
                    .iter()
                    .map(|destination| text(&destination.id) + address(&destination.address))
                    .sum::<usize>()
                + method
                    .groups
                    .iter()
                    .map(|group| {
                        text(&group.id)
                            + texts(&group.line_ids)
                            + group
                                .options
                                .iter()
                                .map(|option| {
                                    text(&option.id)
                                        + text(&option.title)
                                        + maybe(option.description.as_ref())
                                        + maybe(option.carrier.as_ref())
                                        + 48
                                })
                                .sum::<usize>()
                    })
                    .sum::<usize>()
        })
        .sum();
    let discounts: usize = state
        .discounts
        .iter()
        .map(|discount| {
            maybe(discount.code.as_ref()) + text(&discount.title) + 48 * discount.allocations.len()
        })
        .sum();
    let stage = match &state.stage {
        Stage::Placed(order) => {
            text(&order.id) + maybe(order.label.as_ref()) + text(&order.permalink_url)
        }
        Stage::Open | Stage::Canceled => 0,
    };
    size_of::<CheckoutState>()
        + state.id.len()
        + lines(&state.lines)
        + buyer(&state.buyer)
        + state.address.as_ref().map_or(0, address)
        + fulfillment
        + texts(&state.codes)
        + discounts
        + state
            .refused_codes
            .iter()
            .map(|refused| text(&refused.code) + text(&refused.reason))
            .sum::<usize>()
        + state
            .handlers
            .iter()
            .map(|handler| text(&handler.id) + text(&handler.name))
            .sum::<usize>()
        + maybe(state.continue_url.as_ref())
        + stage
}

pub fn order(order: &Order) -> usize {
    size_of::<Order>()
        + order.id.len()
        + order.checkout_id.len()
        + maybe(order.label.as_ref())
        + order.permalink_url.len()
        + order.store_status.len()
        + order
            .lines
            .iter()
            .map(|line| {
                text(&line.id)
                    + maybe(line.variant_id.as_ref())
                    + maybe(line.sku.as_ref())
                    + text(&line.title)
                    + 32
            })
            .sum::<usize>()
        + order.shipping_address.as_ref().map_or(0, address)
        + maybe(order.fulfillment_title.as_ref())
        + texts(&order.codes)
}

/// A weight as moka's weigher wants it; an entry too heavy to count is as heavy as can be.
pub fn weight(bytes: usize) -> u32 {
    u32::try_from(bytes).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_buyer_weighs_what_their_fields_hold() {
        let empty = buyer(&Buyer::default());
        let named = buyer(&Buyer {
            email: Some("x".repeat(1000)),
            ..Buyer::default()
        });
        assert!(named >= empty + 1000, "{named} vs {empty}");
    }
}
