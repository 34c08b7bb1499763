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
//!
//! With `[redis]` the events wait in Redis (`queue`), not in a replica's memory: any live
//! replica claims the due ones, a claim lapses when its replica stops renewing it, and a
//! retry goes back to the shared queue for whichever replica is alive when it is due.
//! A `next_key` is published beside the signing key so receivers learn it before it signs.

mod deliver;
mod queue;
mod sender;

use std::path::PathBuf;
use std::sync::Arc;

use secrecy::ExposeSecret;
use serde::Deserialize;
use serde_json::Value;

use crate::negotiation::NegotiationConfig;
use crate::replicas::Shared;
use crate::settings::{ConfigProblem, Secret};
use crate::signatures::SigningKey;
use crate::signatures::kid_is_plain;

pub use sender::OrderWebhooks;

/// The running sender and the public keys (JWK) every profile publishes.
pub type Started = (Arc<OrderWebhooks>, Vec<Value>);

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
    /// PEM file of the key that signs next (key rotation): published in the profile beside
    /// the signing key but not used to sign, so receivers already know it when it is
    /// promoted to `key_file`. Same formats as `key_file`; give this or `next_key`.
    pub next_key_file: Option<PathBuf>,
    /// The next key's PEM text itself, usually `{ env = "NAME" }`. Give this or
    /// `next_key_file`.
    pub next_key: Option<Secret>,
    /// The `kid` the next key is published under; by default its RFC 7638 thumbprint. Must
    /// differ from the signing key's.
    pub next_key_id: Option<String>,
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
    /// With `[redis]`: how long a delivery claimed by a replica stays its own while that
    /// replica stops renewing the claim (renewed every third of it). A replica that dies
    /// holding deliveries, another sends them this long after.
    pub claim_timeout_ms: u64,
}

impl Default for OrderWebhooksConfig {
    fn default() -> Self {
        Self {
            enabled: false,
            key_file: None,
            key: None,
            key_id: None,
            next_key_file: None,
            next_key: None,
            next_key_id: None,
            max_attempts: 8,
            initial_backoff_ms: 1_000,
            max_backoff_secs: 300,
            timeout_ms: 5_000,
            queue_capacity: 1_000,
            max_concurrent_deliveries: 16,
            max_concurrent_per_host: 4,
            claim_timeout_ms: 30_000,
        }
    }
}

impl OrderWebhooksConfig {
    /// The signing key, read as start-up reads it: `Ok(None)` when none is configured, else
    /// the problem named by the key that holds it (its bytes are never quoted).
    pub fn signing_key(&self) -> Result<Option<SigningKey>, ConfigProblem> {
        read_key(
            "order_webhooks.key",
            self.key_file.as_ref(),
            self.key.as_ref(),
            self.key_id.as_deref(),
        )
    }

    /// The next key (rotation), read like the signing key.
    pub fn next_signing_key(&self) -> Result<Option<SigningKey>, ConfigProblem> {
        read_key(
            "order_webhooks.next_key",
            self.next_key_file.as_ref(),
            self.next_key.as_ref(),
            self.next_key_id.as_deref(),
        )
    }

    /// The public keys a profile publishes: the signing key's first, then the next key's.
    fn published(&self) -> Result<(SigningKey, Vec<Value>), ConfigProblem> {
        let Some(key) = self.signing_key()? else {
            return Err(ConfigProblem::new(
                "order_webhooks.key_file",
                "order webhooks are signed: set key_file (a PEM file) or key (the PEM, e.g. { env = \"NAME\" })",
            ));
        };
        let mut keys = vec![key.jwk()];
        if let Some(next) = self.next_signing_key()? {
            if next.kid() == key.kid() {
                return Err(ConfigProblem::new(
                    "order_webhooks.next_key_id",
                    "the next key must be published under another kid than the signing key \
                     (a different key, or a different next_key_id)",
                ));
            }
            keys.push(next.jwk());
        }
        Ok((key, keys))
    }

    pub fn problems(&self) -> Vec<ConfigProblem> {
        let mut problems = Vec::new();
        let mut add = |key: &str, message: &str| problems.push(ConfigProblem::new(key, message));
        for (key, kid) in [
            ("order_webhooks.key_id", &self.key_id),
            ("order_webhooks.next_key_id", &self.next_key_id),
        ] {
            if let Some(kid) = kid
                && !kid_is_plain(kid)
            {
                add(
                    key,
                    "must be 1 to 200 visible ASCII characters or spaces, without \" or \\",
                );
            }
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
        if !(1_000..=600_000).contains(&self.claim_timeout_ms) {
            add(
                "order_webhooks.claim_timeout_ms",
                "must be between 1000 and 600000",
            );
        }
        let configured = self.signing_key().map(|key| key.is_some());
        let next_configured = self.next_signing_key().map(|key| key.is_some());
        match (configured, next_configured) {
            (Ok(false), Ok(false)) if !self.enabled => {}
            (Ok(false), Ok(true)) => problems.push(ConfigProblem::new(
                "order_webhooks.next_key_file",
                "a next key is published beside the signing key: set key_file or key too",
            )),
            _ => {
                if let Err(problem) = self.published() {
                    problems.push(problem);
                }
            }
        }
        problems
    }

    /// The running sender, when enabled (needs a runtime: it starts the delivery worker).
    /// With `shared`, events wait in Redis for any replica to send; the public keys come
    /// back to be published.
    pub fn start(
        &self,
        negotiation: &NegotiationConfig,
        base_url: &str,
        shared: Option<&Shared>,
    ) -> Result<Option<Started>, ConfigProblem> {
        if !self.enabled {
            return Ok(None);
        }
        let (key, keys) = self.published()?;
        Ok(Some((
            OrderWebhooks::start(self, negotiation, key, base_url, shared),
            keys,
        )))
    }
}

/// One key from its `{name}_file` or `{name}` setting; problems are named by the setting.
fn read_key(
    name: &str,
    file: Option<&PathBuf>,
    inline: Option<&Secret>,
    kid: Option<&str>,
) -> Result<Option<SigningKey>, ConfigProblem> {
    let file_key = format!("{name}_file");
    match (file, inline) {
        (Some(_), Some(_)) => Err(ConfigProblem::new(
            name,
            format!("give the key as {file_key} or as {name}, not both"),
        )),
        (None, None) => Ok(None),
        (Some(path), None) => {
            let text = std::fs::read(path).map_err(|error| {
                ConfigProblem::new(
                    &file_key,
                    format!("{}: cannot read the file: {error}", path.display()),
                )
            })?;
            SigningKey::from_pem(&text, kid)
                .map(Some)
                .map_err(|why| ConfigProblem::new(&file_key, format!("{}: {why}", path.display())))
        }
        (None, Some(secret)) => SigningKey::from_pem(secret.0.expose_secret().as_bytes(), kid)
            .map(Some)
            .map_err(|why| ConfigProblem::new(name, why)),
    }
}
