//! Fenced cart writes. The serialiser runs each cart write inside the fence of the cart's
//! lease; the upstream client checks it before every mutation it sends, so adapters know
//! nothing of it and a new platform is fenced for free.
//!
//! Why a check before each mutation, and not more: stores offer no conditional write (the
//! WooCommerce Store API, Shopify's cart mutations and VTEX's orderForm take no version or
//! token to compare), so the store cannot refuse a stale holder's request itself. What the
//! bridge can do is refuse to send: a holder paused past its lease (SIGSTOP, a stall) finds
//! on waking that the lock holds a newer token and stops before its next request, with a
//! retriable error. The check also demands a margin of lease left (a third of it), so a
//! request leaves only while the lease will outlive it by that margin. What no client-side
//! fence closes is a request already on the wire when its sender stalls; the lease margin
//! and the store's own timeout bound that window, and the next holder's replacement (which
//! empties the cart first) overwrites whatever such a request did.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use super::error::PlatformError;
use crate::replicas::lease::{Fence, FenceError};

/// The fence of the write running in this task, and whether a mutation has left yet.
#[derive(Clone)]
struct Scope {
    fence: Fence,
    sent: Arc<AtomicBool>,
}

tokio::task_local! {
    static FENCE: Scope;
}

/// Runs `write` inside `fence`: every upstream mutation it sends is checked against it.
/// Also answers whether any mutation was sent (none: the store was not touched).
pub async fn fenced<T>(fence: Fence, write: impl Future<Output = T>) -> (T, bool) {
    let sent = Arc::new(AtomicBool::new(false));
    let scope = Scope {
        fence,
        sent: sent.clone(),
    };
    let outcome = FENCE.scope(scope, write).await;
    (outcome, sent.load(Ordering::SeqCst))
}

/// Before one upstream mutation: fine outside a fence (no replicas to take turns with);
/// inside one, only while the lease is still ours.
pub async fn check() -> Result<(), PlatformError> {
    let Ok(Scope { fence, sent }) = FENCE.try_with(Scope::clone) else {
        return Ok(());
    };
    match fence.check().await {
        Ok(()) => {
            sent.store(true, Ordering::SeqCst);
            Ok(())
        }
        Err(FenceError::Lost) => {
            tracing::warn!(
                token = fence.token(),
                "cart lease lost mid-write: the rest of the write is not sent"
            );
            Err(PlatformError::WritesPaused {
                reason: "another replica took over this cart's write",
                retry_after: Duration::from_secs(1),
            })
        }
        Err(FenceError::Down(_)) => Err(redis_away()),
    }
}

/// Cart writes are refused (fail closed) while the replicas cannot reach their Redis.
pub fn redis_away() -> PlatformError {
    PlatformError::WritesPaused {
        reason: "replicas cannot coordinate cart writes while their shared Redis is unreachable",
        retry_after: Duration::from_secs(2),
    }
}
