//! A Shopify cart, read as a checkout: its lines, the buyer Shopify holds, the selected delivery
//! address, the delivery groups with their options, the discounts and the totals. Every amount
//! is Shopify's own, parsed from its decimal strings into minor units (`cart::money`); the only
//! sums are the ones Shopify gives no figure for (see `totals`).

use iso_currency::Currency;
use time::format_description::well_known::Rfc3339;
use time::{Duration as TimeDuration, OffsetDateTime};

use super::raw::{RawAddress, RawAllocation, RawCheckout, RawGroup};
use crate::model::CartLine;
use crate::model::checkout::{
    Address, Allocation, AllocationTarget, AppliedDiscount, Buyer, CheckoutState, CheckoutTotals,
    Destination, EscalationReason, FulfillmentGroup, FulfillmentMethod, FulfillmentOption,
    MethodKind, Order, Stage,
};
use crate::money::parse_currency;
use crate::platform::port::PlatformError;
use crate::platform::shopify::cart::{CART_LIFETIME_DAYS, display_title, money};
use crate::platform::shopify::mapping::RawMoney;

/// The group answered when Shopify offers no delivery group for the address: the status then
/// says no option can reach it instead of treating the checkout as needing no delivery.
pub const NO_GROUP: &str = "undeliverable";

/// Delivery methods a shipping destination is priced for. Pickup (`PICK_UP`, `PICKUP_POINT`)
/// needs a location choice the checkout does not model; the buyer can still pick it on
/// Shopify's page.
fn delivers(method: &str) -> bool {
    matches!(method, "SHIPPING" | "LOCAL" | "NONE")
}

/// The buyer's names: Shopify's buyer identity has none, so the bridge keeps what the agent
/// gave; the selected address's names stand in when it kept nothing (another replica, restart).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Names {
    pub first: Option<String>,
    pub last: Option<String>,
}

pub fn address(raw: &RawAddress) -> Address {
    super::brazil::split(Address {
        first_name: raw.first_name.clone(),
        last_name: raw.last_name.clone(),
        street_address: raw.address1.clone(),
        extended_address: raw.address2.clone(),
        address_locality: raw.city.clone(),
        address_region: raw.province_code.clone(),
        postal_code: raw.zip.clone(),
        address_country: raw.country_code.clone(),
        phone_number: raw.phone.clone(),
        neighborhood: None,
        number: None,
    })
}

/// What Shopify took off, grouped per discount (a code, or an automatic rule by its title).
/// Allocations point at lines or shipping; a discount Shopify spread over the whole cart keeps
/// none, since its parts cannot be named (discount.md: allocations sum to the amount).
fn discounts(raw: &RawCheckout, currency: Currency) -> Result<Vec<AppliedDiscount>, PlatformError> {
    let mut out: Vec<(AppliedDiscount, bool)> = Vec::new();
    let cart_level = raw.allocations.iter().map(|allocation| (allocation, None));
    let line_level = raw.lines.iter().flat_map(|line| {
        line.allocations
            .iter()
            .map(move |allocation| (allocation, Some(line.id.as_str())))
    });
    for (allocation, line) in line_level.chain(cart_level) {
        let amount = money(&allocation.amount, currency)?;
        let target = match (line, allocation.shipping) {
            (Some(line), _) => Some(AllocationTarget::Line(line.to_owned())),
            (None, true) => Some(AllocationTarget::Shipping),
            (None, false) => None,
        };
        let title = allocation
            .title
            .clone()
            .or_else(|| allocation.code.clone())
            .unwrap_or_default();
        let same = |discount: &AppliedDiscount| match (&discount.code, &allocation.code) {
            (Some(held), Some(code)) => held.eq_ignore_ascii_case(code),
            (None, None) => discount.title == title,
            _ => false,
        };
        let index = match out.iter().position(|(discount, _)| same(discount)) {
            Some(index) => index,
            None => {
                out.push((
                    AppliedDiscount {
                        code: allocation.code.clone(),
                        title,
                        amount: 0,
                        allocations: Vec::new(),
                    },
                    false,
                ));
                out.len() - 1
            }
        };
        let (discount, untargeted) = &mut out[index];
        discount.amount += amount;
        match target {
            Some(target) => discount.allocations.push(Allocation { target, amount }),
            None => *untargeted = true,
        }
    }
    Ok(out
        .into_iter()
        .filter(|(discount, _)| discount.amount > 0)
        .map(|(mut discount, untargeted)| {
            if untargeted {
                discount.allocations.clear();
            }
            discount
        })
        .collect())
}

fn groups(
    raw: &[RawGroup],
    shipped: &[String],
    currency: Currency,
) -> Result<Vec<FulfillmentGroup>, PlatformError> {
    if raw.is_empty() {
        return Ok(vec![FulfillmentGroup {
            id: NO_GROUP.to_owned(),
            line_ids: shipped.to_vec(),
            options: Vec::new(),
            selected_option: None,
        }]);
    }
    raw.iter()
        .map(|group| {
            let options = group
                .options
                .iter()
                .filter(|option| delivers(&option.method))
                .map(|option| {
                    Ok(FulfillmentOption {
                        id: option.handle.clone(),
                        title: option
                            .title
                            .clone()
                            .unwrap_or_else(|| option.handle.clone()),
                        description: option.description.clone().filter(|text| !text.is_empty()),
                        carrier: None,
                        cost: money(&option.cost, currency)?,
                        earliest: None,
                        latest: None,
                    })
                })
                .collect::<Result<Vec<_>, PlatformError>>()?;
            let selected_option = group
                .selected
                .clone()
                .filter(|handle| options.iter().any(|option| option.id == *handle));
            Ok(FulfillmentGroup {
                id: group.id.clone(),
                line_ids: group.line_ids.clone(),
                options,
                selected_option,
            })
        })
        .collect()
}

/// Shipping, once every group has a selected option: the sum of their prices.
fn shipping(groups: &[FulfillmentGroup]) -> Option<i64> {
    if groups.is_empty() {
        return None;
    }
    groups
        .iter()
        .map(|group| {
            let selected = group.selected_option.as_ref()?;
            group
                .options
                .iter()
                .find(|option| option.id == *selected)
                .map(|option| option.cost)
        })
        .sum()
}

/// Shopify's cart total is the merchandise after discounts; its shipping is priced on the
/// checkout page and has not been part of `cost.totalAmount` (though it briefly was, by
/// Shopify's own account). So the selected options' price, less shipping discounts, is added
/// unless the total already holds exactly it.
fn total(cart_total: i64, merchandise: i64, shipping: Option<i64>, shipping_off: i64) -> i64 {
    match shipping {
        Some(shipping) if cart_total != merchandise + shipping - shipping_off => {
            cart_total + shipping - shipping_off
        }
        _ => cart_total,
    }
}

fn sum(allocations: &[&RawAllocation], currency: Currency) -> Result<i64, PlatformError> {
    allocations
        .iter()
        .map(|allocation| money(&allocation.amount, currency))
        .sum()
}

fn currency_of(raw: &RawMoney, fallback: Currency) -> Result<Currency, PlatformError> {
    if raw.currency.is_empty() {
        return Ok(fallback);
    }
    parse_currency(&raw.currency).map_err(|error| PlatformError::BadResponse(error.to_string()))
}

pub fn checkout(
    raw: &RawCheckout,
    fallback: Currency,
    names: &Names,
) -> Result<CheckoutState, PlatformError> {
    let currency = currency_of(&raw.total, fallback)?;
    let mut lines = Vec::with_capacity(raw.lines.len());
    for line in &raw.lines {
        lines.push(CartLine {
            id: line.id.clone(),
            variant_id: line.variant_id.clone(),
            title: display_title(&line.product_title, &line.variant_title),
            unit_price: money(&line.unit, currency)?,
            quantity: u32::try_from(line.quantity).unwrap_or(0),
            subtotal: money(&line.subtotal, currency)?,
            total: money(&line.total, currency)?,
            image_url: line.image.clone(),
        });
    }
    let shipped: Vec<String> = raw
        .lines
        .iter()
        .filter(|line| line.requires_shipping)
        .map(|line| line.id.clone())
        .collect();
    let needs_fulfillment = !shipped.is_empty();
    let address = raw.address.as_ref().map(address);
    let mut fulfillment = Vec::new();
    if let (Some(address), true) = (&address, needs_fulfillment) {
        let destination = "address".to_owned();
        fulfillment.push(FulfillmentMethod {
            id: "shipping".to_owned(),
            kind: MethodKind::Shipping,
            line_ids: shipped.clone(),
            destinations: vec![Destination {
                id: destination.clone(),
                address: address.clone(),
                name: None,
            }],
            selected_destination: Some(destination),
            groups: groups(&raw.groups, &shipped, currency)?,
        });
    }
    let shipping = fulfillment
        .first()
        .and_then(|method| shipping(&method.groups));
    let discounts = discounts(raw, currency)?;
    let cart_level: Vec<&RawAllocation> = raw.allocations.iter().collect();
    let (shipping_off, order_off): (Vec<&RawAllocation>, Vec<&RawAllocation>) = cart_level
        .into_iter()
        .partition(|allocation| allocation.shipping);
    let merchandise = money(&raw.subtotal, currency)? - sum(&order_off, currency)?;
    let totals = CheckoutTotals {
        subtotal: lines.iter().map(|line| line.subtotal).sum(),
        discount: discounts.iter().map(|discount| discount.amount).sum(),
        fulfillment: shipping,
        // `cost.totalTaxAmount` is deprecated and empty: Shopify taxes on its own page.
        tax: None,
        total: total(
            money(&raw.total, currency)?,
            merchandise,
            shipping,
            sum(&shipping_off, currency)?,
        ),
    };
    let from_address = |pick: fn(&Address) -> &Option<String>| {
        address.as_ref().and_then(|address| pick(address).clone())
    };
    let buyer = Buyer {
        first_name: names
            .first
            .clone()
            .or_else(|| from_address(|address| &address.first_name)),
        last_name: names
            .last
            .clone()
            .or_else(|| from_address(|address| &address.last_name)),
        email: raw.email.clone(),
        phone_number: raw.phone.clone(),
        taxpayer_id: None,
    };
    Ok(CheckoutState {
        id: raw.id.clone(),
        lines,
        currency,
        buyer,
        needs_email: true,
        address,
        needs_fulfillment,
        fulfillment,
        codes: raw.codes.iter().map(|(code, _)| code.clone()).collect(),
        discounts,
        refused_codes: Vec::new(),
        totals,
        // The Storefront API takes no payment: the buyer always pays on Shopify's page.
        handlers: Vec::new(),
        continue_url: Some(raw.checkout_url.clone()).filter(|url| !url.is_empty()),
        escalation: Some(EscalationReason::Payment),
        stage: if raw.cancelled() {
            Stage::Canceled
        } else {
            Stage::Open
        },
        expires_at: OffsetDateTime::parse(&raw.updated_at, &Rfc3339)
            .ok()
            .map(|updated| updated + TimeDuration::days(CART_LIFETIME_DAYS)),
        requirements: Vec::new(),
    })
}

/// A checkout whose order Shopify reported: what was ordered, completed (the order's own
/// lines and totals; the cart is Shopify's order now).
pub fn placed(id: &str, order: &Order, names: &Names) -> CheckoutState {
    let buyer = Buyer {
        first_name: names.first.clone(),
        last_name: names.last.clone(),
        ..Buyer::default()
    };
    CheckoutState::of_order(id, order, buyer)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::platform::shopify::checkout::raw::{RawLine, RawOption};

    fn usd(amount: &str) -> RawMoney {
        RawMoney {
            amount: amount.to_owned(),
            currency: "USD".to_owned(),
        }
    }

    fn line(id: &str, subtotal: &str, total: &str, off: Option<(&str, &str)>) -> RawLine {
        RawLine {
            id: id.to_owned(),
            quantity: 1,
            variant_id: format!("gid://shopify/ProductVariant/{id}"),
            variant_title: "Default Title".to_owned(),
            product_title: "Mug".to_owned(),
            requires_shipping: true,
            image: None,
            unit: usd(subtotal),
            subtotal: usd(subtotal),
            total: usd(total),
            allocations: off
                .map(|(code, amount)| RawAllocation {
                    amount: usd(amount),
                    shipping: false,
                    code: Some(code.to_owned()),
                    title: None,
                })
                .into_iter()
                .collect(),
        }
    }

    fn cart() -> RawCheckout {
        RawCheckout {
            id: "gid://shopify/Cart/c1?key=k".to_owned(),
            checkout_url: "https://shop.example/cart/c/c1?key=k".to_owned(),
            updated_at: "2026-11-29T12:00:00Z".to_owned(),
            attributes: Vec::new(),
            email: None,
            phone: None,
            country: None,
            address: Some(RawAddress {
                country_code: Some("US".to_owned()),
                first_name: Some("Ana".to_owned()),
                ..RawAddress::default()
            }),
            groups: vec![RawGroup {
                id: "g1".to_owned(),
                line_ids: vec!["l1".to_owned(), "l2".to_owned()],
                options: vec![
                    RawOption {
                        handle: "std".to_owned(),
                        title: Some("Standard".to_owned()),
                        description: None,
                        method: "SHIPPING".to_owned(),
                        cost: usd("5.0"),
                    },
                    RawOption {
                        handle: "store".to_owned(),
                        title: Some("Pick up".to_owned()),
                        description: None,
                        method: "PICK_UP".to_owned(),
                        cost: usd("0.0"),
                    },
                ],
                selected: Some("std".to_owned()),
            }],
            codes: vec![("SAVE".to_owned(), true)],
            allocations: vec![RawAllocation {
                amount: usd("2.5"),
                shipping: false,
                code: None,
                title: Some("Autumn".to_owned()),
            }],
            subtotal: usd("28.0"),
            total: usd("25.5"),
            lines: vec![
                line("l1", "18.0", "16.0", Some(("save", "2.0"))),
                line("l2", "12.0", "12.0", None),
            ],
        }
    }

    #[test]
    fn money_is_exact_and_totals_are_shopifys_plus_the_selected_option() {
        let state = checkout(&cart(), Currency::USD, &Names::default()).unwrap();
        assert_eq!(state.totals.subtotal, 3000);
        assert_eq!(state.totals.discount, 200 + 250);
        assert_eq!(state.totals.fulfillment, Some(500));
        assert_eq!(state.totals.tax, None);
        // Shopify's 25.5 is the merchandise; the selected 5.0 is added once.
        assert_eq!(state.totals.total, 3050);
        let group = &state.fulfillment[0].groups[0];
        // Pickup is left for Shopify's page.
        assert_eq!(group.options.len(), 1);
        assert_eq!(group.selected_option.as_deref(), Some("std"));
        assert_eq!(state.buyer.first_name.as_deref(), Some("Ana"));
        assert_eq!(state.escalation, Some(EscalationReason::Payment));
        assert!(state.handlers.is_empty());
    }

    #[test]
    fn a_total_that_already_holds_shipping_is_not_added_to_again() {
        let mut raw = cart();
        raw.total = usd("30.5");
        let state = checkout(&raw, Currency::USD, &Names::default()).unwrap();
        assert_eq!(state.totals.total, 3050);
    }

    #[test]
    fn discounts_group_per_code_and_an_order_discount_keeps_no_allocation() {
        let mut raw = cart();
        raw.lines[1] = line("l2", "12.0", "11.0", Some(("SAVE", "1.0")));
        let state = checkout(&raw, Currency::USD, &Names::default()).unwrap();
        let code = &state.discounts[0];
        assert_eq!(code.code.as_deref(), Some("save"));
        assert_eq!(code.amount, 300);
        assert_eq!(
            code.allocations,
            [
                Allocation {
                    target: AllocationTarget::Line("l1".into()),
                    amount: 200
                },
                Allocation {
                    target: AllocationTarget::Line("l2".into()),
                    amount: 100
                }
            ]
        );
        let automatic = &state.discounts[1];
        assert_eq!(automatic.code, None);
        assert_eq!(automatic.title, "Autumn");
        assert!(automatic.allocations.is_empty());
    }

    #[test]
    fn no_group_for_the_address_is_an_undeliverable_group_and_no_selection_no_shipping() {
        let mut raw = cart();
        raw.groups.clear();
        let state = checkout(&raw, Currency::USD, &Names::default()).unwrap();
        let group = &state.fulfillment[0].groups[0];
        assert_eq!(group.id, NO_GROUP);
        assert!(group.options.is_empty());
        assert_eq!(state.totals.fulfillment, None);
        assert_eq!(state.totals.total, 2550);
    }
}
