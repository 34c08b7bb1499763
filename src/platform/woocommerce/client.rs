//! The Store API over `UpstreamClient`: URL building from fixed segments and typed query
//! values, the `Cart-Token`/`Nonce` rules of WooCommerce 10.9.4, `/batch`, and WordPress
//! error bodies.

use reqwest::StatusCode;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use url::Url;

use super::wire::{ErrorBody, StoreCart, StoreCategory, StoreProduct};
use crate::platform::port::Health;
use crate::platform::port::PlatformError;
use crate::platform::upstream::{CallKind, UpstreamClient, UpstreamResponse};
use async_trait::async_trait;

/// The Store API caps `per_page` at 100.
pub const MAX_PER_PAGE: u32 = 100;

pub struct StoreApi {
    client: UpstreamClient,
    /// `<base>/wp-json/wc/store/v1`
    root: Url,
    /// The latest guest Nonce any cart answer carried.
    nonce: std::sync::Mutex<Option<String>>,
}

/// One page of a collection plus WordPress's pagination headers.
pub struct Listing<T> {
    pub items: Vec<T>,
    pub total: Option<u64>,
    pub total_pages: Option<u32>,
}

/// The Cart-Token is a bearer credential for the buyer's cart: marked sensitive so no
/// debug output of the request shows it.
fn token_header(token: &str) -> Result<reqwest::header::HeaderValue, PlatformError> {
    let mut value = reqwest::header::HeaderValue::from_str(token)
        .map_err(|_| PlatformError::BadResponse("the cart token is not a header value".into()))?;
    value.set_sensitive(true);
    Ok(value)
}

fn unexpected(what: &str, status: StatusCode) -> PlatformError {
    PlatformError::BadResponse(format!("{what}: HTTP {}", status.as_u16()))
}

impl StoreApi {
    pub fn new(client: UpstreamClient, base: &Url) -> Result<Self, String> {
        let mut root = base.clone();
        root.path_segments_mut()
            .map_err(|()| "the base URL cannot have a path".to_owned())?
            .pop_if_empty()
            .extend(["wp-json", "wc", "store", "v1"]);
        Ok(Self {
            client,
            root,
            nonce: std::sync::Mutex::new(None),
        })
    }

    fn url(&self, segments: &[&str], query: &[(&str, String)]) -> Url {
        let mut url = self.root.clone();
        if let Ok(mut path) = url.path_segments_mut() {
            path.extend(segments);
        }
        if !query.is_empty() {
            url.query_pairs_mut()
                .extend_pairs(query.iter().map(|(key, value)| (*key, value.as_str())));
        }
        url
    }

    async fn get(
        &self,
        segments: &[&str],
        query: &[(&str, String)],
    ) -> Result<UpstreamResponse, PlatformError> {
        let request = self.client.http().get(self.url(segments, query));
        self.client.send(request, CallKind::Read).await
    }

    fn decode<T: DeserializeOwned>(
        response: &UpstreamResponse,
        what: &str,
    ) -> Result<T, PlatformError> {
        if response.status != StatusCode::OK && response.status != StatusCode::CREATED {
            return Err(unexpected(what, response.status));
        }
        response.json(what)
    }

    pub async fn products(
        &self,
        query: &[(&str, String)],
    ) -> Result<Listing<StoreProduct>, PlatformError> {
        let response = self.get(&["products"], query).await?;
        let items = Self::decode(&response, "products")?;
        let number = |name: &str| response.header(name).and_then(|v| v.trim().parse().ok());
        Ok(Listing {
            items,
            total: number("x-wp-total"),
            total_pages: number("x-wp-totalpages").and_then(|n: u64| u32::try_from(n).ok()),
        })
    }

    /// `GET /products/{id or slug}`: a product or a variation; `None` when the store says
    /// there is no such id or slug (404).
    pub async fn product(&self, key: &str) -> Result<Option<StoreProduct>, PlatformError> {
        let response = self.get(&["products", key], &[]).await?;
        if response.status == StatusCode::NOT_FOUND {
            return Ok(None);
        }
        Self::decode(&response, "product").map(Some)
    }

    pub async fn categories(&self) -> Result<Vec<StoreCategory>, PlatformError> {
        let response = self.get(&["products", "categories"], &[]).await?;
        Self::decode(&response, "categories")
    }

    /// `OPTIONS /checkout`: the route's schema, which lists the checkout fields plugins add
    /// (`additional_fields`, extra address properties) and whether each is required.
    pub async fn checkout_schema(&self) -> Result<(StatusCode, Value), PlatformError> {
        let request = self
            .client
            .http()
            .request(reqwest::Method::OPTIONS, self.url(&["checkout"], &[]));
        let response = self.client.send(request, CallKind::Read).await?;
        let value = response
            .json::<Value>("checkout schema")
            .unwrap_or(Value::Null);
        Ok((response.status, value))
    }

    /// Keeps the guest Nonce a cart answer carried: WooCommerce hands every guest session the
    /// same one for a nonce tick (12–24 h), so any earlier answer's Nonce lets a new cart be
    /// created without a read first.
    fn remember_nonce(&self, response: &UpstreamResponse) {
        if let Some(nonce) = response.header("nonce").filter(|nonce| !nonce.is_empty())
            && let Ok(mut known) = self.nonce.lock()
        {
            *known = Some(nonce.to_owned());
        }
    }

    pub fn known_nonce(&self) -> Option<String> {
        self.nonce.lock().ok().and_then(|known| known.clone())
    }

    /// `GET /cart`; without a token the store starts a new session and names it. Returns the
    /// token the store answered with.
    pub async fn cart(&self, token: Option<&str>) -> Result<(StoreCart, String), PlatformError> {
        let mut request = self.client.http().get(self.url(&["cart"], &[]));
        if let Some(token) = token {
            request = request.header("Cart-Token", token_header(token)?);
        }
        let response = self.client.send(request, CallKind::Read).await?;
        self.remember_nonce(&response);
        let cart = Self::decode(&response, "cart")?;
        // A store that echoes no token for a token it was sent keeps using that one.
        let answered = response
            .header("cart-token")
            .map(str::to_owned)
            .or_else(|| token.map(str::to_owned))
            .ok_or_else(|| {
                PlatformError::BadResponse("cart: the store sent no Cart-Token".to_owned())
            })?;
        Ok((cart, answered))
    }

    /// One call on a cart session (`Cart-Token`), answered as raw JSON with the status and
    /// the token the store answered with: the checkout routes (`cart/update-customer`,
    /// `cart/select-shipping-rate`, coupons, `checkout`, `order/{id}`) judge them themselves.
    pub async fn session(
        &self,
        method: reqwest::Method,
        segments: &[&str],
        query: &[(&str, String)],
        token: Option<&str>,
        body: Option<&Value>,
    ) -> Result<(StatusCode, Value, Option<String>), PlatformError> {
        let kind = if method == reqwest::Method::GET {
            CallKind::Read
        } else {
            CallKind::Write
        };
        let mut request = self
            .client
            .http()
            .request(method, self.url(segments, query));
        if let Some(token) = token {
            request = request.header("Cart-Token", token_header(token)?);
        }
        if let Some(body) = body {
            request = request.json(body);
        }
        let response = self.client.send(request, kind).await?;
        self.remember_nonce(&response);
        let value = response
            .json::<Value>("store answer")
            .unwrap_or(Value::Null);
        let token = response.header("cart-token").map(str::to_owned);
        Ok((response.status, value, token))
    }

    /// One `POST /batch`: the sub-requests run in order on one cart and each answers for
    /// itself (the batch is not atomic). With a token, it goes on the outer request (which
    /// picks the cart) AND on every sub-request (which then needs no Nonce; a token only on
    /// the sub-requests is a fatal error in WooCommerce 10.9.4). Without a token every
    /// sub-request carries the guest Nonce and the store opens a new cart.
    pub async fn batch(
        &self,
        token: Option<&str>,
        calls: &[CartCall],
    ) -> Result<Vec<SubAnswer>, PlatformError> {
        if calls.len() > MAX_BATCH {
            return Err(PlatformError::BadResponse(format!(
                "batch: {} sub-requests, the store takes at most {MAX_BATCH}",
                calls.len()
            )));
        }
        let sub_headers = match token {
            Some(token) => json!({ "Cart-Token": token }),
            None => match self.known_nonce() {
                Some(nonce) => json!({ "Nonce": nonce }),
                None => json!({}),
            },
        };
        let requests: Vec<Value> = calls
            .iter()
            .map(|call| {
                let (method, path, body) = call.parts();
                let mut request = json!({
                    "path": format!("/wc/store/v1/{path}"),
                    "method": method,
                    "headers": sub_headers,
                });
                if let Some(body) = body {
                    request["body"] = body;
                }
                request
            })
            .collect();
        let mut request = self
            .client
            .http()
            .post(self.url(&["batch"], &[]))
            .json(&json!({ "requests": requests }));
        if let Some(token) = token {
            request = request.header("Cart-Token", token_header(token)?);
        }
        let response = self.client.send(request, CallKind::Write).await?;
        self.remember_nonce(&response);
        if response.status != StatusCode::MULTI_STATUS && response.status != StatusCode::OK {
            // The whole batch was refused (too many sub-requests, a bad path or method):
            // nothing was applied, and the store's code says why.
            let error: ErrorBody = response.json("batch error").unwrap_or_default();
            return Err(PlatformError::BadResponse(format!(
                "batch: HTTP {} {}",
                response.status.as_u16(),
                error.code
            )));
        }
        let answer: BatchAnswer = response.json("batch")?;
        if answer.responses.len() != calls.len() {
            return Err(PlatformError::BadResponse(format!(
                "batch: {} answers for {} sub-requests",
                answer.responses.len(),
                calls.len()
            )));
        }
        let answers: Vec<SubAnswer> = answer
            .responses
            .into_iter()
            .map(SubAnswer::from_wire)
            .collect();
        if let Some(nonce) = answers.iter().rev().find_map(|answer| answer.nonce.clone())
            && let Ok(mut known) = self.nonce.lock()
        {
            *known = Some(nonce);
        }
        Ok(answers)
    }
}

/// The Store API's `/batch` limit: 26 sub-requests reject the whole batch.
pub const MAX_BATCH: usize = 25;

/// One cart write inside a batch.
#[derive(Debug, Clone)]
pub enum CartCall {
    Add {
        id: u64,
        quantity: u32,
    },
    /// `DELETE /cart/items`: empties the cart, answers `[]`.
    Clear,
    /// `remove-item` of a key no cart item can have: the store answers 409
    /// `woocommerce_rest_cart_invalid_key` with the current cart in `data.cart` and changes
    /// nothing, which is how a batch reads the cart before its writes.
    Read,
}

/// Item keys are md5 hex; this one is not hex, so it can never name an item.
const NO_SUCH_KEY: &str = "bcp-bridge-reads-the-cart";

impl CartCall {
    fn parts(&self) -> (&'static str, &'static str, Option<Value>) {
        match self {
            Self::Add { id, quantity } => (
                "POST",
                "cart/add-item",
                Some(json!({ "id": id, "quantity": quantity })),
            ),
            Self::Clear => ("DELETE", "cart/items", None),
            Self::Read => (
                "POST",
                "cart/remove-item",
                Some(json!({ "key": NO_SUCH_KEY })),
            ),
        }
    }
}

#[derive(Deserialize)]
struct BatchAnswer {
    responses: Vec<WireSub>,
}

#[derive(Deserialize)]
struct WireSub {
    #[serde(default)]
    status: u16,
    #[serde(default)]
    body: Value,
    #[serde(default)]
    headers: serde_json::Map<String, Value>,
}

/// One sub-request's answer: its status, body and the session headers it carried.
#[derive(Debug)]
pub struct SubAnswer {
    pub status: u16,
    pub body: Value,
    pub token: Option<String>,
    pub nonce: Option<String>,
}

impl SubAnswer {
    fn from_wire(sub: WireSub) -> Self {
        let header = |name: &str| {
            sub.headers
                .iter()
                .find(|(key, _)| key.eq_ignore_ascii_case(name))
                .and_then(|(_, value)| value.as_str())
                .filter(|value| !value.is_empty())
                .map(str::to_owned)
        };
        Self {
            token: header("cart-token"),
            nonce: header("nonce"),
            status: sub.status,
            body: sub.body,
        }
    }

    pub fn ok(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// The whole cart a successful add-item (or any cart route) answers with.
    pub fn cart(&self) -> Result<StoreCart, PlatformError> {
        serde_json::from_value(self.body.clone())
            .map_err(|_| PlatformError::BadResponse("batch: a cart answer is not a cart".into()))
    }

    pub fn error(&self) -> ErrorBody {
        serde_json::from_value(self.body.clone()).unwrap_or_default()
    }

    /// The cart a 409 `woocommerce_rest_cart_invalid_key` carries in `data.cart`.
    pub fn conflict_cart(&self) -> Option<StoreCart> {
        (self.status == 409 && self.error().code == "woocommerce_rest_cart_invalid_key")
            .then(|| serde_json::from_value(self.body["data"]["cart"].clone()).ok())
            .flatten()
    }
}

/// Ready when one product page reads.
#[async_trait]
impl Health for StoreApi {
    async fn ready(&self) -> Result<(), PlatformError> {
        let response = self
            .get(&["products"], &[("per_page", "1".to_owned())])
            .await?;
        Self::decode::<serde_json::Value>(&response, "products").map(|_| ())
    }
}
