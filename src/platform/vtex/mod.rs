//! VTEX through the routes its own storefront calls without admin scope: Intelligent Search v1
//! (or the legacy `catalog_system/pub` search where a store has no Intelligent Search) for the
//! catalog, and the Checkout orderForm (`/api/checkout/pub`) as the cart, handed off at
//! `/checkout/?orderFormId=…#/cart`, and as the checkout, handed off at its `#/payment` step.
//! Fetch and normalise only; protocol rules live in the brain.

mod cart;
mod catalog;
mod categories;
mod checkout;
mod client;
mod ids;
mod installments;
mod mapping;
mod owners;
mod settings;
mod stack;
mod wire;

use std::sync::Arc;
use std::time::Duration;

use self::cart::Carts;
use self::catalog::{Catalog, Where};
use self::checkout::VtexCheckout;
use self::client::VtexApi;
use self::owners::Owners;
use self::stack::StackProbe;
use crate::platform::categories::CategoryCache;
use crate::platform::factory::{BuildContext, PlatformFactory};
use crate::platform::port::{
    Capabilities, LineJudge, Platform, Pushdown, SharedPlatform, StoreInfo,
};
use crate::platform::store_keys::store_schema;
use crate::settings::ConfigProblem;

pub const FACTORY: PlatformFactory = PlatformFactory {
    name: "vtex",
    check: settings::check,
    build: |store, context| Box::pin(build(store, context)),
    // `/checkout/?orderFormId=<id>` carries the cart itself.
    reserved_checkout_params: &["orderFormId"],
    address_keys: &["store.account", "store.base_url"],
    schema: store_schema::<settings::Raw>,
};

async fn build(
    store: &toml::Table,
    context: &BuildContext<'_>,
) -> Result<SharedPlatform, Vec<ConfigProblem>> {
    let settings = settings::parse(store)?;
    context.ignore_checkout_gateways("vtex");
    let client = context.store_client("vtex", &settings.client)?;
    let api = Arc::new(VtexApi::new(
        client,
        settings.base_url.clone(),
        settings.app_keys.clone(),
    ));
    let stack = Arc::new(StackProbe::new(settings.search, settings.sales_channel));
    // Probed once at start, without holding the start up; a failed probe is tried again on
    // first use.
    {
        let (api, stack) = (api.clone(), stack.clone());
        tokio::spawn(async move {
            if let Err(error) = stack.get(&api).await {
                tracing::warn!(%error, "VTEX search API probe failed; trying again on first use");
            }
        });
    }
    let catalog = Arc::new(Catalog::new(
        api.clone(),
        stack.clone(),
        CategoryCache::new(Duration::from_secs(settings.category_cache_secs)),
        Where {
            sales_channel: settings.sales_channel,
            region_id: settings.region_id.clone(),
            postal_code: settings.postal_code.clone(),
            country: settings.country.clone(),
            locale: settings.locale.clone(),
        },
        settings.currency,
        settings.storefront.clone(),
    ));
    let carts = Arc::new(Carts::new(
        api.clone(),
        catalog.clone(),
        Owners::new(Duration::from_secs(settings.cart_ttl_secs)),
        settings.currency,
        settings.storefront.clone(),
        settings.sales_channel,
        settings.seller.clone(),
    ));
    let info = StoreInfo {
        platform: "vtex",
        name: settings.name.clone(),
        currency: settings.currency,
        storefront_url: settings.storefront.to_string(),
        capabilities: Capabilities {
            search: true,
            lookup: true,
            cart: true,
        },
        pushdown: Pushdown {
            categories: true,
            price: true,
        },
        // A SKU lookup is one `;`-joined query, and it is what tells sold-out
        // (AvailableQuantity 0) and unknown SKUs apart before the cart is touched; the
        // orderForm then answers for quantities it clamps.
        cart_lines: LineJudge::Brain,
    };
    // Checkout is on without a `[checkout]` opt-in (which WooCommerce needs): it places no
    // order and takes no payment, it only fills the store's own orderForm and hands the buyer
    // to the store's payment page, the same handoff the cart already makes.
    let checkout = Arc::new(VtexCheckout::new(
        carts.clone(),
        Duration::from_secs(settings.cart_ttl_secs),
        api.clone(),
        settings.storefront.clone(),
        settings.app_keys.is_some(),
    ));
    Ok(Arc::new(
        Platform::new(info, catalog.clone(), carts, catalog)
            .with_checkout(checkout)
            .with_load(context.upstream_guard().capacity.load()),
    ))
}
