//! Per-agent inbound budgets shared by every replica (`[redis]`): the quota of `[inbound]
//! per_agent_per_minute`, drawn from one GCRA budget per agent profile in Redis, so an agent
//! spreading its calls over N replicas still gets the quota once, not N times. The local
//! limiter of `inbound` runs first and stays: while Redis is away it still holds each replica
//! to the quota.

use std::time::Duration;

use super::budget::{InboundConfig, Throttled};
use crate::replicas::gcra::Gcra;
use crate::replicas::{Shared, hashed};

pub struct SharedInbound {
    shared: Shared,
    per_agent_per_minute: u32,
}

impl SharedInbound {
    /// `None` without Redis or without a per-agent budget.
    pub fn new(config: &InboundConfig, shared: Option<&Shared>) -> Option<Self> {
        let shared = shared?.clone();
        (config.per_agent_per_minute > 0).then_some(Self {
            shared,
            per_agent_per_minute: config.per_agent_per_minute,
        })
    }

    /// One tool call by `profile` against the budget every replica shares.
    pub async fn check(&self, profile: Option<&str>) -> Result<(), Throttled> {
        let Some(profile) = profile else {
            return Ok(());
        };
        let budget = Gcra::new(
            format!("bcp:inbound:agent:{}", hashed(profile)),
            self.per_agent_per_minute,
            Duration::from_secs(60),
            0,
        );
        match budget.take(&self.shared.link).await {
            Ok(None) => Ok(()),
            Ok(Some(wait)) => {
                crate::prometheus::rate_limited("inbound_agent_shared", "-");
                Err(Throttled {
                    retry_after_secs: wait.as_secs() + u64::from(wait.subsec_nanos() > 0),
                })
            }
            // The local limiter already charged this call.
            Err(_) => Ok(()),
        }
    }
}
