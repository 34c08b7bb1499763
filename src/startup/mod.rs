//! Start-up, in phases, each in its own file and each failing with its own [`StartError`]:
//! 1. configure (`configure`): the file's sections assembled, the command line's overrides
//!    applied, then everything checked once;
//! 2. build (`build`, `routes`): TLS read, the listener bound, Redis, the store adapter and
//!    every namespace's endpoint put together;
//! 3. start (`start`, `accept`): the accept loop serves until the stop signal.
//!
//! What a valid configuration still leaves open (`warnings`) is logged once, as the build
//! phase begins, and printed by `check`.
//!
//! The top layer: it assembles every layer below and nothing below imports it.

pub mod accept;
mod admission;
pub mod build;
pub mod config_schema;
pub mod configure;
pub mod healthcheck;
pub mod proxies;
pub mod server_config;
pub mod start;
pub mod warnings;

mod pix;
mod routes;

use std::net::SocketAddr;

use crate::settings::ConfigProblem;

pub use build::{Bridge, Endpoint, build, build_with_tools};
pub use configure::{BridgeConfig, ConfigError, Overrides};
pub use start::{Built, Startup};

/// Why the bridge did not start, by phase and part; each names the key or cause to fix.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The file (or an override) is wrong: nothing was contacted yet.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The certificate or key read at start-up (`[server.tls]`) cannot be used.
    #[error("cannot load the TLS certificate: {0}")]
    Tls(ConfigProblem),
    #[error("cannot listen on {address}: {source}")]
    Listen {
        address: SocketAddr,
        source: std::io::Error,
    },
    /// `[redis]` cannot be used to share state between replicas.
    #[error("cannot use the shared Redis: {0}")]
    Redis(ConfigProblem),
    /// The idempotency store (`[idempotency]`, on the shared Redis or in memory).
    #[error("cannot set up the idempotency store: {0}")]
    Idempotency(ConfigProblem),
    /// The store adapter `[store]` names could not be built (or the store asked at start-up).
    #[error("cannot set up the store:\n{}", configure::render(.0))]
    Store(Vec<ConfigProblem>),
    /// `[order_webhooks]`: the signing key cannot be read or used.
    #[error("cannot set up order webhooks: {0}")]
    OrderWebhooks(ConfigProblem),
    /// `[telemetry]`: the trace exporter cannot be set up.
    #[error("cannot set up telemetry: {0}")]
    Telemetry(ConfigProblem),
    /// The tool input schemas: a defect of the bridge itself, not of its configuration.
    #[error("cannot build the tool schemas: {0}")]
    Schemas(String),
}

impl StartError {
    /// The process exit code: 2 when the operator fixes a setting (as `check` exits), 1 else.
    pub fn exit_code(&self) -> u8 {
        match self {
            Self::Config(_)
            | Self::Tls(_)
            | Self::Redis(_)
            | Self::Idempotency(_)
            | Self::Store(_)
            | Self::OrderWebhooks(_)
            | Self::Telemetry(_) => 2,
            Self::Listen { .. } | Self::Schemas(_) => 1,
        }
    }
}
