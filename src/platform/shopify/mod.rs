//! Shopify through the Storefront GraphQL API: catalog reads, carts and checkout. The adapter
//! fetches and normalises; the brain applies the protocol rules.
//!
//! The roles every adapter folder shares: `settings` (config keys), `ids` (agent ids → typed
//! ids), `wire` (the typed operations of `graphql/`), `client` (transport and error mapping),
//! `mapping` (Shopify → model), `catalog`, `cart` and `checkout` (the ports); and its own
//! `market` (buyer country and language) and `taxonomy` (category table).

mod cart;
mod catalog;
mod checkout;
mod client;
mod ids;
mod mapping;
mod market;
mod settings;
mod taxonomy;
mod wire;

use std::sync::Arc;

use self::cart::Carts;
use self::catalog::Catalog;
use self::checkout::ShopifyCheckout;
use self::client::Storefront;
use crate::platform::factory::{BuildContext, PlatformFactory};
use crate::platform::port::{
    Capabilities, LineJudge, Platform, Pushdown, SharedPlatform, StoreInfo,
};
use crate::platform::store_keys::store_schema;
use crate::settings::ConfigProblem;

pub const FACTORY: PlatformFactory = PlatformFactory {
    name: "shopify",
    check,
    build: |store, context| Box::pin(build(store, context)),
    reserved_checkout_params: RESERVED_CHECKOUT_PARAMS,
    address_keys: &["store.shop_domain", "store.endpoint"],
    schema: store_schema::<settings::Raw>,
};

/// `checkoutUrl` is `https://<shop>/cart/c/<token>?key=<secret>`: without its `key` the cart
/// cannot be opened.
pub const RESERVED_CHECKOUT_PARAMS: &[&str] = &["key"];

fn check(store: &toml::Table) -> Vec<ConfigProblem> {
    settings::parse(store).err().unwrap_or_default()
}

async fn build(
    store: &toml::Table,
    context: &BuildContext<'_>,
) -> Result<SharedPlatform, Vec<ConfigProblem>> {
    let settings = settings::parse(store)?;
    context.ignore_checkout_gateways("shopify");
    let upstream = context.store_client("shopify", &settings.client)?;
    let client = Storefront::new(upstream, settings.endpoint.clone(), &settings.token)
        .map_err(|message| vec![ConfigProblem::new("store.public_token", message)])?;
    let client = Arc::new(client);
    let home = format!("https://{}/", settings.shop_domain);
    // The shop's name, home page and currency, read before the bridge serves anything (once,
    // and not at all when `currency` is configured).
    let (name, storefront_url, currency) = match settings.currency {
        Some(currency) => (settings.shop_domain.clone(), home, currency),
        None => catalog::shop_info(&client).await.map_err(|error| {
            vec![ConfigProblem::new(
                "store.currency",
                format!("not set, and reading it from the shop failed: {error}"),
            )]
        })?,
    };
    let info = StoreInfo {
        platform: "shopify",
        name,
        currency,
        storefront_url,
        capabilities: Capabilities {
            search: true,
            lookup: true,
            cart: true,
        },
        // Prices go to Shopify as productFilters / variants.price; categories span three
        // taxonomies (product type, collections, Shopify and Google categories) that no
        // single Shopify filter covers, so the brain post-filters them: such pages can come
        // back shorter than asked, never with a wrong product. One Shopify taxonomy key is
        // still narrowed by Shopify (`catalog::search`), so its pages are not empty.
        pushdown: Pushdown {
            categories: false,
            price: true,
        },
        // Shopify's cart answer names every line it refused or cut (userErrors, warnings),
        // so a cart write needs no catalog read first (`cart`).
        cart_lines: LineJudge::Store,
    };
    let catalog = Arc::new(Catalog {
        client: client.clone(),
        currency,
        default_country: settings.country.clone(),
        default_language: settings.language.clone(),
    });
    let carts = Arc::new(Carts {
        client: client.clone(),
        catalog: catalog.clone(),
        currency,
        default_country: settings.country.clone(),
    });
    // Checkout is on for every Shopify store, unlike WooCommerce's `[checkout]` opt-in: the
    // Storefront API cannot take payment, so complete only hands the buyer to Shopify's own
    // checkout page (the cart's checkoutUrl, where a cart already sends them). No agent can
    // place an order or move money through it; the merchant has nothing to approve.
    let orders = settings.orders_webhook_secret.clone().map(|secret| {
        Arc::new(
            checkout::OrderBook::new(secret, settings.shop_domain.clone())
                .shared(context.shared.as_ref().map(|shared| shared.link.clone())),
        )
    });
    let checkout = ShopifyCheckout::new(client, carts.clone(), currency, orders);
    Ok(Arc::new(
        Platform::new(info, catalog.clone(), carts, catalog)
            .with_checkout(Arc::new(checkout))
            .with_load(context.upstream_guard().capacity.load()),
    ))
}
