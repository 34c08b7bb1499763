//! An order as VTEX's Orders API holds it (`GET /api/oms/pvt/orders/{orderId}`, app key
//! required) and the NF-e it was invoiced with: the output invoices of
//! `packageAttachment.packages[]` (`invoiceKey` is the 44-digit access key, `invoiceUrl` the
//! DANFE or XML the merchant's ERP published, `issuanceDate`). A package whose key is not a
//! valid access key is not an NF-e (a service invoice, a test number): it gives no `nfe`.

use iso_currency::Currency;
use serde::Deserialize;
use serde_json::Value;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use super::super::mapping::cents;
use super::super::wire::VtexAddress;
use super::address::from_vtex;
use crate::model::checkout::{CheckoutTotals, Order, OrderLine};
use crate::model::fiscal::Nfe;
use crate::money::parse_currency;
use crate::platform::port::PlatformError;

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct OmsOrder {
    order_id: String,
    sequence: Option<String>,
    order_form_id: Option<String>,
    status: String,
    value: i64,
    creation_date: Option<String>,
    items: Vec<OmsItem>,
    totals: Vec<OmsTotal>,
    shipping_data: Option<OmsShipping>,
    package_attachment: Option<PackageAttachment>,
    store_preferences_data: Option<OmsPreferences>,
    marketing_data: Option<Value>,
    client_profile_data: Option<Value>,
}

impl OmsOrder {
    pub fn id(&self) -> &str {
        &self.order_id
    }

    /// The orderForm the order was placed from.
    pub fn order_form_id(&self) -> Option<&str> {
        self.order_form_id.as_deref().filter(|id| !id.is_empty())
    }

    /// The buyer's document the order was placed with (its other personal fields VTEX
    /// masks or aliases in the Orders API).
    pub fn buyer(&self) -> crate::model::checkout::Buyer {
        crate::model::checkout::Buyer {
            taxpayer_id: super::brazil::taxpayer_of(self.client_profile_data.as_ref()),
            ..Default::default()
        }
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct OmsPreferences {
    currency_code: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct OmsItem {
    unique_id: String,
    id: String,
    ref_id: Option<String>,
    name: String,
    quantity: u32,
    price: i64,
    selling_price: Option<i64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct OmsTotal {
    id: String,
    value: i64,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct OmsShipping {
    address: Option<VtexAddress>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct PackageAttachment {
    packages: Vec<Package>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct Package {
    invoice_key: Option<String>,
    invoice_url: Option<String>,
    issuance_date: Option<String>,
    /// `Output` (a sale) or `Input` (a return).
    #[serde(rename = "type")]
    kind: Option<String>,
}

/// An NF-e access key: 44 digits whose last is the modulo-11 check digit of the other 43
/// (weights 2 to 9 from the right; a remainder of 0 or 1 gives 0).
pub fn valid_access_key(key: &str) -> bool {
    let digits: Vec<u32> = key.chars().filter_map(|c| c.to_digit(10)).collect();
    if key.len() != 44 || digits.len() != 44 {
        return false;
    }
    let sum: u32 = digits[..43]
        .iter()
        .rev()
        .enumerate()
        .map(|(index, digit)| digit * (2 + (index as u32 % 8)))
        .sum();
    let check = match 11 - sum % 11 {
        10 | 11 => 0,
        digit => digit,
    };
    digits[43] == check
}

/// VTEX writes `2026-12-07T14:58:04.0000000+00:00` (seven fractional digits) as well as
/// RFC 3339.
fn instant(text: &str) -> Option<OffsetDateTime> {
    OffsetDateTime::parse(text.trim(), &Rfc3339)
        .ok()
        .or_else(|| {
            let (head, zone) = text.trim().split_at(text.trim().len().checked_sub(6)?);
            let head = match head.split_once('.') {
                Some((seconds, fraction)) => {
                    format!("{seconds}.{}", &fraction[..fraction.len().min(9)])
                }
                None => head.to_owned(),
            };
            OffsetDateTime::parse(&format!("{head}{zone}"), &Rfc3339).ok()
        })
}

fn is_xml(url: &str) -> bool {
    url.split(['?', '#'])
        .next()
        .is_some_and(|path| path.to_ascii_lowercase().ends_with(".xml"))
}

/// The sale's NF-e: the latest output package with a valid access key.
fn nfe(attachment: Option<&PackageAttachment>) -> Option<Nfe> {
    attachment?
        .packages
        .iter()
        .filter(|package| package.kind.as_deref().is_none_or(|kind| kind == "Output"))
        .filter_map(|package| {
            let key: String = package
                .invoice_key
                .as_deref()?
                .chars()
                .filter(|c| !c.is_whitespace())
                .collect();
            if !valid_access_key(&key) {
                return None;
            }
            let url = package
                .invoice_url
                .as_deref()
                .map(str::trim)
                .filter(|url| url.starts_with("https://") || url.starts_with("http://"));
            Some(Nfe {
                access_key: key,
                danfe_url: url.filter(|url| !is_xml(url)).map(str::to_owned),
                xml_url: url.filter(|url| is_xml(url)).map(str::to_owned),
                issued_at: package.issuance_date.as_deref().and_then(instant),
            })
        })
        .next_back()
}

/// Statuses in which the buyer has paid (VTEX's order flow, from `payment-approved` on).
const PAID: &[&str] = &[
    "payment-approved",
    "ready-for-handling",
    "start-handling",
    "handling",
    "invoice",
    "invoiced",
];

fn total(order: &OmsOrder, id: &str) -> i64 {
    order
        .totals
        .iter()
        .find(|total| total.id == id)
        .map_or(0, |total| total.value)
}

/// The order as the model holds it; `permalink` is where the buyer sees it on the store.
pub fn order(
    raw: &OmsOrder,
    fallback: Currency,
    permalink: String,
) -> Result<Order, PlatformError> {
    let currency = raw
        .store_preferences_data
        .as_ref()
        .and_then(|preferences| parse_currency(&preferences.currency_code).ok())
        .unwrap_or(fallback);
    let mut lines = Vec::new();
    for item in &raw.items {
        let unit = cents(item.selling_price.unwrap_or(item.price), currency)?;
        lines.push(OrderLine {
            id: item.unique_id.clone(),
            variant_id: Some(item.id.clone()),
            sku: item.ref_id.clone().filter(|sku| !sku.is_empty()),
            title: item.name.clone(),
            quantity: item.quantity,
            active: item.quantity,
            fulfilled: 0,
            unit_price: unit,
            total: unit.saturating_mul(i64::from(item.quantity)),
        });
    }
    let coupon = raw
        .marketing_data
        .as_ref()
        .and_then(|data| data.get("coupon"))
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|code| !code.is_empty());
    Ok(Order {
        id: raw.order_id.clone(),
        checkout_id: raw.order_form_id.clone().unwrap_or_default(),
        label: raw.sequence.clone().or_else(|| Some(raw.order_id.clone())),
        permalink_url: permalink,
        store_status: raw.status.clone(),
        paid: PAID.contains(&raw.status.as_str()),
        lines,
        currency,
        totals: CheckoutTotals {
            subtotal: cents(total(raw, "Items"), currency)?,
            discount: cents(total(raw, "Discounts").saturating_neg(), currency)?,
            fulfillment: Some(cents(total(raw, "Shipping"), currency)?),
            tax: Some(cents(total(raw, "Tax"), currency)?),
            total: cents(raw.value, currency)?,
        },
        shipping_address: raw
            .shipping_data
            .as_ref()
            .and_then(|data| data.address.as_ref())
            .map(from_vtex),
        fulfillment_title: None,
        codes: coupon.map(str::to_owned).into_iter().collect(),
        placed_at: raw.creation_date.as_deref().and_then(instant),
        nfe: nfe(raw.package_attachment.as_ref()),
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    /// A key from SEFAZ's own layout example (35 = SP, 2026-12, CNPJ, model 55, series 1).
    pub const KEY: &str = "35261211222333000181550010000012341000012348";

    fn fixed(mut key: String) -> String {
        key.truncate(43);
        for digit in 0..10 {
            let candidate = format!("{key}{digit}");
            if valid_access_key(&candidate) {
                return candidate;
            }
        }
        unreachable!()
    }

    #[test]
    fn access_keys_are_checked_by_their_check_digit() {
        let key = fixed(KEY.into());
        assert!(valid_access_key(&key));
        let mut wrong = key.clone();
        let last = wrong.pop().unwrap().to_digit(10).unwrap();
        wrong.push(char::from_digit((last + 1) % 10, 10).unwrap());
        assert!(!valid_access_key(&wrong));
        assert!(!valid_access_key(&key[..43]));
        assert!(!valid_access_key(&format!("{}X", &key[..43])));
    }

    /// Issue 37 item 4 (VTEX): the order's NF-e from `packageAttachment`.
    #[test]
    fn the_output_invoice_with_a_valid_key_is_the_orders_nfe() {
        let key = fixed(KEY.into());
        let raw: OmsOrder = serde_json::from_value(json!({
            "orderId": "1468780500454-01", "sequence": "500454", "orderFormId": "abc",
            "status": "invoiced", "value": 12000, "creationDate": "2026-12-07T14:58:04.1234567+00:00",
            "items": [{"uniqueId": "U1", "id": "2001", "name": "Relógio", "quantity": 1, "price": 10500, "sellingPrice": 10500}],
            "totals": [{"id": "Items", "value": 10500}, {"id": "Shipping", "value": 1500}],
            "packageAttachment": {"packages": [
                {"type": "Output", "invoiceNumber": "1234", "invoiceKey": "NOT-A-KEY", "invoiceUrl": null},
                {"type": "Output", "invoiceNumber": "1235", "invoiceKey": key, "invoiceValue": 12000,
                 "invoiceUrl": "https://nfe.loja.example/danfe/1235.pdf", "issuanceDate": "2026-12-08T10:00:00+00:00"},
                {"type": "Input", "invoiceNumber": "9", "invoiceKey": fixed("3526121122233300018155001000000009".to_owned() + "100000000")}
            ]}
        }))
        .unwrap();
        let order = order(&raw, Currency::BRL, "https://loja.example/account".into()).unwrap();
        let nfe = order.nfe.unwrap();
        assert_eq!(nfe.access_key, key);
        assert_eq!(
            nfe.danfe_url.as_deref(),
            Some("https://nfe.loja.example/danfe/1235.pdf")
        );
        assert_eq!(nfe.xml_url, None);
        assert_eq!(nfe.issued_at.unwrap().unix_timestamp(), 1_796_724_000);
        assert!(order.paid);
        assert_eq!(order.checkout_id, "abc");
        assert_eq!(order.totals.total, 12000);
        assert!(order.placed_at.is_some());
        let none: OmsOrder =
            serde_json::from_value(json!({"orderId": "x", "status": "payment-pending"})).unwrap();
        let none = super::order(&none, Currency::BRL, String::new()).unwrap();
        assert!(none.nfe.is_none() && !none.paid);
    }
}
