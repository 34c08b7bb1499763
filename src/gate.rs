//! The checks a tool call passes around the brain: access (profile allow-list), version
//! negotiation, and idempotency of cart mutations. Bearer tokens are checked earlier, in HTTP
//! middleware (`mcp::bearer`), because they guard every MCP method.

use serde_json::Value;

use crate::access::{Access, AccessConfig, AccessDenied};
use crate::idempotency::{self, Idempotency, IdempotencyConfig};
use crate::negotiation::{Agreement, NegotiationConfig, Negotiator, Refusal};
use crate::protocol::request::CallMeta;
use crate::protocol::{Namespace, ToolName};
use crate::settings::ConfigProblem;

/// Why the gate turned a call away before it reached the brain.
#[derive(Debug, Clone, thiserror::Error)]
pub enum GateError {
    #[error(transparent)]
    Access(#[from] AccessDenied),
    #[error("agent profile refused: {}", .0.code)]
    Negotiation(Refusal),
}

impl From<Refusal> for GateError {
    fn from(refusal: Refusal) -> Self {
        Self::Negotiation(refusal)
    }
}

pub struct Gate {
    pub access: Access,
    pub negotiator: Negotiator,
    pub idempotency: Idempotency,
}

impl Gate {
    pub fn new(
        access: &AccessConfig,
        negotiation: &NegotiationConfig,
        idempotency: &IdempotencyConfig,
        namespace: &Namespace,
    ) -> Result<Self, ConfigProblem> {
        let store = idempotency::build_store(idempotency)?;
        Ok(Self {
            access: Access::new(access),
            negotiator: Negotiator::new(negotiation, namespace),
            idempotency: Idempotency::new(idempotency, store),
        })
    }

    /// Access control, then negotiation; both before argument validation. `None`: nothing
    /// was negotiated (negotiation off or no profile).
    pub async fn admit(&self, meta: &CallMeta) -> Result<Option<Agreement>, GateError> {
        self.access.check_profile(meta)?;
        Ok(self.negotiator.check(meta).await?)
    }

    /// The scoped store key and payload fingerprint when `tool` is a mutation carrying a key.
    pub fn idempotency_key(
        &self,
        tool: ToolName,
        meta: &CallMeta,
        arguments: &Value,
    ) -> Option<(String, String)> {
        if !tool.mutates() {
            return None;
        }
        let key = meta.idempotency_key.as_deref()?;
        let profile = meta.profile.as_deref().unwrap_or("");
        Some((
            idempotency::scoped_key(profile, tool.as_str(), key),
            idempotency::fingerprint(arguments),
        ))
    }
}
