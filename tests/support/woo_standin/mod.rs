//! A WooCommerce stand-in: a real HTTP server on loopback answering the Store API the way a
//! real WooCommerce 10.9.4 does (the shared `fixtures-real-wc10.9`, and tests/real_woo.rs runs
//! against one): same routes (`/products/{id|slug}`, `/batch` with 207 and per-sub-request
//! answers), same `Cart-Token`/`Nonce`/`X-WP-Total` headers and rules, same error codes and
//! messages. The catalog data is the one captured from WooCommerce 7.9 (`fixtures/`). It records every request
//! line it receives and can be switched into faults (429, 5xx, slow, garbage).

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

mod cart;
mod catalog;
mod checkout;
mod rest_v3;

pub use cart::{GUEST_NONCE, token_for};
pub use catalog::{V3_KEY, V3_SECRET};
pub use checkout::{COUPON, EXPIRED_COUPON, RATES};
pub use rest_v3::{V3_WRITE_KEY, V3_WRITE_SECRET};

const PREFIX: &str = "/wp-json/wc/store/v1";

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
    /// Each request's place in the order of events (arrival, answer), to count rounds by
    /// what happened before what rather than by elapsed time.
    exchanges: Vec<(u64, Option<u64>)>,
    next_event: u64,
    /// Headers of every write, to check Nonce/Cart-Token handling.
    write_headers: Vec<HeaderMap>,
    /// Each `/batch` as its sub-requests' `METHOD path` lines.
    batches: Vec<Vec<String>>,
    /// The one Nonce every guest session gets during a nonce tick.
    guest_nonce: String,
    fault: Fault,
    next_session: u64,
    /// Faults hit only POST/DELETE (cart writes), so reads set the stage first.
    writes_only: bool,
    /// A fault for one write only: the write after this many more (the middle of a
    /// multi-request write), while every other request goes through.
    once: Option<(usize, Fault)>,
    /// Ids whose catalog flags ignore the stock table (a sale happened after the listing).
    stale: Vec<u64>,
    /// Each session's addresses, selected rate and coupons.
    customers: HashMap<String, checkout::Customer>,
    /// Orders placed through `POST /checkout`, by order id.
    orders: HashMap<u64, checkout::Placed>,
    next_order: u64,
    /// This stand-in's own URL, for the links its answers hold.
    base_url: String,
    /// What `OPTIONS /checkout` answers (the route's schema: plugins' checkout fields).
    checkout_schema: Value,
    /// The next `POST /checkout` is refused with this 400 body (a plugin's validation).
    checkout_refusal: Option<Value>,
    /// The `meta_data` REST v3 answers for every order (an NF-e plugin's keys).
    order_meta: Value,
    /// The store's currency when not the captured store's USD (`sell_in`).
    currency: Option<String>,
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
            "X-WP-Total, X-WP-TotalPages, Link, Cart-Token",
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

/// Notes when each request arrived and when its answer was ready (before it is written, so
/// before the bridge can send anything that depends on it).
async fn handle(
    State(inner): State<Arc<Mutex<Inner>>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let index = {
        let mut inner = inner.lock().unwrap();
        let arrived = inner.next_event;
        inner.next_event += 1;
        inner.exchanges.push((arrived, None));
        inner.exchanges.len() - 1
    };
    let response = respond(inner.clone(), method, uri, headers, body).await;
    let currency = inner.lock().unwrap().currency.clone();
    let response = match currency {
        Some(code) => in_currency(response, &code).await,
        None => response,
    };
    let mut inner = inner.lock().unwrap();
    let answered = inner.next_event;
    inner.next_event += 1;
    // Cleared meanwhile (`clear_requests`): nothing to note.
    if let Some(exchange) = inner.exchanges.get_mut(index) {
        exchange.1 = Some(answered);
    }
    response
}

/// The answer as a store selling in `code` gives it: the captured answers' USD replaced.
async fn in_currency(response: Response, code: &str) -> Response {
    let (mut parts, body) = response.into_parts();
    let bytes = axum::body::to_bytes(body, usize::MAX).await.unwrap();
    let text = String::from_utf8_lossy(&bytes)
        .replace(
            r#""currency_code":"USD""#,
            &format!(r#""currency_code":"{code}""#),
        )
        .replace(r#""currency_symbol":"$""#, r#""currency_symbol":"R$""#)
        .replace(r#""currency_prefix":"$""#, r#""currency_prefix":"R$ ""#);
    parts.headers.remove(axum::http::header::CONTENT_LENGTH);
    Response::from_parts(parts, Body::from(text))
}

async fn respond(
    inner: Arc<Mutex<Inner>>,
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
        let once = match inner.once.take() {
            Some((0, fault)) if method != Method::GET => Some(fault),
            Some((skip, fault)) if method != Method::GET => {
                inner.once = Some((skip - 1, fault));
                None
            }
            other => {
                inner.once = other;
                None
            }
        };
        if let Some(fault) = once {
            fault
        } else if inner.writes_only && method == Method::GET {
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
        return catalog::v3_products(&uri, &headers);
    }
    if method == Method::GET
        && let Some(id) = uri.path().strip_prefix("/wp-json/wc/v3/orders/")
    {
        let meta = inner.lock().unwrap().order_meta.clone();
        return catalog::v3_order(id, &headers, meta);
    }
    if method == Method::PUT
        && let Some(id) = uri.path().strip_prefix("/wp-json/wc/v3/orders/")
    {
        return inner
            .lock()
            .unwrap()
            .v3_order_update(id, &uri, &headers, &body);
    }
    let Some(path) = uri.path().strip_prefix(PREFIX) else {
        return error(
            StatusCode::NOT_FOUND,
            "rest_no_route",
            "No route was found matching the URL and request method.",
        );
    };
    let mut inner = inner.lock().unwrap();
    if method == Method::POST
        && path == "/checkout"
        && let Some(refusal) = inner.checkout_refusal.take()
    {
        return json_response(StatusCode::BAD_REQUEST, &refusal, &[]);
    }
    match (method.clone(), path) {
        (Method::OPTIONS, "/checkout") => {
            json_response(StatusCode::OK, &inner.checkout_schema.clone(), &[])
        }
        (Method::GET, "/products") => inner.products_route(&uri),
        (Method::GET, "/products/categories") => {
            json_response(StatusCode::OK, &Value::Array(inner.categories.clone()), &[])
        }
        (Method::GET, p) if p.starts_with("/products/") && p.matches('/').count() == 2 => {
            inner.product_route(&p["/products/".len()..])
        }
        (Method::GET, p) if p.starts_with("/order/") => {
            inner.order_route(&p["/order/".len()..], &uri)
        }
        (_, p) if p.starts_with("/cart") || p == "/batch" || p == "/checkout" => {
            inner.cart_route(&method, p, &headers, &body)
        }
        _ => error(
            StatusCode::NOT_FOUND,
            "rest_no_route",
            "No route was found matching the URL and request method.",
        ),
    }
}

impl WooStandin {
    pub async fn start() -> Self {
        let (products, categories, stock) = catalog::seed_catalog();
        let inner = Arc::new(Mutex::new(Inner {
            products,
            categories,
            stock,
            sessions: HashMap::new(),
            requests: Vec::new(),
            exchanges: Vec::new(),
            next_event: 0,
            write_headers: Vec::new(),
            batches: Vec::new(),
            guest_nonce: GUEST_NONCE.to_owned(),
            fault: Fault::None,
            next_session: 0,
            stale: Vec::new(),
            writes_only: false,
            once: None,
            customers: HashMap::new(),
            orders: HashMap::new(),
            next_order: 0,
            base_url: String::new(),
            // A store without checkout plugins: no additional fields.
            checkout_schema: serde_json::json!({"schema": {"properties": {
                "additional_fields": {"type": "object", "properties": {}}}}}),
            checkout_refusal: None,
            order_meta: serde_json::json!([]),
            currency: None,
        }));
        let app = Router::new().fallback(handle).with_state(inner.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        inner.lock().unwrap().base_url = format!("http://{addr}");
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

    /// What `OPTIONS /checkout` answers from now on.
    pub fn set_checkout_schema(&self, schema: Value) {
        self.inner.lock().unwrap().checkout_schema = schema;
    }

    /// The `meta_data` of every order as REST v3 answers it.
    pub fn set_order_meta(&self, meta: Value) {
        self.inner.lock().unwrap().order_meta = meta;
    }

    /// The store sells in `code` (e.g. "BRL") from now on: prices and totals say so.
    pub fn sell_in(&self, code: &str) {
        self.inner.lock().unwrap().currency = Some(code.to_owned());
    }

    /// An order's status as the store holds it (`wc_order_<n>` or `<n>`).
    pub fn order_status(&self, order: &str) -> Option<String> {
        let number: u64 = order.trim_start_matches("wc_order_").parse().ok()?;
        let inner = self.inner.lock().unwrap();
        inner
            .orders
            .get(&number)
            .map(|placed| placed.status.clone())
    }

    /// An order's `date_paid` and `transaction_id`, once REST v3 marked it paid.
    pub fn order_payment(&self, order: &str) -> Option<(String, String)> {
        let number: u64 = order.trim_start_matches("wc_order_").parse().ok()?;
        let inner = self.inner.lock().unwrap();
        let placed = inner.orders.get(&number)?;
        Some((placed.date_paid.clone()?, placed.transaction_id.clone()))
    }

    /// The number of the order placed last (`POST /checkout`).
    pub fn last_order(&self) -> Option<String> {
        let inner = self.inner.lock().unwrap();
        inner.orders.keys().max().map(u64::to_string)
    }

    /// Units in stock of a purchasable id.
    pub fn stock(&self, id: u64) -> Option<u32> {
        self.inner.lock().unwrap().stock.get(&id).copied()
    }

    /// Refuses the next `POST /checkout` with this 400 body.
    pub fn refuse_next_checkout(&self, body: Value) {
        self.inner.lock().unwrap().checkout_refusal = Some(body);
    }

    pub fn requests(&self) -> Vec<String> {
        self.inner.lock().unwrap().requests.clone()
    }

    pub fn clear_requests(&self) {
        let mut inner = self.inner.lock().unwrap();
        inner.requests.clear();
        inner.exchanges.clear();
    }

    /// Sequential rounds of the requests since `clear_requests`: a request is a round after
    /// every request answered before it arrived (1 + the latest such round), so requests sent
    /// together share a round. Counted from the order of events, not from elapsed time; the
    /// caller slows requests down (`Fault::Slow`) so those sent together all arrive before
    /// any is answered.
    pub fn rounds(&self) -> u32 {
        let inner = self.inner.lock().unwrap();
        let mut exchanges = inner.exchanges.clone();
        exchanges.sort_by_key(|exchange| exchange.0);
        let mut round = vec![0u32; exchanges.len()];
        for later in 0..exchanges.len() {
            round[later] = 1
                + (0..later)
                    .filter(|&earlier| {
                        exchanges[earlier]
                            .1
                            .is_some_and(|answered| answered < exchanges[later].0)
                    })
                    .map(|earlier| round[earlier])
                    .max()
                    .unwrap_or(0);
        }
        round.into_iter().max().unwrap_or(0)
    }

    pub fn write_headers(&self) -> Vec<HeaderMap> {
        self.inner.lock().unwrap().write_headers.clone()
    }

    /// Every `/batch` received, as its sub-requests' `METHOD path` lines.
    pub fn batches(&self) -> Vec<Vec<String>> {
        self.inner.lock().unwrap().batches.clone()
    }

    /// Items of the session a Cart-Token names, as `(id, quantity)`.
    pub fn cart_of(&self, token: &str) -> Vec<(u64, u32)> {
        let inner = self.inner.lock().unwrap();
        cart::verify(token)
            .and_then(|user| inner.sessions.get(&user))
            .map(|items| items.iter().map(|item| (item.id, item.quantity)).collect())
            .unwrap_or_default()
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

    /// `fault` for one write only: the one after the next `skip` writes.
    pub fn fault_one_write(&self, skip: usize, fault: Fault) {
        self.inner.lock().unwrap().once = Some((skip, fault));
    }

    /// `count` more simple products (clones of the Espresso Cup) from id `first`, for carts
    /// longer than one batch.
    pub fn add_simple_products(&self, first: u64, count: u64) {
        let mut inner = self.inner.lock().unwrap();
        let cup = inner.product(30).unwrap().clone();
        for id in first..first + count {
            let mut clone = cup.clone();
            clone["id"] = json!(id);
            clone["name"] = json!(format!("Sticker {id}"));
            clone["slug"] = json!(format!("sticker-{id}"));
            clone["sku"] = json!(format!("STICKER-{id}"));
            inner.products.push(clone);
            inner.stock.insert(id, 50);
        }
    }

    /// A new nonce tick: the Nonce handed out so far is refused (403) from now on.
    pub fn rotate_nonce(&self, nonce: &str) {
        self.inner.lock().unwrap().guest_nonce = nonce.to_owned();
    }

    /// Renames a product, as a merchant editing it in the admin would.
    pub fn rename(&self, id: u64, name: &str) {
        let mut inner = self.inner.lock().unwrap();
        if let Some(product) = inner
            .products
            .iter_mut()
            .find(|p| p["id"].as_u64() == Some(id))
        {
            product["name"] = json!(name);
        }
    }

    /// Reprices a simple product (minor units), as a merchant editing it in the admin would.
    pub fn set_price(&self, id: u64, minor_units: u64) {
        let mut inner = self.inner.lock().unwrap();
        if let Some(product) = inner
            .products
            .iter_mut()
            .find(|p| p["id"].as_u64() == Some(id))
        {
            for key in ["price", "regular_price", "sale_price"] {
                product["prices"][key] = json!(minor_units.to_string());
            }
        }
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
    /// Adds a product cloned from `template` with `fields` written over it, `units` in stock
    /// (for catalogs a test brings, such as the hostile corpus).
    pub fn add_product_like(&self, template: u64, fields: Value, units: u32) {
        let mut inner = self.inner.lock().unwrap();
        let mut product = inner.product(template).unwrap().clone();
        for (key, value) in fields.as_object().unwrap() {
            product[key] = value.clone();
        }
        let id = product["id"].as_u64().unwrap();
        inner.products.push(product);
        inner.stock.insert(id, units);
    }
}
