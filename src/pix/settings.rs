//! `[pix]`: the merchant's PSP, reached through the Central Bank's API Pix (v2). Present, the
//! BCP profile and checkout answers offer the `br.dev.bcp.pix` handler where the store can
//! take an order unpaid.

use std::path::PathBuf;

use schemars::JsonSchema;
use secrecy::ExposeSecret;
use serde::Deserialize;
use url::Url;

use super::pem;
use crate::settings::{ConfigProblem, Secret, is_loopback_url};

/// `[pix]`: the PSP's API Pix and the merchant's Pix key. Mutual TLS and OAuth2 client
/// credentials, as API Pix requires.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PixConfig {
    /// The API Pix base URL: `cob` and `webhook` are under it (e.g.
    /// "https://pix.example-psp.com.br/api/v2").
    pub api_url: String,
    /// The PSP's OAuth2 token endpoint (client credentials); API Pix leaves its path to the PSP.
    pub token_url: String,
    /// The OAuth2 client id the PSP issued.
    pub client_id: Secret,
    /// The OAuth2 client secret the PSP issued.
    pub client_secret: Secret,
    /// The client certificate (PEM) the PSP issued for mutual TLS.
    pub client_cert: PathBuf,
    /// The private key (PEM) of `client_cert`.
    pub client_key: PathBuf,
    /// A CA certificate (PEM) to trust for the PSP beside the system roots.
    pub ca_cert: Option<PathBuf>,
    /// The merchant's Pix key (`chave`) charges pay into: a CNPJ, e-mail, phone or random key.
    pub key: String,
    /// How long a charge may be paid, in seconds (`calendario.expiracao`).
    #[serde(default = "default_expires_secs")]
    pub expires_secs: u32,
    /// The handler id checkout answers and the profile give the Pix handler.
    #[serde(default = "default_handler_id")]
    pub handler_id: String,
    /// WooCommerce: the store's gateway the order is placed with while it awaits the Pix
    /// payment (an offline gateway that leaves it on-hold, e.g. "bacs").
    pub store_gateway: Option<String>,
    /// The key (at least 16 characters) txids are derived with from the store's order, so a
    /// txid cannot be guessed from the order number; every replica must have the same one.
    /// Absent, `client_secret` keys them (rotating it then changes the txids of orders not
    /// yet charged).
    pub txid_secret: Option<Secret>,
    /// Whether checkout answers carry the charge's QR image (`qr_code_base64`, a PNG of a few
    /// KB) beside the BR Code. BCP leaves it optional (the agent can render it from
    /// `copia_e_cola`): false keeps answers small.
    #[serde(default = "default_qr_code")]
    pub qr_code: bool,
}

fn default_qr_code() -> bool {
    true
}

fn default_expires_secs() -> u32 {
    1800
}

fn default_handler_id() -> String {
    "pix".to_owned()
}

/// Seconds a charge may live: API Pix has no upper bound, but past a day the buyer has left the
/// conversation and the store holds stock for nothing; under a minute no one can pay it.
const EXPIRES_SECS: std::ops::RangeInclusive<u32> = 60..=86_400;

impl PixConfig {
    /// Every problem `check` can see without the network, each named by its `pix.*` key.
    pub fn problems(&self) -> Vec<ConfigProblem> {
        let mut problems = Vec::new();
        for (key, raw) in [
            ("pix.api_url", &self.api_url),
            ("pix.token_url", &self.token_url),
        ] {
            if let Err(message) = psp_url(raw) {
                problems.push(ConfigProblem::new(key, message));
            }
        }
        if let Err(message) = pem::certificates(&self.client_cert) {
            problems.push(ConfigProblem::new("pix.client_cert", message));
        }
        match pem::private_key(&self.client_key) {
            Err(message) => problems.push(ConfigProblem::new("pix.client_key", message)),
            Ok(()) => {
                if let Err(message) = pem::identity_matches(&self.client_cert, &self.client_key) {
                    problems.push(ConfigProblem::new("pix.client_key", message));
                }
            }
        }
        if let Some(ca_cert) = &self.ca_cert
            && let Err(message) = pem::certificates(ca_cert)
        {
            problems.push(ConfigProblem::new("pix.ca_cert", message));
        }
        if let Err(message) = key_kind(&self.key) {
            problems.push(ConfigProblem::new("pix.key", message));
        }
        if !EXPIRES_SECS.contains(&self.expires_secs) {
            problems.push(ConfigProblem::new(
                "pix.expires_secs",
                format!(
                    "must be between {} and {} seconds",
                    EXPIRES_SECS.start(),
                    EXPIRES_SECS.end()
                ),
            ));
        }
        let handler_id_ok = !self.handler_id.is_empty()
            && self.handler_id.len() <= 64
            && self
                .handler_id
                .bytes()
                .all(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'_' | b'-' | b'.'));
        if !handler_id_ok {
            problems.push(ConfigProblem::new(
                "pix.handler_id",
                "must be 1 to 64 characters of letters, digits, '_', '-' or '.'",
            ));
        }
        if let Some(gateway) = &self.store_gateway
            && gateway.trim().is_empty()
        {
            problems.push(ConfigProblem::new("pix.store_gateway", "must not be empty"));
        }
        if let Some(secret) = &self.txid_secret
            && secret.0.expose_secret().len() < 16
        {
            problems.push(ConfigProblem::new(
                "pix.txid_secret",
                "must be at least 16 characters (it keys the charges' txids)",
            ));
        }
        problems
    }
}

/// A PSP URL: https (mutual TLS needs TLS), or http to this machine only (a local stand-in),
/// the rule the store URLs follow; no credentials in it (they would reach logs and proxies).
pub fn psp_url(raw: &str) -> Result<Url, String> {
    let url = Url::parse(raw).map_err(|error| format!("not a URL: {error}"))?;
    match url.scheme() {
        "https" => {}
        "http" if is_loopback_url(&url) => {}
        "http" => return Err("must use https (http only to localhost)".to_owned()),
        other => return Err(format!("must use https, not {other}")),
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err("has no host".to_owned());
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err("must not carry credentials (use client_id and client_secret)".to_owned());
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err("must not have a query or fragment".to_owned());
    }
    Ok(url)
}

/// What kind of Pix key (DICT) a `chave` is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyKind {
    Cpf,
    Cnpj,
    Email,
    Phone,
    Random,
}

/// The key's kind by its DICT shape: 11 digits (CPF), 14 digits (CNPJ), an e-mail (at most 77
/// characters), `+55` and 10 or 11 digits (a Brazilian phone), or a random key (a UUID in
/// lower case with hyphens, as DICT issues it).
pub fn key_kind(key: &str) -> Result<KeyKind, String> {
    let all_digits = !key.is_empty() && key.bytes().all(|byte| byte.is_ascii_digit());
    if all_digits && key.len() == 11 {
        return Ok(KeyKind::Cpf);
    }
    if all_digits && key.len() == 14 {
        return Ok(KeyKind::Cnpj);
    }
    if let Some(national) = key.strip_prefix("+55") {
        if matches!(national.len(), 10 | 11) && national.bytes().all(|byte| byte.is_ascii_digit()) {
            return Ok(KeyKind::Phone);
        }
        return Err(
            "a phone key is +55 followed by the area code and number (10 or 11 digits)".to_owned(),
        );
    }
    if key.len() == 36
        && uuid::Uuid::try_parse(key).is_ok()
        && !key.bytes().any(|byte| byte.is_ascii_uppercase())
    {
        return Ok(KeyKind::Random);
    }
    if let Some((local, domain)) = key.split_once('@')
        && key.len() <= 77
        && !local.is_empty()
        && domain.contains('.')
        && !domain.starts_with('.')
        && !domain.ends_with('.')
        && !domain.contains('@')
        && !key
            .bytes()
            .any(|byte| byte.is_ascii_whitespace() || byte.is_ascii_control())
    {
        return Ok(KeyKind::Email);
    }
    Err("not a Pix key: expected a CPF (11 digits) or CNPJ (14 digits) without punctuation, an e-mail, a phone as +55 and digits, or a random key (UUID in lower case)".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pix_keys_are_told_by_their_dict_shape() {
        assert_eq!(key_kind("52998224725"), Ok(KeyKind::Cpf));
        assert_eq!(key_kind("19131243000197"), Ok(KeyKind::Cnpj));
        assert_eq!(key_kind("loja@example.com.br"), Ok(KeyKind::Email));
        assert_eq!(key_kind("+5511987650123"), Ok(KeyKind::Phone));
        assert_eq!(
            key_kind("7d9f0335-8dcc-4054-9bf9-0dbd61d36906"),
            Ok(KeyKind::Random)
        );
        for bad in [
            "",
            "529.982.247-25",
            "5299822472",
            "+1555123456",
            "+55119876501234",
            "7D9F0335-8DCC-4054-9BF9-0DBD61D36906",
            "loja@localhost",
            "lo ja@example.com",
        ] {
            assert!(key_kind(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn psp_urls_are_https_or_loopback_http() {
        assert!(psp_url("https://pix.example.com/api/v2").is_ok());
        assert!(psp_url("http://127.0.0.1:8443/api/v2").is_ok());
        assert!(psp_url("http://localhost/api/v2").is_ok());
        for bad in [
            "http://pix.example.com/api/v2",
            "https://user:pass@pix.example.com/",
            "https://pix.example.com/?token=1",
            "ftp://pix.example.com/",
            "pix.example.com",
        ] {
            assert!(psp_url(bad).is_err(), "{bad}");
        }
    }
}
