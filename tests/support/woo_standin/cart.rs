//! The stand-in cart: Cart-Token sessions, the WooCommerce 7.9 nonce rule (stricter than
//! 10.9, which skips the Nonce check when the Cart-Token is valid), cart routes. Bodies,
//! error codes and messages are those of a real WooCommerce 10.9.4 (tests/real_woo.rs).

use super::catalog::amount;
use super::*;

const CART_EMPTY: &str = include_str!("fixtures/store-cart-get.json");
const CART_WITH_MUG: &str = include_str!("fixtures/store-cart-add-item.json");
const MISSING_NONCE: &str = include_str!("fixtures/store-cart-add-missing-nonce-401-wc79.json");
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

pub(super) fn nonce_for(user_id: &str) -> String {
    hash_hex(&["nonce", user_id])[..10].to_owned()
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
        cart
    }

    pub(super) fn session_headers(&self, user: &str) -> Vec<(&'static str, String)> {
        let items = self.sessions.get(user).map(Vec::as_slice).unwrap_or(&[]);
        // Empty for an empty cart, as on 10.9; 10.9 no longer sends X-WC-Store-API-Nonce.
        let cart_hash = if items.is_empty() {
            String::new()
        } else {
            let parts: Vec<String> = items
                .iter()
                .map(|item| format!("{}:{}", item.key, item.quantity))
                .collect();
            hash_hex(&parts.iter().map(String::as_str).collect::<Vec<_>>())
        };
        vec![
            ("nonce", nonce_for(user)),
            ("nonce-timestamp", now().to_string()),
            ("user-id", "0".to_owned()),
            ("cart-token", token_for(user, now() + 172_800)),
            ("cart-hash", cart_hash),
        ]
    }

    pub(super) fn cart_route(
        &mut self,
        method: &Method,
        path: &str,
        headers: &HeaderMap,
        body: &Bytes,
    ) -> Response {
        let presented = headers
            .get("cart-token")
            .and_then(|v| v.to_str().ok())
            .and_then(verify);
        let user = match presented {
            Some(user) => user,
            None => {
                self.next_session += 1;
                format!(
                    "t_{}",
                    hash_hex(&["session", &self.next_session.to_string()])
                )
            }
        };
        self.sessions.entry(user.clone()).or_default();
        let session_headers = self.session_headers(&user);
        let reply =
            |status: StatusCode, body: Value| json_response(status, &body, &session_headers);
        if *method == Method::GET && path == "/cart" {
            return reply(StatusCode::OK, self.cart_json(&user));
        }
        // WooCommerce 7.9 checks the nonce on every cart write, token or not.
        self.write_headers.push(headers.clone());
        match headers.get("nonce").and_then(|v| v.to_str().ok()) {
            None => {
                return reply(
                    StatusCode::UNAUTHORIZED,
                    serde_json::from_str(MISSING_NONCE).unwrap(),
                );
            }
            Some(nonce) if nonce != nonce_for(&user) => {
                return reply(
                    StatusCode::FORBIDDEN,
                    json!({"code":"woocommerce_rest_invalid_nonce","message":"Nonce is invalid.","data":{"status":403}}),
                );
            }
            Some(_) => {}
        }
        let input: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
        let (status, body) = self.cart_write(method, path, &user, &input);
        // The headers describe the session after the write (Cart-Hash).
        json_response(status, &body, &self.session_headers(&user))
    }

    fn cart_write(
        &mut self,
        method: &Method,
        path: &str,
        user: &str,
        input: &Value,
    ) -> (StatusCode, Value) {
        // 10.9 hands the current cart back with an unknown key.
        let invalid_key = |message: &str, cart: Value| json!({"code":"woocommerce_rest_cart_invalid_key","message":message,"data":{"status":409,"cart":cart}});
        match (method.clone(), path) {
            (Method::DELETE, "/cart/items") => {
                self.sessions.insert(user.to_owned(), Vec::new());
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
            _ => (
                StatusCode::NOT_FOUND,
                json!({"code": "rest_no_route", "message": "No route was found matching the URL and request method.", "data": {"status": 404}}),
            ),
        }
    }
}
