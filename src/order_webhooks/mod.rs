//! `[order_webhooks]`: order events pushed to the agent's webhook (order.md "Events"). When
//! an order is placed through the bridge, the brain hands the rendered order to
//! [`OrderWebhooks`] (through `brain::OrderEvents`), which queues it and returns at once;
//! a worker POSTs it to the `config.webhook_url` the agent's profile declares for its order
//! capability (read by negotiation), signed with the bridge's key (RFC 9421, `signatures::
//! SigningKey`), whose public JWK the bridge's own profile publishes (`keys`, 08-25;
//! `signing_keys`, 04-08). Failed deliveries (network, 429, 5xx) are retried with jittered
//! exponential backoff, honouring `Retry-After`, under the same `Webhook-Id` /
//! `Idempotency-Key`; a URL negotiation's fetch rules forbid is never contacted. Attempts are
//! bounded per destination host and in all, and no permit is held while waiting to retry. Logs carry the event id, attempt and
//! status only: never the order, the buyer or the URL.

mod deliver;

use std::path::PathBuf;
use std::sync::Arc;

use secrecy::ExposeSecret;
use serde::Deserialize;
use serde_json::Value;

use crate::negotiation::NegotiationConfig;
use crate::settings::{ConfigProblem, Secret};
use crate::signatures::SigningKey;
use crate::signatures::kid_is_plain;

pub use deliver::OrderWebhooks;

#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct OrderWebhooksConfig {
    /// Push order events to the webhook an agent's profile declares (off by default).
    pub enabled: bool,
    /// PEM file of the signing key: PKCS#8 (`BEGIN PRIVATE KEY`, ECDSA P-256 or Ed25519) or
    /// SEC1 (`BEGIN EC PRIVATE KEY`, P-256). Give this or `key`.
    pub key_file: Option<PathBuf>,
    /// The signing key's PEM text itself, usually `{ env = "NAME" }`. Give this or `key_file`.
    pub key: Option<Secret>,
    /// The `kid` the public key is published and signed under; by default its RFC 7638
    /// thumbprint (stable for the key, new with a new key).
    pub key_id: Option<String>,
    /// Attempts per event, the first included.
    pub max_attempts: u32,
    /// The wait after the first failed attempt; each further wait doubles it (the wait taken
    /// is between half of it and all of it, at random).
    pub initial_backoff_ms: u64,
    /// No wait (backoff or the receiver's `Retry-After`) is longer than this.
    pub max_backoff_secs: u64,
    /// One attempt's time limit (connect and answer).
    pub timeout_ms: u64,
    /// Events held at most (waiting, being sent or waiting to retry); past it new events are
    /// dropped (and logged).
    pub queue_capacity: usize,
    /// Attempts under way at once, all agents' webhooks together.
    pub max_concurrent_deliveries: usize,
    /// Attempts under way at once to one webhook host, so a slow or dead agent webhook never
    /// takes all of `max_concurrent_deliveries`.
    pub max_concurrent_per_host: usize,
}

impl Default for OrderWebhooksConfig {
    fn default() -> Self {
        Self {
            enabled: false,
            key_file: None,
            key: None,
            key_id: None,
            max_attempts: 8,
            initial_backoff_ms: 1_000,
            max_backoff_secs: 300,
            timeout_ms: 5_000,
            queue_capacity: 1_000,
            max_concurrent_deliveries: 16,
            max_concurrent_per_host: 4,
        }
    }
}

impl OrderWebhooksConfig {
    /// The signing key, read as start-up reads it: `Ok(None)` when none is configured, else
    /// the problem named by the key that holds it (its bytes are never quoted).
    pub fn signing_key(&self) -> Result<Option<SigningKey>, ConfigProblem> {
        let kid = self.key_id.as_deref();
        match (&self.key_file, &self.key) {
            (Some(_), Some(_)) => Err(ConfigProblem::new(
                "order_webhooks.key",
                "give the signing key as key_file or as key, not both",
            )),
            (None, None) => Ok(None),
            (Some(path), None) => {
                let text = std::fs::read(path).map_err(|error| {
                    ConfigProblem::new(
                        "order_webhooks.key_file",
                        format!("{}: cannot read the file: {error}", path.display()),
                    )
                })?;
                SigningKey::from_pem(&text, kid).map(Some).map_err(|why| {
                    ConfigProblem::new(
                        "order_webhooks.key_file",
                        format!("{}: {why}", path.display()),
                    )
                })
            }
            (None, Some(secret)) => SigningKey::from_pem(secret.0.expose_secret().as_bytes(), kid)
                .map(Some)
                .map_err(|why| ConfigProblem::new("order_webhooks.key", why)),
        }
    }

    pub fn problems(&self) -> Vec<ConfigProblem> {
        let mut problems = Vec::new();
        let mut add = |key: &str, message: &str| problems.push(ConfigProblem::new(key, message));
        if let Some(kid) = &self.key_id
            && !kid_is_plain(kid)
        {
            add(
                "order_webhooks.key_id",
                "must be 1 to 200 visible ASCII characters or spaces, without \" or \\",
            );
        }
        if !(1..=50).contains(&self.max_attempts) {
            add("order_webhooks.max_attempts", "must be between 1 and 50");
        }
        if !(10..=600_000).contains(&self.initial_backoff_ms) {
            add(
                "order_webhooks.initial_backoff_ms",
                "must be between 10 and 600000",
            );
        }
        if !(1..=86_400).contains(&self.max_backoff_secs)
            || self.max_backoff_secs.saturating_mul(1_000) < self.initial_backoff_ms
        {
            add(
                "order_webhooks.max_backoff_secs",
                "must be between 1 and 86400, and not below initial_backoff_ms",
            );
        }
        if !(100..=60_000).contains(&self.timeout_ms) {
            add("order_webhooks.timeout_ms", "must be between 100 and 60000");
        }
        if !(1..=100_000).contains(&self.queue_capacity) {
            add(
                "order_webhooks.queue_capacity",
                "must be between 1 and 100000",
            );
        }
        if !(1..=256).contains(&self.max_concurrent_deliveries) {
            add(
                "order_webhooks.max_concurrent_deliveries",
                "must be between 1 and 256",
            );
        }
        if !(1..=256).contains(&self.max_concurrent_per_host) {
            add(
                "order_webhooks.max_concurrent_per_host",
                "must be between 1 and 256",
            );
        }
        match self.signing_key() {
            Err(problem) => problems.push(problem),
            Ok(None) if self.enabled => problems.push(ConfigProblem::new(
                "order_webhooks.key_file",
                "order webhooks are signed: set key_file (a PEM file) or key (the PEM, e.g. { env = \"NAME\" })",
            )),
            Ok(_) => {}
        }
        problems
    }

    /// The running sender, when enabled (needs a runtime: it starts the delivery worker).
    pub fn start(
        &self,
        negotiation: &NegotiationConfig,
        base_url: &str,
    ) -> Result<Option<(Arc<OrderWebhooks>, Value)>, ConfigProblem> {
        if !self.enabled {
            return Ok(None);
        }
        let Some(key) = self.signing_key()? else {
            return Err(ConfigProblem::new(
                "order_webhooks.key_file",
                "order webhooks are signed: set key_file or key",
            ));
        };
        let jwk = key.jwk();
        Ok(Some((
            OrderWebhooks::start(self, negotiation, key, base_url),
            jwk,
        )))
    }
}
