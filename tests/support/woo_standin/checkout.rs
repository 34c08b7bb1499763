//! The stand-in's checkout routes, shaped like the real WooCommerce 10.9.4 answers in
//! `fixtures/checkout/` (see its README): `cart/update-customer` answers the cart with the
//! addresses and one shipping package whose rates it offers (the first selected), as the
//! store's Brazil/US zone has them (PAC, SEDEX, pickup); `cart/select-shipping-rate` selects
//! an offered rate (one it never offered changes nothing, still 200); `cart/apply-coupon`
//! takes `bcp10` (10 % of each line) in any case and refuses `vencido` (expired) and unknown
//! codes with the store's 400s; `POST /checkout` places the order with `bacs` (on-hold),
//! `cod` (processing) or `pix_test` (pending) and empties the cart; `GET /order/{id}` reads it
//! back with its key and billing email.

use super::cart::hash_hex;
use super::*;

const UPDATED: &str = include_str!("fixtures/checkout/cart-update-customer.json");
const COUPONED: &str = include_str!("fixtures/checkout/cart-apply-coupon.json");
const EXPIRED: &str = include_str!("fixtures/checkout/cart-apply-coupon-expired-400.json");
const UNKNOWN: &str = include_str!("fixtures/checkout/cart-apply-coupon-unknown-400.json");
const PLACED: &str = include_str!("fixtures/checkout/checkout-bacs.json");
const ORDER: &str = include_str!("fixtures/checkout/order-read.json");
const NO_EMAIL: &str = include_str!("fixtures/checkout/order-read-no-email-401.json");

/// The code the store takes (10 % off each line) and the one it holds expired.
pub const COUPON: &str = "bcp10";
pub const EXPIRED_COUPON: &str = "vencido";
/// The zone's rates: `(rate_id, name, method_id, instance_id, price)`.
pub const RATES: [(&str, &str, &str, u64, i64); 3] = [
    ("flat_rate:1", "PAC", "flat_rate", 1, 1500),
    ("flat_rate:2", "SEDEX", "flat_rate", 2, 2990),
    ("local_pickup:4", "Retirar na loja", "local_pickup", 4, 0),
];
/// Countries the one shipping zone covers.
const ZONE: [&str; 2] = ["BR", "US"];

/// A session's checkout side: the addresses given, the selected rate, the coupons.
#[derive(Default)]
pub(super) struct Customer {
    shipping: Option<Value>,
    billing: Option<Value>,
    rate: Option<String>,
    coupons: Vec<String>,
}

/// A placed order: the cart as it was, and how it is read back.
pub(super) struct Placed {
    pub(super) status: String,
    key: String,
    email: String,
    pub(super) cart: Value,
    pub(super) payment_method: String,
    /// Set once REST v3 `set_paid` takes the payment (store time, no offset, as WooCommerce).
    pub(super) date_paid: Option<String>,
    pub(super) transaction_id: String,
}

fn body_of(fixture: &str) -> Value {
    serde_json::from_str::<Value>(fixture).unwrap()["body"].clone()
}

fn coupon_error(message: String) -> (StatusCode, Value) {
    (
        StatusCode::BAD_REQUEST,
        json!({"code": "woocommerce_rest_cart_coupon_error", "message": message, "data": {"status": 400}}),
    )
}

/// 10 % of a line, rounded as WooCommerce rounds cents (half up).
fn tenth(amount: i64) -> i64 {
    (amount * 10 + 50) / 100
}

fn text(value: &Value) -> i64 {
    value
        .as_str()
        .and_then(|text| text.parse().ok())
        .unwrap_or(0)
}

impl Inner {
    /// Rates offered to the session's shipping address (none outside the zone).
    fn offered(&self, user: &str) -> Vec<(&'static str, &'static str, &'static str, u64, i64)> {
        let country = self
            .customers
            .get(user)
            .and_then(|customer| customer.shipping.as_ref())
            .and_then(|address| address["country"].as_str().map(str::to_owned));
        match country {
            Some(country) if ZONE.contains(&country.as_str()) => RATES.to_vec(),
            _ => Vec::new(),
        }
    }

    /// `WC_Cart::empty_cart` (10.9.4) drops the applied coupons and the chosen rates with the
    /// items; the customer's addresses stay.
    pub(super) fn cart_emptied(&mut self, user: &str) {
        if let Some(customer) = self.customers.get_mut(user) {
            customer.coupons.clear();
            customer.rate = None;
        }
    }

    /// Writes the checkout side of a session into its cart answer (`cart_json`'s last step).
    pub(super) fn checkout_parts(&self, user: &str, cart: &mut Value) {
        let has_items = cart["items"]
            .as_array()
            .is_some_and(|items| !items.is_empty());
        cart["needs_shipping"] = json!(has_items);
        let Some(customer) = self.customers.get(user) else {
            return;
        };
        let money = cart["totals"].clone();
        let currency = |mut value: Value| {
            for key in [
                "currency_code",
                "currency_symbol",
                "currency_minor_unit",
                "currency_decimal_separator",
                "currency_thousand_separator",
                "currency_prefix",
                "currency_suffix",
            ] {
                value[key] = money[key].clone();
            }
            value
        };
        // Coupons: each line's 10 %, summed, and the lines' totals net of it.
        let mut discount = 0;
        if !customer.coupons.is_empty() {
            for item in cart["items"].as_array_mut().into_iter().flatten() {
                let subtotal = text(&item["totals"]["line_subtotal"]);
                let off = tenth(subtotal);
                discount += off;
                item["totals"]["line_total"] = json!((subtotal - off).to_string());
            }
        }
        let template = body_of(COUPONED)["coupons"][0].clone();
        cart["coupons"] = json!(
            customer
                .coupons
                .iter()
                .map(|code| {
                    let mut coupon = template.clone();
                    coupon["code"] = json!(code);
                    coupon["totals"] = currency(template["totals"].clone());
                    coupon["totals"]["total_discount"] = json!(discount.to_string());
                    coupon
                })
                .collect::<Vec<_>>()
        );
        let mut shipping = None;
        if let Some(address) = &customer.shipping {
            cart["shipping_address"] = address.clone();
            if let Some(billing) = &customer.billing {
                cart["billing_address"] = billing.clone();
            }
            let updated = body_of(UPDATED);
            let rate_template = updated["shipping_rates"][0]["shipping_rates"][0].clone();
            let offered = self.offered(user);
            let selected = customer
                .rate
                .as_deref()
                .filter(|rate| offered.iter().any(|offer| offer.0 == *rate))
                .or(offered.first().map(|offer| offer.0));
            let items_text = cart["items"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|item| {
                    format!(
                        "{} &times; {}",
                        item["name"].as_str().unwrap_or(""),
                        item["quantity"]
                    )
                })
                .collect::<Vec<_>>()
                .join(", ");
            let rates: Vec<Value> = offered
                .iter()
                .map(|(id, name, method, instance, price)| {
                    let mut rate = currency(rate_template.clone());
                    rate["rate_id"] = json!(id);
                    rate["name"] = json!(name);
                    rate["method_id"] = json!(method);
                    rate["instance_id"] = json!(instance);
                    rate["price"] = json!(price.to_string());
                    rate["meta_data"] = json!([{"key": "Items", "value": items_text}]);
                    rate["selected"] = json!(selected == Some(*id));
                    if selected == Some(*id) {
                        shipping = Some(*price);
                    }
                    rate
                })
                .collect();
            let mut package = updated["shipping_rates"][0].clone();
            package["destination"] = json!({
                "address_1": address["address_1"], "address_2": address["address_2"],
                "city": address["city"], "state": address["state"],
                "postcode": address["postcode"], "country": address["country"]
            });
            package["items"] = json!(
                cart["items"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|item| json!({"key": item["key"], "name": item["name"], "quantity": item["quantity"]}))
                    .collect::<Vec<_>>()
            );
            package["shipping_rates"] = json!(rates);
            cart["shipping_rates"] = if has_items {
                json!([package])
            } else {
                json!([])
            };
            cart["has_calculated_shipping"] = json!(true);
            cart["totals"]["total_shipping"] = json!(shipping.unwrap_or(0).to_string());
            cart["totals"]["total_shipping_tax"] = json!("0");
        }
        let items = text(&cart["totals"]["total_items"]);
        cart["totals"]["total_discount"] = json!(discount.to_string());
        cart["totals"]["total_price"] =
            json!((items - discount + shipping.unwrap_or(0)).to_string());
    }

    /// The checkout writes on a session, past the Nonce check (`cart_op`'s tail).
    pub(super) fn checkout_op(
        &mut self,
        user: &str,
        method: &Method,
        path: &str,
        input: &Value,
    ) -> Option<(StatusCode, Value)> {
        if *method != Method::POST {
            return None;
        }
        match path {
            "/cart/update-customer" => {
                let customer = self.customers.entry(user.to_owned()).or_default();
                let mut shipping = body_of(UPDATED)["shipping_address"].clone();
                let mut billing = body_of(UPDATED)["billing_address"].clone();
                for (address, given, part) in [
                    (
                        &mut shipping,
                        &input["shipping_address"],
                        "shipping_address",
                    ),
                    (&mut billing, &input["billing_address"], "billing_address"),
                ] {
                    for (key, value) in address.as_object_mut().unwrap() {
                        *value = given.get(key.as_str()).cloned().unwrap_or(json!(""));
                    }
                    // A plugin's address fields (Brazilian Market's `csbmw/number`…) are
                    // echoed in the cart's addresses, as the real store does, when the
                    // checkout schema lists them.
                    let listed = self.checkout_schema["schema"]["properties"][part]["properties"]
                        .as_object()
                        .map(|properties| properties.keys().cloned().collect::<Vec<_>>())
                        .unwrap_or_default();
                    for key in listed.iter().filter(|key| key.contains('/')) {
                        address[key.as_str()] =
                            given.get(key.as_str()).cloned().unwrap_or(json!(""));
                    }
                }
                customer.shipping = Some(shipping);
                customer.billing = Some(billing);
                Some((StatusCode::OK, self.cart_json(user)))
            }
            "/cart/select-shipping-rate" => {
                let rate = input["rate_id"].as_str().unwrap_or("").to_owned();
                if self.offered(user).iter().any(|offer| offer.0 == rate) {
                    self.customers.entry(user.to_owned()).or_default().rate = Some(rate);
                }
                Some((StatusCode::OK, self.cart_json(user)))
            }
            "/cart/apply-coupon" => {
                let code = input["code"].as_str().unwrap_or("").to_lowercase();
                let customer = self.customers.entry(user.to_owned()).or_default();
                if code == EXPIRED_COUPON {
                    return Some((StatusCode::BAD_REQUEST, body_of(EXPIRED)));
                }
                if code != COUPON {
                    return Some(coupon_error(text_of(UNKNOWN).replace("nao-existe", &code)));
                }
                if customer.coupons.contains(&code) {
                    return Some(coupon_error(format!(
                        "Coupon code &quot;{code}&quot; has already been applied."
                    )));
                }
                customer.coupons.push(code);
                Some((StatusCode::OK, self.cart_json(user)))
            }
            "/cart/remove-coupon" => {
                let code = input["code"].as_str().unwrap_or("").to_lowercase();
                let customer = self.customers.entry(user.to_owned()).or_default();
                let Some(index) = customer.coupons.iter().position(|held| *held == code) else {
                    return Some(coupon_error(
                        "Coupon cannot be removed because it is not already applied to the cart."
                            .to_owned(),
                    ));
                };
                customer.coupons.remove(index);
                Some((StatusCode::OK, self.cart_json(user)))
            }
            "/checkout" => Some(self.place(user, input)),
            _ => None,
        }
    }

    fn place(&mut self, user: &str, input: &Value) -> (StatusCode, Value) {
        let cart = self.cart_json(user);
        if cart["items"].as_array().is_none_or(Vec::is_empty) {
            return (
                StatusCode::BAD_REQUEST,
                json!({"code": "woocommerce_rest_cart_empty", "message": "Cannot create order from empty cart.", "data": {"status": 400}}),
            );
        }
        let gateway = input["payment_method"].as_str().unwrap_or("");
        let status = match gateway {
            "bacs" => "on-hold",
            "cod" => "processing",
            "pix_test" => "pending",
            "" => {
                return (
                    StatusCode::BAD_REQUEST,
                    json!({"code": "woocommerce_rest_checkout_missing_payment_method", "message": "Please select a payment method.", "data": {"status": 400}}),
                );
            }
            _ => {
                return (
                    StatusCode::BAD_REQUEST,
                    json!({"code": "woocommerce_rest_checkout_payment_method_disabled", "message": "The selected payment method is not available.", "data": {"status": 400}}),
                );
            }
        };
        self.next_order += 1;
        let id = 39 + self.next_order;
        let key = format!("wc_order_{}", &hash_hex(&["order", &id.to_string()])[..13]);
        let email = input["billing_address"]["email"]
            .as_str()
            .unwrap_or("")
            .to_owned();
        let mut answer = body_of(PLACED);
        answer["order_id"] = json!(id);
        answer["status"] = json!(status);
        answer["order_key"] = json!(key);
        answer["order_number"] = json!(id.to_string());
        answer["billing_address"] = cart["billing_address"].clone();
        answer["billing_address"]["email"] = json!(email);
        answer["shipping_address"] = cart["shipping_address"].clone();
        answer["payment_method"] = json!(gateway);
        let redirect = if status == "pending" {
            format!(
                "{}/checkout/order-pay/{id}/?pay_for_order=true&key={key}",
                self.base_url
            )
        } else {
            format!("{}/checkout/order-received/{id}/?key={key}", self.base_url)
        };
        answer["payment_result"]["payment_details"][1]["value"] = json!(redirect);
        answer["payment_result"]["redirect_url"] = json!(redirect);
        for item in cart["items"].as_array().unwrap() {
            let id = item["id"].as_u64().unwrap();
            let quantity = item["quantity"].as_u64().unwrap() as u32;
            if let Some(units) = self.stock.get_mut(&id) {
                *units = units.saturating_sub(quantity);
            }
        }
        self.orders.insert(
            id,
            Placed {
                status: status.to_owned(),
                key,
                email,
                cart,
                payment_method: gateway.to_owned(),
                date_paid: None,
                transaction_id: String::new(),
            },
        );
        // After the order the session's cart is empty; its addresses stay.
        self.sessions.insert(user.to_owned(), Vec::new());
        if let Some(customer) = self.customers.get_mut(user) {
            customer.coupons.clear();
            customer.rate = None;
        }
        (StatusCode::OK, answer)
    }

    /// `GET /order/{id}?key=…&billing_email=…`, as a guest reads their order.
    pub(super) fn order_route(&self, id: &str, uri: &Uri) -> Response {
        let query = query_map(uri);
        let Some(email) = query.get("billing_email").filter(|email| !email.is_empty()) else {
            return json_response(StatusCode::UNAUTHORIZED, &body_of(NO_EMAIL), &[]);
        };
        let placed = id
            .parse::<u64>()
            .ok()
            .and_then(|id| self.orders.get(&id).map(|placed| (id, placed)))
            .filter(|(_, placed)| query.get("key") == Some(&placed.key));
        let Some((id, placed)) = placed else {
            return error(
                StatusCode::NOT_FOUND,
                "woocommerce_rest_invalid_order",
                "Invalid order ID.",
            );
        };
        if *email != placed.email {
            return error(
                StatusCode::UNAUTHORIZED,
                "woocommerce_rest_invalid_billing_email",
                "Invalid billing email provided.",
            );
        }
        let mut order = body_of(ORDER);
        let cart = &placed.cart;
        order["id"] = json!(id);
        order["status"] = json!(placed.status);
        order["coupons"] = cart["coupons"].clone();
        order["shipping_address"] = cart["shipping_address"].clone();
        order["billing_address"] = cart["billing_address"].clone();
        order["billing_address"]["email"] = json!(placed.email);
        order["needs_payment"] = json!(placed.status == "pending");
        order["items"] = json!(
            cart["items"]
                .as_array()
                .unwrap()
                .iter()
                .enumerate()
                .map(|(index, item)| {
                    let mut line = item.clone();
                    line["key"] = json!(placed.key);
                    line["id"] = json!(index + 1);
                    line["quantity_limits"] = json!({"minimum": item["quantity"], "maximum": item["quantity"], "multiple_of": 1, "editable": false});
                    if let Some(line) = line.as_object_mut() {
                        line.remove("extensions");
                    }
                    line
                })
                .collect::<Vec<_>>()
        );
        let totals = &cart["totals"];
        let discount = text(&totals["total_discount"]);
        let mut out = order["totals"].clone();
        for key in [
            "currency_code",
            "currency_symbol",
            "currency_minor_unit",
            "currency_decimal_separator",
            "currency_thousand_separator",
            "currency_prefix",
            "currency_suffix",
        ] {
            out[key] = totals[key].clone();
        }
        out["subtotal"] = totals["total_items"].clone();
        out["total_discount"] = json!(discount.to_string());
        out["total_shipping"] = json!(text(&totals["total_shipping"]).to_string());
        out["total_price"] = totals["total_price"].clone();
        out["total_items"] = json!((text(&totals["total_items"]) - discount).to_string());
        order["totals"] = out;
        json_response(StatusCode::OK, &order, &[])
    }
}

fn text_of(fixture: &str) -> String {
    body_of(fixture)["message"].as_str().unwrap().to_owned()
}
