//! Checkout and order, model → wire, at 2026-04-08 and 2026-08-25. Merchant text (titles,
//! option names, the store's reasons) goes through `untrusted`; buyer data is copied into the
//! answer and nowhere else.

use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use super::status::{Judged, Status};
use crate::brain::untrusted;
use crate::model::CartLine;
use crate::model::checkout::{
    Address, AllocationTarget, Buyer, CheckoutState, CheckoutTotals, Destination, MethodKind,
    Order, OrderLine, Stage,
};
use crate::protocol::Ucp;
use crate::protocol::cart::{ItemOut, LineItemOut, TotalOut};
use crate::protocol::checkout::{
    AddressOut, AllocationOut, AppliedDiscountOut, BuyerOut, CheckoutResponse, DestinationOut,
    DiscountsOut, ExpectationLineOut, ExpectationOut, FulfillmentOut, GroupOut, HandlerOut,
    LinkOut, MethodOut, OptionOut, OrderConfirmationOut, OrderFulfillmentOut, OrderItemOut,
    OrderLineOut, OrderQuantityOut, OrderResponse, PaymentOut,
};
use crate::protocol::checkout::{BindingOut, PixChargeOut, PixDisplayOut, PixInstrumentOut};
use crate::protocol::fiscal::TaxpayerIdOut;
use crate::protocol::{Capability, Edition, Release};

/// The checkout and order wire structs own their text (unlike the catalog's, they do not borrow).
fn owned_title(text: &str) -> String {
    untrusted::title(text).into_owned()
}

fn rfc3339(at: Option<OffsetDateTime>) -> Option<String> {
    at.and_then(|at| at.format(&Rfc3339).ok())
}

fn total(kind: &'static str, amount: i64) -> TotalOut {
    TotalOut { kind, amount }
}

/// TOT: exactly one subtotal and one total; discounts negative; shipping and tax only once
/// the store priced them.
pub fn totals(totals: &CheckoutTotals) -> Vec<TotalOut> {
    let mut out = vec![total("subtotal", totals.subtotal)];
    if totals.discount > 0 {
        out.push(total("discount", -totals.discount));
    }
    if let Some(fulfillment) = totals.fulfillment {
        out.push(total("fulfillment", fulfillment));
    }
    if let Some(tax) = totals.tax {
        out.push(total("tax", tax));
    }
    out.push(total("total", totals.total));
    out
}

pub fn line_items(lines: &[CartLine]) -> Vec<LineItemOut> {
    lines
        .iter()
        .map(|line| LineItemOut {
            id: line.id.clone(),
            item: ItemOut {
                id: line.variant_id.clone(),
                title: untrusted::title(&line.title).into_owned(),
                price: line.unit_price,
                image_url: line.image_url.clone(),
            },
            quantity: line.quantity,
            totals: vec![total("subtotal", line.subtotal), total("total", line.total)],
        })
        .collect()
}

fn buyer(buyer: &Buyer) -> Option<BuyerOut> {
    (!buyer.is_empty()).then(|| BuyerOut {
        first_name: buyer.first_name.clone(),
        last_name: buyer.last_name.clone(),
        email: buyer.email.clone(),
        phone_number: buyer.phone_number.clone(),
        taxpayer_id: buyer.taxpayer_id.as_ref().map(|document| TaxpayerIdOut {
            kind: document.kind.as_str(),
            value: document.value.clone(),
        }),
    })
}

fn address(address: &Address) -> AddressOut {
    AddressOut {
        first_name: address.first_name.clone(),
        last_name: address.last_name.clone(),
        // A Brazilian store's number and bairro go back where the agent wrote them.
        street_address: crate::brain::address::street_line(address),
        extended_address: crate::brain::address::extended_line(address),
        address_locality: address.address_locality.clone(),
        address_region: address.address_region.clone(),
        postal_code: address.postal_code.clone(),
        address_country: address.address_country.clone(),
        phone_number: address.phone_number.clone(),
    }
}

/// 04-08: a shipping destination is a postal address with an id, a pickup place a
/// `retail_location` {id, name, address}. 08-25 adds the `type` discriminator to both
/// (`shipping_address`, `business_location`).
fn destination(kind: MethodKind, place: &Destination, edition: Edition) -> DestinationOut {
    let typed = edition == Edition::Ucp20260825;
    match kind {
        MethodKind::Shipping => DestinationOut {
            id: place.id.clone(),
            kind: typed.then_some("shipping_address"),
            name: None,
            address: None,
            postal: Some(address(&place.address)),
        },
        MethodKind::Pickup => DestinationOut {
            id: place.id.clone(),
            kind: typed.then_some("business_location"),
            name: Some(untrusted::title(place.name.as_deref().unwrap_or_default()).into_owned()),
            address: Some(address(&place.address)),
            postal: None,
        },
    }
}

fn fulfillment(state: &CheckoutState, edition: Edition) -> Option<FulfillmentOut> {
    if !state.needs_fulfillment {
        return None;
    }
    let methods = state
        .fulfillment
        .iter()
        .map(|method| MethodOut {
            id: method.id.clone(),
            kind: method.kind.as_str(),
            line_item_ids: method.line_ids.clone(),
            destinations: method
                .destinations
                .iter()
                .map(|place| destination(method.kind, place, edition))
                .collect(),
            selected_destination_id: method.selected_destination.clone(),
            groups: method
                .groups
                .iter()
                .map(|group| GroupOut {
                    id: group.id.clone(),
                    line_item_ids: group.line_ids.clone(),
                    options: group
                        .options
                        .iter()
                        .map(|option| OptionOut {
                            id: option.id.clone(),
                            title: untrusted::title(&option.title).into_owned(),
                            description: option
                                .description
                                .as_deref()
                                .map(owned_title)
                                .filter(|text| !text.is_empty()),
                            carrier: option.carrier.as_deref().map(owned_title),
                            earliest_fulfillment_time: rfc3339(option.earliest),
                            latest_fulfillment_time: rfc3339(option.latest),
                            totals: vec![total("total", option.cost)],
                        })
                        .collect(),
                    selected_option_id: group.selected_option.clone(),
                })
                .collect(),
        })
        .collect();
    Some(FulfillmentOut { methods })
}

fn allocation_path(target: &AllocationTarget, lines: &[CartLine]) -> String {
    match target {
        AllocationTarget::Line(id) => match lines.iter().position(|line| line.id == *id) {
            Some(index) => format!("$.line_items[{index}]"),
            None => "$.line_items".to_owned(),
        },
        AllocationTarget::Shipping => "$.totals.fulfillment".to_owned(),
    }
}

fn discounts(state: &CheckoutState) -> DiscountsOut {
    DiscountsOut {
        codes: state.codes.clone(),
        applied: state
            .discounts
            .iter()
            .map(|discount| AppliedDiscountOut {
                code: discount.code.clone(),
                title: untrusted::title(&discount.title).into_owned(),
                amount: discount.amount,
                automatic: discount.code.is_none(),
                allocations: discount
                    .allocations
                    .iter()
                    .map(|allocation| AllocationOut {
                        path: allocation_path(&allocation.target, &state.lines),
                        amount: allocation.amount,
                    })
                    .collect(),
            })
            .collect(),
    }
}

/// The Checkout response. `ucp` is the envelope the front built for the negotiated release;
/// `links` the store's legal pages (CHK-034: `links` is required, possibly empty).
pub fn checkout(
    judged: &Judged,
    release: Release,
    ucp: Ucp,
    links: Vec<(&'static str, String)>,
) -> CheckoutResponse {
    let state = &judged.state;
    let order = match (&state.stage, judged.status) {
        (Stage::Placed(order), Status::Completed) => Some(OrderConfirmationOut {
            id: order.id.clone(),
            label: order.label.clone(),
            permalink_url: order.permalink_url.clone(),
        }),
        _ => None,
    };
    CheckoutResponse {
        ucp,
        id: state.id.clone(),
        line_items: line_items(&state.lines),
        buyer: buyer(&state.buyer),
        status: judged.status.as_str(),
        currency: state.currency.code(),
        totals: totals(&state.totals),
        messages: judged.messages.clone(),
        links: links
            .into_iter()
            .map(|(kind, url)| LinkOut { kind, url })
            .collect(),
        expires_at: rfc3339(state.expires_at),
        // CHK-001/CHK-003: always when escalating, never on a terminal status.
        continue_url: if judged.status.is_terminal() {
            None
        } else {
            state.continue_url.clone()
        },
        // An extension the agent's profile leaves out is not rendered (OVR-005).
        fulfillment: fulfillment(state, release.edition)
            .filter(|_| release.extensions.holds(Capability::Fulfillment)),
        discounts: release
            .extensions
            .holds(Capability::Discount)
            .then(|| discounts(state)),
        payment: PaymentOut {
            handlers: state
                .handlers
                .iter()
                .map(|handler| HandlerOut {
                    id: handler.id.clone(),
                    name: untrusted::title(&handler.name).into_owned(),
                })
                .collect(),
            instruments: judged.pix.iter().filter_map(pix_instrument).collect(),
        },
        order,
        seller_identity: None,
    }
}

/// The pending Pix charge, as the platform shows it to the payer until `expires_at`.
fn pix_instrument(shown: &super::pix::Shown) -> Option<PixInstrumentOut> {
    let expires_at = shown.expires_at.format(&Rfc3339).ok()?;
    let amount = crate::money::Money::new(shown.amount, iso_currency::Currency::BRL);
    Some(PixInstrumentOut {
        id: format!("pix_{}", shown.txid),
        handler_id: shown.handler_id.clone(),
        kind: "pix",
        selected: true,
        credential: PixChargeOut {
            kind: "pix_charge",
            provider_payment_id: shown.txid.clone(),
            copia_e_cola: shown.copia_e_cola.clone(),
            qr_code_base64: shown.qr_code_base64.clone(),
            expires_at: expires_at.clone(),
            binding: BindingOut {
                checkout_id: shown.checkout_id.clone(),
            },
        },
        display: PixDisplayOut {
            description: format!(
                "R$ {} Pix charge: pay in any bank app with the QR code or the copy-and-paste code before {expires_at}",
                amount.to_major_string()
            ),
        },
    })
}

/// order_line_item.json's derived status: removed, fulfilled, partial, else processing.
fn line_status(line: &OrderLine) -> &'static str {
    match (line.active, line.fulfilled) {
        (0, _) => "removed",
        (active, fulfilled) if fulfilled >= active => "fulfilled",
        (_, 0) => "processing",
        _ => "partial",
    }
}

pub fn order(order: &Order, ucp: Ucp) -> OrderResponse {
    let line_items = order
        .lines
        .iter()
        .map(|line| OrderLineOut {
            id: line.id.clone(),
            item: OrderItemOut {
                id: line
                    .variant_id
                    .clone()
                    .or_else(|| line.sku.clone())
                    .unwrap_or_else(|| line.id.clone()),
                title: untrusted::title(&line.title).into_owned(),
                price: line.unit_price,
            },
            quantity: OrderQuantityOut {
                original: line.quantity,
                total: line.active,
                fulfilled: line.fulfilled,
            },
            totals: vec![total("total", line.total)],
            status: line_status(line),
        })
        .collect();
    let expectations = order
        .shipping_address
        .as_ref()
        .map(|shipping| ExpectationOut {
            id: format!("{}-shipping", order.id),
            line_items: order
                .lines
                .iter()
                .map(|line| ExpectationLineOut {
                    id: line.id.clone(),
                    quantity: line.quantity,
                })
                .collect(),
            method_type: "shipping",
            destination: address(shipping),
            description: order.fulfillment_title.as_deref().map(owned_title),
        })
        .into_iter()
        .collect();
    let nfe = crate::brain::nfe::render(order, &ucp);
    OrderResponse {
        nfe,
        ucp,
        id: order.id.clone(),
        label: order.label.clone(),
        checkout_id: order.checkout_id.clone(),
        permalink_url: order.permalink_url.clone(),
        line_items,
        fulfillment: OrderFulfillmentOut {
            expectations,
            events: Vec::new(),
        },
        currency: order.currency.code(),
        totals: totals(&order.totals),
        messages: Vec::new(),
        seller_identity: None,
    }
}
