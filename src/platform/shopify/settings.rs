//! The `[store]` keys of `platform = "shopify"`.

use iso_currency::Currency;
use serde::Deserialize;
use url::Url;

use super::market::{country_code, language_code};
use crate::money::parse_currency;
use crate::platform::store_keys::{ClientOptions, read_store};
use crate::settings::{ConfigProblem, Secret};

pub const DEFAULT_API_VERSION: &str = "2026-04";

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[schemars(rename = "ShopifyStore")]
#[serde(deny_unknown_fields)]
pub(super) struct Raw {
    /// `my-shop.myshopify.com` (or the shop's own domain).
    shop_domain: String,
    #[serde(default = "default_version")]
    api_version: String,
    /// Sent as `X-Shopify-Storefront-Access-Token` (the token of a headless channel).
    public_token: Option<Secret>,
    /// Sent as `Shopify-Storefront-Private-Token` (server-to-server, throttled less).
    private_token: Option<Secret>,
    /// Buyer country and language when the agent gives none (ISO 3166 / Shopify LanguageCode).
    country: Option<String>,
    language: Option<String>,
    /// The shop's currency; when absent it is read from the shop once at start-up.
    currency: Option<String>,
    /// Overrides `https://{shop_domain}/api/{api_version}/graphql.json` (tests, proxies).
    endpoint: Option<Url>,
    /// The secret Shopify signs the shop's order webhooks with (Settings → Notifications →
    /// Webhooks, or the app's secret): with it, `orders/*` webhooks sent to
    /// `/webhooks/shopify/orders` link each order the buyer placed on Shopify's page to the
    /// checkout that handed them there, and `get_order` is served. Usually `{ env = "NAME" }`.
    orders_webhook_secret: Option<Secret>,
}

fn default_version() -> String {
    DEFAULT_API_VERSION.to_owned()
}

#[derive(Clone)]
pub enum Token {
    Public(Secret),
    Private(Secret),
}

pub struct ShopifySettings {
    pub shop_domain: String,
    pub endpoint: Url,
    pub token: Token,
    pub country: Option<String>,
    pub language: Option<String>,
    pub currency: Option<Currency>,
    /// The shared keys the Storefront client is built from.
    pub client: ClientOptions,
    pub orders_webhook_secret: Option<Secret>,
}

/// Lowercase DNS name with at least two labels, no port, no path: it becomes part of a URL.
pub fn valid_domain(domain: &str) -> bool {
    let labels: Vec<&str> = domain.split('.').collect();
    domain.len() <= 253
        && labels.len() >= 2
        && labels.iter().all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && !label.starts_with('-')
                && !label.ends_with('-')
                && label
                    .bytes()
                    .all(|byte| byte.is_ascii_lowercase() || byte.is_ascii_digit() || byte == b'-')
        })
}

fn valid_version(version: &str) -> bool {
    if version == "unstable" {
        return true;
    }
    let bytes = version.as_bytes();
    bytes.len() == 7
        && bytes[4] == b'-'
        && bytes[..4].iter().all(u8::is_ascii_digit)
        && matches!(&version[5..], "01" | "04" | "07" | "10")
}

pub fn parse(store: &toml::Table) -> Result<ShopifySettings, Vec<ConfigProblem>> {
    let mut problems = Vec::new();
    let Some((shared, raw)) = read_store::<Raw>(store, &mut problems) else {
        return Err(problems);
    };
    if !valid_domain(&raw.shop_domain) {
        problems.push(ConfigProblem::new(
            "store.shop_domain",
            "must be a lowercase host name such as \"my-shop.myshopify.com\" (no scheme, port or path)",
        ));
    }
    if !valid_version(&raw.api_version) {
        problems.push(ConfigProblem::new(
            "store.api_version",
            "must look like \"2026-04\" (a quarterly Storefront API version) or \"unstable\"",
        ));
    }
    let token = token(raw.public_token, raw.private_token, &mut problems);
    let (country, language) = market(
        raw.country.as_deref(),
        raw.language.as_deref(),
        &mut problems,
    );
    let currency = match raw.currency.as_deref().map(parse_currency) {
        Some(Ok(currency)) => Some(currency),
        Some(Err(error)) => {
            problems.push(ConfigProblem::new("store.currency", error.to_string()));
            None
        }
        None => None,
    };
    let client = shared.options(&mut problems);
    let endpoint = endpoint(
        raw.endpoint,
        &raw.shop_domain,
        &raw.api_version,
        &mut problems,
    );
    match (token, endpoint) {
        (Some(token), Some(endpoint)) if problems.is_empty() => Ok(ShopifySettings {
            shop_domain: raw.shop_domain,
            endpoint,
            token,
            country,
            language,
            currency,
            client,
            orders_webhook_secret: raw.orders_webhook_secret,
        }),
        _ => {
            if problems.is_empty() {
                problems.push(ConfigProblem::new(
                    "store.shop_domain",
                    "cannot build the Storefront endpoint URL",
                ));
            }
            Err(problems)
        }
    }
}

/// Exactly one of the two Storefront tokens.
fn token(
    public: Option<Secret>,
    private: Option<Secret>,
    problems: &mut Vec<ConfigProblem>,
) -> Option<Token> {
    match (public, private) {
        (Some(token), None) => Some(Token::Public(token)),
        (None, Some(token)) => Some(Token::Private(token)),
        (Some(_), Some(_)) => {
            problems.push(ConfigProblem::new(
                "store.private_token",
                "set either public_token or private_token, not both",
            ));
            None
        }
        (None, None) => {
            problems.push(ConfigProblem::new(
                "store.public_token",
                "a Storefront API token is required (public_token or private_token)",
            ));
            None
        }
    }
}

/// The buyer's default country and language, as Shopify spells them.
fn market(
    country: Option<&str>,
    language: Option<&str>,
    problems: &mut Vec<ConfigProblem>,
) -> (Option<String>, Option<String>) {
    let country = country.and_then(|code| {
        let known = country_code(code).filter(|known| *known == code);
        if known.is_none() {
            problems.push(ConfigProblem::new(
                "store.country",
                "must be an uppercase ISO 3166-1 alpha-2 code Shopify knows, such as \"BR\"",
            ));
        }
        known.map(str::to_owned)
    });
    let language = language.and_then(|tag| {
        let code = language_code(tag).map(str::to_owned);
        if code.is_none() {
            problems.push(ConfigProblem::new(
                "store.language",
                "must be a language such as \"pt-BR\" or \"EN\"",
            ));
        }
        code
    });
    (country, language)
}

/// The configured endpoint, or the shop's own Storefront URL.
fn endpoint(
    configured: Option<Url>,
    shop_domain: &str,
    api_version: &str,
    problems: &mut Vec<ConfigProblem>,
) -> Option<Url> {
    match configured {
        Some(url) if matches!(url.scheme(), "http" | "https") && url.host().is_some() => Some(url),
        Some(_) => {
            problems.push(ConfigProblem::new(
                "store.endpoint",
                "must be an http(s) URL",
            ));
            None
        }
        None => Url::parse(&format!(
            "https://{shop_domain}/api/{api_version}/graphql.json"
        ))
        .ok(),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::platform::store_keys::testing::table;

    #[test]
    fn minimal_config_builds_the_default_endpoint() {
        let settings = parse(&table(
            "platform = \"shopify\"\nshop_domain = \"demo.myshopify.com\"\npublic_token = \"abc\"",
        ))
        .ok()
        .unwrap();
        assert_eq!(
            settings.endpoint.as_str(),
            "https://demo.myshopify.com/api/2026-04/graphql.json"
        );
    }

    #[test]
    fn problems_name_their_keys_and_never_the_token() {
        let problems = parse(&table(
            "shop_domain = \"Demo.myshopify.com/x\"\napi_version = \"2026-05\"\npublic_token = \"s3cr3t\"\nprivate_token = \"s3cr3t\"\ncountry = \"br\"\nbogus = 1",
        ))
        .err()
        .unwrap();
        let text = format!("{problems:?}");
        assert!(text.contains("store.bogus"), "{text}");
        assert!(!text.contains("s3cr3t"));
        let problems = parse(&table(
            "shop_domain = \"Demo.myshopify.com/x\"\napi_version = \"2026-05\"\nprivate_token = \"s3cr3t\"\ncountry = \"br\"",
        ))
        .err()
        .unwrap();
        let keys: Vec<&str> = problems
            .iter()
            .map(|problem| problem.key.as_str())
            .collect();
        assert_eq!(
            keys,
            ["store.shop_domain", "store.api_version", "store.country"]
        );
    }

    #[test]
    fn language_tags_become_language_codes() {
        assert_eq!(language_code("pt-BR"), Some("PT_BR"));
        assert_eq!(language_code("en"), Some("EN"));
        assert_eq!(language_code("e1"), None);
        assert_eq!(language_code("en-US-x"), None);
    }
}
