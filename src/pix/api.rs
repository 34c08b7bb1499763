//! The merchant's PSP through the Central Bank's API Pix: mutual TLS with the client
//! certificate the PSP issued, an OAuth2 client-credentials token cached until shortly before
//! it expires (and fetched again once when the PSP answers 401), `cob` and `webhook`.
//!
//! Like the store's upstream client: bounded timeouts, a cap on answer bodies, errors that
//! never carry a URL or a body. The URLs come from the merchant's configuration (checked by
//! `check`: https, or http to this machine); redirects are not followed, since every call
//! carries a bearer token. Credentials and tokens stay `SecretString`s and are never logged;
//! nor is the buyer's document (it only ever travels in the request body).

use std::time::{Duration, Instant};

use async_trait::async_trait;
use bytes::Bytes;
use reqwest::{Method, StatusCode};
use secrecy::{ExposeSecret, SecretString};
use tokio::sync::Mutex;
use url::Url;

use super::brcode::{self, Expected};
use super::pem;
use super::port::{Charge, ChargeRequest, PixError, PixProvider};
use super::settings::{PixConfig, psp_url};
use super::txid;
use super::wire::{
    CobAnswer, CobBody, Problem, TokenAnswer, TokenRefusal, WebhookAnswer, WebhookBody,
};
use crate::settings::Secret;

/// API Pix answers are small (a charge is a few kilobytes); more is not API Pix.
const MAX_BODY: usize = 256 * 1024;
/// A token is used until this long before the PSP said it expires (at most a quarter of its
/// life): a call never leaves with a token that expires on the way.
const TOKEN_MARGIN: Duration = Duration::from_secs(60);
/// When the token answer has no `expires_in` (RFC 6749 only recommends it).
const TOKEN_DEFAULT_LIFE: Duration = Duration::from_secs(300);

struct Token {
    value: SecretString,
    refresh_at: Instant,
    /// Which token this is, so a 401 discards only the token it was answered to.
    generation: u64,
}

/// An answer the PSP gave (2xx or not); transport failures never get this far.
struct Answer {
    status: StatusCode,
    body: Bytes,
}

pub struct ApiPix {
    http: reqwest::Client,
    api_url: Url,
    token_url: Url,
    client_id: Secret,
    client_secret: Secret,
    key: String,
    token: Mutex<Option<Token>>,
    generations: std::sync::atomic::AtomicU64,
}

impl std::fmt::Debug for ApiPix {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApiPix")
            .field("api_url", &self.api_url.as_str())
            .finish_non_exhaustive()
    }
}

impl ApiPix {
    /// The client `[pix]` describes; `timeout` bounds each call (the bridge's
    /// `upstream.timeout_ms`). The error names the `pix.*` key at fault.
    pub fn new(config: &PixConfig, timeout: Duration) -> Result<Self, String> {
        let api_url = psp_url(&config.api_url).map_err(|error| format!("pix.api_url: {error}"))?;
        let token_url =
            psp_url(&config.token_url).map_err(|error| format!("pix.token_url: {error}"))?;
        let identity = pem::identity_pem(&config.client_cert, &config.client_key)
            .and_then(|document| {
                reqwest::Identity::from_pem(&document)
                    .map_err(|_| "not a PEM certificate and private key".to_owned())
            })
            .map_err(|error| format!("pix.client_cert / pix.client_key: {error}"))?;
        let mut builder = reqwest::Client::builder()
            .identity(identity)
            .timeout(timeout)
            .connect_timeout(timeout.min(Duration::from_secs(5)))
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("bcp-bridge/", env!("CARGO_PKG_VERSION")));
        if let Some(ca_cert) = &config.ca_cert {
            let roots = pem::certificates(ca_cert)
                .map_err(|error| format!("pix.ca_cert: {error}"))?
                .into_iter()
                .map(|der| reqwest::Certificate::from_der(der.as_ref()))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|_| "pix.ca_cert: not a certificate".to_owned())?;
            builder = builder.tls_certs_merge(roots);
        }
        let http = builder.build().map_err(|error| {
            format!(
                "pix: cannot build the PSP's HTTP client: {}",
                error.without_url()
            )
        })?;
        Ok(Self {
            http,
            api_url,
            token_url,
            client_id: config.client_id.clone(),
            client_secret: config.client_secret.clone(),
            key: config.key.clone(),
            token: Mutex::new(None),
            generations: std::sync::atomic::AtomicU64::new(0),
        })
    }

    /// `{api_url}/{segments…}`, each segment percent-encoded (an e-mail or phone key).
    fn url(&self, segments: &[&str]) -> Result<Url, PixError> {
        let mut url = self.api_url.clone();
        url.path_segments_mut()
            .map_err(|()| PixError::Malformed("pix.api_url cannot have a path".to_owned()))?
            .pop_if_empty()
            .extend(segments);
        Ok(url)
    }

    /// A token for the next call: the cached one while it is fresh, else a new one. Callers
    /// wait on the lock rather than each asking the PSP for a token of its own.
    async fn token(&self) -> Result<(SecretString, u64), PixError> {
        let mut cached = self.token.lock().await;
        if let Some(token) = cached.as_ref()
            && Instant::now() < token.refresh_at
        {
            return Ok((token.value.clone(), token.generation));
        }
        let fresh = self.fetch_token().await?;
        let handed = (fresh.value.clone(), fresh.generation);
        *cached = Some(fresh);
        Ok(handed)
    }

    /// Forgets `generation` (the PSP said 401 to it), unless a newer token replaced it already.
    async fn discard(&self, generation: u64) {
        let mut cached = self.token.lock().await;
        if cached
            .as_ref()
            .is_some_and(|token| token.generation == generation)
        {
            *cached = None;
        }
    }

    async fn fetch_token(&self) -> Result<Token, PixError> {
        let request = self
            .http
            .post(self.token_url.clone())
            .basic_auth(
                self.client_id.0.expose_secret(),
                Some(self.client_secret.0.expose_secret()),
            )
            .header(
                reqwest::header::CONTENT_TYPE,
                "application/x-www-form-urlencoded",
            )
            .header(reqwest::header::ACCEPT, "application/json")
            .body("grant_type=client_credentials");
        let answer = self.send(request, "token").await?;
        if answer.status.is_success() {
            let parsed: TokenAnswer = serde_json::from_slice(&answer.body).map_err(|_| {
                PixError::Malformed("the token endpoint answered no access_token".to_owned())
            })?;
            if parsed.access_token.is_empty() {
                return Err(PixError::Malformed(
                    "the token endpoint answered an empty access_token".to_owned(),
                ));
            }
            let life = parsed
                .expires_in
                .map_or(TOKEN_DEFAULT_LIFE, Duration::from_secs);
            let margin = TOKEN_MARGIN.min(life / 4);
            let generation = self
                .generations
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            tracing::debug!(
                life_secs = life.as_secs(),
                "API Pix: obtained an access token"
            );
            return Ok(Token {
                value: SecretString::from(parsed.access_token),
                refresh_at: Instant::now() + life - margin,
                generation,
            });
        }
        if unavailable(answer.status) {
            return Err(PixError::Unavailable(format!(
                "the token endpoint answered {}",
                answer.status.as_u16()
            )));
        }
        // OAuth2's error code only (`invalid_client`): its description is the PSP's free text.
        let code = serde_json::from_slice::<TokenRefusal>(&answer.body)
            .ok()
            .and_then(|refusal| refusal.error)
            .filter(|code| {
                code.len() <= 64 && code.bytes().all(|b| b.is_ascii_lowercase() || b == b'_')
            })
            .map(|code| format!(" ({code})"))
            .unwrap_or_default();
        Err(PixError::Refused(format!(
            "the token endpoint refused the client credentials{code}: check pix.client_id, pix.client_secret and pix.client_cert"
        )))
    }

    /// Sends one request; the answer whatever its status, or `Unavailable` when none came.
    async fn send(
        &self,
        request: reqwest::RequestBuilder,
        route: &'static str,
    ) -> Result<Answer, PixError> {
        let mut response = request.send().await.map_err(|error| {
            let reason = transport(&error);
            tracing::warn!(route, error = %error.without_url(), "API Pix: no answer");
            PixError::Unavailable(reason)
        })?;
        let status = response.status();
        let mut body = Vec::new();
        loop {
            match response.chunk().await {
                Ok(Some(chunk)) => {
                    if body.len() + chunk.len() > MAX_BODY {
                        return Err(PixError::Malformed(format!(
                            "{route}: the answer is larger than {MAX_BODY} bytes"
                        )));
                    }
                    body.extend_from_slice(&chunk);
                }
                Ok(None) => break,
                Err(error) => return Err(PixError::Unavailable(transport(&error))),
            }
        }
        tracing::debug!(route, status = status.as_u16(), "API Pix call");
        Ok(Answer {
            status,
            body: Bytes::from(body),
        })
    }

    /// One API call with the bearer token; a 401 discards the token and the call is made
    /// once more with a new one (the PSP may revoke a token before its announced expiry).
    async fn call(
        &self,
        method: Method,
        url: Url,
        body: Option<Vec<u8>>,
        route: &'static str,
    ) -> Result<Answer, PixError> {
        let mut retried = false;
        loop {
            let (token, generation) = self.token().await?;
            let mut request = self
                .http
                .request(method.clone(), url.clone())
                .bearer_auth(token.expose_secret())
                .header(reqwest::header::ACCEPT, "application/json");
            if let Some(body) = &body {
                request = request
                    .header(reqwest::header::CONTENT_TYPE, "application/json")
                    .body(body.clone());
            }
            let answer = self.send(request, route).await?;
            if answer.status == StatusCode::UNAUTHORIZED && !retried {
                tracing::debug!(route, "API Pix: token refused, fetching a new one");
                self.discard(generation).await;
                retried = true;
                continue;
            }
            return Ok(answer);
        }
    }

    /// Obtains a token (for `doctor`): the credentials and the client certificate work.
    pub async fn check_credentials(&self) -> Result<(), PixError> {
        self.token().await.map(drop)
    }

    /// `PUT /webhook/{chave}`: where the PSP notifies settlements (it POSTs to `{url}/pix`).
    pub async fn register_webhook(&self, webhook_url: &str) -> Result<(), PixError> {
        let url = self.url(&["webhook", &self.key])?;
        let body = serde_json::to_vec(&WebhookBody { webhook_url })
            .map_err(|error| PixError::Malformed(error.to_string()))?;
        let answer = self
            .call(Method::PUT, url, Some(body), "PUT /webhook")
            .await?;
        refusal(&answer).map_or(Ok(()), Err)
    }

    /// `GET /webhook/{chave}`: the URL registered for the merchant's key, `None` when none is.
    pub async fn webhook(&self) -> Result<Option<String>, PixError> {
        let url = self.url(&["webhook", &self.key])?;
        let answer = self.call(Method::GET, url, None, "GET /webhook").await?;
        if answer.status == StatusCode::NOT_FOUND {
            return Ok(None);
        }
        if let Some(error) = refusal(&answer) {
            return Err(error);
        }
        serde_json::from_slice::<WebhookAnswer>(&answer.body)
            .map(|found| Some(found.webhook_url))
            .map_err(|_| PixError::Malformed("GET /webhook answered no webhookUrl".to_owned()))
    }

    async fn get_cob(&self, txid: &str) -> Result<Charge, PixError> {
        let url = self.url(&["cob", txid])?;
        let answer = self.call(Method::GET, url, None, "GET /cob").await?;
        if answer.status == StatusCode::NOT_FOUND {
            return Err(PixError::NotFound(txid.to_owned()));
        }
        if let Some(error) = refusal(&answer) {
            return Err(error);
        }
        let charge = parse_cob(&answer.body)?;
        if charge.txid != txid {
            return Err(PixError::Malformed(
                "GET /cob answered another txid".to_owned(),
            ));
        }
        Ok(charge)
    }

    /// The charge is the one asked for: same txid, key and amount, and a BR Code that pays
    /// exactly that.
    fn held_to(&self, charge: Charge, request: &ChargeRequest) -> Result<Charge, PixError> {
        if charge.txid != request.txid || charge.key != self.key {
            return Err(PixError::Malformed(
                "the PSP answered a charge of another txid or key".to_owned(),
            ));
        }
        if charge.amount != request.amount {
            return Err(PixError::Malformed(
                "the PSP's charge is not for the amount asked".to_owned(),
            ));
        }
        if charge.copia_e_cola.is_empty() {
            return Err(PixError::Malformed(
                "the PSP's charge has no pixCopiaECola".to_owned(),
            ));
        }
        brcode::verify(
            &charge.copia_e_cola,
            &Expected {
                key: &self.key,
                amount: request.amount,
                txid: &request.txid,
                location: charge.location.as_deref(),
            },
        )
        .map_err(|problem| PixError::Malformed(format!("pixCopiaECola: {problem}")))?;
        Ok(charge)
    }
}

#[async_trait]
impl PixProvider for ApiPix {
    async fn create_charge(&self, request: &ChargeRequest) -> Result<Charge, PixError> {
        if !txid::is_valid(&request.txid) {
            return Err(PixError::Refused(
                "a txid is 26 to 35 letters and digits".to_owned(),
            ));
        }
        let body = serde_json::to_vec(&CobBody::new(request, &self.key)?)
            .map_err(|error| PixError::Malformed(error.to_string()))?;
        let url = self.url(&["cob", &request.txid])?;
        let answer = self.call(Method::PUT, url, Some(body), "PUT /cob").await?;
        match refusal(&answer) {
            None => self.held_to(parse_cob(&answer.body)?, request),
            // The charge may exist already (a complete repeated, or an earlier PUT whose answer
            // was lost): API Pix refuses to alter one that is no longer ATIVA. What the PSP
            // holds under this txid is the answer, if it is the charge asked for.
            Some(PixError::Refused(reason)) => match self.get_cob(&request.txid).await {
                Ok(existing) => self.held_to(existing, request),
                Err(PixError::NotFound(_)) => Err(PixError::Refused(reason)),
                Err(other) => Err(other),
            },
            Some(other) => Err(other),
        }
    }

    async fn read_charge(&self, txid: &str) -> Result<Charge, PixError> {
        self.get_cob(txid).await
    }

    fn key(&self) -> &str {
        &self.key
    }
}

fn parse_cob(body: &[u8]) -> Result<Charge, PixError> {
    serde_json::from_slice::<CobAnswer>(body)
        .map_err(|error| {
            PixError::Malformed(format!(
                "the charge is not API Pix's CobCompleta (line {} column {})",
                error.line(),
                error.column()
            ))
        })?
        .into_charge()
}

fn unavailable(status: StatusCode) -> bool {
    status.is_server_error() || status == StatusCode::TOO_MANY_REQUESTS
}

/// What a non-2xx answer means: `None` for success.
fn refusal(answer: &Answer) -> Option<PixError> {
    let status = answer.status;
    if status.is_success() {
        return None;
    }
    if unavailable(status) {
        return Some(PixError::Unavailable(format!(
            "the PSP answered {}",
            status.as_u16()
        )));
    }
    if status.is_redirection() || status.is_informational() {
        return Some(PixError::Malformed(format!(
            "the PSP answered {} (redirects are not followed)",
            status.as_u16()
        )));
    }
    Some(PixError::Refused(format!(
        "{} ({})",
        Problem::summary(&answer.body, status.as_u16()),
        status.as_u16()
    )))
}

/// A transport failure in words, without the URL.
fn transport(error: &reqwest::Error) -> String {
    if error.is_timeout() {
        "the PSP did not answer in time".to_owned()
    } else if error.is_connect() {
        "cannot connect to the PSP (address, TLS or client certificate)".to_owned()
    } else {
        "the connection to the PSP failed".to_owned()
    }
}
