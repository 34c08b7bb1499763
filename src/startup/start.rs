//! The phases in order, builder-then-start: [`Startup`] holds a checked configuration,
//! [`Startup::build`] turns it into a bound, assembled [`Built`] bridge, and [`Built::start`]
//! serves until the stop signal. Whoever drives them (the CLI) speaks between build and start.

use std::future::Future;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::StartError;
use super::accept::{self, Hygiene};
use super::build::{Bridge, build};
use super::configure::{BridgeConfig, Overrides};
use super::warnings::warnings;
use crate::telemetry::{self, Telemetry};
use crate::tls::Tls;

/// A configuration that passed every check, ready to be built.
pub struct Startup {
    config: BridgeConfig,
    /// The file it was read from (`None` for `demo`), whose permissions `warnings` judges.
    file: Option<PathBuf>,
}

impl Startup {
    /// The configure phase for `serve`: the file, with the command line's overrides, checked.
    pub fn from_file(path: &Path, overrides: &Overrides) -> Result<Self, StartError> {
        Ok(Self {
            config: BridgeConfig::from_file_with(path, overrides)?,
            file: Some(path.to_owned()),
        })
    }

    /// The configure phase for `demo`: the embedded sample store, with the overrides, checked.
    pub fn demo(overrides: &Overrides) -> Result<Self, StartError> {
        Ok(Self {
            config: BridgeConfig::demo_with(overrides)?,
            file: None,
        })
    }

    pub fn config(&self) -> &BridgeConfig {
        &self.config
    }

    /// The build phase: TLS read, the listener bound (before anything else is contacted, so a
    /// taken port fails fast), then the application; certificate watching starts here, so a
    /// renewal is picked up from the moment anyone is told to connect.
    pub async fn build(self) -> Result<Built, StartError> {
        for warning in warnings(&self.config, self.file.as_deref()) {
            tracing::warn!(key = %warning.key, "{}", warning.message);
        }
        // The recorder first: loading the certificate already sets its expiry gauge.
        crate::prometheus::install();
        let tls = self
            .config
            .server
            .tls
            .as_ref()
            .map(Tls::load)
            .transpose()
            .map_err(StartError::Tls)?;
        let address = self.config.server.listen;
        let listener = TcpListener::bind(address)
            .await
            .map_err(|source| StartError::Listen { address, source })?;
        let bound = listener
            .local_addr()
            .map_err(|source| StartError::Listen { address, source })?;
        // Before the application: the first call may already be traced.
        let telemetry =
            telemetry::install(&self.config.telemetry).map_err(StartError::Telemetry)?;
        let shutdown = CancellationToken::new();
        let bridge = build(&self.config, bound, shutdown.clone()).await?;
        let watcher = tls.as_ref().map(|tls| tokio::spawn(tls.watch()));
        Ok(Built {
            config: self.config,
            bridge,
            bound,
            listener,
            tls,
            watcher,
            shutdown,
            telemetry,
        })
    }
}

/// A bridge bound and assembled, not yet serving.
pub struct Built {
    config: BridgeConfig,
    pub bridge: Bridge,
    pub bound: SocketAddr,
    listener: TcpListener,
    tls: Option<Arc<Tls>>,
    watcher: Option<JoinHandle<()>>,
    shutdown: CancellationToken,
    /// The trace exporter, flushed once the calls have drained.
    telemetry: Option<Telemetry>,
}

impl Built {
    pub fn config(&self) -> &BridgeConfig {
        &self.config
    }

    /// The start phase: serves until `stop` resolves, then drains within the grace period.
    pub async fn start(self, stop: impl Future<Output = ()>) {
        let hygiene = Hygiene::from(&self.config.server);
        let router = self.bridge.router;
        match &self.tls {
            Some(tls) => {
                accept::serve_tls(self.listener, router, hygiene, tls.acceptor(), stop).await;
            }
            None => accept::serve(self.listener, router, hygiene, stop).await,
        }
        if let Some(watcher) = self.watcher {
            watcher.abort();
        }
        // Only now: cancelling rmcp's token earlier would abort the calls still draining.
        self.shutdown.cancel();
        if let Some(telemetry) = self.telemetry {
            // The exporter posts from its own thread and blocks until the last batch is out.
            let _ = tokio::task::spawn_blocking(move || telemetry.shutdown()).await;
        }
    }
}
