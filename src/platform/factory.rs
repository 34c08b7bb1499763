//! How an adapter is configured and built: the one shape every platform folder exports as its
//! `FACTORY`, listed by the top-level `registry`.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};

use super::port::SharedPlatform;
use super::store_keys::ClientOptions;
use super::upstream::{
    SharedBudget, UpstreamClient, UpstreamConfig, UpstreamGuard, UpstreamPolicy,
};
use crate::settings::ConfigProblem;

/// What an adapter may need besides its own `[store]` table when it is built.
pub struct BuildContext<'a> {
    pub upstream: &'a UpstreamConfig,
    /// At least this much of one upstream answer is read: `[limits] max_body_bytes`, which
    /// raises the stores' own cap (`store_keys::MAX_RESPONSE_BYTES`) when set above it.
    pub max_response_bytes: usize,
    /// The bridge's public base URL (no trailing slash), known once the listener is bound.
    pub public_base_url: String,
    /// The store's budget shared by every replica (`[redis]`), `None` for a single process.
    pub shared_budget: Option<SharedBudget>,
    /// The replicas' Redis (`[redis]`), for state an adapter must share (placed orders).
    pub shared: Option<crate::replicas::Shared>,
    /// `[checkout]`: whether (and with which gateways) the adapter may place orders.
    pub checkout: &'a crate::platform::checkout::CheckoutConfig,
    /// `[pix] store_gateway`: the store's gateway an order awaiting its Pix payment is
    /// placed with (WooCommerce), handed over by the Pix settings that own it.
    pub unpaid_gateway: Option<&'a str>,
    /// The store's one guard, made on first use (`upstream_guard`).
    pub guard: OnceLock<Arc<UpstreamGuard>>,
}

impl BuildContext<'_> {
    /// For a store that takes payment only on its own page: `[checkout]` names gateways the
    /// bridge could place orders with, which such a store has none of, so a merchant who set
    /// it is told it does nothing rather than left to wonder.
    pub fn ignore_checkout_gateways(&self, platform: &str) {
        if self.checkout.enabled() {
            tracing::warn!(
                platform,
                "[checkout] place_with and pay_with are ignored: this store takes payment only on its own checkout page, where every checkout hands the buyer"
            );
        }
    }

    /// `[upstream]` as the store's guard (rate, capacity, Retry-After hold, retries), drawing
    /// on the shared budget when there is one. Every client an adapter builds takes this one,
    /// so the store's budget and capacity are counted once. Each attempt is bounded by the
    /// store's own `timeout_ms`, which the adapter's client carries.
    pub fn upstream_guard(&self) -> Arc<UpstreamGuard> {
        self.guard
            .get_or_init(|| {
                Arc::new(UpstreamGuard::new(UpstreamPolicy {
                    shared: self.shared_budget.clone(),
                    attempt_timeout: None,
                    ..UpstreamPolicy::from(self.upstream)
                }))
            })
            .clone()
    }

    /// The store's one client, from the `[store]` keys every adapter shares, drawing on the
    /// store's guard. Every part of the adapter takes a clone of it.
    pub fn store_client(
        &self,
        name: &'static str,
        options: &ClientOptions,
    ) -> Result<UpstreamClient, Vec<ConfigProblem>> {
        let options = ClientOptions {
            max_response_bytes: options.max_response_bytes.max(self.max_response_bytes),
            ..options.clone()
        };
        options
            .client(name, self.upstream_guard())
            .map_err(|error| vec![ConfigProblem::new("store", error)])
    }
}

/// An adapter being built: it may read the store first (Shopify reads the shop's currency
/// when none is configured), within the runtime start-up runs in.
pub type Building<'a> =
    Pin<Box<dyn Future<Output = Result<SharedPlatform, Vec<ConfigProblem>>> + Send + 'a>>;

/// How a platform is configured and built from the `[store]` table of the config file.
pub struct PlatformFactory {
    pub name: &'static str,
    /// Checks the `[store]` table without touching the network; each problem names its key.
    pub check: fn(&toml::Table) -> Vec<ConfigProblem>,
    /// Builds the adapter from the `[store]` table `check` accepted; start-up awaits it.
    pub build: for<'a> fn(&'a toml::Table, &'a BuildContext<'a>) -> Building<'a>,
    /// Query keys the store's own checkout URL carries: `[cart] checkout_params` may not
    /// overwrite them (the buyer would land on a broken checkout).
    pub reserved_checkout_params: &'static [&'static str],
    /// The keys that say where the store is, named when it cannot be reached (`doctor`).
    pub address_keys: &'static [&'static str],
    /// The JSON Schema of the `[store]` keys `check` reads, without `platform`.
    pub schema: fn(&mut schemars::SchemaGenerator) -> schemars::Schema,
}
