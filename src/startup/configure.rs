//! The first start-up phase: one TOML file, one serde struct per section, unknown keys
//! rejected by name. Each section is owned (defined and checked) by the module that uses it;
//! this phase only assembles them into `BridgeConfig`, applies the command line's overrides,
//! and then checks everything once, what spans sections included. Nothing below the top
//! level imports it.

use std::net::SocketAddr;
use std::path::Path;

use serde::de::DeserializeOwned;

use crate::access::AccessConfig;
use crate::brain::{CartConfig, LimitsConfig, SellerConfig};
use crate::discovery::brazil::ReturnsConfig;
use crate::idempotency::IdempotencyConfig;
use crate::inbound::budget::InboundConfig;
use crate::negotiation::NegotiationConfig;
use crate::order_webhooks::OrderWebhooksConfig;
use crate::pipeline::agents::AgentsConfig;
use crate::pix::settings::PixConfig;
use crate::platform::cache::CacheConfig;
use crate::platform::upstream::SharedBudget;
use crate::platform::upstream::UpstreamConfig;
use crate::platform::{BuildContext, PlatformFactory, SharedPlatform};
use crate::protocol::Protocol;
use crate::registry;
use crate::replicas::{RedisConfig, Shared};
use crate::settings::{ConfigProblem, deserialize_at};
use crate::signatures::SignaturesConfig;
use crate::telemetry::TelemetryConfig;

pub use super::server_config::ServerConfig;

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("{} problem(s) in the configuration:\n{}", .0.len(), render(.0))]
    Invalid(Vec<ConfigProblem>),
}

pub(super) fn render(problems: &[ConfigProblem]) -> String {
    problems
        .iter()
        .map(|problem| format!("  - {problem}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The whole file. Its JSON Schema (`config-schema`) is derived from these section types, the
/// ones serde reads; sections may be left out.
#[derive(Debug, Clone, schemars::JsonSchema)]
#[schemars(deny_unknown_fields, default)]
pub struct BridgeConfig {
    pub server: ServerConfig,
    pub limits: LimitsConfig,
    pub cart: CartConfig,
    pub cache: CacheConfig,
    pub upstream: UpstreamConfig,
    pub inbound: InboundConfig,
    /// The `[store]` table: `platform` plus that platform's own keys, which its adapter
    /// deserialises (and rejects unknown keys of) itself.
    #[schemars(schema_with = "super::config_schema::store")]
    pub store: toml::Table,
    pub idempotency: IdempotencyConfig,
    pub negotiation: NegotiationConfig,
    pub access: AccessConfig,
    pub agents: AgentsConfig,
    pub signatures: SignaturesConfig,
    /// `[redis]`: the one Redis replicas share (idempotency, invalidations, budgets, locks).
    pub redis: RedisConfig,
    /// `[checkout]`: the gateways an agent may place orders with (stores that take payment).
    pub checkout: crate::platform::checkout::CheckoutConfig,
    /// `[order_webhooks]`: placed orders pushed, signed, to the agent's webhook.
    pub order_webhooks: OrderWebhooksConfig,
    /// `[telemetry]`: traces over OTLP (off unless `otlp_endpoint` is set).
    pub telemetry: TelemetryConfig,
    /// `[seller]`: the business's CNPJ and legal name (BCP fiscal identity), shown in every
    /// BCP checkout and order answer; absent, the fiscal identity is not declared.
    pub seller: Option<SellerConfig>,
    /// `[returns]`: the return policy the BCP profile declares (`br.dev.bcp.shopping.returns`);
    /// absent, none is declared.
    pub returns: Option<ReturnsConfig>,
    /// `[pix]`: the merchant's PSP over the Central Bank's API Pix, for BCP's Pix handler
    /// (`br.dev.bcp.pix`); absent, Pix is not offered.
    pub pix: Option<PixConfig>,
}

/// What the command line sets instead of the file (`--listen`, `--protocol`): applied to the
/// parsed sections before anything is checked, so an override is checked like the file.
#[derive(Debug, Clone, Copy, Default)]
pub struct Overrides {
    pub listen: Option<SocketAddr>,
    pub protocol: Option<Protocol>,
}

impl Overrides {
    fn apply(&self, server: &mut ServerConfig) {
        if let Some(listen) = self.listen {
            server.listen = listen;
        }
        if let Some(protocol) = self.protocol {
            server.protocol = protocol;
        }
    }
}

const SECTIONS: &[&str] = &[
    "server",
    "limits",
    "cart",
    "cache",
    "upstream",
    "inbound",
    "store",
    "idempotency",
    "negotiation",
    "access",
    "agents",
    "signatures",
    "redis",
    "checkout",
    "order_webhooks",
    "telemetry",
    "seller",
    "returns",
    "pix",
];

impl Default for BridgeConfig {
    fn default() -> Self {
        let mut store = toml::Table::new();
        store.insert("platform".into(), toml::Value::String("sample".into()));
        Self {
            server: ServerConfig::default(),
            limits: LimitsConfig::default(),
            cart: CartConfig::default(),
            cache: CacheConfig::default(),
            upstream: UpstreamConfig::default(),
            inbound: InboundConfig::default(),
            store,
            idempotency: Default::default(),
            negotiation: Default::default(),
            access: Default::default(),
            agents: Default::default(),
            signatures: Default::default(),
            redis: Default::default(),
            checkout: Default::default(),
            order_webhooks: Default::default(),
            telemetry: Default::default(),
            seller: None,
            returns: None,
            pix: None,
        }
    }
}

impl BridgeConfig {
    /// `demo`: the sample store, with no agent-profile fetching (demo agents such as the
    /// printed curl call name profiles that do not exist).
    pub fn demo() -> Self {
        let mut config = Self::default();
        config.negotiation.enabled = false;
        // The whole Brazilian flow (issue 37 item 5): CPF and house number asked for, the
        // seller shown in every answer, the withdrawal right in the profile.
        config
            .store
            .insert("brazilian_checkout".into(), toml::Value::Boolean(true));
        config.seller = Some(crate::brain::SellerConfig {
            cnpj: "19131243000197".into(),
            legal_name: "Loja Exemplo Comércio de Artesanato Ltda".into(),
            address: None,
        });
        config.returns = Some(ReturnsConfig {
            withdrawal_period_days: crate::discovery::brazil::MINIMUM_WITHDRAWAL_DAYS,
            request_channel: None,
        });
        config
    }

    /// [`Self::demo`] with the command line's overrides, checked.
    pub fn demo_with(overrides: &Overrides) -> Result<Self, ConfigError> {
        let mut config = Self::demo();
        overrides.apply(&mut config.server);
        // UCP has no buyer document: on a UCP-only door a store requiring the CPF hands every
        // checkout off, so the UCP demo is the plain sample store (still with its seller).
        if config.server.protocol == crate::protocol::Protocol::Ucp {
            config.store.remove("brazilian_checkout");
        }
        config.checked(Vec::new())
    }

    pub fn from_file(path: &Path) -> Result<Self, ConfigError> {
        Self::from_file_with(path, &Overrides::default())
    }

    pub fn from_file_with(path: &Path, overrides: &Overrides) -> Result<Self, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.display().to_string(),
            source,
        })?;
        Self::from_toml_with(&text, overrides)
    }

    pub fn from_toml(text: &str) -> Result<Self, ConfigError> {
        Self::from_toml_with(text, &Overrides::default())
    }

    /// Parses, applies `overrides`, and validates everything that can be checked without the
    /// network, collecting every problem instead of stopping at the first.
    pub fn from_toml_with(text: &str, overrides: &Overrides) -> Result<Self, ConfigError> {
        let root: toml::Table = text.parse().map_err(|error: toml::de::Error| {
            let place = error
                .span()
                .map(|span| line_and_column(text, span.start))
                .map(|(line, column)| format!(" at line {line}, column {column}"))
                .unwrap_or_default();
            ConfigError::Invalid(vec![ConfigProblem::new(
                "(file)",
                format!("not valid TOML{place}: {}", error.message().trim()),
            )])
        })?;
        let mut problems = Vec::new();
        for key in root.keys() {
            if !SECTIONS.contains(&key.as_str()) {
                problems.push(ConfigProblem::new(
                    key.clone(),
                    format!("unknown section; expected one of {}", SECTIONS.join(", ")),
                ));
            }
        }
        let server = section::<ServerConfig>(&root, "server", &mut problems);
        let limits = section::<LimitsConfig>(&root, "limits", &mut problems);
        let cart = section::<CartConfig>(&root, "cart", &mut problems);
        let cache = section::<CacheConfig>(&root, "cache", &mut problems);
        let upstream = section::<UpstreamConfig>(&root, "upstream", &mut problems);
        let inbound = section::<InboundConfig>(&root, "inbound", &mut problems);
        let idempotency = section(&root, "idempotency", &mut problems);
        let negotiation = section(&root, "negotiation", &mut problems);
        let access = section(&root, "access", &mut problems);
        let agents = section(&root, "agents", &mut problems);
        let signatures = section(&root, "signatures", &mut problems);
        let redis = section(&root, "redis", &mut problems);
        let checkout = section(&root, "checkout", &mut problems);
        let order_webhooks = section(&root, "order_webhooks", &mut problems);
        let telemetry = section(&root, "telemetry", &mut problems);
        let seller = optional_section(&root, "seller", &mut problems);
        let returns = optional_section(&root, "returns", &mut problems);
        let pix = optional_section(&root, "pix", &mut problems);
        let store = match root.get("store") {
            Some(toml::Value::Table(table)) => table.clone(),
            Some(_) => {
                problems.push(ConfigProblem::new("store", "must be a table"));
                toml::Table::new()
            }
            None => BridgeConfig::default().store,
        };
        let mut config = BridgeConfig {
            server: server.unwrap_or_default(),
            limits: limits.unwrap_or_default(),
            cart: cart.unwrap_or_default(),
            cache: cache.unwrap_or_default(),
            upstream: upstream.unwrap_or_default(),
            inbound: inbound.unwrap_or_default(),
            store,
            idempotency: idempotency.unwrap_or_default(),
            negotiation: negotiation.unwrap_or_default(),
            access: access.unwrap_or_default(),
            agents: agents.unwrap_or_default(),
            signatures: signatures.unwrap_or_default(),
            redis: redis.unwrap_or_default(),
            checkout: checkout.unwrap_or_default(),
            order_webhooks: order_webhooks.unwrap_or_default(),
            telemetry: telemetry.unwrap_or_default(),
            seller,
            returns,
            pix,
        };
        overrides.apply(&mut config.server);
        config.checked(problems)
    }

    /// `self` if neither `found` (the problems of parsing) nor any check finds a problem.
    fn checked(self, mut found: Vec<ConfigProblem>) -> Result<Self, ConfigError> {
        found.extend(self.problems());
        if found.is_empty() {
            Ok(self)
        } else {
            Err(ConfigError::Invalid(found))
        }
    }

    /// Every section's own checks, then the `[store]` ones.
    fn problems(&self) -> Vec<ConfigProblem> {
        let mut problems = self.server.problems();
        problems.extend(self.limits.problems());
        problems.extend(self.cart.problems());
        problems.extend(self.cache.problems());
        problems.extend(self.upstream.problems());
        problems.extend(self.idempotency.problems(self.redis.url.is_some()));
        problems.extend(self.negotiation.problems());
        problems.extend(self.access.problems());
        problems.extend(self.agents.problems());
        problems.extend(self.signatures.problems());
        problems.extend(self.redis.problems());
        problems.extend(self.order_webhooks.problems());
        problems.extend(self.telemetry.problems());
        problems.extend(self.seller.iter().flat_map(SellerConfig::problems));
        problems.extend(self.returns.iter().flat_map(ReturnsConfig::problems));
        problems.extend(self.pix.iter().flat_map(PixConfig::problems));
        problems.extend(self.pix_store_problems());
        problems.extend(self.store_problems());
        problems
    }

    /// `[store]` by the adapter it names, and `[cart] checkout_params` against that
    /// adapter's own checkout URL.
    fn store_problems(&self) -> Vec<ConfigProblem> {
        let mut problems = Vec::new();
        match self.store.get("platform") {
            Some(toml::Value::String(name)) => match registry::factory(name) {
                Some(factory) => {
                    problems.extend((factory.check)(&self.store));
                    for key in self.cart.checkout_params.keys() {
                        if factory.reserved_checkout_params.contains(&key.as_str()) {
                            problems.push(ConfigProblem::new(
                                format!("cart.checkout_params.{key}"),
                                format!(
                                    "{key:?} is part of {name}'s own checkout URL and cannot be overridden"
                                ),
                            ));
                        }
                    }
                }
                None => problems.push(ConfigProblem::new(
                    "store.platform",
                    format!(
                        "unknown platform {name:?}; expected one of {}",
                        registry::platform_names().join(", ")
                    ),
                )),
            },
            Some(_) => problems.push(ConfigProblem::new("store.platform", "must be a string")),
            None => problems.push(ConfigProblem::new(
                "store.platform",
                format!(
                    "missing; expected one of {}",
                    registry::platform_names().join(", ")
                ),
            )),
        }
        problems
    }

    /// The store adapter `[store]` names, built with its share of the rest of the file;
    /// `public_base_url` is where agents reach the bridge (known once the listener is bound).
    pub async fn build_platform(
        &self,
        public_base_url: String,
    ) -> Result<SharedPlatform, Vec<ConfigProblem>> {
        self.build_platform_shared(public_base_url, None).await
    }

    /// `build_platform` for one of several replicas: the upstream budget is `shared`'s.
    pub async fn build_platform_shared(
        &self,
        public_base_url: String,
        shared: Option<&Shared>,
    ) -> Result<SharedPlatform, Vec<ConfigProblem>> {
        let factory = registry::factory(self.platform_name())
            .ok_or_else(|| vec![ConfigProblem::new("store.platform", "unknown platform")])?;
        let context = BuildContext {
            upstream: &self.upstream,
            max_response_bytes: self.limits.max_body_bytes,
            public_base_url,
            shared_budget: shared
                .map(|shared| SharedBudget::new(shared, &self.store_identity(factory))),
            shared: shared.cloned(),
            checkout: &self.checkout,
            unpaid_gateway: self
                .pix
                .as_ref()
                .and_then(|pix| pix.store_gateway.as_deref()),
            guard: Default::default(),
        };
        (factory.build)(&self.store, &context).await
    }

    /// The store as every replica of it spells it, whatever address each listens on.
    pub fn store_identity_of_config(&self) -> String {
        match crate::registry::factory(self.platform_name()) {
            Some(factory) => self.store_identity(factory),
            None => self.platform_name().to_owned(),
        }
    }

    /// The platform and where the store is, spelled the same by every replica of it.
    fn store_identity(&self, factory: &PlatformFactory) -> String {
        let mut identity = factory.name.to_owned();
        for key in factory.address_keys {
            let value = key
                .strip_prefix("store.")
                .and_then(|name| self.store.get(name))
                .map(ToString::to_string)
                .unwrap_or_default();
            identity.push('|');
            identity.push_str(&value);
        }
        identity
    }

    /// `[pix]` on WooCommerce: the order awaiting its Pix payment is placed with
    /// `pix.store_gateway` and marked paid or cancelled through REST v3, which takes a key;
    /// without either the handler could not be offered, so `check` says which is missing.
    fn pix_store_problems(&self) -> Vec<ConfigProblem> {
        let mut problems = Vec::new();
        if self.pix.is_none() || self.platform_name() != "woocommerce" {
            return problems;
        }
        if self
            .pix
            .as_ref()
            .is_some_and(|pix| pix.store_gateway.is_none())
        {
            problems.push(ConfigProblem::new(
                "pix.store_gateway",
                "WooCommerce places the order awaiting its Pix payment with this gateway: name an offline one enabled in the store that leaves it on-hold (e.g. \"bacs\")",
            ));
        }
        if !self.store.contains_key("consumer_key") {
            problems.push(ConfigProblem::new(
                "store.consumer_key",
                "Pix needs a REST API v3 key with read/write permission (store.consumer_key and store.consumer_secret) to mark orders paid and cancel expired ones",
            ));
        }
        problems
    }

    pub fn platform_name(&self) -> &str {
        self.store
            .get("platform")
            .and_then(toml::Value::as_str)
            .unwrap_or("sample")
    }
}

/// 1-based line and column (in characters) of byte `offset` in `text`.
fn line_and_column(text: &str, offset: usize) -> (usize, usize) {
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let column = before
        .rsplit('\n')
        .next()
        .map_or(0, |tail| tail.chars().count())
        + 1;
    (line, column)
}

/// Deserialises `root[name]` (absent → default), recording a problem located at the exact key.
/// A section whose absence means "not configured".
fn optional_section<T: DeserializeOwned>(
    root: &toml::Table,
    name: &str,
    problems: &mut Vec<ConfigProblem>,
) -> Option<T> {
    deserialize_at(root.get(name)?.clone(), name, problems)
}

fn section<T: DeserializeOwned + Default>(
    root: &toml::Table,
    name: &str,
    problems: &mut Vec<ConfigProblem>,
) -> Option<T> {
    let Some(value) = root.get(name) else {
        return Some(T::default());
    };
    deserialize_at(value.clone(), name, problems)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]
    use super::*;

    fn problems(text: &str) -> Vec<ConfigProblem> {
        match BridgeConfig::from_toml(text) {
            Err(ConfigError::Invalid(problems)) => problems,
            other => panic!("expected problems, got {other:?}"),
        }
    }

    #[test]
    fn empty_file_is_the_sample_store_on_loopback() {
        let config = BridgeConfig::from_toml("").unwrap();
        assert_eq!(config.platform_name(), "sample");
        assert_eq!(config.server.mcp_path, "/bcp/mcp");
        assert_eq!(config.limits.default_page_size, 10);
    }

    #[test]
    fn unknown_keys_are_named_with_their_section() {
        let found = problems("[server]\nlisten = \"127.0.0.1:1\"\nlisen = 1\n");
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].key, "server.lisen");
        let found = problems("[serverr]\n");
        assert_eq!(found[0].key, "serverr");
    }

    #[test]
    fn every_section_reports_its_own_problem() {
        let found = problems(
            "[server]\nlisten = \"nope\"\n[limits]\nmax_page_size = 0\n[store]\nplatform = \"magento\"\n",
        );
        let keys: Vec<_> = found.iter().map(|p| p.key.as_str()).collect();
        assert!(keys.contains(&"server.listen"), "{keys:?}");
        assert!(keys.contains(&"limits.max_page_size"), "{keys:?}");
        assert!(keys.contains(&"store.platform"), "{keys:?}");
    }

    #[test]
    fn protocol_is_checked_by_key() {
        let config = BridgeConfig::from_toml("[server]\nprotocol = \"both\"\n").unwrap();
        assert_eq!(config.server.protocol, Protocol::Both);
        assert_eq!(config.server.ucp_mcp_path, "/ucp/mcp");
        let found = problems("[server]\nprotocol = \"acp\"\n");
        assert_eq!(found[0].key, "server.protocol");
        let found = problems(
            "[server]\nprotocol = \"both\"\nmcp_path = \"/mcp\"\nucp_mcp_path = \"/mcp\"\n",
        );
        assert_eq!(found[0].key, "server.ucp_mcp_path");
    }
}
