//! The one road every adapter takes to its upstream: timeouts, a body-size cap, and the
//! mapping of transport failures and throttling to `PlatformError`. Errors never carry the
//! request URL (it may hold credentials in its query) nor the upstream body.

use std::time::Duration;

use bytes::Bytes;
use reqwest::header::{HeaderMap, RETRY_AFTER};
use reqwest::{RequestBuilder, StatusCode};
use serde::de::DeserializeOwned;

use super::PlatformError;

/// Reads may be retried by the caller's policy; writes are never repeated blindly.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallKind {
    Read,
    Write,
}

#[derive(Debug, Clone)]
pub struct UpstreamResponse {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Bytes,
}

impl UpstreamResponse {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|value| value.to_str().ok())
    }

    /// Decodes the body; a body that is not the expected JSON is a `BadResponse` that names
    /// only the type that failed, not the content.
    pub fn json<T: DeserializeOwned>(&self, what: &str) -> Result<T, PlatformError> {
        serde_json::from_slice(&self.body).map_err(|error| {
            PlatformError::BadResponse(format!(
                "{what}: {} at line {} column {}",
                classify(&error),
                error.line(),
                error.column()
            ))
        })
    }
}

fn classify(error: &serde_json::Error) -> &'static str {
    match error.classify() {
        serde_json::error::Category::Io => "I/O error",
        serde_json::error::Category::Syntax => "not JSON",
        serde_json::error::Category::Data => "unexpected shape",
        serde_json::error::Category::Eof => "truncated JSON",
    }
}

/// `Retry-After` in seconds (the HTTP-date form is rare on APIs and treated as absent).
pub fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let value = headers.get(RETRY_AFTER)?.to_str().ok()?.trim();
    let seconds: f64 = value.parse().ok()?;
    (seconds.is_finite() && seconds >= 0.0).then(|| Duration::from_secs_f64(seconds.min(3600.0)))
}

#[derive(Clone)]
pub struct UpstreamClient {
    http: reqwest::Client,
    /// For logs: "shopify", "woocommerce".
    name: &'static str,
    max_body_bytes: usize,
}

impl UpstreamClient {
    pub fn new(
        name: &'static str,
        timeout: Duration,
        max_body_bytes: usize,
    ) -> Result<Self, String> {
        let http = reqwest::Client::builder()
            .timeout(timeout)
            .connect_timeout(timeout.min(Duration::from_secs(5)))
            .redirect(reqwest::redirect::Policy::limited(3))
            .user_agent(concat!("bcp-bridge/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|error| format!("cannot build the HTTP client: {}", error.without_url()))?;
        Ok(Self {
            http,
            name,
            max_body_bytes,
        })
    }

    pub fn http(&self) -> &reqwest::Client {
        &self.http
    }

    /// Sends one request. Throttling (429, Shopify's 430) and server errors (5xx) become
    /// errors here; every other status is handed back for the adapter to interpret.
    pub async fn send(
        &self,
        request: RequestBuilder,
        kind: CallKind,
    ) -> Result<UpstreamResponse, PlatformError> {
        let started = std::time::Instant::now();
        let result = request.send().await;
        let mut response = match result {
            Ok(response) => response,
            Err(error) => {
                let error = error.without_url();
                tracing::warn!(upstream = self.name, ?kind, %error, "upstream call failed");
                return Err(PlatformError::Unavailable {
                    reason: if error.is_timeout() {
                        "the store did not answer in time".to_owned()
                    } else {
                        "the store could not be reached".to_owned()
                    },
                    retry_after: Some(Duration::from_secs(5)),
                });
            }
        };
        let status = response.status();
        let headers = response.headers().clone();
        let mut body = Vec::new();
        loop {
            match response.chunk().await {
                Ok(Some(chunk)) => {
                    if body.len() + chunk.len() > self.max_body_bytes {
                        return Err(PlatformError::BadResponse(format!(
                            "response larger than {} bytes",
                            self.max_body_bytes
                        )));
                    }
                    body.extend_from_slice(&chunk);
                }
                Ok(None) => break,
                Err(error) => {
                    let error = error.without_url();
                    tracing::warn!(upstream = self.name, %error, "upstream body failed");
                    return Err(PlatformError::Unavailable {
                        reason: "the store's answer was cut off".to_owned(),
                        retry_after: Some(Duration::from_secs(5)),
                    });
                }
            }
        }
        tracing::debug!(
            upstream = self.name,
            ?kind,
            status = status.as_u16(),
            elapsed_ms = started.elapsed().as_secs_f64() * 1000.0,
            "upstream answered"
        );
        if status == StatusCode::TOO_MANY_REQUESTS || status.as_u16() == 430 {
            return Err(PlatformError::RateLimited {
                retry_after: retry_after(&headers),
            });
        }
        if status.is_server_error() {
            return Err(PlatformError::Unavailable {
                reason: format!("the store answered HTTP {}", status.as_u16()),
                retry_after: retry_after(&headers),
            });
        }
        Ok(UpstreamResponse {
            status,
            headers,
            body: Bytes::from(body),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_reads_seconds_only() {
        let mut headers = HeaderMap::new();
        headers.insert(RETRY_AFTER, "2".parse().unwrap_or_else(|_| unreachable!()));
        assert_eq!(retry_after(&headers), Some(Duration::from_secs(2)));
        headers.insert(
            RETRY_AFTER,
            "1.5".parse().unwrap_or_else(|_| unreachable!()),
        );
        assert_eq!(retry_after(&headers), Some(Duration::from_millis(1500)));
        headers.insert(
            RETRY_AFTER,
            "Wed, 21 Oct 2015 07:28:00 GMT"
                .parse()
                .unwrap_or_else(|_| unreachable!()),
        );
        assert_eq!(retry_after(&headers), None);
    }
}
