//! A WooCommerce cart session read as a checkout: its lines and totals exactly as the Store
//! API computed them, its shipping packages as fulfillment groups, its coupons as discounts,
//! and the buyer and address the store's cart holds; once placed, the checkout as its order.

use serde::Deserialize;
use serde_json::Value;

use super::super::ids::cart_token;
use super::super::mapping;
use super::super::text::decode_entities;
use super::super::wire::StoreCart;
use super::brazil::CheckoutFields;
use super::sessions::{Placed, Session};
use super::{WooCheckout, billing, shipping};
use crate::model::checkout::{
    Address, Buyer, CheckoutState, CheckoutTotals, Destination, EscalationReason, FulfillmentGroup,
    FulfillmentMethod, FulfillmentOption, MethodKind, Stage,
};
use crate::platform::port::PlatformError;

#[derive(Debug, Deserialize, Default)]
#[serde(default)]
pub(super) struct Rate {
    pub(super) rate_id: String,
    pub(super) name: String,
    pub(super) description: String,
    pub(super) price: String,
    pub(super) method_id: String,
    pub(super) selected: bool,
}

#[derive(Debug, Deserialize, Default)]
#[serde(default)]
pub(super) struct Package {
    pub(super) package_id: Value,
    pub(super) shipping_rates: Vec<Rate>,
}

#[derive(Debug, Deserialize, Default)]
#[serde(default)]
pub(super) struct Coupon {
    pub(super) code: String,
    pub(super) totals: CouponTotals,
}

#[derive(Debug, Deserialize, Default)]
#[serde(default)]
pub(super) struct CouponTotals {
    pub(super) total_discount: String,
}

#[derive(Debug, Deserialize, Default)]
#[serde(default)]
pub(super) struct Totals {
    pub(super) total_shipping: Option<String>,
    pub(super) total_discount: String,
    pub(super) total_price: String,
    pub(super) total_tax: String,
    pub(super) total_items: String,
    pub(super) subtotal: String,
    pub(super) currency_minor_unit: u32,
}

/// The parts of a cart (or an order) answer a checkout needs beyond `StoreCart`.
#[derive(Debug, Deserialize, Default)]
#[serde(default)]
pub(super) struct Extra {
    pub(super) shipping_rates: Vec<Package>,
    pub(super) coupons: Vec<Coupon>,
    pub(super) needs_shipping: bool,
    pub(super) totals: Totals,
    pub(super) status: String,
}

/// The buyer and address the store's cart holds (written by `cart/update-customer`, through
/// any replica), for a replica that did not receive them itself: the store, not one
/// replica's memory, is where they are shared. Blank fields are absent; an address without
/// street and country is none.
fn stored_customer(body: &Value, fields: &CheckoutFields) -> (Buyer, Option<Address>) {
    let field = |part: &str, name: &str| {
        body.get(part)
            .and_then(|part| part.get(name))
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|text| !text.is_empty())
            .map(decode_entities)
    };
    let buyer = Buyer {
        first_name: field("billing_address", "first_name"),
        last_name: field("billing_address", "last_name"),
        email: field("billing_address", "email"),
        phone_number: field("billing_address", "phone"),
        ..Buyer::default()
    };
    let address = Address {
        first_name: field("shipping_address", "first_name"),
        last_name: field("shipping_address", "last_name"),
        street_address: field("shipping_address", "address_1"),
        extended_address: field("shipping_address", "address_2"),
        address_locality: field("shipping_address", "city"),
        address_region: field("shipping_address", "state"),
        postal_code: field("shipping_address", "postcode"),
        address_country: field("shipping_address", "country"),
        phone_number: field("shipping_address", "phone"),
        ..Address::default()
    };
    let mut address = address;
    if let Some(held) = body.get("shipping_address") {
        fields.read_address(held, &mut address);
    }
    let given = address.street_address.is_some() && address.address_country.is_some();
    (buyer, given.then_some(address))
}

/// Whether the store's cart holds exactly what this replica last wrote for `address` and
/// `buyer` (then its own copy is echoed, as the agent spelled it).
fn holds(body: &Value, fields: &CheckoutFields, address: &Address, buyer: &Buyer) -> bool {
    // A plugin's fields (`namespace/key`, as Brazilian Market's `csbmw/number`) are echoed in
    // the cart's addresses like WooCommerce's own: all of them say whether it holds ours.
    let same = |part: &str, written: &Value| {
        written.as_object().is_some_and(|fields| {
            fields.iter().all(|(name, value)| {
                let held = body
                    .get(part)
                    .and_then(|part| part.get(name))
                    .and_then(Value::as_str)
                    .map(decode_entities)
                    .unwrap_or_default();
                value
                    .as_str()
                    .is_some_and(|value| value.trim() == held.trim())
            })
        })
    };
    same("shipping_address", &shipping(fields, address, buyer))
        && same("billing_address", &billing(fields, address, buyer))
}

/// The checkout's buyer and address: what the store's cart holds once an address was
/// written (by whichever replica wrote last), this replica's own copy when it is that one;
/// before any address, the buyer this replica was told.
fn customer(body: &Value, fields: &CheckoutFields, session: &Session) -> (Buyer, Option<Address>) {
    let (stored_buyer, stored_address) = stored_customer(body, fields);
    match (stored_address, &session.address) {
        (Some(_), Some(mine)) if holds(body, fields, mine, &session.buyer) => {
            (session.buyer.clone(), session.address.clone())
        }
        // The document never goes to the cart: it is the one this replica was given. The
        // house number and bairro are the store's own fields, as its address holds them.
        (Some(stored), _) => (
            Buyer {
                taxpayer_id: session.buyer.taxpayer_id.clone(),
                ..stored_buyer
            },
            Some(stored),
        ),
        (None, _) if session.buyer.is_empty() => (stored_buyer, session.address.clone()),
        (None, _) => (session.buyer.clone(), session.address.clone()),
    }
}

impl WooCheckout {
    /// The checkout's buyer and address (`customer`), read with the store's own fields.
    pub(super) fn buyer_and_address(
        &self,
        body: &Value,
        session: &Session,
    ) -> (Buyer, Option<Address>) {
        customer(body, &self.fields.current(), session)
    }

    /// The cart answer as a checkout: lines and totals as the store computed them.
    pub(super) fn state(
        &self,
        id: &str,
        body: &Value,
        session: &Session,
    ) -> Result<CheckoutState, PlatformError> {
        let cart: StoreCart = serde_json::from_value(body.clone())
            .map_err(|error| PlatformError::BadResponse(format!("cart: {error}")))?;
        let extra: Extra = serde_json::from_value(body.clone())
            .map_err(|error| PlatformError::BadResponse(format!("cart: {error}")))?;
        let token = cart_token(id).unwrap_or_default();
        let mut continue_url = self.page("checkout/");
        if let Some(url) = &mut continue_url {
            url.query_pairs_mut().append_pair("session", &token);
        }
        let base = mapping::cart(id.to_owned(), &cart, self.currency, None, None)?;
        let exponent = extra.totals.currency_minor_unit;
        let minor = |value: &str| mapping::minor(value, exponent, base.currency);
        let (buyer, address) = customer(body, &self.fields.current(), session);
        let line_ids: Vec<String> = base.lines.iter().map(|line| line.id.clone()).collect();
        let mut groups = Vec::new();
        for package in &extra.shipping_rates {
            let mut options = Vec::new();
            let mut selected = None;
            for rate in &package.shipping_rates {
                if rate.selected {
                    selected = Some(rate.rate_id.clone());
                }
                options.push(FulfillmentOption {
                    id: rate.rate_id.clone(),
                    title: decode_entities(&rate.name),
                    description: Some(decode_entities(&rate.description))
                        .filter(|text| !text.is_empty()),
                    carrier: None,
                    cost: minor(&rate.price)?,
                    earliest: None,
                    latest: None,
                });
            }
            groups.push(FulfillmentGroup {
                id: format!("package_{}", package.package_id),
                line_ids: line_ids.clone(),
                options,
                selected_option: selected,
            });
        }
        let fulfillment = match &address {
            Some(address) if extra.needs_shipping => vec![FulfillmentMethod {
                id: "shipping".to_owned(),
                kind: MethodKind::Shipping,
                line_ids,
                destinations: vec![Destination {
                    id: "address".to_owned(),
                    address: address.clone(),
                    name: None,
                }],
                selected_destination: Some("address".to_owned()),
                groups,
            }],
            _ => Vec::new(),
        };
        let codes: Vec<String> = extra
            .coupons
            .iter()
            .map(|coupon| coupon.code.clone())
            .collect();
        let discounts = extra
            .coupons
            .iter()
            .map(|coupon| {
                Ok(crate::model::checkout::AppliedDiscount {
                    code: Some(coupon.code.clone()),
                    title: coupon.code.clone(),
                    amount: minor(&coupon.totals.total_discount)?,
                    allocations: Vec::new(),
                })
            })
            .collect::<Result<Vec<_>, PlatformError>>()?;
        let totals = CheckoutTotals {
            subtotal: minor(&extra.totals.total_items)?,
            discount: minor(&extra.totals.total_discount)?,
            fulfillment: match (&extra.totals.total_shipping, &address) {
                (Some(shipping), Some(_)) => Some(minor(shipping)?),
                _ => None,
            },
            tax: Some(minor(&extra.totals.total_tax)?),
            total: minor(&extra.totals.total_price)?,
        };
        let escalation = self
            .handlers
            .is_empty()
            .then_some(EscalationReason::Payment);
        Ok(CheckoutState {
            id: id.to_owned(),
            lines: base.lines,
            currency: base.currency,
            buyer,
            needs_email: true,
            address,
            needs_fulfillment: extra.needs_shipping,
            fulfillment,
            codes,
            discounts,
            refused_codes: Vec::new(),
            totals,
            handlers: self.handlers.clone(),
            escalation,
            continue_url: continue_url.map(String::from),
            stage: Stage::Open,
            expires_at: None,
            requirements: self.fields.current().requirements(),
        })
    }

    /// A placed checkout: the cart session is empty now, the order holds what was bought.
    pub(super) fn placed_state(
        &self,
        id: &str,
        session: &Session,
        placed: &Placed,
    ) -> CheckoutState {
        // What the order shows, with what only the session and the store's payment page know.
        CheckoutState {
            lines: placed.lines.clone(),
            buyer: session.buyer.clone(),
            address: session.address.clone(),
            handlers: self.handlers.clone(),
            escalation: placed.pay_url.as_ref().map(|_| EscalationReason::Payment),
            continue_url: placed.pay_url.clone(),
            ..CheckoutState::of_order(id, &placed.order, Buyer::default())
        }
    }
}
