//! Orders placed through the Store API (`POST /checkout`), read back with the order key and
//! billing email the bridge keeps (`sessions`): a guest order needs both.

use reqwest::{Method, StatusCode};
use serde_json::Value;

use super::super::ids::cart_token;
use super::super::mapping;
use super::super::wire::StoreCart;
use super::state::Extra;
use super::{WooCheckout, upstream};
use crate::model::checkout::{CheckoutTotals, Order, OrderLine};
use crate::platform::port::PlatformError;

impl WooCheckout {
    /// The store's number of a bridge order id (`wc_order_<n>`).
    pub(super) fn order_number(order_id: &str) -> Option<u64> {
        order_id.strip_prefix("wc_order_")?.parse().ok()
    }

    pub(super) fn order_of(
        &self,
        id: &str,
        body: &Value,
        key: &str,
    ) -> Result<Order, PlatformError> {
        let cart: StoreCart = serde_json::from_value(body.clone())
            .map_err(|error| PlatformError::BadResponse(format!("order: {error}")))?;
        let extra: Extra = serde_json::from_value(body.clone())
            .map_err(|error| PlatformError::BadResponse(format!("order: {error}")))?;
        let order_id = body.get("id").and_then(Value::as_u64).unwrap_or_default();
        let base = mapping::cart(id.to_owned(), &cart, self.currency, None, None)?;
        let exponent = extra.totals.currency_minor_unit;
        let minor = |value: &str| mapping::minor(value, exponent, base.currency);
        let items = body
            .get("items")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let mut permalink = self
            .page(&format!("checkout/order-received/{order_id}/"))
            .ok_or_else(|| PlatformError::BadResponse("order: no store URL".into()))?;
        permalink.query_pairs_mut().append_pair("key", key);
        Ok(Order {
            id: format!("wc_order_{order_id}"),
            checkout_id: id.to_owned(),
            label: Some(format!("#{order_id}")),
            permalink_url: permalink.into(),
            paid: matches!(
                extra.status.as_str(),
                "processing" | "completed" | "on-hold"
            ),
            store_status: extra.status.clone(),
            lines: base
                .lines
                .iter()
                .zip(items.iter().chain(std::iter::repeat(&Value::Null)))
                .map(|(line, item)| OrderLine {
                    // Every item of an order read carries the order key as its `key`; its
                    // `id` is the order item's own.
                    id: item
                        .get("id")
                        .and_then(Value::as_u64)
                        .map_or_else(|| line.id.clone(), |item| item.to_string()),
                    variant_id: None,
                    sku: item.get("sku").and_then(Value::as_str).map(str::to_owned),
                    title: line.title.clone(),
                    quantity: line.quantity,
                    // WooCommerce tracks no shipping per item: the order's status says it.
                    active: match extra.status.as_str() {
                        "cancelled" | "refunded" | "failed" => 0,
                        _ => line.quantity,
                    },
                    fulfilled: if extra.status == "completed" {
                        line.quantity
                    } else {
                        0
                    },
                    unit_price: line.unit_price,
                    total: line.total,
                })
                .collect(),
            currency: base.currency,
            totals: CheckoutTotals {
                subtotal: minor(&extra.totals.subtotal)?,
                discount: minor(&extra.totals.total_discount)?,
                fulfillment: extra
                    .totals
                    .total_shipping
                    .as_deref()
                    .map(&minor)
                    .transpose()?,
                tax: Some(minor(&extra.totals.total_tax)?),
                total: minor(&extra.totals.total_price)?,
            },
            shipping_address: None,
            fulfillment_title: None,
            codes: extra
                .coupons
                .iter()
                .map(|coupon| coupon.code.clone())
                .collect(),
            placed_at: None,
            nfe: None,
        })
    }

    pub(super) async fn read_order(
        &self,
        checkout: &str,
        order_id: u64,
        key: &str,
        email: &str,
    ) -> Result<Option<Value>, PlatformError> {
        let query = [("key", key.to_owned()), ("billing_email", email.to_owned())];
        let id = order_id.to_string();
        let (status, value, _) = self
            .api
            .session(
                Method::GET,
                &["order", &id],
                &query,
                cart_token(checkout).as_deref(),
                None,
            )
            .await?;
        match status {
            StatusCode::OK => Ok(Some(value)),
            StatusCode::NOT_FOUND | StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => Ok(None),
            _ => Err(upstream("order", status, &value)),
        }
    }
}
