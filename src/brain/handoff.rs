//! `continue_url`: the store's own checkout URL, rewritten by the merchant's rules, with the
//! agent's `attribution` as query parameters. Order attribution reads them from the landing
//! URL: WooCommerce's (sourcebuster) records `utm_*`, Shopify its landing-page UTMs. No
//! agent parameter replaces one the store's URL carries, one of the platform's reserved
//! keys (its cart token, coupon, …), or one the merchant configured.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;
use url::Url;

use crate::settings::ConfigProblem;

#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct CartConfig {
    /// Replaces scheme, host and port of the store's checkout URL (e.g. the shop's public
    /// domain when the upstream answers with an internal one).
    pub checkout_base_url: Option<Url>,
    /// Query parameters added to every `continue_url` (attribution), replacing same-name ones.
    pub checkout_params: BTreeMap<String, String>,
}

impl CartConfig {
    pub fn problems(&self) -> Vec<ConfigProblem> {
        let mut problems = Vec::new();
        if let Some(url) = &self.checkout_base_url
            && (!matches!(url.scheme(), "http" | "https") || url.host_str().is_none())
        {
            problems.push(ConfigProblem::new(
                "cart.checkout_base_url",
                "must be an http(s) URL with a host",
            ));
        }
        problems
    }
}

#[derive(Debug, Clone, Default)]
pub struct CheckoutRewrite {
    base: Option<Url>,
    params: BTreeMap<String, String>,
    /// The platform's own checkout keys (`PlatformFactory::reserved_checkout_params`).
    reserved: &'static [&'static str],
}

/// GA4-style names (UCP's example) and the `utm_*` parameter each one is on a landing URL.
const CAMPAIGN_UTM: &[(&str, &str)] = &[
    ("campaign_source", "utm_source"),
    ("campaign_medium", "utm_medium"),
    ("campaign_name", "utm_campaign"),
    ("campaign_id", "utm_id"),
    ("campaign_term", "utm_term"),
    ("campaign_content", "utm_content"),
];

/// Bounds on what an agent adds to a buyer's URL.
const MAX_ATTRIBUTION_PARAMS: usize = 20;
const MAX_ATTRIBUTION_KEY: usize = 64;
const MAX_ATTRIBUTION_VALUE: usize = 512;

/// Landing-page attribution keys: `utm_*` and click ids (gclid, fbclid, ttclid, msclkid,
/// wbraid, …). Other keys could steer the checkout itself (a discount, a locale, a redirect)
/// and stay off the buyer's URL; Shopify still gets them in its cart attribute.
fn landing_key(key: &str) -> bool {
    key.starts_with("utm_")
        || key.ends_with("clid")
        || key.ends_with("clkid")
        || key.ends_with("braid")
}

/// The agent's attribution as landing-URL parameters: `utm_*` and click ids as named,
/// campaign names as their `utm_*`; an explicit `utm_*` wins over its campaign name.
/// Values must be strings (SAE-007); other keys, odd keys and oversized values are dropped.
pub fn attribution_params(attribution: &Value) -> Vec<(String, String)> {
    let Some(fields) = attribution.as_object() else {
        return Vec::new();
    };
    let acceptable = |key: &str, value: &str| {
        (1..=MAX_ATTRIBUTION_KEY).contains(&key.len())
            && landing_key(key)
            && key
                .bytes()
                .all(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'_' | b'-' | b'.'))
            && value.chars().count() <= MAX_ATTRIBUTION_VALUE
            && !value.chars().any(char::is_control)
    };
    let mut out: Vec<(String, String)> = Vec::new();
    let renamed = |key: &str| {
        CAMPAIGN_UTM
            .iter()
            .find(|(campaign, _)| *campaign == key)
            .map(|(_, utm)| *utm)
    };
    // Names used as given first, so an explicit utm_* is not displaced by a renamed one.
    for pass_renamed in [false, true] {
        for (key, value) in fields {
            let Some(value) = value.as_str() else {
                continue;
            };
            let name = match (renamed(key), pass_renamed) {
                (Some(utm), true) => utm,
                (None, false) => key.as_str(),
                _ => continue,
            };
            if acceptable(name, value)
                && !out.iter().any(|(taken, _)| taken == name)
                && out.len() < MAX_ATTRIBUTION_PARAMS
            {
                out.push((name.to_owned(), value.to_owned()));
            }
        }
    }
    out
}

impl CheckoutRewrite {
    pub fn new(config: &CartConfig) -> Self {
        Self {
            base: config.checkout_base_url.clone(),
            params: config.checkout_params.clone(),
            reserved: &[],
        }
    }

    /// Keys of the platform's checkout URL no attribution may set.
    pub fn with_reserved(mut self, reserved: &'static [&'static str]) -> Self {
        self.reserved = reserved;
        self
    }

    /// `rewrite`, then the agent's attribution where it takes nothing from the store.
    pub fn rewrite_with(&self, raw: &str, attribution: Option<&Value>) -> Option<String> {
        let rewritten = self.rewrite(raw)?;
        let Some(attribution) = attribution else {
            return Some(rewritten);
        };
        let mut url = Url::parse(&rewritten).ok()?;
        let present: Vec<String> = url.query_pairs().map(|(key, _)| key.into_owned()).collect();
        let added: Vec<(String, String)> = attribution_params(attribution)
            .into_iter()
            .filter(|(key, _)| {
                !present.contains(key)
                    && !self.reserved.contains(&key.as_str())
                    && !self.params.contains_key(key)
            })
            .collect();
        if !added.is_empty() {
            url.query_pairs_mut().extend_pairs(added);
        }
        Some(url.into())
    }

    /// Applies the public host and attribution parameters. An upstream URL that does not
    /// parse, or is not http(s), is dropped rather than handed to a buyer.
    pub fn rewrite(&self, raw: &str) -> Option<String> {
        let mut url = Url::parse(raw).ok()?;
        if !matches!(url.scheme(), "http" | "https") {
            return None;
        }
        if let Some(base) = &self.base {
            url.set_scheme(base.scheme()).ok()?;
            url.set_host(base.host_str()).ok()?;
            url.set_port(base.port()).ok()?;
        }
        if !self.params.is_empty() {
            let kept: Vec<(String, String)> = url
                .query_pairs()
                .filter(|(key, _)| !self.params.contains_key(key.as_ref()))
                .map(|(key, value)| (key.into_owned(), value.into_owned()))
                .collect();
            url.query_pairs_mut()
                .clear()
                .extend_pairs(kept)
                .extend_pairs(self.params.iter());
        }
        Some(url.into())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn rewrites_host_and_merges_params() {
        let config = CartConfig {
            checkout_base_url: Some(Url::parse("https://shop.example.com").unwrap()),
            checkout_params: BTreeMap::from([
                ("utm_source".to_owned(), "bcp".to_owned()),
                ("ref".to_owned(), "agent".to_owned()),
            ]),
        };
        let rewrite = CheckoutRewrite::new(&config);
        let out = rewrite
            .rewrite("http://internal.myshopify.com:8443/cart/c/abc?key=1&ref=old")
            .unwrap();
        assert_eq!(
            out,
            "https://shop.example.com/cart/c/abc?key=1&ref=agent&utm_source=bcp"
        );
    }

    #[test]
    fn attribution_is_added_without_taking_the_stores_keys() {
        let config = CartConfig {
            checkout_base_url: None,
            checkout_params: BTreeMap::from([("utm_medium".to_owned(), "agent".to_owned())]),
        };
        let rewrite = CheckoutRewrite::new(&config).with_reserved(&["key", "utm_reserved"]);
        let attribution = serde_json::json!({
            "campaign_source": "google",
            "utm_source": "explicit",
            "campaign_name": "spring",
            "utm_medium": "cpc",
            "gclid": "EAIa",
            "key": "stolen",
            "coupon": "FREE",
            "discount": "FREE",
            "utm_reserved": "x",
            "utm_bad key": "x",
            "utm_number": 5
        });
        let out = rewrite
            .rewrite_with(
                "https://shop.example/cart/c/abc?key=secret",
                Some(&attribution),
            )
            .unwrap();
        assert_eq!(
            out,
            "https://shop.example/cart/c/abc?key=secret&utm_medium=agent&utm_source=explicit&gclid=EAIa&utm_campaign=spring"
        );
    }

    #[test]
    fn leaves_urls_alone_without_rules_and_drops_non_http() {
        let rewrite = CheckoutRewrite::default();
        assert_eq!(
            rewrite.rewrite("https://a.example/checkout?x=1").unwrap(),
            "https://a.example/checkout?x=1"
        );
        assert_eq!(rewrite.rewrite("javascript:alert(1)"), None);
        assert_eq!(rewrite.rewrite("not a url"), None);
    }
}
