//! The stand-in cart: Cart-Token sessions, the WooCommerce 10.9.4 Nonce rule (none with a
//! valid token, the one guest Nonce without), cart routes and `/batch`. Bodies, error codes
//! and messages are those of a real WooCommerce 10.9.4 (tests/suite/real_woo runs one).

use super::catalog::amount;
use super::*;

const CART_EMPTY: &str = include_str!("fixtures/store-cart-get.json");
const CART_WITH_MUG: &str = include_str!("fixtures/store-cart-add-item.json");
const MISSING_NONCE: &str = include_str!("fixtures/store-cart-add-missing-nonce-401-wc79.json");
const BATCH_TOO_MANY: &str = r#"{"code":"rest_invalid_param","message":"Invalid parameter(s): requests","data":{"status":400,"params":{"requests":"requests must contain at most 25 items."},"details":{"requests":{"code":"rest_too_many_items","message":"requests must contain at most 25 items.","data":null}}}}"#;
const BATCH_FATAL: &str = r#"{"code":"internal_server_error","message":"<p>There has been a critical error on this website.</p>","data":{"status":500,"error":{"type":1,"message":"Uncaught TypeError: Automattic\\WooCommerce\\StoreApi\\Utilities\\JsonWebToken::from_base_64_url(): Argument #1 ($string) must be of type string, null given"}}}"#;
/// WooCommerce 10.9.4's guest nonce is one value for every guest session during a nonce
/// tick (`wp_create_nonce('wc_store_api')` for user 0), as captured.
pub const GUEST_NONCE: &str = "ca738d8464";
const JWT_HEADER: &str = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9";
const SECRET: &str = "stand-in-signing-secret";

pub(super) fn hash_hex(parts: &[&str]) -> String {
    let mut hasher = DefaultHasher::new();
    for part in parts {
        part.hash(&mut hasher);
    }
    format!("{:016x}", hasher.finish())
}

pub(super) fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// A token shaped like WooCommerce's HS256 JWT (`user_id`, `exp` 48 h ahead, `iss`, `iat`).
pub fn token_for(user_id: &str, exp: u64) -> String {
    let payload = URL_SAFE_NO_PAD.encode(
        json!({"user_id": user_id, "exp": exp, "iss": "store-api", "iat": exp - 172_800})
            .to_string(),
    );
    let signature = URL_SAFE_NO_PAD.encode(hash_hex(&[SECRET, JWT_HEADER, &payload]));
    format!("{JWT_HEADER}.{payload}.{signature}")
}

/// The session a token names, when its signature and expiry hold.
pub(super) fn verify(token: &str) -> Option<String> {
    let mut parts = token.split('.');
    let (header, payload, signature) = (parts.next()?, parts.next()?, parts.next()?);
    if URL_SAFE_NO_PAD.encode(hash_hex(&[SECRET, header, payload])) != signature {
        return None;
    }
    let claims: Value = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(payload).ok()?).ok()?;
    if claims["exp"].as_u64()? <= now() {
        return None;
    }
    claims["user_id"].as_str().map(str::to_owned)
}

impl Inner {
    /// How WooCommerce names an item in its messages: "Logo Tee - M, Red".
    fn display_name(product: &Value) -> String {
        match product["variation"].as_str().filter(|v| !v.is_empty()) {
            Some(variation) => format!(
                "{} - {}",
                product["name"].as_str().unwrap(),
                variation
                    .split(", ")
                    .map(|pair| pair.split(": ").nth(1).unwrap_or(""))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            None => product["name"].as_str().unwrap().to_owned(),
        }
    }

    /// A cart item's `variation`: the parent's reference pairs, with taxonomy slugs turned
    /// into term names (10.9: `{"raw_attribute":"attribute_pa_color","attribute":"Color","value":"Azul"}`).
    fn item_variation(parent: &Value, item_id: u64) -> Value {
        let reference = parent["variations"]
            .as_array()
            .unwrap()
            .iter()
            .find(|v| v["id"].as_u64() == Some(item_id))
            .unwrap();
        let attributes = parent["attributes"].as_array().cloned().unwrap_or_default();
        Value::Array(
            reference["attributes"]
                .as_array()
                .unwrap()
                .iter()
                .map(|pair| {
                    let attribute = attributes.iter().find(|a| a["name"] == pair["name"]);
                    let taxonomy = attribute
                        .and_then(|a| a["taxonomy"].as_str())
                        .filter(|t| !t.is_empty());
                    let (raw, value) = match taxonomy {
                        Some(taxonomy) => (
                            format!("attribute_{taxonomy}"),
                            attribute
                                .and_then(|a| a["terms"].as_array())
                                .and_then(|terms| terms.iter().find(|t| t["slug"] == pair["value"]))
                                .map(|t| t["name"].clone())
                                .unwrap_or_else(|| pair["value"].clone()),
                        ),
                        None => (
                            format!(
                                "attribute_{}",
                                pair["name"].as_str().unwrap().to_lowercase()
                            ),
                            pair["value"].clone(),
                        ),
                    };
                    json!({"raw_attribute": raw, "attribute": pair["name"], "value": value})
                })
                .collect(),
        )
    }

    pub(super) fn cart_json(&self, user: &str) -> Value {
        let mut cart: Value = serde_json::from_str(CART_EMPTY).unwrap();
        let template: Value = serde_json::from_str(CART_WITH_MUG).unwrap();
        let mut items = Vec::new();
        let mut total = 0;
        let mut count = 0;
        for item in self.sessions.get(user).map(Vec::as_slice).unwrap_or(&[]) {
            let product = self.product(item.id).unwrap();
            let mut out = template["items"][0].clone();
            let price = amount(&product["prices"]["price"]);
            let line = price * i64::from(item.quantity);
            total += line;
            count += item.quantity;
            out["key"] = json!(item.key);
            out["id"] = json!(item.id);
            out["quantity"] = json!(item.quantity);
            out["quantity_limits"]["maximum"] =
                json!(self.stock.get(&item.id).copied().unwrap_or(9999));
            out["name"] = product["name"].clone();
            out["sku"] = product["sku"].clone();
            out["permalink"] = product["permalink"].clone();
            out["prices"]["price"] = product["prices"]["price"].clone();
            out["prices"]["regular_price"] = product["prices"]["regular_price"].clone();
            out["prices"]["sale_price"] = product["prices"]["sale_price"].clone();
            out["type"] = product["type"].clone();
            out["variation"] = json!([]);
            if let Some(parent) = product["parent"].as_u64().filter(|p| *p != 0) {
                out["variation"] = Self::item_variation(self.product(parent).unwrap(), item.id);
            }
            out["totals"]["line_subtotal"] = json!(line.to_string());
            out["totals"]["line_total"] = json!(line.to_string());
            items.push(out);
        }
        if !items.is_empty() {
            cart = template;
        }
        cart["items"] = Value::Array(items);
        cart["items_count"] = json!(count);
        for key in ["total_items", "total_price"] {
            cart["totals"][key] = json!(total.to_string());
        }
        // No shipping zone configured: 10.9 answers null, not "0".
        for key in ["total_shipping", "total_shipping_tax"] {
            cart["totals"][key] = Value::Null;
        }
        self.checkout_parts(user, &mut cart);
        cart
    }

    pub(super) fn session_headers(&self, user: &str) -> Vec<(&'static str, String)> {
        vec![
            ("nonce", self.guest_nonce.clone()),
            ("nonce-timestamp", now().to_string()),
            ("user-id", "0".to_owned()),
            ("cart-token", token_for(user, now() + 172_800)),
            ("cart-hash", self.cart_hash(user)),
        ]
    }

    fn cart_hash(&self, user: &str) -> String {
        let items = self.sessions.get(user).map(Vec::as_slice).unwrap_or(&[]);
        if items.is_empty() {
            return String::new();
        }
        let parts: Vec<String> = items
            .iter()
            .map(|item| format!("{}x{}", item.id, item.quantity))
            .collect();
        hash_hex(&[&parts.join(",")]) + &hash_hex(&["hash", &parts.join(",")])
    }

    fn new_session(&mut self) -> String {
        self.next_session += 1;
        let user = format!(
            "t_{}",
            hash_hex(&["session", &self.next_session.to_string()])
        );
        self.sessions.entry(user.clone()).or_default();
        user
    }

    /// The session a valid `Cart-Token` names; a garbage or tampered token counts as none.
    fn presented(headers: &HeaderMap) -> Option<String> {
        headers
            .get("cart-token")
            .and_then(|v| v.to_str().ok())
            .and_then(verify)
    }

    pub(super) fn cart_route(
        &mut self,
        method: &Method,
        path: &str,
        headers: &HeaderMap,
        body: &Bytes,
    ) -> Response {
        if *method == Method::POST && path == "/batch" {
            return self.batch(headers, body);
        }
        let presented = Self::presented(headers);
        let user = match &presented {
            Some(user) => {
                self.sessions.entry(user.clone()).or_default();
                user.clone()
            }
            None => self.new_session(),
        };
        if *method != Method::GET {
            self.write_headers.push(headers.clone());
        }
        let nonce = headers.get("nonce").and_then(|v| v.to_str().ok());
        let input: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
        let (status, body) = self.cart_op(&user, presented.is_some(), nonce, method, path, &input);
        json_response(status, &body, &self.session_headers(&user))
    }

    /// `POST /batch` as WooCommerce 10.9.4 runs it: the outer `Cart-Token` picks the cart, each
    /// sub-request's own headers decide its Nonce check, sub-requests run in order and are
    /// not atomic, 207 even when every one fails.
    fn batch(&mut self, headers: &HeaderMap, body: &Bytes) -> Response {
        let outer = [
            ("nonce", self.guest_nonce.clone()),
            ("nonce-timestamp", now().to_string()),
            ("user-id", "0".to_owned()),
            ("allow", "POST".to_owned()),
        ];
        let input: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
        let Some(requests) = input["requests"].as_array().cloned() else {
            return json_response(
                StatusCode::BAD_REQUEST,
                &json!({"code":"rest_missing_callback_param","message":"Missing parameter(s): requests","data":{"status":400,"params":["requests"]}}),
                &outer,
            );
        };
        if requests.len() > 25 {
            return json_response(
                StatusCode::BAD_REQUEST,
                &serde_json::from_str(BATCH_TOO_MANY).unwrap(),
                &outer,
            );
        }
        for (index, request) in requests.iter().enumerate() {
            let method = request["method"].as_str().unwrap_or("POST");
            if !["POST", "PUT", "PATCH", "DELETE"].contains(&method) {
                let message = format!(
                    "requests[{index}][method] is not one of POST, PUT, PATCH, and DELETE."
                );
                return json_response(
                    StatusCode::BAD_REQUEST,
                    &json!({"code":"rest_invalid_param","message":"Invalid parameter(s): requests","data":{"status":400,"params":{"requests":message},"details":{"requests":{"code":"rest_not_in_enum","message":message,"data":null}}}}),
                    &outer,
                );
            }
            if !request["path"]
                .as_str()
                .unwrap_or("")
                .starts_with("/wc/store")
            {
                return json_response(
                    StatusCode::BAD_REQUEST,
                    &json!({"code":"woocommerce_rest_invalid_path","message":"Invalid path provided.","data":{"status":400}}),
                    &outer,
                );
            }
        }
        let presented = Self::presented(headers);
        let sub_token =
            |request: &Value| request["headers"]["Cart-Token"].as_str().map(str::to_owned);
        if presented.is_none() && requests.iter().any(|r| sub_token(r).is_some()) {
            // The 10.9.4 fatal TypeError (`batch-add-cart-token-in-subrequests`); nothing applied.
            return json_response(
                StatusCode::INTERNAL_SERVER_ERROR,
                &serde_json::from_str(BATCH_FATAL).unwrap(),
                &[],
            );
        }
        self.write_headers.push(headers.clone());
        let user = match &presented {
            Some(user) => {
                self.sessions.entry(user.clone()).or_default();
                user.clone()
            }
            None => self.new_session(),
        };
        let mut responses = Vec::new();
        let mut lines = Vec::new();
        for request in &requests {
            let method: Method = request["method"]
                .as_str()
                .unwrap_or("POST")
                .parse()
                .unwrap();
            let path = request["path"].as_str().unwrap_or("");
            lines.push(format!("{method} {path}"));
            let local = path.strip_prefix("/wc/store/v1").unwrap_or(path);
            // A valid token in the sub-request's own headers skips its Nonce check.
            let authorized = sub_token(request).as_deref().and_then(verify).is_some();
            let nonce = request["headers"]["Nonce"].as_str();
            let (status, body) =
                self.cart_op(&user, authorized, nonce, &method, local, &request["body"]);
            let mut sub_headers = serde_json::Map::new();
            for (name, value) in self.session_headers(&user) {
                let name = match name {
                    "nonce" => "Nonce",
                    "nonce-timestamp" => "Nonce-Timestamp",
                    "user-id" => "User-ID",
                    "cart-token" => "Cart-Token",
                    _ => "Cart-Hash",
                };
                let value = match name {
                    "Nonce-Timestamp" | "User-ID" => json!(value.parse::<u64>().unwrap()),
                    _ => json!(value),
                };
                sub_headers.insert(name.to_owned(), value);
            }
            sub_headers.insert("Cache-Control".to_owned(), json!("no-store"));
            sub_headers.insert("Allow".to_owned(), json!("POST"));
            responses
                .push(json!({"body": body, "status": status.as_u16(), "headers": sub_headers}));
        }
        self.batches.push(lines);
        json_response(
            StatusCode::MULTI_STATUS,
            &json!({ "responses": responses }),
            &outer,
        )
    }

    /// One cart route on one session. `authorized` is a valid Cart-Token on the request:
    /// WooCommerce 10.9.4 then checks no Nonce; without one a write needs the guest Nonce.
    fn cart_op(
        &mut self,
        user: &str,
        authorized: bool,
        nonce: Option<&str>,
        method: &Method,
        path: &str,
        input: &Value,
    ) -> (StatusCode, Value) {
        if *method == Method::GET && path == "/cart" {
            return (StatusCode::OK, self.cart_json(user));
        }
        if *method == Method::GET && path == "/cart/items" {
            return (StatusCode::OK, self.cart_json(user)["items"].clone());
        }
        if !authorized {
            match nonce {
                None => {
                    return (
                        StatusCode::UNAUTHORIZED,
                        serde_json::from_str(MISSING_NONCE).unwrap(),
                    );
                }
                Some(nonce) if nonce != self.guest_nonce => {
                    return (
                        StatusCode::FORBIDDEN,
                        json!({"code":"woocommerce_rest_invalid_nonce","message":"Nonce is invalid.","data":{"status":403}}),
                    );
                }
                Some(_) => {}
            }
        }
        let invalid_key = |message: &str, cart: Value| json!({"code":"woocommerce_rest_cart_invalid_key","message":message,"data":{"status":409,"cart":cart}});
        match (method.clone(), path) {
            (Method::DELETE, "/cart/items") => {
                self.sessions.insert(user.to_owned(), Vec::new());
                self.cart_emptied(user);
                (StatusCode::OK, json!([]))
            }
            (Method::POST, "/cart/add-item") => {
                let id = input["id"].as_u64().unwrap_or(0);
                let quantity = input["quantity"].as_u64().unwrap_or(1) as u32;
                let Some(product) = self.product(id).cloned() else {
                    return (
                        StatusCode::BAD_REQUEST,
                        json!({"code":"woocommerce_rest_cart_invalid_product","message":format!("Product with ID &quot;{id}&quot; was not found and cannot be added to the cart."),"data":{"status":400}}),
                    );
                };
                if product["type"] == "variable" {
                    return (
                        StatusCode::BAD_REQUEST,
                        json!({"code":"woocommerce_rest_missing_attributes","message":"Missing attributes for variable product.","data":{"status":400}}),
                    );
                }
                let name = Self::display_name(&product);
                let units = self.stock.get(&id).copied().unwrap_or(9999);
                if units == 0 {
                    return (
                        StatusCode::BAD_REQUEST,
                        json!({"code":"woocommerce_rest_product_out_of_stock","message":format!("You cannot add &quot;{name}&quot; to the cart because the product is out of stock."),"data":{"status":400}}),
                    );
                }
                let items = self.sessions.get_mut(user).unwrap();
                let existing = items.iter().position(|item| item.id == id);
                let already = existing.map(|i| items[i].quantity).unwrap_or(0);
                // 10.9 names the whole stock, whatever the cart already holds.
                if already + quantity > units {
                    return (
                        StatusCode::BAD_REQUEST,
                        json!({"code":"woocommerce_rest_product_partially_out_of_stock","message":format!("You cannot add that amount of &quot;{name}&quot; to the cart because there is not enough stock ({units} remaining)."),"data":{"status":400}}),
                    );
                }
                match existing {
                    Some(i) => items[i].quantity += quantity,
                    None => items.push(Item {
                        key: format!(
                            "{}{}",
                            hash_hex(&["key", &id.to_string()]),
                            hash_hex(&["key2", &id.to_string()])
                        ),
                        id,
                        quantity,
                    }),
                }
                (StatusCode::CREATED, self.cart_json(user))
            }
            (Method::POST, "/cart/update-item") => {
                let key = input["key"].as_str().unwrap_or("").to_owned();
                let quantity = input["quantity"].as_u64().unwrap_or(1) as u32;
                let Some(index) = self.sessions[user].iter().position(|item| item.key == key)
                else {
                    return (
                        StatusCode::CONFLICT,
                        invalid_key("Cart item does not exist.", self.cart_json(user)),
                    );
                };
                let id = self.sessions[user][index].id;
                let units = self.stock.get(&id).copied().unwrap_or(9999);
                if quantity > units {
                    let name = Self::display_name(self.product(id).unwrap());
                    return (
                        StatusCode::BAD_REQUEST,
                        json!({"code":"invalid_quantity","message":format!("The maximum quantity of &quot;{name}&quot; allowed in the cart is {units}"),"data":{"status":400}}),
                    );
                }
                self.sessions.get_mut(user).unwrap()[index].quantity = quantity;
                (StatusCode::OK, self.cart_json(user))
            }
            (Method::POST, "/cart/remove-item") => {
                let key = input["key"].as_str().unwrap_or("");
                let Some(index) = self.sessions[user].iter().position(|item| item.key == key)
                else {
                    return (
                        StatusCode::CONFLICT,
                        invalid_key(
                            "Cart item no longer exists or is invalid.",
                            self.cart_json(user),
                        ),
                    );
                };
                self.sessions.get_mut(user).unwrap().remove(index);
                (StatusCode::OK, self.cart_json(user))
            }
            _ => self.checkout_op(user, method, path, input).unwrap_or_else(|| {
                (
                    StatusCode::NOT_FOUND,
                    json!({"code": "rest_no_route", "message": "No route was found matching the URL and request method.", "data": {"status": 404}}),
                )
            }),
        }
    }
}
