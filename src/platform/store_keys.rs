//! The `[store]` keys every store adapter shares, read and checked once, and the one
//! `UpstreamClient` each adapter builds from them (object_store's `ClientOptions`, which every
//! backend embeds). An adapter's settings embed [`ClientOptions`] and add only their own keys;
//! `[upstream]` (budget, capacity, read retries) is the other half, one for every adapter,
//! reaching the client through the store's guard.

use std::sync::Arc;
use std::time::Duration;

use iso_currency::Currency;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use url::Url;

use super::upstream::{UpstreamClient, UpstreamGuard};
use crate::money::parse_currency;
use crate::settings::{ConfigProblem, Secret, both_or_neither, is_loopback_url, store_settings};

/// One upstream answer is read up to this size. Shopify's catalog pages with their variants
/// are the largest answers any adapter reads; a WooCommerce or VTEX page is smaller, and no
/// platform needs a tighter bound to be safe (memory is bounded by the store's in-flight calls
/// times this), so every adapter takes the same cap.
pub const MAX_RESPONSE_BYTES: usize = 16 * 1024 * 1024;

/// Milliseconds one call to the store may take, at least and at most (as `[upstream]
/// timeout_ms`).
const TIMEOUT_MS: std::ops::RangeInclusive<u64> = 100..=120_000;

/// The shared keys as the merchant writes them, beside the adapter's own.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClientKeys {
    /// How long one call to the store may take, in milliseconds (100 to 120000): each attempt
    /// of a read (`[upstream]` retries reads within `read_deadline_ms`) and the one attempt of
    /// a write.
    #[serde(default = "default_timeout_ms")]
    timeout_ms: u64,
}

/// The keys [`ClientKeys`] reads: they are taken out of `[store]` before the adapter reads the rest.
const CLIENT_KEYS: &[&str] = &["timeout_ms"];

fn default_timeout_ms() -> u64 {
    10_000
}

impl ClientKeys {
    /// The checked options; a value out of bounds is a problem named by its key.
    pub fn options(&self, problems: &mut Vec<ConfigProblem>) -> ClientOptions {
        if !TIMEOUT_MS.contains(&self.timeout_ms) {
            problems.push(ConfigProblem::new(
                "store.timeout_ms",
                "must be between 100 and 120000",
            ));
        }
        ClientOptions {
            timeout: Duration::from_millis(self.timeout_ms),
            max_response_bytes: MAX_RESPONSE_BYTES,
        }
    }
}

/// What an adapter's one `UpstreamClient` is built from.
#[derive(Debug, Clone)]
pub struct ClientOptions {
    /// Each attempt's bound (`store.timeout_ms`).
    pub timeout: Duration,
    pub max_response_bytes: usize,
}

impl ClientOptions {
    /// The store's client: every part of the adapter takes a clone of it, so the store's
    /// budget and capacity (the `guard`) are counted once.
    pub fn client(
        &self,
        name: &'static str,
        guard: Arc<UpstreamGuard>,
    ) -> Result<UpstreamClient, String> {
        Ok(UpstreamClient::new(name, self.timeout, self.max_response_bytes)?.with_guard(guard))
    }
}

/// Reads `[store]` (without `platform`) as the shared keys and the adapter's own `Own`, each
/// problem named by its key; `None` when either could not be read.
pub fn read_store<Own: DeserializeOwned>(
    store: &toml::Table,
    problems: &mut Vec<ConfigProblem>,
) -> Option<(ClientKeys, Own)> {
    let mut own = store.clone();
    let mut shared = toml::Table::new();
    for key in CLIENT_KEYS {
        if let Some(value) = own.remove(*key) {
            shared.insert((*key).to_owned(), value);
        }
    }
    let own = store_settings::<Own>(&own, problems);
    let shared = store_settings::<ClientKeys>(&shared, problems);
    Some((shared?, own?))
}

/// The schema of one adapter's `[store]`: its own keys (`Own`) and the shared ones, in one
/// object that refuses any other key.
pub fn store_schema<Own: schemars::JsonSchema>(
    generator: &mut schemars::SchemaGenerator,
) -> schemars::Schema {
    let mut schema = Own::json_schema(generator);
    let shared = <ClientKeys as schemars::JsonSchema>::json_schema(generator);
    let shared_properties = shared
        .get("properties")
        .and_then(serde_json::Value::as_object)
        .cloned()
        .unwrap_or_default();
    if let Some(properties) = schema
        .ensure_object()
        .entry("properties")
        .or_insert_with(|| serde_json::Value::Object(Default::default()))
        .as_object_mut()
    {
        properties.extend(shared_properties);
    }
    schema
}

/// A store URL the bridge calls: a host, no query, fragment or credentials, and https unless
/// it is this machine or `insecure_ok` (`store.allow_insecure_http`).
pub fn store_url(
    key: &'static str,
    text: &str,
    insecure_ok: bool,
    problems: &mut Vec<ConfigProblem>,
) -> Option<Url> {
    let url = match Url::parse(text) {
        Ok(url) => url,
        Err(error) => {
            problems.push(ConfigProblem::new(key, format!("not a URL: {error}")));
            return None;
        }
    };
    let problem = if url.host_str().is_none() {
        Some("must have a host")
    } else if url.query().is_some() || url.fragment().is_some() {
        Some("must not have a query or fragment")
    } else if !url.username().is_empty() || url.password().is_some() {
        Some("must not carry credentials")
    } else {
        match url.scheme() {
            "https" => None,
            "http" if is_loopback_url(&url) || insecure_ok => None,
            "http" => Some(
                "must be https (plain http only for loopback, or with store.allow_insecure_http = true)",
            ),
            _ => Some("must be an http(s) URL"),
        }
    };
    match problem {
        Some(message) => {
            problems.push(ConfigProblem::new(key, message));
            None
        }
        None => Some(url),
    }
}

/// A key pair the bridge sends the store: both or neither (a lone one is named on the key that
/// is missing), and never over plain http to another machine, where anyone on the path could
/// read it (`over_http` says why, on the first key).
pub fn store_credentials(
    first: (&'static str, Option<Secret>),
    second: (&'static str, Option<Secret>),
    base_url: Option<&Url>,
    over_http: &str,
    problems: &mut Vec<ConfigProblem>,
) -> Option<(Secret, Secret)> {
    let first_key = first.0;
    let pair = both_or_neither(first, second, problems);
    let overheard = base_url.is_some_and(|url| url.scheme() == "http" && !is_loopback_url(url));
    if pair.is_some() && overheard {
        problems.push(ConfigProblem::new(first_key, over_http));
    }
    pair
}

/// The shop's name as agents see it: `store.name`, else the host it is reached at.
pub fn store_name(name: Option<String>, home: &Url, fallback: &str) -> String {
    name.unwrap_or_else(|| home.host_str().unwrap_or(fallback).to_owned())
}

/// The store's currency, or a problem on `store.currency` that says which code is meant
/// (`meant`: an example and whose currency it is).
pub fn store_currency(
    code: &str,
    meant: &str,
    problems: &mut Vec<ConfigProblem>,
) -> Option<Currency> {
    let currency = parse_currency(code).ok();
    if currency.is_none() {
        problems.push(ConfigProblem::new(
            "store.currency",
            format!("must be an ISO 4217 code such as {meant}"),
        ));
    }
    currency
}

#[cfg(test)]
pub(crate) mod testing {
    #![allow(clippy::unwrap_used)]
    //! What the adapters' settings tests share.

    use crate::settings::ConfigProblem;

    pub fn table(text: &str) -> toml::Table {
        text.parse().unwrap()
    }

    /// The keys `parse` names for `text`, in order (none when it is accepted).
    pub fn problem_keys<T>(
        parse: fn(&toml::Table) -> Result<T, Vec<ConfigProblem>>,
        text: &str,
    ) -> Vec<String> {
        parse(&table(text))
            .err()
            .unwrap_or_default()
            .into_iter()
            .map(|problem| problem.key)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::testing::table;
    use super::*;

    #[derive(Debug, Deserialize, schemars::JsonSchema)]
    #[serde(deny_unknown_fields)]
    struct Own {
        #[serde(rename = "base_url")]
        _base_url: String,
    }

    fn keys(text: &str) -> Vec<String> {
        let mut problems = Vec::new();
        if let Some((shared, _)) = read_store::<Own>(&table(text), &mut problems) {
            shared.options(&mut problems);
        }
        problems.into_iter().map(|problem| problem.key).collect()
    }

    #[test]
    fn the_shared_keys_are_those_the_schema_lists() {
        let mut generator = schemars::SchemaGenerator::default();
        let schema = <ClientKeys as schemars::JsonSchema>::json_schema(&mut generator);
        let listed: Vec<&str> = schema
            .get("properties")
            .and_then(serde_json::Value::as_object)
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(listed, CLIENT_KEYS);
        let merged = store_schema::<Own>(&mut generator);
        let properties = merged.get("properties").unwrap().as_object().unwrap();
        assert!(properties.contains_key("base_url") && properties.contains_key("timeout_ms"));
        assert_eq!(merged.get("additionalProperties"), Some(&false.into()));
    }

    #[test]
    fn one_set_of_timeout_bounds_named_by_key() {
        let base = "platform='x'\nbase_url='https://s.example'";
        assert!(keys(base).is_empty());
        assert!(keys(&format!("{base}\ntimeout_ms=100")).is_empty());
        assert!(keys(&format!("{base}\ntimeout_ms=120000")).is_empty());
        for bad in ["1", "99", "120001"] {
            assert_eq!(
                keys(&format!("{base}\ntimeout_ms={bad}")),
                ["store.timeout_ms"]
            );
        }
        assert_eq!(
            keys(&format!("{base}\ntimeout_ms='ten'")),
            ["store.timeout_ms"]
        );
        let unknown = keys(&format!("{base}\ntimeout='10'"));
        assert_eq!(unknown, ["store.timeout"]);
        // A table that cannot be read at all is not checked further, as before.
        assert_eq!(keys("timeout_ms=0"), ["store"]);
    }

    #[test]
    fn every_adapter_reads_answers_up_to_one_cap() {
        let mut problems = Vec::new();
        let (shared, _) = read_store::<Own>(
            &table("base_url='https://s.example'\ntimeout_ms=2500"),
            &mut problems,
        )
        .unwrap();
        let options = shared.options(&mut problems);
        assert!(problems.is_empty());
        assert_eq!(options.timeout, Duration::from_millis(2500));
        assert_eq!(options.max_response_bytes, 16 << 20);
    }
}
