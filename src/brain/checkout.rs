//! `continue_url`: the store's own checkout URL, rewritten by the merchant's rules.

use std::collections::BTreeMap;

use serde::Deserialize;
use url::Url;

use crate::settings::ConfigProblem;

#[derive(Debug, Clone, Default, Deserialize)]
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
}

impl CheckoutRewrite {
    pub fn new(config: &CartConfig) -> Self {
        Self {
            base: config.checkout_base_url.clone(),
            params: config.checkout_params.clone(),
        }
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
