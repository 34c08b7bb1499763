//! Reading `[pix]`'s PEM files: the client identity for mutual TLS and the extra CA. Each
//! failure is told in words that quote nothing of the file (it may be the private key).

use std::path::Path;

use rustls::pki_types::pem::{self, PemObject};
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

/// The certificates in `path` (at least one).
pub fn certificates(path: &Path) -> Result<Vec<CertificateDer<'static>>, String> {
    let found = CertificateDer::pem_file_iter(path)
        .map_err(|error| at(path, &error))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|error| at(path, &error))?;
    if found.is_empty() {
        return Err(format!(
            "{}: no PEM certificate (-----BEGIN CERTIFICATE-----) in the file",
            path.display()
        ));
    }
    Ok(found)
}

/// Whether `path` holds a private key.
pub fn private_key(path: &Path) -> Result<(), String> {
    PrivateKeyDer::from_pem_file(path)
        .map(drop)
        .map_err(|error| match error {
            pem::Error::NoItemsFound => format!(
                "{}: no PEM private key (-----BEGIN PRIVATE KEY-----, RSA PRIVATE KEY or EC PRIVATE KEY) in the file",
                path.display()
            ),
            other => at(path, &other),
        })
}

/// Whether the key in `key_path` belongs to the first certificate of `cert_path`, as the
/// PSP's TLS handshake would find out (with a less helpful message).
pub fn identity_matches(cert_path: &Path, key_path: &Path) -> Result<(), String> {
    let Ok(chain) = certificates(cert_path) else {
        // Reported on client_cert already.
        return Ok(());
    };
    let key = PrivateKeyDer::from_pem_file(key_path).map_err(|error| at(key_path, &error))?;
    let provider = rustls::crypto::aws_lc_rs::default_provider();
    let signing = provider.key_provider.load_private_key(key).map_err(|_| {
        format!(
            "{}: not a private key TLS can sign with (RSA, ECDSA P-256/P-384 or Ed25519)",
            key_path.display()
        )
    })?;
    let certified = rustls::sign::CertifiedKey::new(chain, signing);
    match certified.keys_match() {
        Ok(()) => Ok(()),
        Err(rustls::Error::InconsistentKeys(rustls::InconsistentKeys::Unknown)) => Ok(()),
        Err(_) => Err(format!(
            "{} does not belong to the certificate in {} (pix.client_cert)",
            key_path.display(),
            cert_path.display()
        )),
    }
}

/// The certificate chain and key as one PEM document, what reqwest's `Identity` reads.
pub fn identity_pem(cert_path: &Path, key_path: &Path) -> Result<Vec<u8>, String> {
    let mut document =
        std::fs::read(cert_path).map_err(|error| format!("{}: {error}", cert_path.display()))?;
    document.push(b'\n');
    document.extend(
        std::fs::read(key_path).map_err(|error| format!("{}: {error}", key_path.display()))?,
    );
    Ok(document)
}

fn at(path: &Path, error: &pem::Error) -> String {
    let what = match error {
        pem::Error::Io(error) => format!("cannot read the file: {error}"),
        pem::Error::NoItemsFound => "no PEM section of the expected kind".to_owned(),
        pem::Error::SectionTooLarge => "a PEM section is too large".to_owned(),
        _ => "not valid PEM (a section is cut short, or its base64 is damaged)".to_owned(),
    };
    format!("{}: {what}", path.display())
}
