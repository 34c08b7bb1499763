//! VTEX's public routes over `UpstreamClient`: every route resolved under `base_url` from fixed
//! segments and typed query values, the optional app key pair, the orderForm ownership
//! cookie, and VTEX's error bodies.

use reqwest::StatusCode;
use reqwest::header::{HeaderValue, SET_COOKIE};
use secrecy::ExposeSecret;
use serde::de::DeserializeOwned;
use serde_json::Value;
use url::Url;

use super::wire::ErrorBody;
use crate::platform::port::PlatformError;
use crate::platform::upstream::{CallKind, UpstreamClient, UpstreamResponse};
use crate::settings::Secret;

/// The cookie that proves a caller created an orderForm: without it, VTEX masks the
/// cart's personal data and may refuse edits.
pub const OWNERSHIP_COOKIE: &str = "CheckoutOrderFormOwnership";

pub struct VtexApi {
    client: UpstreamClient,
    base: Url,
    keys: Option<(Secret, Secret)>,
}

fn sensitive(value: &str) -> Result<HeaderValue, PlatformError> {
    let mut header = HeaderValue::from_str(value)
        .map_err(|_| PlatformError::BadResponse("a credential is not a header value".into()))?;
    header.set_sensitive(true);
    Ok(header)
}

pub fn unexpected(what: &str, response: &UpstreamResponse) -> PlatformError {
    let code = response
        .json::<ErrorBody>(what)
        .map(|body| body.error.code)
        .unwrap_or_default();
    PlatformError::BadResponse(format!(
        "{what}: HTTP {}{}",
        response.status.as_u16(),
        if code.is_empty() {
            String::new()
        } else {
            format!(" {code}")
        }
    ))
}

impl VtexApi {
    pub fn new(client: UpstreamClient, base: Url, keys: Option<(Secret, Secret)>) -> Self {
        Self { client, base, keys }
    }

    pub fn url(&self, segments: &[&str], query: &[(&str, String)]) -> Url {
        let mut url = self.base.clone();
        if let Ok(mut path) = url.path_segments_mut() {
            path.pop_if_empty().extend(segments);
        }
        if !query.is_empty() {
            url.query_pairs_mut()
                .extend_pairs(query.iter().map(|(key, value)| (*key, value.as_str())));
        }
        url
    }

    fn request(
        &self,
        method: reqwest::Method,
        url: Url,
        cookie: Option<&str>,
    ) -> Result<reqwest::RequestBuilder, PlatformError> {
        let mut request = self
            .client
            .http()
            .request(method, url)
            .header("accept", "application/json");
        if let Some((key, token)) = &self.keys {
            request = request
                .header("X-VTEX-API-AppKey", sensitive(key.0.expose_secret())?)
                .header("X-VTEX-API-AppToken", sensitive(token.0.expose_secret())?);
        }
        if let Some(cookie) = cookie {
            request = request.header(
                "cookie",
                sensitive(&format!("{OWNERSHIP_COOKIE}={cookie}"))?,
            );
        }
        Ok(request)
    }

    pub async fn get(
        &self,
        segments: &[&str],
        query: &[(&str, String)],
        cookie: Option<&str>,
    ) -> Result<UpstreamResponse, PlatformError> {
        let request = self.request(reqwest::Method::GET, self.url(segments, query), cookie)?;
        self.client.send(request, CallKind::Read).await
    }

    /// A cart write: sent once, never retried.
    pub async fn write(
        &self,
        method: reqwest::Method,
        segments: &[&str],
        body: &Value,
        cookie: Option<&str>,
    ) -> Result<UpstreamResponse, PlatformError> {
        let request = self
            .request(method, self.url(segments, &[]), cookie)?
            .header("content-type", "application/json")
            .body(body.to_string());
        self.client.send(request, CallKind::Write).await
    }

    /// Decodes a 200 answer; credentials refused are the merchant's to fix.
    pub fn decode<T: DeserializeOwned>(
        &self,
        response: &UpstreamResponse,
        what: &str,
    ) -> Result<T, PlatformError> {
        match response.status {
            StatusCode::OK => response.json(what),
            StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN if self.keys.is_some() => {
                Err(PlatformError::Unauthorized {
                    key: "store.app_key",
                })
            }
            _ => Err(unexpected(what, response)),
        }
    }
}

/// The ownership cookie's value among a response's `Set-Cookie` headers.
pub fn ownership_cookie(response: &UpstreamResponse) -> Option<String> {
    response
        .headers
        .get_all(SET_COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .filter_map(|line| line.split(';').next())
        .filter_map(|pair| pair.split_once('='))
        .find(|(name, _)| name.trim() == OWNERSHIP_COOKIE)
        .map(|(_, value)| value.trim().to_owned())
        .filter(|value| !value.is_empty())
}
