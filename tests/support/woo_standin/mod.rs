//! A WooCommerce 7.9 stand-in: a real HTTP server on loopback answering the Store API the way
//! the captured fixtures (`fixtures/`, from a real WooCommerce 7.9.0) do: same bodies, same
//! `Cart-Token`/`Nonce`/`X-WP-Total` headers, same error codes. It records every request
//! line it receives and can be switched into faults (429, 5xx, slow, garbage).
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::Response;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

const PRODUCTS: &str = include_str!("fixtures/store-products.json");
const VARIATIONS_OF_11: &str = include_str!("fixtures/store-products-variations-of-11.json");
const CART_EMPTY: &str = include_str!("fixtures/store-cart-get.json");
const CART_WITH_MUG: &str = include_str!("fixtures/store-cart-add-item.json");
const MISSING_NONCE: &str = include_str!("fixtures/store-cart-add-missing-nonce-401-wc79.json");
const INVALID_PRODUCT: &str = include_str!("fixtures/store-cart-add-invalid-id-error.json");

const V3_PRODUCT_VARIABLE: &str = include_str!("fixtures/v3-product-variable.json");
const V3_NOAUTH: &str = include_str!("fixtures/v3-products-noauth-401.json");

const PREFIX: &str = "/wp-json/wc/store/v1";
/// Read-only REST v3 key pair the stand-in accepts (same shape as WooCommerce's).
pub const V3_KEY: &str = "ck_0123456789abcdef0123456789abcdef01234567";
pub const V3_SECRET: &str = "cs_76543210fedcba9876543210fedcba9876543210";
const JWT_HEADER: &str = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9";
const SECRET: &str = "stand-in-signing-secret";

#[derive(Debug, Clone)]
pub enum Fault {
    None,
    RateLimit { retry_after: u32 },
    ServerError,
    Slow(Duration),
    Garbage,
}

struct Item {
    key: String,
    id: u64,
    quantity: u32,
}

struct Inner {
    /// Every product and variation, as Store API JSON.
    products: Vec<Value>,
    categories: Vec<Value>,
    /// Units in stock per purchasable id (simple product or variation).
    stock: HashMap<u64, u32>,
    sessions: HashMap<String, Vec<Item>>,
    requests: Vec<String>,
    /// Headers of every write, to check Nonce/Cart-Token handling.
    write_headers: Vec<HeaderMap>,
    fault: Fault,
    next_session: u64,
    /// Faults hit only POST/DELETE (cart writes), so reads set the stage first.
    writes_only: bool,
    /// Ids whose catalog flags ignore the stock table (a sale happened after the listing).
    stale: Vec<u64>,
}

pub struct WooStandin {
    pub base_url: String,
    inner: Arc<Mutex<Inner>>,
    shutdown: CancellationToken,
}

impl Drop for WooStandin {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

fn hash_hex(parts: &[&str]) -> String {
    let mut hasher = DefaultHasher::new();
    for part in parts {
        part.hash(&mut hasher);
    }
    format!("{:016x}", hasher.finish())
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// A token shaped like WooCommerce's HS256 JWT (`user_id`, `exp` 48 h ahead, `iss`, `iat`).
pub fn token_for(user_id: &str, exp: u64) -> String {
    let payload = URL_SAFE_NO_PAD.encode(
        json!({"user_id": user_id, "exp": exp, "iss": "wc/store/v1", "iat": exp - 172_800})
            .to_string(),
    );
    let signature = URL_SAFE_NO_PAD.encode(hash_hex(&[SECRET, JWT_HEADER, &payload]));
    format!("{JWT_HEADER}.{payload}.{signature}")
}

/// The session a token names, when its signature and expiry hold.
fn verify(token: &str) -> Option<String> {
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

fn nonce_for(user_id: &str) -> String {
    hash_hex(&["nonce", user_id])[..10].to_owned()
}

fn query_map(uri: &Uri) -> HashMap<String, String> {
    url::form_urlencoded::parse(uri.query().unwrap_or("").as_bytes())
        .map(|(key, value)| (key.into_owned(), value.into_owned()))
        .collect()
}

fn list(value: Option<&String>) -> Option<Vec<String>> {
    value.map(|text| {
        text.split(',')
            .map(|part| part.trim().to_owned())
            .filter(|part| !part.is_empty())
            .collect()
    })
}

fn json_response(status: StatusCode, body: &Value, headers: &[(&str, String)]) -> Response {
    let mut builder = Response::builder()
        .status(status)
        .header("content-type", "application/json; charset=UTF-8")
        .header("x-robots-tag", "noindex")
        .header(
            "access-control-expose-headers",
            "X-WP-Total, X-WP-TotalPages, Link",
        );
    for (name, value) in headers {
        builder = builder.header(*name, value);
    }
    builder.body(Body::from(body.to_string())).unwrap()
}

fn error(status: StatusCode, code: &str, message: &str) -> Response {
    json_response(
        status,
        &json!({"code": code, "message": message, "data": {"status": status.as_u16()}}),
        &[],
    )
}

fn amount(value: &Value) -> i64 {
    value
        .as_str()
        .and_then(|text| text.parse().ok())
        .unwrap_or(0)
}

impl Inner {
    fn product(&self, id: u64) -> Option<&Value> {
        self.products.iter().find(|p| p["id"].as_u64() == Some(id))
    }

    fn ancestors(&self, id: u64) -> Vec<u64> {
        let mut out = vec![id];
        let mut current = id;
        while let Some(parent) = self
            .categories
            .iter()
            .find(|c| c["id"].as_u64() == Some(current))
            .and_then(|c| c["parent"].as_u64())
            .filter(|parent| *parent != 0 && out.len() < 10)
        {
            out.push(parent);
            current = parent;
        }
        out
    }

    /// Stock flags follow the stand-in's stock table, like WooCommerce's own lookups.
    fn with_stock(&self, product: &Value) -> Value {
        let mut product = product.clone();
        if let Some(id) = product["id"].as_u64()
            && let Some(units) = self.stock.get(&id)
            && !self.stale.contains(&id)
        {
            product["is_in_stock"] = json!(*units > 0);
            product["add_to_cart"]["maximum"] = json!(*units);
            product["low_stock_remaining"] = if *units == 0 { json!(0) } else { Value::Null };
        }
        product
    }

    fn price_bounds(&self, product: &Value) -> (i64, i64) {
        let prices = &product["prices"];
        match prices["price_range"].as_object() {
            Some(range) => (amount(&range["min_amount"]), amount(&range["max_amount"])),
            None => (amount(&prices["price"]), amount(&prices["price"])),
        }
    }

    fn products_route(&self, uri: &Uri) -> Response {
        let query = query_map(uri);
        let per_page: i64 = query
            .get("per_page")
            .map(|v| v.parse().unwrap_or(-1))
            .unwrap_or(10);
        if !(1..=100).contains(&per_page) {
            return json_response(
                StatusCode::BAD_REQUEST,
                &json!({"code":"rest_invalid_param","message":"Invalid parameter(s): per_page","data":{"status":400,"params":{"per_page":"per_page must be between 1 (inclusive) and 100 (inclusive)"},"details":{"per_page":{"code":"rest_invalid_param","message":"per_page must be between 1 (inclusive) and 100 (inclusive)","data":null}}}}),
                &[],
            );
        }
        let page: i64 = query
            .get("page")
            .map(|v| v.parse().unwrap_or(0))
            .unwrap_or(1);
        if page < 1 {
            return error(
                StatusCode::BAD_REQUEST,
                "rest_invalid_param",
                "Invalid parameter(s): page",
            );
        }
        let variations = query.get("type").map(String::as_str) == Some("variation");
        let include = list(query.get("include"));
        let skus = list(query.get("sku"));
        let slugs = list(query.get("slug"));
        let parents = list(query.get("parent"));
        let categories = list(query.get("category"));
        let search = query.get("search").map(|s| s.to_lowercase());
        let min = query.get("min_price").and_then(|v| v.parse::<i64>().ok());
        let max = query.get("max_price").and_then(|v| v.parse::<i64>().ok());
        let mut hits: Vec<Value> = self
            .products
            .iter()
            .filter(|p| (p["type"] == "variation") == variations)
            .filter(|p| {
                include.as_ref().is_none_or(|ids| {
                    ids.iter()
                        .any(|id| p["id"].as_u64().map(|n| n.to_string()) == Some(id.clone()))
                })
            })
            .filter(|p| {
                skus.as_ref()
                    .is_none_or(|skus| skus.iter().any(|sku| p["sku"].as_str() == Some(sku)))
            })
            .filter(|p| {
                slugs
                    .as_ref()
                    .is_none_or(|slugs| slugs.iter().any(|slug| p["slug"].as_str() == Some(slug)))
            })
            .filter(|p| {
                parents.as_ref().is_none_or(|parents| {
                    parents
                        .iter()
                        .any(|id| p["parent"].as_u64().map(|n| n.to_string()) == Some(id.clone()))
                })
            })
            .filter(|p| {
                categories.as_ref().is_none_or(|wanted| {
                    p["categories"].as_array().unwrap().iter().any(|c| {
                        self.ancestors(c["id"].as_u64().unwrap())
                            .iter()
                            .any(|id| wanted.contains(&id.to_string()))
                    })
                })
            })
            .filter(|p| {
                search.as_ref().is_none_or(|needle| {
                    ["name", "description", "sku"].iter().any(|field| {
                        p[field]
                            .as_str()
                            .unwrap_or("")
                            .to_lowercase()
                            .contains(needle.as_str())
                    })
                })
            })
            .filter(|p| {
                let (low, high) = self.price_bounds(p);
                min.is_none_or(|min| high >= min) && max.is_none_or(|max| low <= max)
            })
            .map(|p| self.with_stock(p))
            .collect();
        hits.sort_by_key(|p| std::cmp::Reverse(p["id"].as_u64()));
        let total = hits.len() as i64;
        let pages = (total + per_page - 1) / per_page;
        if page > 1 && page > pages {
            return error(
                StatusCode::BAD_REQUEST,
                "rest_post_invalid_page_number",
                "The page number requested is larger than the number of pages available.",
            );
        }
        let body: Vec<Value> = hits
            .into_iter()
            .skip(((page - 1) * per_page) as usize)
            .take(per_page as usize)
            .collect();
        json_response(
            StatusCode::OK,
            &Value::Array(body),
            &[
                ("x-wp-total", total.to_string()),
                ("x-wp-totalpages", pages.to_string()),
            ],
        )
    }

    fn cart_json(&self, user: &str) -> Value {
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
            out["variation"] = json!([]);
            if let Some(parent) = product["parent"].as_u64().filter(|p| *p != 0) {
                let parent = self.product(parent).unwrap();
                let reference = parent["variations"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|v| v["id"].as_u64() == Some(item.id))
                    .unwrap();
                out["variation"] = Value::Array(
                    reference["attributes"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|pair| json!({"attribute": pair["name"], "value": pair["value"]}))
                        .collect(),
                );
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
        cart
    }

    fn session_headers(&self, user: &str) -> Vec<(&'static str, String)> {
        let nonce = nonce_for(user);
        vec![
            ("nonce", nonce.clone()),
            ("nonce-timestamp", now().to_string()),
            ("user-id", "0".to_owned()),
            ("cart-token", token_for(user, now() + 172_800)),
            ("x-wc-store-api-nonce", nonce),
        ]
    }

    fn cart_route(
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
        let invalid_key = || json!({"code":"woocommerce_rest_cart_invalid_key","message":"Cart item no longer exists or is invalid.","data":{"status":409}});
        match (method.clone(), path) {
            (Method::DELETE, "/cart/items") => {
                self.sessions.insert(user, Vec::new());
                reply(StatusCode::OK, json!([]))
            }
            (Method::POST, "/cart/add-item") => {
                let id = input["id"].as_u64().unwrap_or(0);
                let quantity = input["quantity"].as_u64().unwrap_or(1) as u32;
                let product = self.product(id).cloned();
                let Some(product) = product.filter(|p| p["type"] != "variable") else {
                    return reply(
                        StatusCode::BAD_REQUEST,
                        serde_json::from_str(INVALID_PRODUCT).unwrap(),
                    );
                };
                let units = self.stock.get(&id).copied().unwrap_or(9999);
                if units == 0 {
                    let name = match product["variation"].as_str().filter(|v| !v.is_empty()) {
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
                    };
                    return reply(
                        StatusCode::BAD_REQUEST,
                        json!({"code":"woocommerce_rest_product_out_of_stock","message":format!("You cannot add &quot;{name}&quot; to the cart because the product is out of stock."),"data":{"status":400}}),
                    );
                }
                let items = self.sessions.get_mut(&user).unwrap();
                let existing = items.iter().position(|item| item.id == id);
                let already = existing.map(|i| items[i].quantity).unwrap_or(0);
                if already + quantity > units {
                    return reply(
                        StatusCode::BAD_REQUEST,
                        json!({"code":"invalid_quantity","message":format!("The maximum quantity that can be added to the cart is {units}"),"data":{"status":400}}),
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
                reply(StatusCode::CREATED, self.cart_json(&user))
            }
            (Method::POST, "/cart/update-item") => {
                let key = input["key"].as_str().unwrap_or("").to_owned();
                let quantity = input["quantity"].as_u64().unwrap_or(1) as u32;
                let Some(index) = self.sessions[&user].iter().position(|item| item.key == key)
                else {
                    return reply(StatusCode::CONFLICT, invalid_key());
                };
                let id = self.sessions[&user][index].id;
                let units = self.stock.get(&id).copied().unwrap_or(9999);
                if quantity > units {
                    return reply(
                        StatusCode::BAD_REQUEST,
                        json!({"code":"invalid_quantity","message":format!("The maximum quantity that can be added to the cart is {units}"),"data":{"status":400}}),
                    );
                }
                self.sessions.get_mut(&user).unwrap()[index].quantity = quantity;
                reply(StatusCode::OK, self.cart_json(&user))
            }
            (Method::POST, "/cart/remove-item") => {
                let key = input["key"].as_str().unwrap_or("");
                let items = self.sessions.get_mut(&user).unwrap();
                let Some(index) = items.iter().position(|item| item.key == key) else {
                    return reply(StatusCode::CONFLICT, invalid_key());
                };
                items.remove(index);
                reply(StatusCode::OK, self.cart_json(&user))
            }
            _ => error(
                StatusCode::NOT_FOUND,
                "rest_no_route",
                "No route was found matching the URL and request method.",
            ),
        }
    }
}

/// Catalog beyond the fixtures: a category tree, a second variable product and a few simple
/// ones, cloned from the fixtures' own shapes so every field stays real.
fn catalog() -> (Vec<Value>, Vec<Value>, HashMap<u64, u32>) {
    let mut products: Vec<Value> = serde_json::from_str(PRODUCTS).unwrap();
    let variations: Vec<Value> = serde_json::from_str(VARIATIONS_OF_11).unwrap();
    let categories = vec![
        json!({"id": 15, "name": "Clothing", "slug": "clothing", "description": "", "parent": 0, "count": 2, "image": null, "review_count": 0, "permalink": "http://127.0.0.1/product-category/clothing/"}),
        json!({"id": 16, "name": "T-Shirts", "slug": "t-shirts", "description": "", "parent": 15, "count": 1, "image": null, "review_count": 0, "permalink": "http://127.0.0.1/product-category/clothing/t-shirts/"}),
        json!({"id": 18, "name": "Hoodies", "slug": "hoodies", "description": "", "parent": 15, "count": 1, "image": null, "review_count": 0, "permalink": "http://127.0.0.1/product-category/clothing/hoodies/"}),
        json!({"id": 19, "name": "Kitchen &amp; Dining", "slug": "kitchen", "description": "", "parent": 0, "count": 4, "image": null, "review_count": 0, "permalink": "http://127.0.0.1/product-category/kitchen/"}),
    ];
    let mug = products[1].clone();
    products[1]["categories"] =
        json!([{"id": 19, "name": "Kitchen &amp; Dining", "slug": "kitchen", "link": ""}]);
    products[1]["description"] = json!("<p>A sturdy mug &amp; a classic.</p>");
    products[1]["images"] = json!([{"id": 7, "src": "http://127.0.0.1/wp-content/uploads/mug.jpg", "thumbnail": "", "srcset": "", "sizes": "", "name": "mug.jpg", "alt": "Mug"}]);
    products[1]["average_rating"] = json!("4.50");
    products[1]["review_count"] = json!(2);
    let mut stock = HashMap::from([
        (10, 7),
        (12, 5),
        (13, 5),
        (14, 5),
        (15, 0),
        (16, 5),
        (17, 5),
    ]);
    for (id, name, sku, price) in [
        (30, "Espresso Cup", "CUP-ESP", "650"),
        (31, "Tea Cup", "CUP-TEA", "700"),
        (32, "Travel Cup", "CUP-TRV", "1500"),
    ] {
        let mut cup = mug.clone();
        cup["id"] = json!(id);
        cup["name"] = json!(name);
        cup["slug"] = json!(name.to_lowercase().replace(' ', "-"));
        cup["sku"] = json!(sku);
        cup["on_sale"] = json!(false);
        cup["permalink"] = json!(format!(
            "http://127.0.0.1/product/{}/",
            name.to_lowercase().replace(' ', "-")
        ));
        for key in ["price", "regular_price", "sale_price"] {
            cup["prices"][key] = json!(price);
        }
        cup["categories"] =
            json!([{"id": 19, "name": "Kitchen &amp; Dining", "slug": "kitchen", "link": ""}]);
        products.push(cup);
        stock.insert(id, 50);
    }
    // A hoodie with a global (taxonomy) attribute: variations name terms by slug.
    let mut hoodie = products[0].clone();
    hoodie["id"] = json!(20);
    hoodie["name"] = json!("Zip Hoodie");
    hoodie["slug"] = json!("zip-hoodie");
    hoodie["sku"] = json!("HOOD");
    hoodie["permalink"] = json!("http://127.0.0.1/product/zip-hoodie/");
    hoodie["prices"]["price"] = json!("4500");
    hoodie["prices"]["price_range"] = json!({"min_amount": "4500", "max_amount": "4800"});
    hoodie["categories"] = json!([{"id": 18, "name": "Hoodies", "slug": "hoodies", "link": ""}]);
    hoodie["attributes"] = json!([{"id": 3, "name": "Colour", "taxonomy": "pa_colour", "has_variations": true, "terms": [{"id": 31, "name": "Forest Green", "slug": "forest-green"}, {"id": 32, "name": "Navy", "slug": "navy"}]}]);
    hoodie["variations"] = json!([{"id": 21, "attributes": [{"name": "Colour", "value": "forest-green"}]}, {"id": 22, "attributes": [{"name": "Colour", "value": "navy"}]}]);
    products.push(hoodie);
    for (id, slug, sku, price, variation) in [
        (
            21,
            "zip-hoodie-forest-green",
            "HOOD-GRN",
            "4500",
            "Colour: Forest Green",
        ),
        (22, "zip-hoodie-navy", "HOOD-NVY", "4800", "Colour: Navy"),
    ] {
        let mut v = variations[0].clone();
        v["id"] = json!(id);
        v["parent"] = json!(20);
        v["name"] = json!("Zip Hoodie");
        v["slug"] = json!(slug);
        v["sku"] = json!(sku);
        v["variation"] = json!(variation);
        v["permalink"] = json!(format!(
            "http://127.0.0.1/product/zip-hoodie/?attribute_pa_colour={}",
            &slug[11..]
        ));
        for key in ["price", "regular_price", "sale_price"] {
            v["prices"][key] = json!(price);
        }
        products.push(v);
        stock.insert(id, 3);
    }
    products.extend(variations);
    stock.entry(10).or_insert(7);
    (products, categories, stock)
}

async fn handle(
    State(inner): State<Arc<Mutex<Inner>>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let fault = {
        let mut inner = inner.lock().unwrap();
        inner.requests.push(format!(
            "{method} {}",
            uri.path_and_query().map(|pq| pq.as_str()).unwrap_or("")
        ));
        if inner.writes_only && method == Method::GET {
            Fault::None
        } else {
            inner.fault.clone()
        }
    };
    match fault {
        Fault::None => {}
        Fault::RateLimit { retry_after } => {
            return Response::builder()
                .status(StatusCode::TOO_MANY_REQUESTS)
                .header("retry-after", retry_after.to_string())
                .header("ratelimit-limit", "25")
                .header("ratelimit-remaining", "0")
                .header("ratelimit-reset", retry_after.to_string())
                .header("ratelimit-retry-after", retry_after.to_string())
                .header("content-type", "application/json; charset=UTF-8")
                .body(Body::from(
                    r#"{"code":"rate_limit_exceeded","message":"Too many requests. Please wait and try again.","data":{"status":429}}"#,
                ))
                .unwrap();
        }
        Fault::ServerError => {
            return Response::builder()
                .status(StatusCode::BAD_GATEWAY)
                .header("content-type", "text/html")
                .body(Body::from("<html><body>502 Bad Gateway</body></html>"))
                .unwrap();
        }
        Fault::Slow(delay) => tokio::time::sleep(delay).await,
        Fault::Garbage => {
            return Response::builder()
                .status(StatusCode::OK)
                .header("content-type", "application/json; charset=UTF-8")
                .header("x-wp-total", "3")
                .body(Body::from(
                    "<br />\n<b>Fatal error</b>: Allowed memory size exhausted{\"id\":",
                ))
                .unwrap();
        }
    }
    if method == Method::GET && uri.path() == "/wp-json/wc/v3/products" {
        return v3_products(&uri, &headers);
    }
    let Some(path) = uri.path().strip_prefix(PREFIX) else {
        return error(
            StatusCode::NOT_FOUND,
            "rest_no_route",
            "No route was found matching the URL and request method.",
        );
    };
    let mut inner = inner.lock().unwrap();
    match (method.clone(), path) {
        (Method::GET, "/products") => inner.products_route(&uri),
        (Method::GET, "/products/categories") => {
            json_response(StatusCode::OK, &Value::Array(inner.categories.clone()), &[])
        }
        (_, p) if p.starts_with("/cart") => inner.cart_route(&method, p, &headers, &body),
        _ => error(
            StatusCode::NOT_FOUND,
            "rest_no_route",
            "No route was found matching the URL and request method.",
        ),
    }
}

/// `GET /wc/v3/products`: Basic auth with the stand-in's key pair, `include`, `_fields`.
fn v3_products(uri: &Uri, headers: &HeaderMap) -> Response {
    let expected = format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(format!("{V3_KEY}:{V3_SECRET}"))
    );
    if headers.get("authorization").and_then(|v| v.to_str().ok()) != Some(expected.as_str()) {
        return json_response(
            StatusCode::UNAUTHORIZED,
            &serde_json::from_str(V3_NOAUTH).unwrap(),
            &[],
        );
    }
    let tee: Value = serde_json::from_str(V3_PRODUCT_VARIABLE).unwrap();
    let mut with_default = tee.clone();
    with_default["default_attributes"] = json!([
        {"id": 0, "name": "Size", "option": "L"},
        {"id": 0, "name": "Color", "option": "Blue"}
    ]);
    let mut hoodie = tee;
    hoodie["id"] = json!(20);
    hoodie["default_attributes"] = json!([{"id": 3, "name": "Colour", "option": "Navy"}]);
    let query = query_map(uri);
    let include = list(query.get("include")).unwrap_or_default();
    let fields = list(query.get("_fields"));
    let body: Vec<Value> = [with_default, hoodie]
        .into_iter()
        .filter(|p| include.is_empty() || include.contains(&p["id"].to_string()))
        .map(|p| match &fields {
            Some(fields) => Value::Object(
                p.as_object()
                    .unwrap()
                    .iter()
                    .filter(|(k, _)| fields.contains(k))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect(),
            ),
            None => p,
        })
        .collect();
    let total = body.len().to_string();
    json_response(
        StatusCode::OK,
        &Value::Array(body),
        &[("x-wp-total", total), ("x-wp-totalpages", "1".to_owned())],
    )
}

impl WooStandin {
    pub async fn start() -> Self {
        let (products, categories, stock) = catalog();
        let inner = Arc::new(Mutex::new(Inner {
            products,
            categories,
            stock,
            sessions: HashMap::new(),
            requests: Vec::new(),
            write_headers: Vec::new(),
            fault: Fault::None,
            next_session: 0,
            stale: Vec::new(),
            writes_only: false,
        }));
        let app = Router::new().fallback(handle).with_state(inner.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let shutdown = CancellationToken::new();
        let token = shutdown.clone();
        tokio::spawn(async move {
            axum::serve(listener, app)
                .with_graceful_shutdown(async move { token.cancelled().await })
                .await
                .unwrap();
        });
        Self {
            base_url: format!("http://{addr}"),
            inner,
            shutdown,
        }
    }

    /// A bridge config pointing at this stand-in; extra `[store]` lines may be appended.
    pub fn config(&self, extra_store_lines: &str) -> String {
        format!(
            "[store]\nplatform = \"woocommerce\"\nbase_url = \"{}\"\ncurrency = \"USD\"\nname = \"Stand-in Woo\"\ntimeout_ms = 400\n{extra_store_lines}\n",
            self.base_url
        )
    }

    pub fn requests(&self) -> Vec<String> {
        self.inner.lock().unwrap().requests.clone()
    }

    pub fn clear_requests(&self) {
        self.inner.lock().unwrap().requests.clear();
    }

    pub fn write_headers(&self) -> Vec<HeaderMap> {
        self.inner.lock().unwrap().write_headers.clone()
    }

    pub fn set_fault(&self, fault: Fault) {
        let mut inner = self.inner.lock().unwrap();
        inner.fault = fault;
        inner.writes_only = false;
    }

    pub fn set_write_fault(&self, fault: Fault) {
        let mut inner = self.inner.lock().unwrap();
        inner.fault = fault;
        inner.writes_only = true;
    }

    pub fn set_stock(&self, id: u64, units: u32) {
        self.inner.lock().unwrap().stock.insert(id, units);
    }

    /// Changes stock for carts only; the catalog keeps showing the item as before.
    pub fn set_stock_behind_catalog(&self, id: u64, units: u32) {
        let mut inner = self.inner.lock().unwrap();
        inner.stock.insert(id, units);
        inner.stale.push(id);
    }

    /// Number of items in every live session (to check a cancelled cart was emptied).
    pub fn session_items(&self) -> Vec<usize> {
        self.inner
            .lock()
            .unwrap()
            .sessions
            .values()
            .map(Vec::len)
            .collect()
    }
}
