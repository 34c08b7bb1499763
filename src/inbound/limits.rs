//! Runs around every `tools/call`: the inbound budgets and the whole-request deadline.

use std::future::Future;
use std::net::IpAddr;
use std::time::Duration;

use super::budget::{InboundConfig, InboundLimiter, Throttled};
use super::shared::SharedInbound;
use crate::replicas::Shared;

/// Why the limits stopped a call before (or while) it ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum LimitError {
    #[error(transparent)]
    Throttled(#[from] Throttled),
    #[error("the request took longer than its deadline")]
    TimedOut,
}

pub struct CallLimits {
    inbound: InboundLimiter,
    /// The per-agent budget across replicas (`[redis]`), on top of the local one.
    shared: Option<SharedInbound>,
    timeout: Duration,
}

impl CallLimits {
    pub fn new(request_timeout: Duration, inbound: &InboundConfig) -> Self {
        Self {
            inbound: InboundLimiter::new(inbound),
            shared: None,
            timeout: request_timeout,
        }
    }

    /// Shares the per-agent budget with every replica on `shared`.
    pub fn across_replicas(mut self, inbound: &InboundConfig, shared: Option<&Shared>) -> Self {
        self.shared = SharedInbound::new(inbound, shared);
        self
    }

    /// Charges the budgets of `profile` and `peer`, then runs `call` within the deadline.
    pub async fn run<T, E>(
        &self,
        tool: &str,
        profile: Option<&str>,
        peer: Option<IpAddr>,
        call: impl Future<Output = Result<T, E>>,
    ) -> Result<T, E>
    where
        E: From<LimitError>,
    {
        self.inbound
            .check(profile, peer)
            .map_err(|throttled| E::from(LimitError::Throttled(throttled)))?;
        if let Some(shared) = &self.shared {
            // Boxed: a Redis round trip is a large future, and this one holds the whole call.
            Box::pin(shared.check(profile))
                .await
                .map_err(|throttled| E::from(LimitError::Throttled(throttled)))?;
        }
        match tokio::time::timeout(self.timeout, call).await {
            Ok(outcome) => outcome,
            Err(_) => {
                tracing::warn!(
                    tool,
                    timeout_ms = self.timeout.as_millis() as u64,
                    "request timed out"
                );
                Err(LimitError::TimedOut.into())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::panic, clippy::unwrap_used)]
    use super::*;

    #[tokio::test]
    async fn a_call_past_the_request_timeout_times_out() {
        let limits = CallLimits::new(Duration::from_millis(100), &InboundConfig::default());
        let slow = async {
            tokio::time::sleep(Duration::from_secs(5)).await;
            Ok::<(), LimitError>(())
        };
        assert_eq!(
            limits.run("get_product", None, None, slow).await,
            Err(LimitError::TimedOut)
        );
    }
}
