//! The checkout operations' answers, lifted out of `wire`'s per-operation types into plain
//! structs by one macro (as `cart` does for its own), so `state` maps them once.

use super::super::mapping::{RawMoney, enum_name, lift_money};
use super::super::wire;

/// Where a discount allocation went (`targetType`), and whose it is.
#[derive(Debug, Clone)]
pub struct RawAllocation {
    pub amount: RawMoney,
    /// `targetType` is `SHIPPING_LINE`.
    pub shipping: bool,
    /// The code of a code discount; `None` for an automatic or custom one.
    pub code: Option<String>,
    /// The title of an automatic or custom discount.
    pub title: Option<String>,
}

#[derive(Debug, Clone)]
pub struct RawLine {
    pub id: String,
    pub quantity: i64,
    pub variant_id: String,
    pub variant_title: String,
    pub product_title: String,
    pub requires_shipping: bool,
    pub image: Option<String>,
    pub unit: RawMoney,
    pub subtotal: RawMoney,
    pub total: RawMoney,
    pub allocations: Vec<RawAllocation>,
}

/// A delivery address of the cart as Shopify holds it.
#[derive(Debug, Clone, Default)]
pub struct RawAddress {
    pub address1: Option<String>,
    pub address2: Option<String>,
    pub city: Option<String>,
    pub province_code: Option<String>,
    pub zip: Option<String>,
    pub country_code: Option<String>,
    pub first_name: Option<String>,
    pub last_name: Option<String>,
    pub phone: Option<String>,
}

#[derive(Debug, Clone)]
pub struct RawOption {
    pub handle: String,
    pub title: Option<String>,
    pub description: Option<String>,
    /// `DeliveryMethodType` as Shopify spells it (`SHIPPING`, `PICK_UP`…).
    pub method: String,
    pub cost: RawMoney,
}

#[derive(Debug, Clone)]
pub struct RawGroup {
    pub id: String,
    pub line_ids: Vec<String>,
    pub options: Vec<RawOption>,
    pub selected: Option<String>,
}

#[derive(Debug, Clone)]
pub struct RawCheckout {
    pub id: String,
    pub checkout_url: String,
    pub updated_at: String,
    pub attributes: Vec<String>,
    pub email: Option<String>,
    pub phone: Option<String>,
    pub country: Option<String>,
    pub address: Option<RawAddress>,
    pub groups: Vec<RawGroup>,
    /// `(code, applicable)`.
    pub codes: Vec<(String, bool)>,
    /// Discounts on the whole cart (order and shipping discounts).
    pub allocations: Vec<RawAllocation>,
    pub subtotal: RawMoney,
    pub total: RawMoney,
    pub lines: Vec<RawLine>,
}

impl RawCheckout {
    pub fn cancelled(&self) -> bool {
        self.attributes
            .iter()
            .any(|key| key == super::super::cart::CANCELLED_ATTRIBUTE)
    }
}

#[derive(Debug, Clone)]
pub struct RawUserError {
    pub code: String,
    pub field: Vec<String>,
}

#[derive(Debug, Clone)]
pub struct RawWarning {
    pub code: String,
    pub message: String,
}

/// One mutation's answer: the cart as it then is, and what Shopify said about the write.
pub struct Payload {
    pub cart: Option<RawCheckout>,
    pub errors: Vec<RawUserError>,
    pub warnings: Vec<RawWarning>,
}

macro_rules! lift_checkout {
    ($m:ident) => {
        lift_money!($m);

        impl From<wire::$m::Allocation> for RawAllocation {
            fn from(allocation: wire::$m::Allocation) -> Self {
                let (code, title) = match allocation.on {
                    wire::$m::AllocationOn::CartCodeDiscountAllocation(on) => (Some(on.code), None),
                    wire::$m::AllocationOn::CartAutomaticDiscountAllocation(on) => {
                        (None, Some(on.title))
                    }
                    wire::$m::AllocationOn::CartCustomDiscountAllocation(on) => {
                        (None, Some(on.title))
                    }
                };
                Self {
                    amount: allocation.discounted_amount.into(),
                    shipping: enum_name(&allocation.target_type) == "SHIPPING_LINE",
                    code,
                    title,
                }
            }
        }

        impl From<wire::$m::CheckoutFields> for RawCheckout {
            fn from(cart: wire::$m::CheckoutFields) -> Self {
                let address = cart
                    .delivery
                    .addresses
                    .into_iter()
                    .next()
                    .map(|selectable| {
                        let wire::$m::CheckoutFieldsDeliveryAddressesAddress::CartDeliveryAddress(
                            address,
                        ) = selectable.address;
                        RawAddress {
                            address1: address.address1,
                            address2: address.address2,
                            city: address.city,
                            province_code: address.province_code,
                            zip: address.zip,
                            country_code: address.country_code,
                            first_name: address.first_name,
                            last_name: address.last_name,
                            phone: address.phone,
                        }
                    });
                Self {
                    id: cart.id,
                    checkout_url: cart.checkout_url,
                    updated_at: cart.updated_at,
                    attributes: cart
                        .attributes
                        .into_iter()
                        .map(|attribute| attribute.key)
                        .collect(),
                    email: cart.buyer_identity.email,
                    phone: cart.buyer_identity.phone,
                    country: cart.buyer_identity.country_code.as_ref().map(enum_name),
                    address,
                    groups: cart
                        .delivery_groups
                        .nodes
                        .into_iter()
                        .map(|group| RawGroup {
                            id: group.id,
                            line_ids: group
                                .cart_lines
                                .nodes
                                .into_iter()
                                .map(|line| line.id)
                                .collect(),
                            options: group
                                .delivery_options
                                .into_iter()
                                .map(|option| RawOption {
                                    handle: option.handle,
                                    title: option.title,
                                    description: option.description,
                                    method: enum_name(&option.delivery_method_type),
                                    cost: option.estimated_cost.into(),
                                })
                                .collect(),
                            selected: group.selected_delivery_option.map(|option| option.handle),
                        })
                        .collect(),
                    codes: cart
                        .discount_codes
                        .into_iter()
                        .map(|code| (code.code, code.applicable))
                        .collect(),
                    allocations: cart
                        .discount_allocations
                        .into_iter()
                        .map(Into::into)
                        .collect(),
                    subtotal: cart.cost.subtotal_amount.into(),
                    total: cart.cost.total_amount.into(),
                    lines: cart
                        .lines
                        .nodes
                        .into_iter()
                        .map(|line| {
                            let wire::$m::CheckoutFieldsLinesNodesMerchandise::ProductVariant(
                                variant,
                            ) = line.merchandise;
                            RawLine {
                                id: line.id,
                                quantity: line.quantity,
                                variant_id: variant.id,
                                variant_title: variant.title,
                                product_title: variant.product.title,
                                requires_shipping: variant.requires_shipping,
                                image: variant.image.map(|image| image.url),
                                unit: line.cost.amount_per_quantity.into(),
                                subtotal: line.cost.subtotal_amount.into(),
                                total: line.cost.total_amount.into(),
                                allocations: line
                                    .discount_allocations
                                    .into_iter()
                                    .map(Into::into)
                                    .collect(),
                            }
                        })
                        .collect(),
                }
            }
        }
    };
    ($m:ident, $payload:ident) => {
        lift_checkout!($m);

        impl From<wire::$m::ResponseData> for Option<Payload> {
            fn from(data: wire::$m::ResponseData) -> Self {
                data.$payload.map(|payload| Payload {
                    cart: payload.cart.map(Into::into),
                    errors: payload
                        .user_errors
                        .into_iter()
                        .map(|error| RawUserError {
                            code: error.code.as_ref().map(enum_name).unwrap_or_default(),
                            field: error.field.unwrap_or_default(),
                        })
                        .collect(),
                    warnings: payload
                        .warnings
                        .into_iter()
                        .map(|warning| RawWarning {
                            code: enum_name(&warning.code),
                            message: warning.message,
                        })
                        .collect(),
                })
            }
        }
    };
}

lift_checkout!(checkout_get);
lift_checkout!(checkout_buyer_update, cart_buyer_identity_update);
lift_checkout!(checkout_address_replace, cart_delivery_addresses_replace);
lift_checkout!(
    checkout_option_select,
    cart_selected_delivery_options_update
);
lift_checkout!(checkout_codes_update, cart_discount_codes_update);
