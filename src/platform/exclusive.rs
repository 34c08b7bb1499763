//! One writer at a time for a checkout, as for a cart (`serial`): a checkout write is several
//! store requests (lines, buyer, address, option, codes; or the placement), and two of them
//! interleaved would leave a checkout neither agent asked for. The write runs under this
//! process's lock on the id, and with `[redis]` under the id's lease and inside its fence, the
//! very lock, lease and fence a cart write of the same id takes: where a checkout is its cart
//! (WooCommerce, Shopify, VTEX) a cart and the checkout made from it have one writer. Without
//! Redis to coordinate, writes are refused (fail closed), as cart writes are.

use std::future::Future;
use std::sync::Arc;

use super::fence::fenced;
use super::port::PlatformError;
use super::serial::{KeyedLocks, take_lease};
use crate::replicas::Shared;

pub struct Exclusive {
    locks: Arc<KeyedLocks>,
    shared: Option<Shared>,
}

impl Exclusive {
    /// Turns taken on `locks` (the carts' own, so both kinds of write queue together) and,
    /// with `shared`, on the replicas' leases.
    pub fn new(locks: Arc<KeyedLocks>, shared: Option<Shared>) -> Self {
        Self { locks, shared }
    }

    /// This process alone: no lease, only the local lock.
    pub fn local() -> Self {
        Self::new(Arc::new(KeyedLocks::default()), None)
    }

    /// Runs `write` as the only writer of `id` across replicas; every upstream mutation it
    /// sends is checked against the lease's fence. `E` is the caller's error, so a caller's
    /// own refusals pass through untouched.
    pub async fn run<T, E>(
        &self,
        id: &str,
        write: impl Future<Output = Result<T, E>>,
    ) -> Result<T, E>
    where
        E: From<PlatformError>,
    {
        let _held = self.locks.lock(id).await;
        let Some(lease) = take_lease(self.shared.as_ref(), id).await? else {
            return write.await;
        };
        let (outcome, _) = fenced(lease.fence(), write).await;
        lease.release().await;
        outcome
    }
}
