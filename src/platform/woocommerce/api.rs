//! The Store API over `UpstreamClient`: URL building from fixed segments and typed query
//! values, the `Cart-Token`/`Nonce` handshake, and WordPress error bodies.

use reqwest::Method;
use reqwest::StatusCode;
use serde::de::DeserializeOwned;
use url::Url;

use super::wire::{ErrorBody, StoreCart, StoreCategory, StoreProduct};
use crate::platform::port::PlatformError;
use crate::platform::upstream::{CallKind, UpstreamClient, UpstreamResponse};

/// The Store API caps `per_page` at 100.
pub const MAX_PER_PAGE: u32 = 100;

pub struct StoreApi {
    client: UpstreamClient,
    /// `<base>/wp-json/wc/store/v1`
    root: Url,
}

/// One page of a collection plus WordPress's pagination headers.
pub struct Listing<T> {
    pub items: Vec<T>,
    pub total: Option<u64>,
    pub total_pages: Option<u32>,
}

/// The buyer's Store API session: the latest token and nonce the store handed out.
#[derive(Clone)]
pub struct Session {
    pub token: String,
    pub nonce: Option<String>,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The token is a bearer credential for the buyer's cart.
        f.write_str("Session([REDACTED])")
    }
}

/// What a cart write came back with.
pub enum Written {
    Cart(StoreCart),
    Refused { error: ErrorBody },
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
        Ok(Self { client, root })
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

    pub async fn categories(&self) -> Result<Vec<StoreCategory>, PlatformError> {
        let response = self.get(&["products", "categories"], &[]).await?;
        Self::decode(&response, "categories")
    }

    pub async fn ready(&self) -> Result<(), PlatformError> {
        let response = self
            .get(&["products"], &[("per_page", "1".to_owned())])
            .await?;
        Self::decode::<serde_json::Value>(&response, "products").map(|_| ())
    }

    fn session_from(response: &UpstreamResponse, previous: Option<&Session>) -> Option<Session> {
        let token = response
            .header("cart-token")
            .map(str::to_owned)
            .or_else(|| previous.map(|session| session.token.clone()))?;
        let nonce = response
            .header("nonce")
            .or_else(|| response.header("x-wc-store-api-nonce"))
            .map(str::to_owned)
            .or_else(|| previous.and_then(|session| session.nonce.clone()));
        Some(Session { token, nonce })
    }

    /// `GET /cart`; without a token the store starts a new session and names it.
    pub async fn cart(&self, token: Option<&str>) -> Result<(StoreCart, Session), PlatformError> {
        let mut request = self.client.http().get(self.url(&["cart"], &[]));
        if let Some(token) = token {
            request = request.header("Cart-Token", token_header(token)?);
        }
        let response = self.client.send(request, CallKind::Read).await?;
        let cart = Self::decode(&response, "cart")?;
        // A store that echoes no token for a token it was sent keeps using that one.
        let sent = token.map(|token| Session {
            token: token.to_owned(),
            nonce: None,
        });
        let session = Self::session_from(&response, sent.as_ref()).ok_or_else(|| {
            PlatformError::BadResponse("cart: the store sent no Cart-Token".to_owned())
        })?;
        Ok((cart, session))
    }

    /// One cart write, carrying the session's latest token and nonce; the session is updated
    /// from the answer so the next write uses what the store handed out last.
    pub async fn write(
        &self,
        session: &mut Session,
        method: Method,
        segments: &[&str],
        body: Option<serde_json::Value>,
    ) -> Result<Written, PlatformError> {
        let mut request = self
            .client
            .http()
            .request(method, self.url(segments, &[]))
            .header("Cart-Token", token_header(&session.token)?);
        if let Some(nonce) = &session.nonce {
            request = request
                .header("Nonce", nonce.as_str())
                .header("X-WC-Store-API-Nonce", nonce.as_str());
        }
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = self.client.send(request, CallKind::Write).await?;
        if let Some(next) = Self::session_from(&response, Some(session)) {
            *session = next;
        }
        match response.status {
            StatusCode::OK | StatusCode::CREATED => Ok(Written::Cart(response.json("cart")?)),
            StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => {
                let error: ErrorBody = response.json("cart error").unwrap_or_default();
                tracing::warn!(code = %error.code, "the store refused a cart write");
                Err(PlatformError::Unavailable {
                    reason: "the store refused the cart session".to_owned(),
                    retry_after: None,
                })
            }
            status if status.is_client_error() => Ok(Written::Refused {
                error: response.json("cart error")?,
            }),
            status => Err(unexpected("cart", status)),
        }
    }

    /// `DELETE /cart/items` answers `[]`, not a cart.
    pub async fn empty(&self, session: &mut Session) -> Result<(), PlatformError> {
        let mut request = self
            .client
            .http()
            .delete(self.url(&["cart", "items"], &[]))
            .header("Cart-Token", token_header(&session.token)?);
        if let Some(nonce) = &session.nonce {
            request = request
                .header("Nonce", nonce.as_str())
                .header("X-WC-Store-API-Nonce", nonce.as_str());
        }
        let response = self.client.send(request, CallKind::Write).await?;
        if let Some(next) = Self::session_from(&response, Some(session)) {
            *session = next;
        }
        if response.status.is_success() {
            Ok(())
        } else {
            Err(unexpected("empty cart", response.status))
        }
    }
}
