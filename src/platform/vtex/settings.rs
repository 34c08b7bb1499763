//! The `[store]` table for `platform = "vtex"`, checked without touching the network.

use iso_currency::Currency;
use serde::Deserialize;
use url::Url;

use crate::platform::store_keys::{
    ClientOptions, read_store, store_credentials, store_currency, store_name, store_url,
};
use crate::settings::{ConfigProblem, Secret};

/// Which catalog API the store is searched with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SearchApi {
    /// Intelligent Search v1 when the store has it, else the legacy search (probed once).
    Auto,
    IntelligentSearch,
    Legacy,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[schemars(rename = "VtexStore")]
#[serde(deny_unknown_fields)]
pub(super) struct Raw {
    account: String,
    store_domain: Option<String>,
    base_url: Option<String>,
    name: Option<String>,
    #[serde(default = "default_sales_channel")]
    sales_channel: u32,
    region_id: Option<String>,
    postal_code: Option<String>,
    /// ISO 3166-1 alpha-3, sent with `postal_code` (VTEX's own convention: "BRA").
    country: Option<String>,
    /// A VTEX app key, sent as `X-VTEX-API-AppKey` with every call when set (both or neither
    /// with `app_token`): a private sales channel needs it, and with it the bridge reads the
    /// orders the buyer placed on the store's page (Orders API "View order") and their NF-e.
    /// Only sent over https (or to a loopback `base_url`); usually `{ env = "VTEX_APP_KEY" }`.
    app_key: Option<Secret>,
    /// The app key's token, sent as `X-VTEX-API-AppToken` (both or neither with `app_key`);
    /// usually `{ env = "VTEX_APP_TOKEN" }`.
    app_token: Option<Secret>,
    #[serde(default = "default_currency")]
    currency: String,
    locale: Option<String>,
    #[serde(default = "default_search")]
    search: SearchApi,
    #[serde(default = "default_seller")]
    seller: String,
    #[serde(default)]
    allow_insecure_http: bool,
    #[serde(default = "default_category_ttl")]
    category_cache_secs: u64,
    #[serde(default = "default_owner_ttl")]
    cart_ttl_secs: u64,
}

fn default_sales_channel() -> u32 {
    1
}
fn default_currency() -> String {
    "BRL".to_owned()
}
fn default_search() -> SearchApi {
    SearchApi::Auto
}
fn default_seller() -> String {
    "1".to_owned()
}
fn default_category_ttl() -> u64 {
    300
}
fn default_owner_ttl() -> u64 {
    // VTEX keeps an anonymous orderForm for 30 days.
    30 * 24 * 3600
}

#[derive(Debug, Clone)]
pub struct VtexSettings {
    /// Where every API route is resolved (no trailing slash in the path).
    pub base_url: Url,
    /// The shop's public origin: storefront and checkout handoff.
    pub storefront: Url,
    pub name: String,
    pub sales_channel: u32,
    pub region_id: Option<String>,
    pub postal_code: Option<String>,
    pub country: Option<String>,
    pub app_keys: Option<(Secret, Secret)>,
    pub currency: Currency,
    pub locale: Option<String>,
    pub search: SearchApi,
    /// The seller cart lines are written with when the catalog names no default one.
    pub seller: String,
    /// The shared keys the store's client is built from.
    pub client: ClientOptions,
    pub category_cache_secs: u64,
    pub cart_ttl_secs: u64,
}

/// VTEX account names are lowercase letters and digits (they become a host label).
fn valid_account(account: &str) -> bool {
    !account.is_empty()
        && account.len() <= 63
        && account
            .bytes()
            .all(|byte| byte.is_ascii_lowercase() || byte.is_ascii_digit())
}

pub fn check(store: &toml::Table) -> Vec<ConfigProblem> {
    parse(store).err().unwrap_or_default()
}

pub fn parse(store: &toml::Table) -> Result<VtexSettings, Vec<ConfigProblem>> {
    let mut problems = Vec::new();
    let Some((shared, raw)) = read_store::<Raw>(store, &mut problems) else {
        return Err(problems);
    };
    let (base_url, storefront) = addresses(&raw, &mut problems);
    let currency = store_currency(
        &raw.currency,
        "BRL (the sales channel's currency)",
        &mut problems,
    );
    if raw.sales_channel == 0 {
        problems.push(ConfigProblem::new(
            "store.sales_channel",
            "must be a trade policy id (1 or more)",
        ));
    }
    let client = shared.options(&mut problems);
    if raw.seller.is_empty() || raw.seller.len() > 64 {
        problems.push(ConfigProblem::new("store.seller", "must be a seller id"));
    }
    where_problems(&raw, &mut problems);
    let app_keys = store_credentials(
        ("store.app_key", raw.app_key),
        ("store.app_token", raw.app_token),
        base_url.as_ref(),
        "is only sent over https (or to a loopback base_url)",
        &mut problems,
    );
    match (base_url, storefront, currency) {
        (Some(base_url), Some(storefront), Some(currency)) if problems.is_empty() => {
            let name = store_name(raw.name, &storefront, "VTEX");
            Ok(VtexSettings {
                base_url,
                storefront,
                name,
                sales_channel: raw.sales_channel,
                region_id: raw.region_id.filter(|value| !value.is_empty()),
                postal_code: raw.postal_code.filter(|value| !value.is_empty()),
                country: raw.country,
                app_keys,
                currency,
                locale: raw.locale,
                search: raw.search,
                seller: raw.seller,
                client,
                category_cache_secs: raw.category_cache_secs,
                cart_ttl_secs: raw.cart_ttl_secs,
            })
        }
        _ => Err(problems),
    }
}

/// Where the API is called (`base_url`, from the account unless set) and the shop's public
/// origin (`store_domain`, else the same).
fn addresses(raw: &Raw, problems: &mut Vec<ConfigProblem>) -> (Option<Url>, Option<Url>) {
    let account_ok = valid_account(&raw.account);
    if !account_ok {
        problems.push(ConfigProblem::new(
            "store.account",
            "must be the VTEX account name (lowercase letters and digits, as in {account}.vtexcommercestable.com.br)",
        ));
    }
    let base_text = raw
        .base_url
        .clone()
        .unwrap_or_else(|| format!("https://{}.vtexcommercestable.com.br", raw.account));
    // A bad account is reported once, not again as the base URL made from it.
    let base_url = if account_ok || raw.base_url.is_some() {
        store_url(
            "store.base_url",
            &base_text,
            raw.allow_insecure_http,
            problems,
        )
    } else {
        None
    };
    let storefront = match &raw.store_domain {
        Some(domain) if domain.contains("://") => store_url(
            "store.store_domain",
            domain,
            raw.allow_insecure_http,
            problems,
        ),
        Some(domain) => store_url(
            "store.store_domain",
            &format!("https://{domain}"),
            false,
            problems,
        ),
        None => base_url.clone(),
    };
    (base_url, storefront)
}

/// The buyer's default locale and region.
fn where_problems(raw: &Raw, problems: &mut Vec<ConfigProblem>) {
    if let Some(locale) = &raw.locale
        && (locale.is_empty()
            || locale.len() > 16
            || !locale
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-'))
    {
        problems.push(ConfigProblem::new(
            "store.locale",
            "must be a locale such as pt-BR",
        ));
    }
    if raw.postal_code.is_some() && raw.country.is_none() {
        problems.push(ConfigProblem::new(
            "store.country",
            "is required with store.postal_code (ISO 3166-1 alpha-3, e.g. BRA)",
        ));
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::platform::store_keys::testing::{problem_keys, table};

    #[test]
    fn defaults_follow_the_account() {
        let settings = parse(&table("platform='vtex'\naccount='lojadobreno'")).unwrap();
        assert_eq!(
            settings.base_url.as_str(),
            "https://lojadobreno.vtexcommercestable.com.br/"
        );
        assert_eq!(settings.storefront, settings.base_url);
        assert_eq!(settings.currency.code(), "BRL");
        assert_eq!(settings.sales_channel, 1);
        assert_eq!(settings.search, SearchApi::Auto);
        let shop = parse(&table(
            "account='loja'\nstore_domain='www.loja.com.br'\nsearch='legacy'",
        ))
        .unwrap();
        assert_eq!(shop.storefront.as_str(), "https://www.loja.com.br/");
        assert_eq!(shop.search, SearchApi::Legacy);
    }

    #[test]
    fn every_bad_key_is_named() {
        assert_eq!(
            problem_keys(
                parse,
                "account='Loja X'\ncurrency='XXZ'\nsales_channel=0\ntimeout_ms=1"
            ),
            [
                "store.account",
                "store.currency",
                "store.sales_channel",
                "store.timeout_ms"
            ]
        );
        assert_eq!(
            problem_keys(parse, "account='loja'\nbase_url='http://proxy.example'"),
            ["store.base_url"]
        );
        assert_eq!(
            problem_keys(parse, "account='loja'\napp_key='k'"),
            ["store.app_token"]
        );
        assert_eq!(
            problem_keys(parse, "account='loja'\npostal_code='01310-100'"),
            ["store.country"]
        );
        assert_eq!(
            problem_keys(parse, "base_url='https://x.example'"),
            ["store"]
        );
        let unknown = problem_keys(parse, "account='loja'\nendpoint='x'");
        assert!(unknown[0].starts_with("store.endpoint"), "{unknown:?}");
    }

    #[test]
    fn secrets_never_show_in_debug() {
        let settings = parse(&table(
            "account='loja'\napp_key='vtexappkey-loja-ABC'\napp_token='TOPSECRET'",
        ))
        .unwrap();
        let shown = format!("{settings:?}");
        assert!(
            !shown.contains("TOPSECRET") && !shown.contains("vtexappkey"),
            "{shown}"
        );
    }
}
