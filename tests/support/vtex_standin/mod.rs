//! A VTEX stand-in: a real HTTP server on loopback answering the public routes a VTEX store's
//! own storefront calls, shaped exactly like the example bodies of VTEX's OpenAPI files
//! (shared `br-platforms/vtex/examples`, copied into `fixtures/`): Intelligent Search v1
//! `product-search`, the legacy `catalog_system/pub` search, the category tree and the
//! Checkout orderForm (create, get, items, items/update, removeAll, the clientProfileData and
//! shippingData attachments, coupons), the postal-code route and the Orders API (brazil.rs),
//! with its ownership cookie and `{"error":{"code","message","exception"}}` bodies. It counts every request and
//! can throttle (429 with Retry-After and the `Ratelimit-*` headers VTEX documents) or act as
//! a store without Intelligent Search (404 there).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::Response;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

mod brazil;
mod cart;
mod catalog;
mod checkout;

pub use brazil::{AUGUSTA, CEP, REFUSED_CPF};
pub use catalog::{
    CLOCK, CLOCK_SKU, FOOD, FOOD_SKU, FOUNTAIN_SKU, MUG_FIRST, MUG_PRICES, MUG_SKU_FIRST, MUGS,
    TEE, TEE_SKUS,
};
pub use checkout::{CODE, EXPIRED_CODE, PICKUP_POINT};

pub struct Inner {
    products: Vec<catalog::Entry>,
    stock: HashMap<String, u32>,
    forms: HashMap<String, cart::Form>,
    next_form: u128,
    next_line: u128,
    requests: Vec<String>,
    /// Each orderForm call (`METHOD tail`) and whether it carried the owner's cookie.
    cookie_log: Vec<(String, bool)>,
    /// Answer this many more requests with 429.
    throttle: u32,
    /// No Intelligent Search: an older CMS/Portal store.
    legacy_only: bool,
    /// Orders placed on the store's page (the Orders API's).
    orders: Vec<brazil::PlacedOrder>,
}

pub struct VtexStandin {
    pub base_url: String,
    inner: Arc<Mutex<Inner>>,
    shutdown: CancellationToken,
}

impl Drop for VtexStandin {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

pub fn json_response(status: StatusCode, body: &Value, headers: &[(&str, String)]) -> Response {
    let mut builder = Response::builder()
        .status(status)
        .header("content-type", "application/json; charset=utf-8");
    for (name, value) in headers {
        builder = builder.header(*name, value);
    }
    builder.body(Body::from(body.to_string())).unwrap()
}

pub fn vtex_error(status: StatusCode, code: &str, message: &str) -> Response {
    json_response(
        status,
        &json!({"error": {"code": code, "message": message, "exception": null}}),
        &[],
    )
}

async fn handle(
    State(inner): State<Arc<Mutex<Inner>>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let mut inner = inner.lock().unwrap();
    let path = uri.path().to_owned();
    let query = uri.query().unwrap_or("").to_owned();
    inner.requests.push(format!(
        "{method} {path}{}",
        if query.is_empty() {
            String::new()
        } else {
            format!("?{query}")
        }
    ));
    if inner.throttle > 0 {
        inner.throttle -= 1;
        return Response::builder()
            .status(StatusCode::TOO_MANY_REQUESTS)
            .header("retry-after", "1")
            .header("ratelimit-limit", "5000")
            .header("ratelimit-remaining", "0")
            .header("ratelimit-reset", "1")
            .body(Body::from("Too Many Requests"))
            .unwrap();
    }
    if let Some(facets) = path.strip_prefix("/api/intelligent-search/v1/product-search") {
        if inner.legacy_only {
            return Response::builder()
                .status(StatusCode::NOT_FOUND)
                .body(Body::from("Not Found"))
                .unwrap();
        }
        return inner.is_search(facets, &query);
    }
    if let Some(rest) = path.strip_prefix("/api/catalog_system/pub/products/search") {
        let slug = rest
            .strip_prefix('/')
            .and_then(|rest| rest.strip_suffix("/p"));
        return inner.legacy_search(slug, &query);
    }
    if path.starts_with("/api/catalog_system/pub/category/tree/") {
        let tree: Value = serde_json::from_str(catalog::TREE).unwrap();
        return json_response(StatusCode::OK, &tree, &[]);
    }
    if path == "/api/checkout/pub/orderForm" && method == Method::GET {
        return inner.new_form();
    }
    if let Some(rest) = path.strip_prefix("/api/checkout/pub/orderForm/") {
        return inner.order_form_route(method.as_str(), rest, &headers, &body);
    }
    if let Some(rest) = path.strip_prefix("/api/checkout/pub/postal-code/")
        && let Some((country, cep)) = rest.split_once('/')
    {
        return inner.postal_code(country, cep);
    }
    if path == "/api/oms/pvt/orders" && method == Method::GET {
        return inner.oms_list(&query, &headers);
    }
    if let Some(id) = path.strip_prefix("/api/oms/pvt/orders/") {
        return inner.oms_order(id, &headers);
    }
    if path == "/checkout/" && method == Method::GET {
        return inner.checkout_page(&query);
    }
    vtex_error(StatusCode::NOT_FOUND, "404", "Not Found")
}

impl VtexStandin {
    pub async fn start() -> Self {
        let (mut products, stock) = catalog::seed();
        brazil::add_payment_terms(&mut products);
        let inner = Arc::new(Mutex::new(Inner {
            products,
            stock,
            forms: HashMap::new(),
            next_form: 0,
            next_line: 0,
            requests: Vec::new(),
            cookie_log: Vec::new(),
            throttle: 0,
            legacy_only: false,
            orders: Vec::new(),
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

    /// A store without Intelligent Search (only the legacy search answers).
    pub async fn start_legacy() -> Self {
        let standin = Self::start().await;
        standin.inner.lock().unwrap().legacy_only = true;
        standin
    }

    /// A bridge config pointing at this stand-in; extra `[store]` lines may be appended.
    pub fn config(&self, extra_store_lines: &str) -> String {
        format!(
            "[store]\nplatform = \"vtex\"\naccount = \"loja\"\nbase_url = \"{}\"\nname = \"Stand-in VTEX\"\ntimeout_ms = 2000\n{extra_store_lines}\n",
            self.base_url
        )
    }

    pub fn requests(&self) -> Vec<String> {
        self.inner.lock().unwrap().requests.clone()
    }

    /// The requests so far, then forgets them.
    pub fn take(&self) -> Vec<String> {
        std::mem::take(&mut self.inner.lock().unwrap().requests)
    }

    pub fn cookie_log(&self) -> Vec<(String, bool)> {
        self.inner.lock().unwrap().cookie_log.clone()
    }

    pub fn throttle(&self, requests: u32) {
        self.inner.lock().unwrap().throttle = requests;
    }

    /// `(sku, quantity)` of an orderForm's lines, in index order.
    pub fn lines_of(&self, id: &str) -> Vec<(String, u32)> {
        let inner = self.inner.lock().unwrap();
        inner
            .forms
            .get(id)
            .map(|form| {
                form.lines
                    .iter()
                    .map(|line| (line.sku.clone(), line.quantity))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The `clientProfileData` fields the bridge attached to an orderForm.
    pub fn profile_of(&self, id: &str) -> serde_json::Map<String, Value> {
        let inner = self.inner.lock().unwrap();
        inner
            .forms
            .get(id)
            .map(|form| form.profile.clone())
            .unwrap_or_default()
    }

    /// Each line's selected SLA (`None`: the best delivery one), in index order.
    pub fn slas_of(&self, id: &str) -> Vec<Option<String>> {
        let inner = self.inner.lock().unwrap();
        inner
            .forms
            .get(id)
            .map(|form| form.lines.iter().map(|line| line.sla.clone()).collect())
            .unwrap_or_default()
    }

    /// The orderForm as VTEX answers its owner.
    pub fn form(&self, id: &str) -> Value {
        let inner = self.inner.lock().unwrap();
        inner.form_json(id, true)
    }
}
