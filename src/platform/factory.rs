//! How an adapter is configured and built: the one shape every platform folder exports as its
//! `FACTORY`, listed by the top-level `registry`.

use super::port::SharedPlatform;
use super::upstream::UpstreamConfig;
use crate::settings::ConfigProblem;

/// What an adapter may need besides its own `[store]` table when it is built.
pub struct BuildContext<'a> {
    pub upstream: &'a UpstreamConfig,
    /// Cap on one upstream response body.
    pub max_response_bytes: usize,
    /// The bridge's public base URL (no trailing slash), known once the listener is bound.
    pub public_base_url: String,
}

/// How a platform is configured and built from the `[store]` table of the config file.
pub struct PlatformFactory {
    pub name: &'static str,
    /// Checks the `[store]` table without touching the network; each problem names its key.
    pub check: fn(&toml::Table) -> Vec<ConfigProblem>,
    pub build: fn(&toml::Table, &BuildContext<'_>) -> Result<SharedPlatform, Vec<ConfigProblem>>,
    /// Query keys the store's own checkout URL carries: `[cart] checkout_params` may not
    /// overwrite them (the buyer would land on a broken checkout).
    pub reserved_checkout_params: &'static [&'static str],
}
