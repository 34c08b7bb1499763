//! Runs around every `tools/call`: inbound limits, the whole-request deadline, and metrics.

use std::future::Future;
use std::net::{IpAddr, SocketAddr};

use axum::extract::ConnectInfo;
use rmcp::service::{RequestContext, RoleServer};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::inbound::InboundLimiter;
use crate::config::BridgeConfig;
use crate::mcp::errors::ProtocolError;

pub struct CallGuard {
    inbound: InboundLimiter,
    timeout: Duration,
}

impl CallGuard {
    pub fn new(config: &BridgeConfig) -> Self {
        crate::observability::install();
        Self {
            inbound: InboundLimiter::new(&config.inbound),
            timeout: Duration::from_millis(config.server.request_timeout_ms),
        }
    }

    pub async fn run(
        &self,
        tool: &str,
        profile: Option<&str>,
        context: &RequestContext<RoleServer>,
        call: impl Future<Output = Result<Value, ProtocolError>>,
    ) -> Result<Value, ProtocolError> {
        let started = Instant::now();
        // Present when the server runs with `into_make_service_with_connect_info`.
        let peer = context
            .extensions
            .get::<http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<ConnectInfo<SocketAddr>>())
            .map(|info| info.0.ip());
        self.run_from(tool, profile, peer, call, started).await
    }

    async fn run_from(
        &self,
        tool: &str,
        profile: Option<&str>,
        peer: Option<IpAddr>,
        call: impl Future<Output = Result<Value, ProtocolError>>,
        started: Instant,
    ) -> Result<Value, ProtocolError> {
        let outcome = match self.inbound.check(profile, peer) {
            Err(refused) => Err(refused),
            Ok(()) => match tokio::time::timeout(self.timeout, call).await {
                Ok(outcome) => outcome,
                Err(_) => {
                    tracing::warn!(
                        tool,
                        timeout_ms = self.timeout.as_millis() as u64,
                        "request timed out"
                    );
                    Err(ProtocolError::Unavailable {
                        retry_after_secs: 1,
                    })
                }
            },
        };
        let label = match &outcome {
            Ok(value) => match value
                .get("ucp")
                .and_then(|ucp| ucp.get("status"))
                .and_then(Value::as_str)
            {
                Some("error") => "business_error",
                _ => "success",
            },
            Err(ProtocolError::RateLimited { .. }) => "rate_limited",
            Err(ProtocolError::Unavailable { .. }) => "unavailable",
            Err(ProtocolError::InvalidParams { .. } | ProtocolError::UnknownTool(_)) => "invalid",
            Err(_) => "error",
        };
        crate::observability::tool_call(tool, label, started.elapsed());
        outcome
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::panic, clippy::unwrap_used)]
    use super::*;

    #[tokio::test]
    async fn a_call_past_the_request_timeout_is_unavailable() {
        let config = BridgeConfig::from_toml("[server]\nrequest_timeout_ms = 100\n").unwrap();
        let guard = CallGuard::new(&config);
        let slow = async {
            tokio::time::sleep(Duration::from_secs(5)).await;
            Ok(Value::Null)
        };
        match guard
            .run_from("get_product", None, None, slow, Instant::now())
            .await
        {
            Err(error @ ProtocolError::Unavailable { .. }) => {
                assert_eq!(error.code(), -32000);
                assert_eq!(error.http_status(), http::StatusCode::SERVICE_UNAVAILABLE);
            }
            other => panic!("expected Unavailable, got {other:?}"),
        }
    }
}
