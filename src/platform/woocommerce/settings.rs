//! The `[store]` table for `platform = "woocommerce"`, checked without touching the network.

use iso_currency::Currency;
use serde::Deserialize;
use url::Url;

use crate::platform::store_keys::{
    ClientOptions, read_store, store_credentials, store_currency, store_name, store_url,
};
use crate::settings::{ConfigProblem, Secret};

/// How the buyer's browser is handed the Store API cart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CheckoutMode {
    /// `<checkout_path>?session=<Cart-Token>` (WooCommerce 10+ adopts the token's session).
    Session,
    /// `/checkout-link/?products=<id>:<qty>,…` (WooCommerce 10+ builds a fresh cart).
    Link,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[schemars(rename = "WooCommerceStore")]
#[serde(deny_unknown_fields)]
pub(super) struct Raw {
    base_url: String,
    currency: String,
    name: Option<String>,
    #[serde(default)]
    allow_insecure_http: bool,
    #[serde(default = "default_checkout_mode")]
    checkout: CheckoutMode,
    #[serde(default = "default_checkout_path")]
    checkout_path: String,
    #[serde(default = "default_category_ttl")]
    category_cache_secs: u64,
    /// Optional read-only REST API v3 key pair (merchant default variations).
    consumer_key: Option<Secret>,
    consumer_secret: Option<Secret>,
    /// The http `base_url` is a proxy that reaches the store over TLS (so WooCommerce sees
    /// https and accepts the keys).
    #[serde(default)]
    rest_v3_tls_proxy: bool,
    /// The order meta keys an NF-e plugin keeps the invoice in; `get_order` then answers
    /// `order.nfe` (BCP `br.dev.bcp.shopping.nfe`), read through REST v3 (needs the key pair).
    nfe_meta: Option<NfeMeta>,
}

/// Which order meta keys (the plugin's, as the order's `meta_data` in REST v3 shows them)
/// hold each part of the NF-e reference.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NfeMeta {
    /// The meta key of the 44-digit access key (chave de acesso); orders without it have no NF-e.
    pub access_key: String,
    /// The meta key of the DANFE's URL (PDF).
    pub danfe_url: Option<String>,
    /// The meta key of the authorised XML's URL.
    pub xml_url: Option<String>,
    /// The meta key of the issue time (RFC 3339, or `YYYY-MM-DD HH:MM:SS` in UTC).
    pub issued_at: Option<String>,
}

impl NfeMeta {
    fn keys(&self) -> impl Iterator<Item = (&'static str, &str)> {
        [
            ("access_key", Some(self.access_key.as_str())),
            ("danfe_url", self.danfe_url.as_deref()),
            ("xml_url", self.xml_url.as_deref()),
            ("issued_at", self.issued_at.as_deref()),
        ]
        .into_iter()
        .filter_map(|(name, key)| key.map(|key| (name, key)))
    }
}

fn default_checkout_mode() -> CheckoutMode {
    CheckoutMode::Session
}
fn default_checkout_path() -> String {
    "/checkout/".to_owned()
}
fn default_category_ttl() -> u64 {
    300
}

#[derive(Debug, Clone)]
pub struct WooSettings {
    /// The shop's home, with a trailing slash so relative joins stay under it.
    pub base_url: Url,
    pub currency: Currency,
    pub name: String,
    /// The shared keys the store's client is built from.
    pub client: ClientOptions,
    pub checkout: CheckoutMode,
    pub checkout_path: String,
    pub category_cache_secs: u64,
    /// `(consumer_key, consumer_secret)` when REST v3 is enabled.
    pub rest_v3: Option<(Secret, Secret)>,
    pub rest_v3_tls_proxy: bool,
    pub nfe_meta: Option<NfeMeta>,
}

/// WooCommerce authenticates REST API keys with Basic auth only over TLS: over plain http
/// every REST v3 request is answered 401, whatever the key's permissions.
pub const V3_NEEDS_TLS: &str = "WooCommerce accepts REST API keys (Basic auth) only over https: with an http base_url every REST v3 request gets 401 whatever the key's permissions; use an https base_url, or a TLS-terminating proxy (an http base_url that reaches the store over TLS, declared with store.rest_v3_tls_proxy = true), or drop the keys";

/// What `check` reports: every parse problem, and REST v3 keys on an http store even on
/// loopback (where the bridge may send them, but a real WooCommerce still answers 401).
pub fn check(store: &toml::Table) -> Vec<ConfigProblem> {
    match parse(store) {
        Err(problems) => problems,
        Ok(settings) if v3_over_http(&settings) => {
            vec![ConfigProblem::new("store.consumer_key", V3_NEEDS_TLS)]
        }
        Ok(_) => Vec::new(),
    }
}

pub fn v3_over_http(settings: &WooSettings) -> bool {
    settings.rest_v3.is_some()
        && settings.base_url.scheme() == "http"
        && !settings.rest_v3_tls_proxy
}

pub fn parse(store: &toml::Table) -> Result<WooSettings, Vec<ConfigProblem>> {
    let mut problems = Vec::new();
    let Some((shared, raw)) = read_store::<Raw>(store, &mut problems) else {
        return Err(problems);
    };
    let base_url = store_url(
        "store.base_url",
        &raw.base_url,
        raw.allow_insecure_http,
        &mut problems,
    );
    let currency = store_currency(
        &raw.currency,
        "USD (the store's WooCommerce currency)",
        &mut problems,
    );
    let client = shared.options(&mut problems);
    let path = &raw.checkout_path;
    if !path.starts_with('/') || path.starts_with("//") || path.contains(['?', '#', '\\', ' ']) {
        problems.push(ConfigProblem::new(
            "store.checkout_path",
            "must be an absolute path such as /checkout/",
        ));
    }
    // Basic auth over plain http would hand the key pair to anyone on the path (and the
    // store refuses it anyway, see `V3_NEEDS_TLS`).
    let rest_v3 = store_credentials(
        ("store.consumer_key", raw.consumer_key),
        ("store.consumer_secret", raw.consumer_secret),
        base_url.as_ref(),
        V3_NEEDS_TLS,
        &mut problems,
    );
    if let Some(meta) = &raw.nfe_meta {
        nfe_meta_problems(meta, rest_v3.is_some(), &mut problems);
    }
    match (base_url, currency) {
        (Some(mut base_url), Some(currency)) if problems.is_empty() => {
            if !base_url.path().ends_with('/') {
                let path = format!("{}/", base_url.path());
                base_url.set_path(&path);
            }
            let name = store_name(raw.name, &base_url, "WooCommerce");
            Ok(WooSettings {
                base_url,
                currency,
                name,
                client,
                checkout: raw.checkout,
                checkout_path: raw.checkout_path,
                category_cache_secs: raw.category_cache_secs,
                rest_v3,
                rest_v3_tls_proxy: raw.rest_v3_tls_proxy,
                nfe_meta: raw.nfe_meta,
            })
        }
        _ => Err(problems),
    }
}

fn nfe_meta_problems(meta: &NfeMeta, with_rest_v3: bool, problems: &mut Vec<ConfigProblem>) {
    for (name, key) in meta.keys() {
        // A meta key is one WordPress identifier: no spaces, nothing a query could split.
        if key.is_empty()
            || key.len() > 255
            || !key
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "_-/.:".contains(c))
        {
            problems.push(ConfigProblem::new(
                format!("store.nfe_meta.{name}"),
                "must be an order meta key (letters, digits, _ - / . :), such as _nfe_chave",
            ));
        }
    }
    if !with_rest_v3 {
        problems.push(ConfigProblem::new(
            "store.nfe_meta",
            "order meta is read through REST API v3: set store.consumer_key and store.consumer_secret (a read key)",
        ));
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::platform::store_keys::testing::{problem_keys, table};

    #[test]
    fn plain_http_only_for_loopback_or_when_allowed() {
        let ok = "platform='woocommerce'\ncurrency='USD'\nbase_url='http://127.0.0.1:9/shop'";
        let settings = parse(&table(ok)).unwrap();
        assert_eq!(settings.base_url.as_str(), "http://127.0.0.1:9/shop/");
        assert_eq!(
            problem_keys(parse, "currency='USD'\nbase_url='http://shop.example'"),
            ["store.base_url"]
        );
        assert!(
            problem_keys(
                parse,
                "currency='USD'\nbase_url='http://shop.example'\nallow_insecure_http=true"
            )
            .is_empty()
        );
    }

    #[test]
    fn rest_v3_keys_over_http_are_named_by_check_even_on_loopback() {
        let keys = "\nconsumer_key='ck_1'\nconsumer_secret='cs_1'";
        for base in [
            "http://127.0.0.1:9",
            "http://localhost:9",
            "http://shop.example",
        ] {
            let text = format!("currency='USD'\nbase_url='{base}'\nallow_insecure_http=true{keys}");
            let problems = check(&table(&text));
            assert_eq!(problems.len(), 1, "{base}: {problems:?}");
            assert_eq!(problems[0].key, "store.consumer_key");
            assert!(
                problems[0].message.contains("only over https"),
                "{problems:?}"
            );
            assert!(problems[0].message.contains("TLS-terminating proxy"));
        }
        let tls = format!("currency='USD'\nbase_url='https://shop.example'{keys}");
        assert!(check(&table(&tls)).is_empty());
        let plain = "currency='USD'\nbase_url='http://127.0.0.1:9'";
        assert!(check(&table(plain)).is_empty());
        let proxied =
            format!("currency='USD'\nbase_url='http://127.0.0.1:9'{keys}\nrest_v3_tls_proxy=true");
        assert!(check(&table(&proxied)).is_empty());
    }

    #[test]
    fn issue_37_nfe_meta_keys_are_checked_by_name() {
        let keys_pair = "\nconsumer_key='ck_1'\nconsumer_secret='cs_1'";
        let base = "currency='BRL'\nbase_url='https://s.example'";
        let good = format!(
            "{base}{keys_pair}\n[nfe_meta]\naccess_key='_nfe_chave'\ndanfe_url='_nfe_danfe'"
        );
        let settings = parse(&table(&good)).unwrap();
        assert_eq!(settings.nfe_meta.unwrap().access_key, "_nfe_chave");
        assert_eq!(
            problem_keys(
                parse,
                &format!("{base}\n[nfe_meta]\naccess_key='_nfe_chave'")
            ),
            ["store.nfe_meta"]
        );
        assert_eq!(
            problem_keys(
                parse,
                &format!("{base}{keys_pair}\n[nfe_meta]\naccess_key='bad key'\nxml_url=''")
            ),
            ["store.nfe_meta.access_key", "store.nfe_meta.xml_url"]
        );
        let unknown = problem_keys(
            parse,
            &format!("{base}{keys_pair}\n[nfe_meta]\naccess_key='k'\nchave='x'"),
        );
        assert_eq!(unknown.len(), 1);
        assert!(unknown[0].starts_with("store.nfe_meta"), "{unknown:?}");
        assert!(parse(&table(base)).unwrap().nfe_meta.is_none());
    }

    #[test]
    fn every_bad_key_is_named() {
        assert_eq!(
            problem_keys(
                parse,
                "currency='XXZ'\nbase_url='https://s.example'\ntimeout_ms=1\ncheckout_path='x'"
            ),
            ["store.currency", "store.timeout_ms", "store.checkout_path"]
        );
        let unknown = problem_keys(
            parse,
            "currency='USD'\nbase_url='https://s.example'\nconsumer_keyy='x'",
        );
        assert_eq!(unknown.len(), 1);
        assert!(unknown[0].starts_with("store.consumer_keyy"), "{unknown:?}");
        assert_eq!(problem_keys(parse, "currency='USD'"), ["store"]);
        assert_eq!(
            problem_keys(
                parse,
                "currency='USD'\nbase_url='https://s.example'\nconsumer_key='ck_1'"
            ),
            ["store.consumer_secret"]
        );
        assert_eq!(
            problem_keys(
                parse,
                "currency='USD'\nbase_url='http://s.example'\nallow_insecure_http=true\nconsumer_key='ck_1'\nconsumer_secret='cs_1'"
            ),
            ["store.consumer_key"]
        );
    }
}
