//! Reading `[server.tls]`'s PEM files into a certificate rustls can serve, each failure named
//! by the key whose file is at fault. The private key's bytes never reach a message.

use std::path::Path;
use std::sync::Arc;

use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::{self, PemObject};
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::sign::CertifiedKey;
use rustls::{Error as TlsError, InconsistentKeys};
use sha2::{Digest, Sha256};

use super::TlsConfig;
use crate::settings::ConfigProblem;

const CERT_KEY: &str = "server.tls.cert";
const KEY_KEY: &str = "server.tls.key";

pub(super) fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::aws_lc_rs::default_provider())
}

/// A certificate ready to serve, with the SHA-256 of its leaf for the logs and the leaf's
/// notAfter (Unix seconds) for the expiry metric.
pub(super) struct Loaded {
    pub certified: Arc<CertifiedKey>,
    pub fingerprint: String,
    pub not_after: Option<i64>,
}

pub(super) fn load(config: &TlsConfig) -> Result<Loaded, ConfigProblem> {
    let chain = read_chain(&config.cert)?;
    let key = read_key(&config.key)?;
    let signing = provider()
        .key_provider
        .load_private_key(key)
        .map_err(|error| {
            ConfigProblem::new(
                KEY_KEY,
                format!(
                    "{}: not a private key rustls can sign with (RSA, ECDSA P-256/P-384 or Ed25519): {error}",
                    config.key.display()
                ),
            )
        })?;
    let certified = CertifiedKey::new(chain, signing);
    match certified.keys_match() {
        Ok(()) | Err(TlsError::InconsistentKeys(InconsistentKeys::Unknown)) => {}
        Err(TlsError::InconsistentKeys(InconsistentKeys::KeyMismatch)) => {
            return Err(ConfigProblem::new(
                KEY_KEY,
                format!(
                    "{} does not belong to the certificate in {} (server.tls.cert): the public keys differ",
                    config.key.display(),
                    config.cert.display()
                ),
            ));
        }
        Err(error) => {
            return Err(ConfigProblem::new(
                CERT_KEY,
                format!(
                    "{}: the first certificate is not a valid X.509 certificate: {error}",
                    config.cert.display()
                ),
            ));
        }
    }
    let fingerprint = certified
        .end_entity_cert()
        .map(|leaf| hex::encode(Sha256::digest(leaf.as_ref())))
        .unwrap_or_default();
    let not_after = certified.end_entity_cert().ok().and_then(|leaf| {
        x509_parser::parse_x509_certificate(leaf.as_ref())
            .ok()
            .map(|(_, parsed)| parsed.validity().not_after.timestamp())
    });
    Ok(Loaded {
        certified: Arc::new(certified),
        fingerprint,
        not_after,
    })
}

fn read_chain(path: &Path) -> Result<Vec<CertificateDer<'static>>, ConfigProblem> {
    let problem =
        |what: String| ConfigProblem::new(CERT_KEY, format!("{}: {what}", path.display()));
    let certificates = CertificateDer::pem_file_iter(path)
        .map_err(|error| problem(pem_problem(&error)))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|error| problem(pem_problem(&error)))?;
    if certificates.is_empty() {
        return Err(problem(
            "no PEM certificate (-----BEGIN CERTIFICATE-----) in the file".to_owned(),
        ));
    }
    Ok(certificates)
}

fn read_key(path: &Path) -> Result<PrivateKeyDer<'static>, ConfigProblem> {
    PrivateKeyDer::from_pem_file(path).map_err(|error| {
        let what = match error {
            pem::Error::NoItemsFound => "no PEM private key (-----BEGIN PRIVATE KEY-----, RSA PRIVATE KEY or EC PRIVATE KEY) in the file".to_owned(),
            other => pem_problem(&other),
        };
        ConfigProblem::new(KEY_KEY, format!("{}: {what}", path.display()))
    })
}

/// A PEM failure in words that quote nothing of the file (it may be the private key).
fn pem_problem(error: &pem::Error) -> String {
    match error {
        pem::Error::Io(error) => format!("cannot read the file: {error}"),
        pem::Error::NoItemsFound => "no PEM section of the expected kind".to_owned(),
        pem::Error::SectionTooLarge => "a PEM section is too large".to_owned(),
        _ => "not valid PEM (a section is cut short, or its base64 is damaged)".to_owned(),
    }
}
