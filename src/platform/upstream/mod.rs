//! The one road every adapter takes to its upstream: timeouts, a body-size cap, and the
//! mapping of transport failures and throttling to `PlatformError`. Errors never carry the
//! request URL (it may hold credentials in its query) nor the upstream body.

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use reqwest::header::{HeaderMap, RETRY_AFTER};
use reqwest::{RequestBuilder, StatusCode};
use serde::de::DeserializeOwned;

mod capacity;
mod policy;
mod shared_budget;

pub use capacity::{Load, LoadReading};
use policy::retryable;
pub use policy::{UpstreamConfig, UpstreamGuard, UpstreamPolicy};
pub use shared_budget::SharedBudget;

use crate::platform::error::PlatformError;
use crate::telemetry;

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
    /// The per-attempt timeout the client was built with (when the policy sets none).
    client_timeout: Duration,
    /// Budget, throttling hold and retries; shared by clones (one store, one budget).
    guard: Arc<UpstreamGuard>,
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
            client_timeout: timeout,
            // Default budget and retries, but the per-attempt timeout stays the one given here.
            guard: Arc::new(UpstreamGuard::new(UpstreamPolicy {
                attempt_timeout: None,
                ..UpstreamPolicy::default()
            })),
        })
    }

    /// Replaces the default budget/retry policy, typically with
    /// `UpstreamPolicy::from(&config.upstream)`.
    pub fn with_limits(self, policy: UpstreamPolicy) -> Self {
        self.with_guard(Arc::new(UpstreamGuard::new(policy)))
    }

    /// Draws on `guard`: every client of one store shares one, so the store's rate and
    /// capacity are counted once however many parts of an adapter call it.
    pub fn with_guard(mut self, guard: Arc<UpstreamGuard>) -> Self {
        self.guard = guard;
        self
    }

    /// How busy this store is kept (shared by every client of the store's guard).
    pub fn load(&self) -> Arc<Load> {
        self.guard.capacity.load()
    }

    pub fn http(&self) -> &reqwest::Client {
        &self.http
    }

    /// Sends one request within the store's budget. Throttling (429, Shopify's 430) and
    /// server errors (5xx) become errors here; every other status is handed back for the
    /// adapter to interpret. Reads are retried with jittered backoff on throttling, 5xx and
    /// transport failures while the read deadline allows; writes go out exactly once.
    pub async fn send(
        &self,
        request: RequestBuilder,
        kind: CallKind,
    ) -> Result<UpstreamResponse, PlatformError> {
        self.send_judged(request, kind, |_| None).await
    }

    /// `send`, with the adapter's own verdict on an answer that is HTTP-wise fine: GraphQL
    /// says "throttled" in a 200 body, and such a verdict is retried exactly like a 429.
    pub async fn send_judged(
        &self,
        request: RequestBuilder,
        kind: CallKind,
        judge: impl Fn(&UpstreamResponse) -> Option<PlatformError>,
    ) -> Result<UpstreamResponse, PlatformError> {
        let deadline = Instant::now() + self.guard.policy.read_deadline;
        if kind == CallKind::Write {
            return self.send_until(request, kind, deadline, &judge).await;
        }
        // The deadline bounds the whole read: waiting for budget, every attempt and every
        // backoff. Each attempt also gets at most what is left of it.
        match tokio::time::timeout_at(
            deadline.into(),
            self.send_until(request, kind, deadline, &judge),
        )
        .await
        {
            Ok(outcome) => outcome,
            Err(_) => {
                crate::prometheus::upstream_call(self.name, "timeout");
                tracing::warn!(
                    upstream = self.name,
                    deadline_ms = self.guard.policy.read_deadline.as_millis() as u64,
                    "upstream read deadline passed"
                );
                Err(PlatformError::Unavailable {
                    reason: "the store did not answer in time".to_owned(),
                    retry_after: Some(Duration::from_secs(5)),
                })
            }
        }
    }

    async fn send_until(
        &self,
        request: RequestBuilder,
        kind: CallKind,
        deadline: Instant,
        judge: &impl Fn(&UpstreamResponse) -> Option<PlatformError>,
    ) -> Result<UpstreamResponse, PlatformError> {
        let policy = &self.guard.policy;
        let mut pending = Some(request);
        let mut retry = 0u32;
        loop {
            let Some(current) = pending.take() else {
                return Err(PlatformError::Unavailable {
                    reason: "the request could not be repeated".to_owned(),
                    retry_after: Some(Duration::from_secs(5)),
                });
            };
            // Bodies that stream cannot be cloned: such a read is simply not retried.
            if kind == CallKind::Read && retry < policy.max_retries {
                pending = current.try_clone();
            }
            self.guard.admit(self.name).await?;
            let waits_until = match kind {
                CallKind::Read => deadline.min(Instant::now() + policy.max_wait),
                CallKind::Write => Instant::now() + policy.max_wait,
            };
            // Held for the attempt only: a backoff waits without taking the store's capacity.
            let slot = self.guard.capacity.slot(self.name, waits_until).await?;
            if kind == CallKind::Write {
                // Inside a cart's fenced write, a mutation leaves only while that cart's lease
                // is still ours (checked after any wait for budget or capacity, right before
                // sending).
                crate::platform::fence::check().await?;
            }
            let timeout = policy.attempt_timeout.unwrap_or(self.client_timeout);
            let budget = match kind {
                CallKind::Read => deadline
                    .checked_duration_since(Instant::now())
                    .unwrap_or(Duration::from_millis(1))
                    .min(timeout),
                CallKind::Write => timeout,
            };
            let current = current.timeout(budget);
            let judged = self
                .attempt(current, kind, retry)
                .await
                .and_then(|response| match judge(&response) {
                    Some(error) => Err(error),
                    None => Ok(response),
                });
            drop(slot);
            let error = match judged {
                Ok(response) => {
                    crate::prometheus::upstream_call(self.name, "ok");
                    return Ok(response);
                }
                Err(error) => error,
            };
            crate::prometheus::upstream_call(self.name, error_label(&error));
            if let PlatformError::RateLimited { retry_after } = &error {
                self.guard
                    .hold_for(retry_after.unwrap_or(Duration::from_secs(1)));
            }
            if pending.is_none() || !retryable(&error) {
                return Err(error);
            }
            retry += 1;
            let mut wait = self.guard.backoff(retry);
            if let PlatformError::RateLimited {
                retry_after: Some(after),
            } = &error
            {
                if *after > policy.max_wait {
                    return Err(error);
                }
                wait = wait.max(*after);
            }
            if Instant::now() + wait >= deadline {
                return Err(error);
            }
            tracing::debug!(
                upstream = self.name,
                retry,
                wait_ms = wait.as_millis() as u64,
                "retrying read"
            );
            tokio::time::sleep(wait).await;
        }
    }

    /// One request on the wire, inside its trace span (`retry`: how many went before it).
    async fn attempt(
        &self,
        request: RequestBuilder,
        kind: CallKind,
        retry: u32,
    ) -> Result<UpstreamResponse, PlatformError> {
        let (client, built) = request.build_split();
        let mut request = built.map_err(|error| self.unreached(error, kind))?;
        // The span names the route's template only: paths carry ids and tokens.
        let span = if telemetry::enabled() {
            let (method, path) = (request.method().clone(), request.url().path().to_owned());
            telemetry::upstream_request(
                self.name,
                method.as_str(),
                &path,
                retry,
                request.headers_mut(),
            )
        } else {
            telemetry::UpstreamSpan::off()
        };
        let (status, outcome) = self.exchange(client.execute(request), kind).await;
        span.finish(status, outcome.as_ref().err().map(error_label));
        outcome
    }

    fn unreached(&self, error: reqwest::Error, kind: CallKind) -> PlatformError {
        let error = error.without_url();
        tracing::warn!(upstream = self.name, ?kind, %error, "upstream call failed");
        PlatformError::Unavailable {
            reason: if error.is_timeout() {
                "the store did not answer in time".to_owned()
            } else {
                "the store could not be reached".to_owned()
            },
            retry_after: Some(Duration::from_secs(5)),
        }
    }

    /// The response read within the body cap, with its status when one came.
    async fn exchange(
        &self,
        sent: impl Future<Output = Result<reqwest::Response, reqwest::Error>>,
        kind: CallKind,
    ) -> (Option<u16>, Result<UpstreamResponse, PlatformError>) {
        let started = Instant::now();
        let mut response = match sent.await {
            Ok(response) => response,
            Err(error) => return (None, Err(self.unreached(error, kind))),
        };
        let status = response.status();
        (
            Some(status.as_u16()),
            self.read(&mut response, kind, started).await,
        )
    }

    async fn read(
        &self,
        response: &mut reqwest::Response,
        kind: CallKind,
        started: Instant,
    ) -> Result<UpstreamResponse, PlatformError> {
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

fn error_label(error: &PlatformError) -> &'static str {
    match error {
        PlatformError::RateLimited { .. } => "throttled",
        PlatformError::Unavailable { .. }
        | PlatformError::Full { .. }
        | PlatformError::WritesPaused { .. } => "unavailable",
        PlatformError::BadResponse(_) => "bad_response",
        PlatformError::Unauthorized { .. } => "unauthorized",
        PlatformError::InvalidInput(_)
        | PlatformError::InvalidAt { .. }
        | PlatformError::Unsupported(_) => "refused",
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
