//! An orderForm read as a checkout: its lines and totals exactly as VTEX computed them
//! (`totalizers`, `value`), its SLAs as fulfillment options, its promotions as discounts.
//!
//! VTEX selects an SLA per item; UCP selects an option per group. Items are grouped by the
//! channel of their selected SLA (one group per method, FUL-026): `shipping` for delivery
//! (and for items with nothing selected yet), `pickup` for `pickup-in-point`, whose
//! destination is then the pickup point. A group offers the SLAs every item of it has, in the
//! store's order, pickup points included: choosing one moves the group to the other method.

use iso_currency::Currency;
use serde_json::Value;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use super::super::mapping::{self, cents};
use super::super::wire::{CartItem, LogisticsInfo, OrderForm, Sla};
use super::address::{from_vtex, street_line};
use crate::model::checkout::{
    Address, Allocation, AllocationTarget, AppliedDiscount, Buyer, CheckoutState, CheckoutTotals,
    Destination, EscalationReason, FulfillmentGroup, FulfillmentMethod, FulfillmentOption,
    MethodKind, Stage,
};
use crate::platform::port::PlatformError;

pub const PICKUP_CHANNEL: &str = "pickup-in-point";
/// The buyer's address is the one destination of the shipping method.
const ADDRESS: &str = "address";
/// Where VTEX names the code a promotion matched.
const COUPON_PARAMETER: &str = "couponCode@Marketing";

/// What the bridge keeps beside the orderForm: the buyer and address as the agent gave them.
/// VTEX masks a known customer's profile even to the cart's owner, and spells addresses its
/// own way; reading them back would make every full-replacement update look like a change
/// (and a new address resets the selected SLAs).
#[derive(Clone, Default)]
pub struct Kept {
    pub buyer: Option<Buyer>,
    pub address: Option<Address>,
    /// The address as sent to the store: the agent's, with what the store's postal-code
    /// route filled in. What the checkout shows.
    pub sent: Option<Address>,
    /// Complete handed the buyer to the store's payment page: the order they place there is
    /// looked for from then on.
    pub handed_off: bool,
}

pub fn group_id(kind: MethodKind) -> String {
    format!("{}_items", kind.as_str())
}

fn selected(info: &LogisticsInfo) -> Option<&Sla> {
    let id = info.selected_sla.as_deref()?;
    info.slas.iter().find(|sla| sla.id == id)
}

pub fn channel(sla: &Sla) -> MethodKind {
    if sla.delivery_channel == PICKUP_CHANNEL {
        MethodKind::Pickup
    } else {
        MethodKind::Shipping
    }
}

pub fn info_of(form: &OrderForm, index: usize) -> Option<&LogisticsInfo> {
    form.shipping_data
        .as_ref()?
        .logistics_info
        .iter()
        .find(|info| info.item_index == index)
}

/// `3bd` → "up to 3 business days"; VTEX's estimate is a duration, not a date.
fn estimate(text: &str) -> Option<String> {
    let text = text.trim();
    let (number, unit) = if let Some(number) = text.strip_suffix("bd") {
        (number, "business day")
    } else if let Some(number) = text.strip_suffix('d') {
        (number, "day")
    } else if let Some(number) = text.strip_suffix('h') {
        (number, "hour")
    } else if let Some(number) = text.strip_suffix('m') {
        (number, "minute")
    } else {
        return None;
    };
    let count: u32 = number.trim().parse().ok()?;
    Some(match count {
        0 => "the same day".to_owned(),
        1 => format!("up to 1 {unit}"),
        _ => format!("up to {count} {unit}s"),
    })
}

fn place(sla: &Sla) -> Option<String> {
    let info = sla.pickup_store_info.as_ref()?;
    let name = info
        .friendly_name
        .clone()
        .unwrap_or_else(|| sla.name.clone());
    let address = info.address.as_ref().map(from_vtex);
    let street = address.as_ref().and_then(street_line);
    let city = address.and_then(|a| a.address_locality);
    Some(match (street, city) {
        (Some(street), Some(city)) => format!("{name} ({street}, {city})"),
        (Some(line), None) | (None, Some(line)) => format!("{name} ({line})"),
        (None, None) => name,
    })
}

fn description(sla: &Sla) -> Option<String> {
    let when = sla.shipping_estimate.as_deref().and_then(estimate);
    match (channel(sla), when, place(sla)) {
        (MethodKind::Pickup, Some(when), Some(place)) => {
            Some(format!("Ready for pickup in {when} at {place}"))
        }
        (MethodKind::Pickup, None, Some(place)) => Some(format!("Pickup at {place}")),
        (MethodKind::Pickup, Some(when), None) => Some(format!("Ready for pickup in {when}")),
        (MethodKind::Shipping, Some(when), _) => Some(format!("Delivered in {when}")),
        (_, None, _) => None,
    }
}

/// The SLAs every item of a group is offered, priced for the group: each item's share
/// (VTEX prices an SLA per item) added up, as the store's own checkout shows a package.
fn options(
    form: &OrderForm,
    indexes: &[usize],
    currency: Currency,
) -> Result<Vec<FulfillmentOption>, PlatformError> {
    let infos: Option<Vec<&LogisticsInfo>> =
        indexes.iter().map(|index| info_of(form, *index)).collect();
    let Some(infos) = infos else {
        return Ok(Vec::new());
    };
    let Some(first) = infos.first() else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for sla in &first.slas {
        let mut cost = 0i64;
        let mut everywhere = true;
        for info in &infos {
            match info.slas.iter().find(|other| other.id == sla.id) {
                Some(other) => cost = cost.saturating_add(other.price),
                None => everywhere = false,
            }
        }
        if !everywhere {
            continue;
        }
        out.push(FulfillmentOption {
            id: sla.id.clone(),
            title: if sla.name.trim().is_empty() {
                sla.id.clone()
            } else {
                sla.name.clone()
            },
            description: description(sla),
            carrier: None,
            cost: cents(cost, currency)?,
            earliest: None,
            latest: sla
                .shipping_estimate_date
                .as_deref()
                .and_then(|date| OffsetDateTime::parse(date, &Rfc3339).ok()),
        });
    }
    Ok(out)
}

/// The methods once the store priced an address; none before.
fn fulfillment(
    form: &OrderForm,
    address: Option<&Address>,
    currency: Currency,
) -> Result<Vec<FulfillmentMethod>, PlatformError> {
    let Some(address) = address else {
        return Ok(Vec::new());
    };
    let mut methods = Vec::new();
    for kind in [MethodKind::Shipping, MethodKind::Pickup] {
        let members: Vec<(usize, &CartItem)> = form
            .items
            .iter()
            .enumerate()
            .filter(|(index, _)| {
                info_of(form, *index)
                    .and_then(selected)
                    .map_or(MethodKind::Shipping, channel)
                    == kind
            })
            .collect();
        if members.is_empty() {
            continue;
        }
        let indexes: Vec<usize> = members.iter().map(|(index, _)| *index).collect();
        let line_ids: Vec<String> = members
            .iter()
            .map(|(_, item)| item.unique_id.clone())
            .collect();
        let options = options(form, &indexes, currency)?;
        let chosen: Vec<Option<&Sla>> = indexes
            .iter()
            .map(|index| info_of(form, *index).and_then(selected))
            .collect();
        let selected_option = match chosen.first() {
            Some(Some(sla))
                if chosen
                    .iter()
                    .all(|other| other.is_some_and(|other| other.id == sla.id))
                    && options.iter().any(|option| option.id == sla.id) =>
            {
                Some(sla.id.clone())
            }
            _ => None,
        };
        let destinations = match kind {
            MethodKind::Shipping => vec![Destination {
                id: ADDRESS.to_owned(),
                address: address.clone(),
                name: None,
            }],
            MethodKind::Pickup => chosen
                .first()
                .copied()
                .flatten()
                .map(|sla| Destination {
                    id: sla
                        .pickup_point_id
                        .clone()
                        .unwrap_or_else(|| sla.id.clone()),
                    address: sla
                        .pickup_store_info
                        .as_ref()
                        .and_then(|info| info.address.as_ref())
                        .map(from_vtex)
                        .unwrap_or_default(),
                    name: sla
                        .pickup_store_info
                        .as_ref()
                        .and_then(|info| info.friendly_name.clone())
                        .or_else(|| Some(sla.name.clone())),
                })
                .into_iter()
                .collect(),
        };
        methods.push(FulfillmentMethod {
            id: kind.as_str().to_owned(),
            kind,
            line_ids: line_ids.clone(),
            selected_destination: destinations.first().map(|place| place.id.clone()),
            destinations,
            groups: vec![FulfillmentGroup {
                id: group_id(kind),
                line_ids,
                options,
                selected_option,
            }],
        });
    }
    Ok(methods)
}

/// The codes the orderForm holds (`marketingData.coupon`, comma-joined where a store takes
/// several).
pub fn codes(form: &OrderForm) -> Vec<String> {
    form.marketing_data
        .as_ref()
        .and_then(|data| data.coupon.as_deref())
        .map(|coupon| {
            coupon
                .split(',')
                .map(str::trim)
                .filter(|code| !code.is_empty())
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

/// `(title, code)` of the promotion `id`, as `ratesAndBenefitsData` names it.
fn benefit(form: &OrderForm, id: &str) -> (Option<String>, Option<String>) {
    let found = form.rates_and_benefits_data.as_ref().and_then(|data| {
        data.rate_and_benefits_identifiers
            .iter()
            .find(|benefit| benefit.get("id").and_then(Value::as_str) == Some(id))
    });
    let Some(found) = found else {
        return (None, None);
    };
    let title = found
        .get("name")
        .and_then(Value::as_str)
        .filter(|name| !name.trim().is_empty())
        .map(str::to_owned);
    let code = found
        .pointer(&format!("/matchedParameters/{COUPON_PARAMETER}"))
        .and_then(Value::as_str)
        .map(str::to_owned);
    (title, code)
}

/// One discount per promotion, from the lines' price tags (each tag is the store's amount for
/// its line). A store that tags nothing still shows its `Discounts` totalizer as one.
fn discounts(form: &OrderForm, currency: Currency) -> Result<Vec<AppliedDiscount>, PlatformError> {
    let mut found: Vec<(String, AppliedDiscount)> = Vec::new();
    for item in &form.items {
        for tag in &item.price_tags {
            let name = tag.name.to_ascii_lowercase();
            // A manual price is the seller's price, not a promotion.
            if tag.value >= 0 || !name.starts_with("discount@") || name.contains("manualprice") {
                continue;
            }
            let key = tag.identifier.clone().unwrap_or_else(|| tag.name.clone());
            let amount = cents(tag.value.saturating_neg(), currency)?;
            let target = if name.contains("shipping") {
                AllocationTarget::Shipping
            } else {
                AllocationTarget::Line(item.unique_id.clone())
            };
            let index = match found.iter().position(|(id, _)| *id == key) {
                Some(index) => index,
                None => {
                    let (title, code) = benefit(form, &key);
                    found.push((
                        key.clone(),
                        AppliedDiscount {
                            title: title
                                .or_else(|| code.clone())
                                .unwrap_or_else(|| "Discount".to_owned()),
                            code,
                            amount: 0,
                            allocations: Vec::new(),
                        },
                    ));
                    found.len() - 1
                }
            };
            let discount = &mut found[index].1;
            discount.amount = discount.amount.saturating_add(amount);
            discount.allocations.push(Allocation { target, amount });
        }
    }
    if found.is_empty()
        && let Some(total) = form.totalizers.iter().find(|total| total.id == "Discounts")
        && total.value < 0
    {
        return Ok(vec![AppliedDiscount {
            code: codes(form).into_iter().next(),
            title: if total.name.trim().is_empty() {
                "Discounts".to_owned()
            } else {
                total.name.clone()
            },
            amount: cents(total.value.saturating_neg(), currency)?,
            allocations: Vec::new(),
        }]);
    }
    Ok(found.into_iter().map(|(_, discount)| discount).collect())
}

/// The buyer the orderForm holds for its owner; masked fields (`a***@…`) are not the buyer's.
fn profile_buyer(form: &OrderForm) -> Buyer {
    let field = |key: &str| {
        form.client_profile_data
            .as_ref()
            .and_then(|profile| profile.get(key))
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|value| !value.is_empty() && !value.contains('*'))
            .map(str::to_owned)
    };
    Buyer {
        first_name: field("firstName"),
        last_name: field("lastName"),
        email: field("email"),
        phone_number: field("phone"),
        taxpayer_id: super::brazil::taxpayer_of(form.client_profile_data.as_ref()),
    }
}

/// The buyer's own address the orderForm holds (not a pickup point's).
fn form_address(form: &OrderForm) -> Option<Address> {
    let address = form.shipping_data.as_ref()?.address.as_ref()?;
    if address.address_type.as_deref() == Some("pickup")
        || address.postal_code.as_deref().is_none_or(str::is_empty)
    {
        return None;
    }
    Some(from_vtex(address))
}

pub fn state(
    form: &OrderForm,
    fallback: Currency,
    continue_url: Option<String>,
    kept: &Kept,
) -> Result<CheckoutState, PlatformError> {
    let cart = mapping::cart(form, fallback, None)?;
    let currency = cart.currency;
    let address = kept
        .sent
        .clone()
        .or_else(|| kept.address.clone())
        .or_else(|| form_address(form));
    let shipping = match form.totalizers.iter().find(|total| total.id == "Shipping") {
        Some(total) => Some(cents(total.value, currency)?),
        None => None,
    };
    Ok(CheckoutState {
        id: form.order_form_id.clone(),
        fulfillment: fulfillment(form, address.as_ref(), currency)?,
        requirements: super::brazil::requirements(form, address.as_ref()),
        needs_fulfillment: !form.items.is_empty(),
        lines: cart.lines,
        currency,
        buyer: kept.buyer.clone().unwrap_or_else(|| profile_buyer(form)),
        needs_email: true,
        address,
        codes: codes(form),
        discounts: discounts(form, currency)?,
        refused_codes: Vec::new(),
        totals: CheckoutTotals {
            subtotal: cart.subtotal,
            discount: cart.discount.saturating_neg(),
            fulfillment: shipping,
            tax: cart.tax,
            total: cart.total,
        },
        handlers: Vec::new(),
        continue_url,
        // The bridge cannot take VTEX's payments: the buyer always pays on the store's page.
        escalation: Some(EscalationReason::Payment),
        stage: Stage::Open,
        expires_at: None,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    fn form() -> OrderForm {
        serde_json::from_value(json!({
            "orderFormId": "ede846222cd44046ba6c638442c3505a",
            "value": 23500,
            "items": [
                {"uniqueId": "A", "id": "1", "quantity": 1, "price": 10000, "sellingPrice": 10000,
                 "priceTags": [{"name": "discount@price-p1#x", "value": -1000, "identifier": "p1"}]},
                {"uniqueId": "B", "id": "2", "quantity": 1, "price": 10000, "sellingPrice": 10000,
                 "priceTags": [{"name": "discount@price-p1#x", "value": -500, "identifier": "p1"}]}
            ],
            "totalizers": [
                {"id": "Items", "value": 20000}, {"id": "Discounts", "value": -1500},
                {"id": "Shipping", "value": 5000}
            ],
            "marketingData": {"coupon": "PROMO10"},
            "ratesAndBenefitsData": {"rateAndBenefitsIdentifiers": [
                {"id": "p1", "name": "Promo dez", "matchedParameters": {"couponCode@Marketing": "PROMO10"}}
            ]},
            "shippingData": {"address": {"addressType": "residential", "postalCode": "01305000", "country": "BRA"},
                "logisticsInfo": [
                    {"itemIndex": 0, "selectedSla": "Normal", "slas": [
                        {"id": "Normal", "name": "Normal", "deliveryChannel": "delivery", "price": 1000, "shippingEstimate": "5bd"},
                        {"id": "Expressa", "name": "Expressa", "deliveryChannel": "delivery", "price": 2500}
                    ]},
                    {"itemIndex": 1, "selectedSla": "Normal", "slas": [
                        {"id": "Normal", "name": "Normal", "deliveryChannel": "delivery", "price": 4000}
                    ]}
                ]}
        }))
        .unwrap()
    }

    #[test]
    fn a_group_offers_what_every_item_has_priced_for_all_of_them() {
        let state = state(&form(), Currency::BRL, None, &Kept::default()).unwrap();
        let group = &state.fulfillment[0].groups[0];
        assert_eq!(state.fulfillment.len(), 1);
        assert_eq!(group.line_ids, ["A", "B"]);
        assert_eq!(group.options.len(), 1, "Expressa is not offered for item B");
        assert_eq!(group.options[0].cost, 5000);
        assert_eq!(
            group.options[0].description.as_deref(),
            Some("Delivered in up to 5 business days")
        );
        assert_eq!(group.selected_option.as_deref(), Some("Normal"));
        assert_eq!(state.totals.fulfillment, Some(5000));
        assert_eq!(state.totals.discount, 1500);
        assert_eq!(state.totals.total, 23500);
    }

    #[test]
    fn promotions_are_discounts_with_their_code_and_line_shares() {
        let state = state(&form(), Currency::BRL, None, &Kept::default()).unwrap();
        assert_eq!(state.codes, ["PROMO10"]);
        assert_eq!(state.discounts.len(), 1);
        let discount = &state.discounts[0];
        assert_eq!(discount.code.as_deref(), Some("PROMO10"));
        assert_eq!(discount.title, "Promo dez");
        assert_eq!(discount.amount, 1500);
        assert_eq!(discount.allocations.len(), 2);
    }
}
