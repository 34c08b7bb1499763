//! `[pix]`: the merchant's PSP, reached through the Central Bank's API Pix (v2). Present, the
//! BCP profile and checkout answers offer the `br.dev.bcp.pix` handler where the store can
//! take an order unpaid.

use std::path::PathBuf;

use schemars::JsonSchema;
use serde::Deserialize;

use crate::settings::Secret;

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
}

fn default_expires_secs() -> u32 {
    1800
}

fn default_handler_id() -> String {
    "pix".to_owned()
}
