//! Order handles: the id an agent is given for an order is the store's own id sealed under a
//! key only this bridge holds (AES-256-GCM-SIV). Store order ids are sequential or guessable
//! (`ord_2`, a WooCommerce post id, a Shopify numeric gid), so handing them out would let any
//! agent read any buyer's order; a handle can only come from the answer that placed the order
//! or its event, and one the bridge did not mint opens to nothing. Sealing is deterministic
//! (a fixed nonce, which GCM-SIV tolerates: equal ids give equal handles and nothing else
//! leaks), so the completed checkout, `get_order` and every event name the order alike, with
//! no table to keep. With `[redis]` the key is shared, so every replica, and a restarted one,
//! opens the handles any other minted.

use std::sync::Arc;

use aws_lc_rs::aead::{AES_256_GCM_SIV, Aad, LessSafeKey, NONCE_LEN, Nonce, UnboundKey};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use tokio::sync::OnceCell;

use crate::brain::BrainError;
use crate::platform::PlatformError;
use crate::replicas::Link;

const PREFIX: &str = "ord_";
/// Binds a handle to its purpose: a sealed order id never opens as anything else.
const CONTEXT: &[u8] = b"bcp-bridge order handle v1";
/// The name of the replicas' shared key in Redis.
const SECRET: &str = "order-handles";
/// Longer than any handle the bridge mints for a store id it could hold, so a longer input is
/// refused before any work.
const MAX_HANDLE: usize = 1_024;

pub struct OrderHandles {
    shared: Option<Arc<Link>>,
    key: OnceCell<LessSafeKey>,
}

/// A loaded key: seals and opens without waiting.
pub struct Sealer<'a>(&'a LessSafeKey);

fn nonce() -> Nonce {
    Nonce::assume_unique_for_key([0; NONCE_LEN])
}

fn key_from(bytes: &[u8; 32]) -> Result<LessSafeKey, BrainError> {
    UnboundKey::new(&AES_256_GCM_SIV, bytes)
        .map(LessSafeKey::new)
        .map_err(|_| BrainError::Internal("order handle key rejected".into()))
}

impl OrderHandles {
    /// Handles only this process opens: without `[redis]` the orders' state is this
    /// process's too, and goes with it.
    pub fn local() -> Self {
        Self {
            shared: None,
            key: OnceCell::new(),
        }
    }

    /// Handles every replica sharing `link` opens (the key is kept in that Redis).
    pub fn shared(link: Arc<Link>) -> Self {
        Self {
            shared: Some(link),
            key: OnceCell::new(),
        }
    }

    /// The key, loaded on first use: a Redis that is down now is asked again next time.
    pub async fn sealer(&self) -> Result<Sealer<'_>, BrainError> {
        let key = self
            .key
            .get_or_try_init(|| async {
                let bytes = match &self.shared {
                    Some(link) => crate::replicas::secret::shared_key(link, SECRET)
                        .await
                        .map_err(|_| {
                            BrainError::Platform(PlatformError::Unavailable {
                                reason: "the shared state (Redis) is unreachable".into(),
                                retry_after: Some(std::time::Duration::from_secs(2)),
                            })
                        })?,
                    None => {
                        let mut bytes = [0u8; 32];
                        aws_lc_rs::rand::fill(&mut bytes).map_err(|_| {
                            BrainError::Internal("no randomness for the order handle key".into())
                        })?;
                        bytes
                    }
                };
                key_from(&bytes)
            })
            .await?;
        Ok(Sealer(key))
    }
}

impl Sealer<'_> {
    /// The handle an agent is given for the store's order `store_id`.
    pub fn seal(&self, store_id: &str) -> Result<String, BrainError> {
        let mut sealed = store_id.as_bytes().to_vec();
        self.0
            .seal_in_place_append_tag(nonce(), Aad::from(CONTEXT), &mut sealed)
            .map_err(|_| BrainError::Internal("order id not sealed".into()))?;
        Ok(format!("{PREFIX}{}", URL_SAFE_NO_PAD.encode(sealed)))
    }

    /// The store's id inside a handle this bridge minted; `None` for anything else (guessed,
    /// altered, another bridge's, a bare store id).
    pub fn open(&self, handle: &str) -> Option<String> {
        if handle.len() > MAX_HANDLE {
            return None;
        }
        let mut sealed = URL_SAFE_NO_PAD.decode(handle.strip_prefix(PREFIX)?).ok()?;
        let opened = self
            .0
            .open_in_place(nonce(), Aad::from(CONTEXT), &mut sealed)
            .ok()?;
        String::from_utf8(opened.to_vec()).ok()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[tokio::test]
    async fn a_handle_opens_to_its_store_id_and_is_the_same_each_time() {
        let handles = OrderHandles::local();
        let sealer = handles.sealer().await.unwrap();
        let handle = sealer.seal("wc_order_1234").unwrap();
        assert!(handle.starts_with(PREFIX));
        assert!(!handle.contains("1234"), "{handle}");
        assert_eq!(sealer.seal("wc_order_1234").unwrap(), handle);
        assert_eq!(sealer.open(&handle).as_deref(), Some("wc_order_1234"));
    }

    /// Issue 35 item 1: a guessed, altered or bare id opens nothing.
    #[tokio::test]
    async fn only_handles_this_bridge_minted_open() {
        let handles = OrderHandles::local();
        let sealer = handles.sealer().await.unwrap();
        let handle = sealer.seal("ord_1").unwrap();
        assert_eq!(sealer.open("ord_1"), None);
        assert_eq!(sealer.open("ord_2"), None);
        assert_eq!(sealer.open(""), None);
        assert_eq!(sealer.open(&"A".repeat(MAX_HANDLE + 1)), None);
        let mut altered = handle.clone().into_bytes();
        let last = altered.len() - 2;
        altered[last] = if altered[last] == b'A' { b'B' } else { b'A' };
        assert_eq!(sealer.open(&String::from_utf8(altered).unwrap()), None);
        // Another bridge's key (another process without a shared Redis) opens nothing here.
        let other = OrderHandles::local();
        let foreign = other.sealer().await.unwrap().seal("ord_1").unwrap();
        assert_ne!(foreign, handle);
        assert_eq!(sealer.open(&foreign), None);
    }
}
