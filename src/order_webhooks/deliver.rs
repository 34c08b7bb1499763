//! The deliveries: the sender (`super::sender`) hands an event over only when one of the
//! `queue_capacity` places is free (an event keeps its place until delivered or given up), one
//! worker starts each event's delivery, and the attempts of one delivery. An attempt runs
//! under two permits, its destination host's (`max_concurrent_per_host`) and then one of the
//! `max_concurrent_deliveries`, and gives both back before it waits to retry: a slow or dead
//! receiver holds at most its host's share of the senders, and only while an attempt is under
//! way, so it never stops other agents' events. Every attempt re-checks the URL under
//! negotiation's fetch rules (the address it connects to is the one just checked) and signs
//! afresh (a new `created`); the event's id, timestamp and body stay the same, so the receiver
//! deduplicates on `Webhook-Id` / `Idempotency-Key` (ORD-031). With `[redis]` the events wait
//! in the shared queue (`super::queue`) instead, and each claim runs one attempt here; the
//! in-memory queue stays for a bridge without Redis and for an event Redis could not take.

use std::hash::{BuildHasher, Hasher};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use http::header::{CONTENT_TYPE, RETRY_AFTER};
use http::{HeaderMap, HeaderValue, StatusCode};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc2822;
use tokio::sync::Semaphore;
use url::Url;

use super::OrderWebhooksConfig;
use crate::negotiation::{NegotiationCode, NegotiationConfig, ProfileClient};
use crate::signatures::SigningKey;

/// One event, fixed when queued (and stored as is in the shared queue).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub(super) struct Event {
    pub(super) id: String,
    pub(super) timestamp: i64,
    pub(super) url: String,
    /// The bridge's profile URL for the namespace the order was placed through.
    pub(super) profile: String,
    /// The order entity's JSON text.
    pub(super) body: String,
    /// Attempts already made (by any replica).
    #[serde(default)]
    pub(super) attempts: u32,
}

struct Policy {
    max_attempts: u32,
    initial_backoff: Duration,
    max_backoff: Duration,
    timeout: Duration,
}

impl Policy {
    /// The longest wait after failed attempt `attempt` (1-based): doubling from the initial
    /// wait, capped.
    fn backoff(&self, attempt: u32) -> Duration {
        let factor = 2u32.saturating_pow(attempt.saturating_sub(1).min(20));
        self.initial_backoff
            .saturating_mul(factor)
            .min(self.max_backoff)
    }

    /// The wait actually taken: half of `backoff` fixed, half random, so the retries of many
    /// events that failed together (a receiver down for a while) do not come back together.
    fn jittered_backoff(&self, attempt: u32) -> Duration {
        let longest = u64::try_from(self.backoff(attempt).as_millis()).unwrap_or(u64::MAX);
        Duration::from_millis(longest / 2 + random() % (longest / 2 + 1))
    }
}

/// Cheap randomness for jitter without another dependency: a freshly seeded SipHash.
fn random() -> u64 {
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(Instant::now().elapsed().as_nanos());
    hasher.finish()
}

/// Destination hosts whose permits are remembered; a host forgotten while in use only gets
/// a fresh share (the global bound still holds).
const MAX_HOSTS: u64 = 10_000;
const HOST_IDLE: Duration = Duration::from_secs(3600);

/// What one attempt came to.
enum Outcome {
    Delivered(StatusCode),
    /// The fetch rules forbid the URL: never contacted, not retried.
    Forbidden,
    /// The receiver refused the event (a 4xx other than 408/429, or a redirect): not retried.
    Refused(StatusCode),
    /// Worth another attempt: a network failure, 408, 429 or 5xx, with its `Retry-After`.
    Retry {
        status: Option<StatusCode>,
        after: Option<Duration>,
    },
}

pub(super) struct Deliverer {
    key: SigningKey,
    client: ProfileClient,
    policy: Policy,
    /// Attempts under way at once, all hosts together.
    running: Arc<Semaphore>,
    /// Attempts under way at once to each destination host.
    per_host: moka::future::Cache<String, Arc<Semaphore>>,
    per_host_limit: usize,
}

fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| {
            i64::try_from(elapsed.as_secs()).unwrap_or(i64::MAX)
        })
}

/// `Retry-After` as delay-seconds or an HTTP date (RFC 9110 §10.2.3).
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let text = headers.get(RETRY_AFTER)?.to_str().ok()?.trim();
    if let Ok(seconds) = text.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    let at = OffsetDateTime::parse(text, &Rfc2822).ok()?;
    let wait = at - OffsetDateTime::now_utc();
    Some(Duration::try_from(wait).unwrap_or(Duration::ZERO))
}

fn status_code(status: Option<StatusCode>) -> u16 {
    status.map_or(0, |status| status.as_u16())
}

impl Deliverer {
    pub(super) fn new(
        config: &OrderWebhooksConfig,
        negotiation: &NegotiationConfig,
        key: SigningKey,
    ) -> Self {
        Self {
            key,
            client: ProfileClient::new(negotiation),
            policy: Policy {
                max_attempts: config.max_attempts,
                initial_backoff: Duration::from_millis(config.initial_backoff_ms),
                max_backoff: Duration::from_secs(config.max_backoff_secs),
                timeout: Duration::from_millis(config.timeout_ms),
            },
            running: Arc::new(Semaphore::new(config.max_concurrent_deliveries.max(1))),
            per_host: moka::future::Cache::builder()
                .max_capacity(MAX_HOSTS)
                .time_to_idle(HOST_IDLE)
                .build(),
            per_host_limit: config.max_concurrent_per_host.max(1),
        }
    }

    fn headers(&self, event: &Event) -> Option<HeaderMap> {
        let mut headers = HeaderMap::new();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        // ORD-028: the signer's profile, where the receiver finds the key (SIG-039, SIG-041).
        headers.insert(
            "ucp-agent",
            HeaderValue::from_str(&format!("profile=\"{}\"", event.profile)).ok()?,
        );
        // Standard Webhooks' required headers (order.md "Order Event Webhook"), and UCP's
        // idempotency key with the same value: one event, one key, on every attempt.
        let id = HeaderValue::from_str(&event.id).ok()?;
        headers.insert("webhook-id", id.clone());
        headers.insert("idempotency-key", id);
        headers.insert("webhook-timestamp", HeaderValue::from(event.timestamp));
        Some(headers)
    }

    async fn attempt(&self, url: &Url, event: &Event) -> Outcome {
        let retry = Outcome::Retry {
            status: None,
            after: None,
        };
        let client = match self.client.client_for(url, self.policy.timeout).await {
            Ok(client) => client,
            Err(refusal) if refusal.code == NegotiationCode::InvalidProfileUrl => {
                return Outcome::Forbidden;
            }
            Err(_) => return retry,
        };
        let Some(mut headers) = self.headers(event) else {
            return Outcome::Forbidden;
        };
        // ORD-026, ORD-027, ORD-036, SIG-027: signed over the target, the identity, the
        // idempotency key, the event's headers and the body (SIG-014 … SIG-018).
        let signed = match self.key.sign_request(
            "POST",
            url,
            &headers,
            &[
                "ucp-agent",
                "idempotency-key",
                "webhook-id",
                "webhook-timestamp",
                "content-type",
            ],
            event.body.as_bytes(),
            now(),
        ) {
            Ok(signed) => signed,
            Err(_) => return Outcome::Forbidden,
        };
        for (name, value) in [
            ("content-digest", signed.content_digest),
            ("signature-input", signed.signature_input),
            ("signature", signed.signature),
        ] {
            match HeaderValue::from_str(&value) {
                Ok(value) => {
                    headers.insert(name, value);
                }
                Err(_) => return Outcome::Forbidden,
            }
        }
        let response = client
            .post(url.clone())
            .headers(headers)
            .body(event.body.clone())
            .send()
            .await;
        let Ok(response) = response else {
            return retry;
        };
        let status = response.status();
        if status.is_success() {
            Outcome::Delivered(status)
        } else if status.is_server_error()
            || status == StatusCode::TOO_MANY_REQUESTS
            || status == StatusCode::REQUEST_TIMEOUT
        {
            Outcome::Retry {
                status: Some(status),
                after: retry_after(response.headers()),
            }
        } else {
            Outcome::Refused(status)
        }
    }

    /// One attempt under its host's permit and then a global one, both given back when it
    /// ends. The host's first: an attempt waiting for its host holds nothing others need.
    async fn attempt_in_turn(&self, url: &Url, event: &Event) -> Outcome {
        let host = url.host_str().unwrap_or_default().to_ascii_lowercase();
        let limit = self.per_host_limit;
        let host_permits = self
            .per_host
            .get_with(host, async move { Arc::new(Semaphore::new(limit)) })
            .await;
        let (Ok(_host), Ok(_running)) = (
            host_permits.acquire_owned().await,
            self.running.clone().acquire_owned().await,
        ) else {
            return Outcome::Forbidden;
        };
        self.attempt(url, event).await
    }

    /// Attempt number `attempt` (1-based) of `event`, and what comes of it: the wait before
    /// the next attempt, or `None` when the delivery is over (delivered, refused, forbidden
    /// or out of attempts), each logged.
    pub(super) async fn attempt_once(&self, event: &Event, attempt: u32) -> Option<Duration> {
        let id = event.id.as_str();
        let Ok(url) = Url::parse(&event.url) else {
            tracing::warn!(
                event_id = id,
                "order event not sent: the agent's webhook_url is not a URL"
            );
            return None;
        };
        let max = self.policy.max_attempts.max(1);
        match self.attempt_in_turn(&url, event).await {
            Outcome::Delivered(status) => {
                tracing::info!(
                    event_id = id,
                    attempt,
                    status = status.as_u16(),
                    "order event delivered"
                );
                None
            }
            Outcome::Forbidden => {
                tracing::warn!(
                    event_id = id,
                    attempt,
                    "order event not sent: the agent's webhook_url is not one the bridge may \
                     reach (https only unless negotiation.allow_http_hosts; no private or \
                     special-use address unless negotiation.allow_private_hosts)"
                );
                None
            }
            Outcome::Refused(status) => {
                tracing::warn!(
                    event_id = id,
                    attempt,
                    status = status.as_u16(),
                    "order event refused by the agent's webhook; not retried"
                );
                None
            }
            Outcome::Retry { status, after } => {
                if attempt >= max {
                    tracing::warn!(
                        event_id = id,
                        attempt,
                        status = status_code(status),
                        "order event not delivered: attempts exhausted"
                    );
                    return None;
                }
                let wait = after
                    .unwrap_or_else(|| self.policy.jittered_backoff(attempt))
                    .min(self.policy.max_backoff);
                tracing::info!(
                    event_id = id,
                    attempt,
                    status = status_code(status),
                    retry_in_ms = u64::try_from(wait.as_millis()).unwrap_or(u64::MAX),
                    "order event delivery failed; retrying"
                );
                Some(wait)
            }
        }
    }

    /// Every attempt from this process, waiting between them (the in-memory queue).
    pub(super) async fn deliver(&self, event: Event) {
        for attempt in 1..=self.policy.max_attempts.max(1) {
            match self.attempt_once(&event, attempt).await {
                Some(wait) => tokio::time::sleep(wait).await,
                None => return,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn backoff_doubles_up_to_the_cap_and_retry_after_reads_both_forms() {
        let policy = Policy {
            max_attempts: 5,
            initial_backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(3),
            timeout: Duration::from_secs(1),
        };
        let waits: Vec<u128> = (1..=5).map(|n| policy.backoff(n).as_millis()).collect();
        assert_eq!(waits, vec![500, 1000, 2000, 3000, 3000]);
        for attempt in 1..=5 {
            let longest = policy.backoff(attempt);
            for _ in 0..50 {
                let wait = policy.jittered_backoff(attempt);
                assert!(
                    wait >= longest / 2 && wait <= longest,
                    "{wait:?} of {longest:?}"
                );
            }
        }
        let mut headers = HeaderMap::new();
        headers.insert(RETRY_AFTER, HeaderValue::from_static("7"));
        assert_eq!(retry_after(&headers), Some(Duration::from_secs(7)));
        headers.insert(
            RETRY_AFTER,
            HeaderValue::from_static("Sun, 06 Nov 1994 08:49:37 GMT"),
        );
        assert_eq!(retry_after(&headers), Some(Duration::ZERO));
    }
}
