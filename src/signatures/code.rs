//! The request-signature codes of the BCP error registry (SIG-031 … SIG-035). Each variant
//! decides its own message, status and JSON-RPC code, so a new code cannot reach an agent
//! with a guessed one.

use http::StatusCode;

use crate::negotiation::NegotiationCode;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SignatureCode {
    /// SIG-031: a required signature header or field is absent.
    SignatureMissing,
    /// SIG-032: verification failed.
    SignatureInvalid,
    /// SIG-033: the `keyid` is not among the signer's published keys.
    KeyNotFound,
    /// SIG-034: the body does not hash to its `Content-Digest`.
    DigestMismatch,
    /// SIG-035: the key's algorithm is not one this bridge verifies.
    AlgorithmUnsupported,
}

impl SignatureCode {
    /// The code as written in `error.data.code`, the log and the merchant page.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::SignatureMissing => "signature_missing",
            Self::SignatureInvalid => "signature_invalid",
            Self::KeyNotFound => "key_not_found",
            Self::DigestMismatch => "digest_mismatch",
            Self::AlgorithmUnsupported => "algorithm_unsupported",
        }
    }

    /// The JSON-RPC error message; the detail of the refusal goes to `data.content`.
    pub const fn message(self) -> &'static str {
        match self {
            Self::SignatureMissing => "Signature required",
            Self::SignatureInvalid => "Signature verification failed",
            Self::KeyNotFound => "Signing key not found",
            Self::DigestMismatch => "Content-Digest does not match the body",
            Self::AlgorithmUnsupported => "Signature algorithm not supported",
        }
    }

    /// The overview's registry: the body-level codes are invalid requests (400), the others
    /// authentication failures (401).
    pub const fn http_status(self) -> StatusCode {
        match self {
            Self::SignatureMissing | Self::SignatureInvalid | Self::KeyNotFound => {
                StatusCode::UNAUTHORIZED
            }
            Self::DigestMismatch | Self::AlgorithmUnsupported => StatusCode::BAD_REQUEST,
        }
    }

    /// -32600 (invalid request) for the body-level codes, -32000 for the authentication ones,
    /// matching `http_status`.
    pub const fn jsonrpc_code(self) -> i32 {
        match self {
            Self::SignatureMissing | Self::SignatureInvalid | Self::KeyNotFound => -32000,
            Self::DigestMismatch | Self::AlgorithmUnsupported => -32600,
        }
    }
}

/// The registry code a signature refusal carries: the signature's own, or negotiation's when
/// the signer's profile, where its keys are published, could not be named or fetched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SignatureErrorCode {
    Signature(SignatureCode),
    Profile(NegotiationCode),
}

impl SignatureErrorCode {
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Signature(code) => code.as_str(),
            Self::Profile(code) => code.as_str(),
        }
    }
}
