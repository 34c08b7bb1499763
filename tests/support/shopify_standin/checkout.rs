//! The stand-in's checkout side of a cart, shaped like the Storefront schema: the buyer
//! identity, one selectable delivery address, delivery groups whose options depend on the
//! address's country, discount codes and one automatic discount (`cartBuyerIdentityUpdate`,
//! `cartDeliveryAddressesReplace`, `cartSelectedDeliveryOptionsUpdate`,
//! `cartDiscountCodesUpdate`). As on Shopify, `cost.totalAmount` is the merchandise after
//! discounts: shipping is priced on the checkout page, not in the cart total.
//!
//! The store's rules: US addresses get Standard (5.0), Express (15.5) and a shop pickup
//! (PICK_UP, 0.0); other countries International (25.0); North Korea (KP) nothing. `SAVE10`
//! takes 10% off every line; `SUMMER2024` is inactive; any other code does not exist. Three
//! or more mugs take 4.0 off the order (`Mug trio`, automatic, on the whole cart).

use serde_json::{Value, json};

use super::{CartRec, MUG_VARIANT, cents, money, money_cents};

pub const STANDARD: &str = "standard-5";
pub const EXPRESS: &str = "express-15";
pub const PICKUP: &str = "pickup-shop";
pub const INTERNATIONAL: &str = "intl-25";
pub const GOOD_CODE: &str = "SAVE10";
pub const INACTIVE_CODE: &str = "SUMMER2024";
pub const AUTOMATIC_TITLE: &str = "Mug trio";
const AUTOMATIC_OFF: i64 = 400;

#[derive(Default)]
pub struct CheckoutRec {
    email: Option<String>,
    phone: Option<String>,
    country: Option<String>,
    address: Option<Value>,
    /// Bumped on every replacement: Shopify gives each new address a new id.
    address_seq: u64,
    selected: Option<String>,
    codes: Vec<String>,
}

impl CheckoutRec {
    pub fn country_from_create(&mut self, input: &Value) {
        self.country = input["buyerIdentity"]["countryCode"]
            .as_str()
            .map(str::to_owned);
    }

    pub fn codes(&self) -> Vec<String> {
        self.codes.clone()
    }
}

fn group_id(cart: &CartRec) -> String {
    let token = cart.id.trim_start_matches("gid://shopify/Cart/");
    let token = token.split('?').next().unwrap_or(token);
    format!("gid://shopify/CartDeliveryGroup/{token}-1")
}

fn option(handle: &str, title: &str, method: &str, amount: &str) -> Value {
    json!({
        "handle": handle,
        "title": title,
        "description": (method == "SHIPPING").then_some("Delivered by the carrier"),
        "code": title,
        "deliveryMethodType": method,
        "estimatedCost": money(amount),
    })
}

fn options(country: &str) -> Vec<Value> {
    match country {
        "US" => vec![
            option(STANDARD, "Standard", "SHIPPING", "5.0"),
            option(EXPRESS, "Express", "SHIPPING", "15.5"),
            option(PICKUP, "Shop pickup", "PICK_UP", "0.0"),
        ],
        "KP" => vec![],
        _ => vec![option(INTERNATIONAL, "International", "SHIPPING", "25.0")],
    }
}

fn offered(cart: &CartRec) -> Vec<Value> {
    let country = cart
        .checkout
        .address
        .as_ref()
        .and_then(|address| address["countryCode"].as_str().map(str::to_owned));
    match country {
        Some(country) if !cart.lines.is_empty() => options(&country),
        _ => vec![],
    }
}

fn applicable(code: &str) -> bool {
    code.eq_ignore_ascii_case(GOOD_CODE)
}

/// Adds the checkout fields to a cart's JSON and applies its codes to the lines and costs.
pub fn extend(cart: &CartRec, out: &mut Value) {
    let saving = cart.checkout.codes.iter().find(|code| applicable(code));
    let mut total = 0;
    if let Some(lines) = out["lines"]["nodes"].as_array_mut() {
        for line in lines {
            let subtotal = cents(line["cost"]["subtotalAmount"]["amount"].as_str().unwrap());
            let off = if saving.is_some() { subtotal / 10 } else { 0 };
            line["merchandise"]["requiresShipping"] = json!(true);
            line["discountAllocations"] = match saving {
                Some(code) if off > 0 => json!([{
                    "__typename": "CartCodeDiscountAllocation",
                    "code": code,
                    "discountedAmount": money_cents(off),
                    "targetType": "LINE_ITEM",
                }]),
                _ => json!([]),
            };
            line["cost"]["totalAmount"] = money_cents(subtotal - off);
            total += subtotal - off;
        }
    }
    // Line-level discounts are already out of the subtotal; a cart-level one is out of the
    // total only.
    let mugs: u32 = cart
        .lines
        .iter()
        .filter(|line| line.variant == MUG_VARIANT)
        .map(|line| line.quantity)
        .sum();
    let automatic = if mugs >= 3 { AUTOMATIC_OFF } else { 0 };
    out["cost"] = json!({"subtotalAmount": money_cents(total), "totalAmount": money_cents(total - automatic)});
    out["discountAllocations"] = if automatic > 0 {
        json!([{
            "__typename": "CartAutomaticDiscountAllocation",
            "title": AUTOMATIC_TITLE,
            "discountedAmount": money_cents(automatic),
            "targetType": "LINE_ITEM",
        }])
    } else {
        json!([])
    };
    let checkout = &cart.checkout;
    out["buyerIdentity"] = json!({
        "email": checkout.email,
        "phone": checkout.phone,
        "countryCode": checkout.country,
    });
    out["delivery"] = json!({"addresses": checkout.address.as_ref().map(|address| {
        let mut address = address.clone();
        address["__typename"] = json!("CartDeliveryAddress");
        vec![json!({
            "id": format!("gid://shopify/CartSelectableAddress/{}", checkout.address_seq),
            "selected": true,
            "oneTimeUse": true,
            "address": address,
        })]
    }).unwrap_or_default()});
    let offered = offered(cart);
    let groups = if checkout.address.is_some() && !cart.lines.is_empty() {
        let selected = offered
            .iter()
            .find(|option| Some(option["handle"].as_str().unwrap()) == checkout.selected.as_deref())
            .cloned();
        vec![json!({
            "id": group_id(cart),
            "cartLines": {"nodes": cart.lines.iter().map(|line| json!({"__typename": "CartLine", "id": line.id})).collect::<Vec<_>>()},
            "deliveryOptions": offered,
            "selectedDeliveryOption": selected,
        })]
    } else {
        vec![]
    };
    out["deliveryGroups"] = json!({"nodes": groups});
    out["discountCodes"] = json!(
        checkout
            .codes
            .iter()
            .map(|code| json!({"code": code, "applicable": applicable(code)}))
            .collect::<Vec<_>>()
    );
}

fn error(field: &[&str], code: &str, message: &str) -> Value {
    json!({"field": field, "code": code, "message": message})
}

/// The payload name of a checkout mutation, by the bridge's operation name.
pub fn payload_name(operation: &str) -> Option<&'static str> {
    Some(match operation {
        "CheckoutBuyerUpdate" => "cartBuyerIdentityUpdate",
        "CheckoutAddressReplace" => "cartDeliveryAddressesReplace",
        "CheckoutOptionSelect" => "cartSelectedDeliveryOptionsUpdate",
        "CheckoutCodesUpdate" => "cartDiscountCodesUpdate",
        _ => return None,
    })
}

/// One checkout mutation on a known cart: its warnings, or the userErrors refusing it.
pub fn mutate(cart: &mut CartRec, operation: &str, vars: &Value) -> Result<Vec<Value>, Vec<Value>> {
    match operation {
        "CheckoutBuyerUpdate" => {
            let identity = &vars["buyerIdentity"];
            let email = identity["email"].as_str().map(str::to_owned);
            let phone = identity["phone"].as_str().map(str::to_owned);
            let mut errors = Vec::new();
            if email.as_deref().is_some_and(|email| !email.contains('@')) {
                errors.push(error(
                    &["buyerIdentity", "email"],
                    "INVALID",
                    "Email is invalid",
                ));
            }
            if phone.as_deref().is_some_and(|phone| {
                !phone.starts_with('+') || !phone[1..].bytes().all(|byte| byte.is_ascii_digit())
            }) {
                errors.push(error(
                    &["buyerIdentity", "phone"],
                    "INVALID",
                    "Phone is invalid",
                ));
            }
            if !errors.is_empty() {
                return Err(errors);
            }
            cart.checkout.email = email;
            cart.checkout.phone = phone;
            cart.checkout.country = identity["countryCode"].as_str().map(str::to_owned);
            Ok(vec![])
        }
        "CheckoutAddressReplace" => {
            let address = &vars["addresses"][0]["address"]["deliveryAddress"];
            let field = |name: &str| {
                vec!["addresses", "0", "address", "deliveryAddress"]
                    .into_iter()
                    .map(str::to_owned)
                    .chain(std::iter::once(name.to_owned()))
                    .collect::<Vec<_>>()
            };
            let Some(country) = address["countryCode"].as_str() else {
                return Err(vec![
                    json!({"field": field("countryCode"), "code": "ADDRESS_FIELD_IS_REQUIRED", "message": "Country is required"}),
                ]);
            };
            let zip = address["zip"].as_str().unwrap_or("");
            if country == "US" && (zip.len() != 5 || !zip.bytes().all(|byte| byte.is_ascii_digit()))
            {
                return Err(vec![
                    json!({"field": field("zip"), "code": "INVALID_ZIP_CODE_FOR_COUNTRY", "message": format!("Enter a valid ZIP code for {zip}")}),
                ]);
            }
            cart.checkout.address = Some(address.clone());
            cart.checkout.address_seq += 1;
            Ok(vec![])
        }
        "CheckoutOptionSelect" => {
            let selection = &vars["selected"][0];
            if selection["deliveryGroupId"].as_str() != Some(group_id(cart).as_str())
                || cart.checkout.address.is_none()
            {
                return Err(vec![error(
                    &["selectedDeliveryOptions", "0", "deliveryGroupId"],
                    "INVALID_DELIVERY_GROUP",
                    "The delivery group does not exist.",
                )]);
            }
            let handle = selection["deliveryOptionHandle"].as_str().unwrap_or("");
            if !offered(cart)
                .iter()
                .any(|option| option["handle"] == handle)
            {
                return Err(vec![error(
                    &["selectedDeliveryOptions", "0", "deliveryOptionHandle"],
                    "INVALID_DELIVERY_OPTION",
                    "The delivery option is not available.",
                )]);
            }
            cart.checkout.selected = Some(handle.to_owned());
            Ok(vec![])
        }
        "CheckoutCodesUpdate" => {
            cart.checkout.codes = vars["codes"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|code| code.as_str().map(str::to_owned))
                .collect();
            Ok(cart
                .checkout
                .codes
                .iter()
                .filter(|code| !applicable(code))
                .map(|code| {
                    if code.eq_ignore_ascii_case(INACTIVE_CODE) {
                        json!({"code": "DISCOUNT_CURRENTLY_INACTIVE", "message": format!("{code} discount is not active"), "target": cart.id})
                    } else {
                        json!({"code": "DISCOUNT_NOT_FOUND", "message": "Enter a valid discount code", "target": cart.id})
                    }
                })
                .collect())
        }
        other => panic!("stand-in: unexpected checkout operation {other}"),
    }
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// `GET /cart/c/{token}`: Shopify's checkout page for a cart, rendered from the cart's own
/// JSON as the real page shows it: one row per line (product — variant, quantity) and the total
/// the buyer pays, which on Shopify's page includes the selected delivery option.
pub fn page(cart: &Value) -> String {
    let rows: String = cart["lines"]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|line| {
            let merchandise = &line["merchandise"];
            let product = merchandise["product"]["title"].as_str().unwrap_or("");
            let variant = merchandise["title"].as_str().unwrap_or("");
            let name = if variant.is_empty() || variant == "Default Title" || variant == product {
                product.to_owned()
            } else {
                format!("{product} — {variant}")
            };
            format!(
                "<tr data-item><td class=\"name\">{}</td><td class=\"quantity\">{}</td><td class=\"price\">${}</td></tr>",
                escape(&name),
                line["quantity"],
                line["cost"]["totalAmount"]["amount"].as_str().unwrap_or("0")
            )
        })
        .collect();
    let shipping: i64 = cart["deliveryGroups"]["nodes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|group| group["selectedDeliveryOption"]["estimatedCost"]["amount"].as_str())
        .map(cents)
        .sum();
    let total = cents(cart["cost"]["totalAmount"]["amount"].as_str().unwrap()) + shipping;
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Checkout</title></head>\
         <body><h1>Checkout</h1><table><thead><tr><th>Product</th><th>Qty</th><th>Price</th></tr></thead>\
         <tbody>{rows}</tbody></table><p>Shipping: ${}.{:02}</p><p data-total=\"{total}\">Total: ${}.{:02}</p></body></html>",
        shipping / 100,
        shipping % 100,
        total / 100,
        total % 100
    )
}
