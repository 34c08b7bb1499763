//! The certificate in service, swapped in place: handshakes already under way keep the
//! certificate they started with, new ones get the new one, no connection is dropped. A reload
//! that fails (a half-written file, a key that does not match) keeps the previous certificate
//! and says so in the log.
//!
//! Files are watched by comparing modification time and size every few seconds rather than
//! with inotify: two `stat` calls per interval cost nothing, need no extra dependency, and follow
//! the symlink swap Kubernetes uses to update a mounted Secret (inotify would watch the old file).

use std::fmt;
use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::{Duration, SystemTime};

use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;
use tokio_rustls::TlsAcceptor;

use super::{TlsConfig, certs};
use crate::settings::ConfigProblem;

/// Serves whichever certificate was loaded last.
struct Current(RwLock<Arc<CertifiedKey>>);

impl fmt::Debug for Current {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Current(certificate)")
    }
}

impl ResolvesServerCert for Current {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(Arc::clone(
            &self.0.read().unwrap_or_else(PoisonError::into_inner),
        ))
    }
}

/// What the files looked like when last read: modification time and size of each (None when
/// it could not be read).
type Stamp = [Option<(SystemTime, u64)>; 2];

fn stamp(config: &TlsConfig) -> Stamp {
    [&config.cert, &config.key].map(|path| {
        let metadata = std::fs::metadata(path).ok()?;
        Some((metadata.modified().ok()?, metadata.len()))
    })
}

/// TLS termination for the accept loop, with the reload machinery.
pub struct Tls {
    config: TlsConfig,
    current: Arc<Current>,
    server: Arc<rustls::ServerConfig>,
    seen: Mutex<Stamp>,
}

impl Tls {
    /// Reads the files and builds a TLS 1.3-only server configuration; a problem is named by
    /// the key whose file is at fault, as `check` names it.
    pub fn load(config: &TlsConfig) -> Result<Arc<Self>, ConfigProblem> {
        let seen = stamp(config);
        let loaded = certs::load(config)?;
        let current = Arc::new(Current(RwLock::new(loaded.certified)));
        let mut server = rustls::ServerConfig::builder_with_provider(certs::provider())
            .with_protocol_versions(&[&rustls::version::TLS13])
            .map_err(|error| {
                ConfigProblem::new("server.tls", format!("cannot set up TLS 1.3: {error}"))
            })?
            .with_no_client_auth()
            .with_cert_resolver(Arc::clone(&current) as Arc<dyn ResolvesServerCert>);
        // The bridge speaks HTTP/1.1 only; saying so lets an ALPN client settle on it.
        server.alpn_protocols = vec![b"http/1.1".to_vec()];
        tracing::info!(
            cert = %config.cert.display(),
            fingerprint = %loaded.fingerprint,
            "TLS on (1.3 only): certificate loaded"
        );
        crate::prometheus::tls_cert_expiry(loaded.not_after);
        Ok(Arc::new(Self {
            config: config.clone(),
            current,
            server: Arc::new(server),
            seen: Mutex::new(seen),
        }))
    }

    pub fn acceptor(&self) -> TlsAcceptor {
        TlsAcceptor::from(Arc::clone(&self.server))
    }

    /// Reads the files again; on any problem the certificate in service stays.
    pub fn reload(&self, trigger: &'static str) -> bool {
        *self.seen.lock().unwrap_or_else(PoisonError::into_inner) = stamp(&self.config);
        match certs::load(&self.config) {
            Ok(loaded) => {
                *self
                    .current
                    .0
                    .write()
                    .unwrap_or_else(PoisonError::into_inner) = loaded.certified;
                crate::prometheus::tls_cert_expiry(loaded.not_after);
                tracing::info!(
                    trigger,
                    cert = %self.config.cert.display(),
                    fingerprint = %loaded.fingerprint,
                    "TLS certificate reloaded"
                );
                true
            }
            Err(problem) => {
                tracing::error!(
                    trigger,
                    %problem,
                    "TLS certificate reload failed: still serving the previous certificate"
                );
                false
            }
        }
    }

    fn files_changed(&self) -> bool {
        *self.seen.lock().unwrap_or_else(PoisonError::into_inner) != stamp(&self.config)
    }

    /// Reloads on SIGHUP and whenever a watch interval finds either file changed. The signal
    /// handler is installed before this returns, so a SIGHUP sent once the bridge is listening
    /// reloads instead of ending the process (SIGHUP's default).
    pub fn watch(self: &Arc<Self>) -> impl Future<Output = ()> + Send + 'static {
        let mut hangup = hangup_signal();
        let tls = Arc::clone(self);
        let interval = Duration::from_millis(self.config.watch_interval_ms);
        async move {
            loop {
                tokio::select! {
                    () = next_hangup(&mut hangup) => {
                        tls.reload("SIGHUP");
                    }
                    () = tick(interval) => {
                        if tls.files_changed() {
                            tls.reload("file change");
                        }
                    }
                }
            }
        }
    }
}

async fn tick(interval: Duration) {
    if interval.is_zero() {
        std::future::pending::<()>().await;
    }
    tokio::time::sleep(interval).await;
}

#[cfg(unix)]
type Hangup = Option<tokio::signal::unix::Signal>;
#[cfg(not(unix))]
type Hangup = Option<()>;

#[cfg(unix)]
fn hangup_signal() -> Hangup {
    use tokio::signal::unix::{SignalKind, signal};
    signal(SignalKind::hangup())
        .map_err(|error| {
            tracing::warn!(%error, "cannot listen for SIGHUP: certificates reload on file change only");
        })
        .ok()
}

#[cfg(not(unix))]
fn hangup_signal() -> Hangup {
    None
}

/// Resolves on each SIGHUP; never, when there is no signal to wait for.
async fn next_hangup(signal: &mut Hangup) {
    loop {
        #[cfg(unix)]
        if let Some(stream) = signal.as_mut() {
            if stream.recv().await.is_some() {
                return;
            }
            *signal = None;
            continue;
        }
        let _ = &signal;
        std::future::pending::<()>().await;
    }
}
