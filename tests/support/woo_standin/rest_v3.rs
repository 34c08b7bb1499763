//! `PUT /wp-json/wc/v3/orders/{id}` as WooCommerce's REST v3 answers it, for the Pix handler
//! (issue 38): Basic auth with a key pair; a read-only pair is refused the write
//! (`woocommerce_rest_authentication_error`, 401), none or a wrong one is
//! `woocommerce_rest_cannot_edit` (401); an order the store does not have is
//! `woocommerce_rest_shop_order_invalid_id` (400, as the CRUD controller's `update_item`
//! answers; a GET answers 404). `set_paid: true` is `payment_complete`: only a pending or
//! failed order turns `processing` (an on-hold one is left as it is, as the real store does);
//! `status: processing` records `date_paid`; `status: cancelled` puts the stock back, once. The answer is the order, cut to `_fields` when asked.
//! Kept apart from the Store API routes: the room running the real store compares it there.

use super::*;

/// The read/write REST v3 key pair the stand-in accepts (same shape as WooCommerce's).
pub const V3_WRITE_KEY: &str = "ck_fedcba9876543210fedcba9876543210fedcba98";
pub const V3_WRITE_SECRET: &str = "cs_0123456789abcdef0123456789abcdef01234567";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Access {
    Read,
    ReadWrite,
}

fn basic(key: &str, secret: &str) -> String {
    format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(format!("{key}:{secret}"))
    )
}

/// What the request's Basic credentials may do, if they are one of the stand-in's pairs.
pub(super) fn access(headers: &HeaderMap) -> Option<Access> {
    let given = headers.get("authorization")?.to_str().ok()?;
    if given == basic(catalog::V3_KEY, catalog::V3_SECRET) {
        Some(Access::Read)
    } else if given == basic(V3_WRITE_KEY, V3_WRITE_SECRET) {
        Some(Access::ReadWrite)
    } else {
        None
    }
}

/// WooCommerce's `date_paid`: the store's local time without an offset (the stand-in's
/// store runs on UTC, so `date_paid_gmt` is the same).
fn now_local() -> String {
    let now = time::OffsetDateTime::now_utc();
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}",
        now.year(),
        u8::from(now.month()),
        now.day(),
        now.hour(),
        now.minute(),
        now.second()
    )
}

impl Inner {
    fn restock(&mut self, cart: &Value, back: bool) {
        for item in cart["items"].as_array().into_iter().flatten() {
            let (Some(id), Some(quantity)) = (item["id"].as_u64(), item["quantity"].as_u64())
            else {
                continue;
            };
            if let Some(units) = self.stock.get_mut(&id) {
                let quantity = quantity as u32;
                *units = if back {
                    units.saturating_add(quantity)
                } else {
                    units.saturating_sub(quantity)
                };
            }
        }
    }

    pub(super) fn v3_order_update(
        &mut self,
        id: &str,
        uri: &Uri,
        headers: &HeaderMap,
        body: &Bytes,
    ) -> Response {
        match access(headers) {
            Some(Access::ReadWrite) => {}
            Some(Access::Read) => {
                return error(
                    StatusCode::UNAUTHORIZED,
                    "woocommerce_rest_authentication_error",
                    "The API key provided does not have write permissions.",
                );
            }
            None => {
                return error(
                    StatusCode::UNAUTHORIZED,
                    "woocommerce_rest_cannot_edit",
                    "Sorry, you are not allowed to edit this resource.",
                );
            }
        }
        let Ok(input) = serde_json::from_slice::<Value>(body) else {
            return error(
                StatusCode::BAD_REQUEST,
                "rest_invalid_json",
                "Invalid JSON body passed.",
            );
        };
        const STATUSES: [&str; 7] = [
            "pending",
            "processing",
            "on-hold",
            "completed",
            "cancelled",
            "refunded",
            "failed",
        ];
        let status = input["status"].as_str();
        if status.is_some_and(|status| !STATUSES.contains(&status)) {
            return json_response(
                StatusCode::BAD_REQUEST,
                &json!({"code": "rest_invalid_param", "message": "Invalid parameter(s): status",
                        "data": {"status": 400, "params": {"status": "status is not one of pending, processing, on-hold, completed, cancelled, refunded, failed, and checkout-draft."}}}),
                &[],
            );
        }
        let Some(number) = id
            .parse::<u64>()
            .ok()
            .filter(|n| self.orders.contains_key(n))
        else {
            return error(
                StatusCode::BAD_REQUEST,
                "woocommerce_rest_shop_order_invalid_id",
                "Invalid ID.",
            );
        };
        let (before, cart) = {
            let placed = &self.orders[&number];
            (placed.status.clone(), placed.cart.clone())
        };
        if let Some(status) = status {
            if status == "cancelled" && before != "cancelled" {
                self.restock(&cart, true);
            }
            if before == "cancelled" && status != "cancelled" {
                self.restock(&cart, false);
            }
            let placed = self.orders.get_mut(&number).unwrap();
            placed.status = status.to_owned();
            // WooCommerce records the paid date when an order turns processing or completed.
            if ["processing", "completed"].contains(&status) && placed.date_paid.is_none() {
                placed.date_paid = Some(now_local());
            }
        }
        // `payment_complete` completes only an order that "needs payment" (pending or failed):
        // on the on-hold order an offline gateway leaves, it answers 200 and writes nothing but
        // the transaction id (measured on the real 10.9.4).
        if input["set_paid"].as_bool() == Some(true) {
            let placed = self.orders.get_mut(&number).unwrap();
            if ["pending", "failed"].contains(&placed.status.as_str()) {
                placed.status = "processing".to_owned();
                placed.date_paid = Some(now_local());
            }
        }
        if let Some(reference) = input["transaction_id"].as_str() {
            self.orders.get_mut(&number).unwrap().transaction_id = reference.to_owned();
        }
        let placed = &self.orders[&number];
        let order = json!({
            "id": number,
            "parent_id": 0,
            "status": placed.status,
            "currency": self.currency.as_deref().unwrap_or("USD"),
            "payment_method": placed.payment_method,
            "transaction_id": placed.transaction_id,
            "date_paid": placed.date_paid,
            "date_paid_gmt": placed.date_paid,
            "set_paid": false,
            "line_items": cart["items"].as_array().into_iter().flatten().map(|item| json!({
                "product_id": item["id"], "quantity": item["quantity"], "sku": item["sku"]
            })).collect::<Vec<_>>(),
        });
        let order = match list(query_map(uri).get("_fields")) {
            Some(fields) => Value::Object(
                order
                    .as_object()
                    .unwrap()
                    .iter()
                    .filter(|(key, _)| fields.contains(key))
                    .map(|(key, value)| (key.clone(), value.clone()))
                    .collect(),
            ),
            None => order,
        };
        json_response(StatusCode::OK, &order, &[])
    }
}
