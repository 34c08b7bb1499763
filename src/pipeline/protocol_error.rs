//! The pipeline's typed refusal: every failure of a call becomes one `ProtocolError`, which
//! knows its JSON-RPC code, HTTP status and registry `data`; each front writes it in its own
//! wire format (`mcp::refusal`, `rest::refusal`).

use http::StatusCode;
use serde_json::{Value, json};

use crate::access::AccessDenied;
use crate::brain::BrainError;
use crate::idempotency::IdempotencyError;
use crate::inbound::limits::LimitError;
use crate::negotiation::{NegotiationCode, NegotiationError};
use crate::platform::PlatformError;
use crate::protocol::answer::Label;
use crate::signatures::{SignatureCode, SignatureError, SignatureErrorCode};

/// Used when an upstream gives no `Retry-After`.
const DEFAULT_RETRY_AFTER_SECS: u64 = 5;

#[derive(Debug, thiserror::Error)]
pub enum ProtocolError {
    #[error("Invalid params: {message}")]
    InvalidParams {
        message: String,
        data: Option<Value>,
    },
    /// The name as the client sent it; escaped where it is written.
    #[error("Unknown tool: {}", crate::logging::echo(.0))]
    UnknownTool(String),
    /// Discovery/negotiation failures: the code decides the status and JSON-RPC code.
    #[error("{content}")]
    Negotiation {
        code: NegotiationCode,
        content: String,
    },
    #[error("Too many requests")]
    RateLimited { retry_after_secs: u64 },
    #[error("The store is temporarily unavailable")]
    Unavailable { retry_after_secs: u64 },
    #[error("The {what} is full; space frees up in {retry_after_secs} s")]
    Full {
        what: &'static str,
        retry_after_secs: u64,
    },
    /// Cart writes refused because replicas cannot coordinate them right now.
    #[error("Cart writes are paused: {reason}; reads still work, retry in {retry_after_secs} s")]
    WritesPaused {
        reason: &'static str,
        retry_after_secs: u64,
    },
    #[error("Internal error")]
    Internal,
    #[error("Unauthorized: a valid bearer token is required")]
    Unauthorized,
    #[error("Forbidden: this agent profile is not allowed")]
    Forbidden,
    #[error("Conflict: idempotency key reused with a different payload")]
    Conflict,
    /// Request-signature failures: the code decides the message, status and JSON-RPC code.
    #[error("{}", .code.message())]
    Signature {
        code: SignatureCode,
        content: String,
    },
}

impl ProtocolError {
    pub fn invalid_at(path: &str, message: impl Into<String>) -> Self {
        let message = message.into();
        Self::InvalidParams {
            message: format!("{path}: {message}"),
            data: Some(json!({ "path": path, "errors": [{ "path": path, "message": message }] })),
        }
    }

    pub fn code(&self) -> i32 {
        match self {
            Self::InvalidParams { .. } | Self::UnknownTool(_) => -32602,
            Self::Negotiation { code, .. } => code.jsonrpc_code(),
            Self::RateLimited { .. } | Self::Unavailable { .. } | Self::Full { .. } => -32000,
            Self::WritesPaused { .. } => -32000,
            Self::Unauthorized | Self::Forbidden | Self::Conflict => -32000,
            Self::Internal => -32603,
            Self::Signature { code, .. } => code.jsonrpc_code(),
        }
    }

    /// The status of the HTTP response carrying this error. Parameter errors keep 200 like
    /// any JSON-RPC reply; the others use the statuses the BCP error registry assigns.
    pub fn http_status(&self) -> StatusCode {
        match self {
            Self::InvalidParams { .. } | Self::UnknownTool(_) => StatusCode::OK,
            Self::Negotiation { code, .. } => code.http_status(),
            Self::RateLimited { .. } => StatusCode::TOO_MANY_REQUESTS,
            Self::Unavailable { .. } | Self::Full { .. } | Self::WritesPaused { .. } => {
                StatusCode::SERVICE_UNAVAILABLE
            }
            Self::Internal => StatusCode::INTERNAL_SERVER_ERROR,
            Self::Unauthorized => StatusCode::UNAUTHORIZED,
            Self::Forbidden => StatusCode::FORBIDDEN,
            Self::Conflict => StatusCode::CONFLICT,
            Self::Signature { code, .. } => code.http_status(),
        }
    }

    /// The metrics and merchant-page label of a call refused this way.
    pub fn label(&self) -> Label {
        match self {
            Self::RateLimited { .. } => Label::RateLimited,
            Self::Unavailable { .. } | Self::Full { .. } => Label::Unavailable,
            Self::InvalidParams { .. } | Self::UnknownTool(_) => Label::Invalid,
            Self::Negotiation { .. }
            | Self::WritesPaused { .. }
            | Self::Internal
            | Self::Unauthorized
            | Self::Forbidden
            | Self::Conflict
            | Self::Signature { .. } => Label::Error,
        }
    }

    /// The refusal as the merchant page may show it: a fixed word, or the argument path of
    /// an invalid parameter; never a message, which can echo what a buyer typed.
    pub fn reason(&self) -> String {
        match self {
            Self::InvalidParams { data, .. } => data
                .as_ref()
                .and_then(|data| data.get("path"))
                .and_then(Value::as_str)
                .unwrap_or("invalid params")
                .to_owned(),
            Self::UnknownTool(_) => "unknown tool".to_owned(),
            Self::Negotiation { code, .. } => code.as_str().to_owned(),
            Self::Signature { code, .. } => code.as_str().to_owned(),
            Self::RateLimited { .. } => "rate limited".to_owned(),
            Self::Unavailable { .. } => "store unavailable".to_owned(),
            Self::Full { what, .. } => format!("{what} full"),
            Self::WritesPaused { .. } => "cart writes paused".to_owned(),
            Self::Internal => "internal error".to_owned(),
            Self::Unauthorized => "unauthorized".to_owned(),
            Self::Forbidden => "agent not allowed".to_owned(),
            Self::Conflict => "idempotency conflict".to_owned(),
        }
    }

    /// The registry's `data` object of this refusal (`code`/`content`, `retry_after`, the
    /// argument path), which each front writes in its own error shape.
    pub fn data(&self) -> Option<Value> {
        match self {
            Self::InvalidParams { data, .. } => data.clone(),
            Self::UnknownTool(_) => None,
            Self::Negotiation { code, content } => {
                Some(json!({ "code": code.as_str(), "content": content }))
            }
            Self::Signature { code, content } => {
                Some(json!({ "code": code.as_str(), "content": content }))
            }
            Self::RateLimited { retry_after_secs }
            | Self::Unavailable { retry_after_secs }
            | Self::Full {
                retry_after_secs, ..
            }
            | Self::WritesPaused {
                retry_after_secs, ..
            } => Some(json!({ "retry_after": retry_after_secs })),
            Self::Internal | Self::Unauthorized | Self::Forbidden | Self::Conflict => None,
        }
    }
}

fn retry_secs(retry_after: Option<std::time::Duration>) -> u64 {
    retry_after
        .map(|duration| duration.as_secs().max(1))
        .unwrap_or(DEFAULT_RETRY_AFTER_SECS)
}

impl From<BrainError> for ProtocolError {
    fn from(error: BrainError) -> Self {
        match error {
            BrainError::InvalidParams { path, message } => Self::invalid_at(&path, message),
            BrainError::Platform(platform) => platform.into(),
            BrainError::Internal(detail) => {
                tracing::error!(%detail, "internal error");
                Self::Internal
            }
        }
    }
}

impl From<PlatformError> for ProtocolError {
    fn from(error: PlatformError) -> Self {
        // The detail goes to the log only: upstream messages can carry hostnames or ids the
        // agent has no business seeing.
        tracing::warn!(%error, "store call failed");
        match error {
            PlatformError::RateLimited { retry_after } => Self::RateLimited {
                retry_after_secs: retry_secs(retry_after),
            },
            PlatformError::Unavailable { retry_after, .. } => Self::Unavailable {
                retry_after_secs: retry_secs(retry_after),
            },
            PlatformError::Full { what, retry_after } => Self::Full {
                what,
                // Rounded up: a client retrying at the advertised second finds the space.
                retry_after_secs: retry_after
                    .as_millis()
                    .div_ceil(1000)
                    .try_into()
                    .unwrap_or(u64::MAX)
                    .max(1),
            },
            PlatformError::WritesPaused {
                reason,
                retry_after,
            } => Self::WritesPaused {
                reason,
                retry_after_secs: retry_after.as_secs().max(1),
            },
            // The merchant's credentials, not the agent's call: the agent only learns the
            // store is unavailable.
            PlatformError::BadResponse(_) | PlatformError::Unauthorized { .. } => {
                Self::Unavailable {
                    retry_after_secs: DEFAULT_RETRY_AFTER_SECS,
                }
            }
            PlatformError::InvalidInput(message) => Self::InvalidParams {
                message,
                data: None,
            },
            PlatformError::InvalidAt { path, message } => Self::invalid_at(&path, message),
            PlatformError::Unsupported(what) => Self::InvalidParams {
                message: format!("this store does not support {what}"),
                data: None,
            },
        }
    }
}

impl From<AccessDenied> for ProtocolError {
    fn from(denied: AccessDenied) -> Self {
        match denied {
            AccessDenied::Unauthorized => Self::Unauthorized,
            AccessDenied::Forbidden => Self::Forbidden,
        }
    }
}

impl From<NegotiationError> for ProtocolError {
    fn from(refusal: NegotiationError) -> Self {
        Self::Negotiation {
            code: refusal.code,
            content: refusal.content,
        }
    }
}

impl From<SignatureError> for ProtocolError {
    fn from(error: SignatureError) -> Self {
        // A profile refusal displays as its content, so both arms carry the detail the
        // agent needs.
        let content = error.to_string();
        match error.code() {
            SignatureErrorCode::Signature(code) => Self::Signature { code, content },
            SignatureErrorCode::Profile(code) => Self::Negotiation { code, content },
        }
    }
}

impl From<IdempotencyError> for ProtocolError {
    fn from(error: IdempotencyError) -> Self {
        match error {
            IdempotencyError::Unavailable { retry_after_secs } => {
                Self::Unavailable { retry_after_secs }
            }
            IdempotencyError::Conflict => Self::Conflict,
            IdempotencyError::Full { retry_after_secs } => Self::Full {
                what: "idempotency store",
                retry_after_secs,
            },
            // SIG-030: a request reusing a nonce is served only by replaying its first answer.
            IdempotencyError::NotRecorded => SignatureError::nonce_reused().into(),
        }
    }
}

impl From<LimitError> for ProtocolError {
    fn from(error: LimitError) -> Self {
        match error {
            LimitError::Throttled(throttled) => Self::RateLimited {
                retry_after_secs: throttled.retry_after_secs,
            },
            LimitError::TimedOut => Self::Unavailable {
                retry_after_secs: 1,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_past_the_request_timeout_is_unavailable() {
        let error = ProtocolError::from(LimitError::TimedOut);
        assert_eq!(error.code(), -32000);
        assert_eq!(error.http_status(), StatusCode::SERVICE_UNAVAILABLE);
    }

    #[test]
    fn policy_refusals_keep_their_registry_statuses() {
        assert_eq!(
            ProtocolError::from(AccessDenied::Unauthorized).http_status(),
            StatusCode::UNAUTHORIZED
        );
        assert_eq!(
            ProtocolError::from(IdempotencyError::Conflict).http_status(),
            StatusCode::CONFLICT
        );
        let digest = ProtocolError::from(SignatureError::DigestMismatch("x".into()));
        assert_eq!(
            (digest.code(), digest.http_status()),
            (-32600, StatusCode::BAD_REQUEST)
        );
        let missing = ProtocolError::from(SignatureError::Missing("x".into()));
        assert_eq!(
            (missing.code(), missing.http_status()),
            (-32000, StatusCode::UNAUTHORIZED)
        );
        let unreachable = ProtocolError::from(NegotiationError::unreachable("down"));
        assert_eq!(unreachable.code(), -32001);
        assert_eq!(unreachable.http_status(), StatusCode::FAILED_DEPENDENCY);
    }

    #[test]
    fn a_signer_profile_refusal_is_answered_as_negotiation() {
        let error = ProtocolError::from(SignatureError::Profile(NegotiationError::malformed(
            "not a profile",
        )));
        assert_eq!(
            (error.code(), error.http_status()),
            (-32001, StatusCode::UNPROCESSABLE_ENTITY)
        );
        assert_eq!(error.reason(), "profile_malformed");
        assert_eq!(
            error.data(),
            Some(json!({ "code": "profile_malformed", "content": "not a profile" }))
        );
    }

    #[test]
    fn a_signature_refusal_writes_its_wire_code() {
        let error = ProtocolError::from(SignatureError::KeyNotFound("no such key".into()));
        assert_eq!(error.to_string(), "Signing key not found");
        assert_eq!(
            error.data(),
            Some(json!({ "code": "key_not_found", "content": "no such key" }))
        );
    }
}
