//! The checks a tool call passes around the brain: access (profile allow-list), version
//! negotiation, and idempotency of cart mutations. Bearer tokens are checked earlier, in HTTP
//! middleware (see `access::require_bearer`), because they guard every MCP method.

use serde_json::Value;

use crate::access::Access;
use crate::config::{BridgeConfig, ConfigProblem};
use crate::idempotency::{self, Idempotency};
use crate::mcp::errors::ProtocolError;
use crate::negotiation::Negotiator;
use crate::protocol::Namespace;

/// Tools that change the store and so honour `meta["idempotency-key"]`.
const MUTATIONS: &[&str] = &["create_cart", "update_cart", "cancel_cart"];

pub struct Gate {
    pub access: Access,
    pub negotiator: Negotiator,
    pub idempotency: Idempotency,
}

impl Gate {
    pub fn new(config: &BridgeConfig, namespace: &Namespace) -> Result<Self, ConfigProblem> {
        let store = idempotency::build_store(&config.idempotency)?;
        Ok(Self {
            access: Access::new(&config.access),
            negotiator: Negotiator::new(&config.negotiation, namespace),
            idempotency: Idempotency::new(&config.idempotency, store),
        })
    }

    /// Access control, then negotiation; both before argument validation.
    pub async fn admit(&self, arguments: &Value) -> Result<(), ProtocolError> {
        self.access.check_profile(arguments)?;
        self.negotiator.check(arguments).await
    }

    /// The scoped store key and payload fingerprint when `tool` is a mutation carrying a key.
    pub fn idempotency_key(&self, tool: &str, arguments: &Value) -> Option<(String, String)> {
        if !MUTATIONS.contains(&tool) {
            return None;
        }
        let meta = arguments.get("meta")?;
        let key = meta.get("idempotency-key")?.as_str()?;
        let profile = meta
            .get("ucp-agent")
            .and_then(|agent| agent.get("profile"))
            .and_then(Value::as_str)
            .unwrap_or("");
        Some((
            idempotency::scoped_key(profile, tool, key),
            idempotency::fingerprint(arguments),
        ))
    }
}
