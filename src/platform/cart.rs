//! The cart port: the store operations on a buyer's cart. The write serialiser (`serial`)
//! is the one decorator that wraps it; carts are never cached.

use std::sync::Arc;

use async_trait::async_trait;

use super::error::PlatformError;
use crate::model::{CartDraft, CartOutcome, CartState};

#[async_trait]
pub trait CartPort: Send + Sync + 'static {
    /// Creates an upstream cart holding `draft.lines` (variants the brain already resolved,
    /// or the agent's ids when the store judges lines).
    async fn create(&self, draft: &CartDraft) -> Result<CartOutcome, PlatformError>;

    /// `None` for unknown, expired or cancelled carts.
    async fn get(&self, id: &str) -> Result<Option<CartState>, PlatformError>;

    /// Makes the cart's lines exactly `draft.lines`, with as few upstream writes as it can.
    async fn replace(
        &self,
        id: &str,
        draft: &CartDraft,
    ) -> Result<Option<CartOutcome>, PlatformError>;

    /// Cancels the cart and returns it as it was just before; later calls must see `None`.
    async fn cancel(&self, id: &str) -> Result<Option<CartState>, PlatformError>;
}

/// Conveniences over the core, provided once (see `CatalogExt`).
#[async_trait]
pub trait CartExt: CartPort {
    /// Cancels a cart nobody will be handed; a failure is logged, not returned, because the
    /// answer the caller gives does not depend on it.
    async fn discard(&self, id: &str) {
        if let Err(error) = self.cancel(id).await {
            tracing::warn!(%error, "could not discard an upstream cart");
        }
    }
}

impl<T: CartPort + ?Sized> CartExt for T {}

pub type SharedCarts = Arc<dyn CartPort>;
