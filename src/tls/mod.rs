//! Native TLS for deployments without an ingress (`[server.tls]`): rustls, TLS 1.3 only,
//! a certificate and key read from PEM files and swapped in place on SIGHUP or when the files
//! change, without dropping a connection. Below the serving loop and the configuration
//! assembler, which both use it; it imports only the configuration vocabulary and the metrics
//! (the served certificate's expiry).

mod certs;
mod reload;

use std::path::PathBuf;

use serde::Deserialize;

use crate::settings::ConfigProblem;

pub use reload::Tls;

/// `[server.tls]`: the PEM files of the certificate chain (leaf first) and its private key.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TlsConfig {
    pub cert: PathBuf,
    pub key: PathBuf,
    /// How often the files' modification times are compared, to pick up a renewed certificate
    /// without a signal (0 = only on SIGHUP).
    #[serde(default = "default_watch_interval_ms")]
    pub watch_interval_ms: u64,
}

fn default_watch_interval_ms() -> u64 {
    5_000
}

impl TlsConfig {
    /// Reads and checks both files, as start-up would: `check` reports what `serve` would refuse.
    pub fn problems(&self) -> Vec<ConfigProblem> {
        let mut problems = Vec::new();
        if self.watch_interval_ms != 0 && !(100..=3_600_000).contains(&self.watch_interval_ms) {
            problems.push(ConfigProblem::new(
                "server.tls.watch_interval_ms",
                "must be 0 (reload on SIGHUP only) or between 100 and 3600000",
            ));
        }
        if let Err(problem) = certs::load(self) {
            problems.push(problem);
        }
        problems
    }
}
