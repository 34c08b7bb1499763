//! The charge's `txid`, derived from the store and its order so that a repeated complete asks
//! the PSP for the same charge (never a second one), yet keyed with a secret the bridge holds so
//! that nobody can compute another order's txid from its number and read its charge.

use hmac::{KeyInit, Mac};
use secrecy::ExposeSecret;

use super::settings::PixConfig;

type HmacSha256 = hmac::Hmac<sha2::Sha256>;

/// "bcp" and 32 hex digits (128 bits of HMAC-SHA256): 35 characters, the most API Pix allows,
/// all of `[a-zA-Z0-9]`.
pub const TXID_LEN: usize = 35;
const PREFIX: &str = "bcp";

/// The txid of `order_reference` in `store` (e.g. the platform name and the store's address,
/// and the store's own order id). The same inputs give the same txid on every replica.
pub fn derive(secret: &[u8], store: &str, order_reference: &str) -> String {
    // HMAC accepts a key of any length; an empty one is refused by `check` before this runs.
    let mut mac = match HmacSha256::new_from_slice(secret) {
        Ok(mac) => mac,
        Err(_) => return format!("{PREFIX}{}", "0".repeat(TXID_LEN - PREFIX.len())),
    };
    // Length-prefixed, so ("ab", "c") and ("a", "bc") differ.
    mac.update(&(store.len() as u64).to_be_bytes());
    mac.update(store.as_bytes());
    mac.update(order_reference.as_bytes());
    let digest = mac.finalize().into_bytes();
    let mut txid = String::with_capacity(TXID_LEN);
    txid.push_str(PREFIX);
    txid.push_str(&hex::encode(&digest[..16]));
    txid
}

/// `derive` with `[pix] txid_secret`, or `client_secret` when none is set.
pub fn derive_for(config: &PixConfig, store: &str, order_reference: &str) -> String {
    let secret = config.txid_secret.as_ref().unwrap_or(&config.client_secret);
    derive(secret.0.expose_secret().as_bytes(), store, order_reference)
}

/// API Pix's rule for a txid a receiver chooses (`PUT /cob/{txid}`): 26 to 35 of `[a-zA-Z0-9]`.
pub fn is_valid(txid: &str) -> bool {
    (26..=35).contains(&txid.len()) && txid.bytes().all(|byte| byte.is_ascii_alphanumeric())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issue_38_txid_is_stable_per_order_and_keyed() {
        let first = derive(b"0123456789abcdef", "woocommerce|shop", "1042");
        assert_eq!(
            first,
            derive(b"0123456789abcdef", "woocommerce|shop", "1042")
        );
        assert!(is_valid(&first), "{first}");
        assert_eq!(first.len(), TXID_LEN);
        assert_ne!(
            first,
            derive(b"0123456789abcdef", "woocommerce|shop", "1043")
        );
        assert_ne!(
            first,
            derive(b"another secret!!", "woocommerce|shop", "1042")
        );
        assert_ne!(
            first,
            derive(b"0123456789abcdef", "woocommerce|sho", "p1042")
        );
        assert!(!first.contains("1042"));
    }

    #[test]
    fn txid_rule_is_api_pix_s() {
        assert!(is_valid(&"a".repeat(26)));
        assert!(is_valid(&"Z9".repeat(17)));
        assert!(!is_valid(&"a".repeat(25)));
        assert!(!is_valid(&"a".repeat(36)));
        assert!(!is_valid(&format!("{}-", "a".repeat(30))));
    }
}
