//! WooCommerce through the public Store API (`/wp-json/wc/store/v1`): no credentials, the
//! same data and cart a shopper's browser gets. Fetch and normalise only; protocol rules
//! live in the brain.

mod cart;
mod catalog;
mod categories;
pub mod checkout;
mod client;
mod ids;
mod mapping;
mod rest_v3;
mod settings;
mod text;
mod wire;

// An order's NF-e is read for checkout; the factory hands it the store's keys.
use self::checkout::invoices as invoice;

use std::sync::Arc;
use std::time::Duration;

use self::cart::Carts;
use self::catalog::Catalog;
use self::client::StoreApi;
use crate::platform::categories::CategoryCache;
use crate::platform::factory::{BuildContext, PlatformFactory};
use crate::platform::port::{
    Capabilities, LineJudge, Platform, Pushdown, SharedPlatform, StoreInfo,
};
use crate::platform::store_keys::store_schema;
use crate::settings::ConfigProblem;

pub const FACTORY: PlatformFactory = PlatformFactory {
    name: "woocommerce",
    check,
    build: |store, context| Box::pin(build(store, context)),
    reserved_checkout_params: RESERVED_CHECKOUT_PARAMS,
    address_keys: &["store.base_url"],
    schema: store_schema::<settings::Raw>,
};

/// `?session=<Cart-Token>` (checkout = "session") and `/checkout-link/?products=…&coupon=…`
/// (checkout = "link") carry the cart itself.
pub const RESERVED_CHECKOUT_PARAMS: &[&str] = &["session", "products", "coupon"];

fn check(store: &toml::Table) -> Vec<ConfigProblem> {
    settings::check(store)
}

pub async fn build(
    store: &toml::Table,
    context: &BuildContext<'_>,
) -> Result<SharedPlatform, Vec<ConfigProblem>> {
    let settings = settings::parse(store)?;
    // The store's own `timeout_ms` bounds each attempt; the store's guard adds the budget,
    // the Retry-After hold and read retries.
    let client = context.store_client("woocommerce", &settings.client)?;
    if settings::v3_over_http(&settings) {
        tracing::warn!("store.consumer_key: {}", settings::V3_NEEDS_TLS);
    }
    // One REST API v3 client (default variations, NF-e, Pix order writes) when keys are set.
    let rest_v3 = settings.rest_v3.clone().and_then(|(key, secret)| {
        rest_v3::RestV3::new(client.clone(), &settings.base_url, key, secret)
    });
    // Orders' NF-e, when the merchant named the meta keys (`check` requires the key pair then).
    let invoices = settings
        .nfe_meta
        .clone()
        .zip(rest_v3.clone())
        .map(|(keys, rest)| invoice::Invoices::new(rest, keys));
    let api = Arc::new(
        StoreApi::new(client, &settings.base_url)
            .map_err(|error| vec![ConfigProblem::new("store.base_url", error)])?,
    );
    let catalog = Catalog::new(
        api.clone(),
        CategoryCache::new(Duration::from_secs(settings.category_cache_secs)),
        settings.currency,
        rest_v3.clone(),
    );
    let carts = Arc::new(Carts::new(
        api.clone(),
        settings.currency,
        settings.base_url.clone(),
        settings.checkout,
        settings.checkout_path.clone(),
    ));
    let info = StoreInfo {
        platform: "woocommerce",
        name: settings.name.clone(),
        currency: settings.currency,
        storefront_url: settings.base_url.to_string(),
        capabilities: Capabilities {
            search: true,
            lookup: true,
            cart: true,
        },
        pushdown: Pushdown {
            categories: true,
            price: true,
        },
        // Each add-item sub-request of the write answers for its line (unknown, needs a
        // variant, sold out, short), so the catalog round trip before it is saved.
        cart_lines: LineJudge::Store,
    };
    let platform = Platform::new(info, Arc::new(catalog), carts.clone(), api.clone())
        .with_load(context.upstream_guard().capacity.load());
    // Checkout only when the merchant named the gateways agents may use: without them an
    // agent could not place an order, and a capability the store cannot honour is not served.
    // Pix needs REST v3 to mark the order paid or cancel it (a read/write key).
    let order_writes = context.unpaid_gateway.and(rest_v3);
    let platform = if context.checkout.enabled() || context.unpaid_gateway.is_some() {
        platform.with_checkout(Arc::new(
            checkout::WooCheckout::new(
                api,
                settings.currency,
                settings.base_url.clone(),
                context.checkout,
                carts,
            )
            .with_shared_orders(context.shared.as_ref().map(|shared| shared.link.clone()))
            .with_invoices(invoices)
            .with_unpaid(context.unpaid_gateway.map(str::to_owned), order_writes),
        ))
    } else {
        platform
    };
    Ok(Arc::new(platform))
}
