//! The errors every port speaks (a leaf of the platform layer, so the ports and their bundle
//! in `port` can all name them).

use std::time::Duration;

#[derive(Debug, Clone, thiserror::Error)]
pub enum PlatformError {
    #[error("the store is throttling requests")]
    RateLimited { retry_after: Option<Duration> },
    /// A bounded store is at its bound; space frees up after `retry_after`.
    #[error("the {what} is full")]
    Full {
        what: &'static str,
        retry_after: Duration,
    },
    #[error("the store is unavailable: {reason}")]
    Unavailable {
        reason: String,
        retry_after: Option<Duration>,
    },
    /// Cart writes cannot be coordinated across replicas right now (the shared Redis is
    /// unreachable, or another replica held the cart past the wait): refused rather than
    /// risk two replicas interleaving writes to one cart. Reads keep working.
    #[error("cart writes are paused: {reason}")]
    WritesPaused {
        reason: &'static str,
        retry_after: Duration,
    },
    /// The upstream answered, but not in a shape the adapter understands.
    #[error("the store sent an unexpected response: {0}")]
    BadResponse(String),
    /// The agent's input cannot be honoured by this upstream (e.g. a stale cursor).
    #[error("{0}")]
    InvalidInput(String),
    /// Like `InvalidInput`, naming the argument at fault by its JSON path (`$.cart.context.language`).
    #[error("{path}: {message}")]
    InvalidAt { path: String, message: String },
    #[error("this store does not support {0}")]
    Unsupported(&'static str),
    /// The store refused the bridge's own credentials: nothing the agent can fix; `key` is
    /// the configuration key the merchant must.
    #[error("the store refused the bridge's credentials ({key})")]
    Unauthorized { key: &'static str },
}
