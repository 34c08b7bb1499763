//! `[signatures]`: RFC 9421 HTTP message signatures on inbound MCP requests, as UCP's
//! "Message Signatures" asks. The HTTP front hands over each POST with its body as received;
//! the signer's profile comes from the `UCP-Agent` header (else the call's
//! `meta["ucp-agent"].profile`), its keys from `keys` (2026-08-25) or, without
//! one, `signing_keys` (2026-04-08), fetched through negotiation's SSRF-safe client and cached. The
//! `Content-Digest` is checked against the raw bytes, the signature base rebuilt and the
//! signature verified (ES256, ES384, Ed25519). `mode` decides what an unsigned or failing
//! request gets: nothing (`off`), a log line (`log`), or the registry's error (`enforce`).

mod base;
mod code;
mod fields;
mod keys;
mod replay;
mod sign;
mod verify;

use std::time::Duration;

use serde::Deserialize;

use crate::negotiation::{NegotiationError, ProfileClient};
use crate::settings::ConfigProblem;

pub use code::{SignatureCode, SignatureErrorCode};
pub use sign::{SignedHeaders, SigningKey, kid_is_plain};
pub use verify::Signer;

/// A request as it reached the bridge, before the front adjusted anything.
pub struct Received<'a> {
    pub method: &'a http::Method,
    pub uri: &'a http::Uri,
    pub headers: &'a http::HeaderMap,
    /// The body as received: what `Content-Digest` hashes.
    pub raw_body: &'a [u8],
    /// The JSON-RPC frame (the body after content decoding), where the call's own profile is
    /// read when no `UCP-Agent` header names one.
    pub frame: &'a [u8],
}

/// What the bridge does with request signatures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Signatures are not looked at.
    Off,
    /// Every request is served; unsigned and failing ones are logged with the code they would get.
    #[default]
    Log,
    /// Unsigned and failing requests are refused with the registry's code and status.
    Enforce,
}

#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct SignaturesConfig {
    pub mode: Mode,
    /// A signature whose `created` is older than this is refused; 0 leaves `created` unaged
    /// (UCP makes `created` optional and puts replay protection in idempotency keys).
    pub max_age_secs: u64,
    /// Clock difference tolerated on `created` (future) and `expires` (past).
    pub clock_skew_secs: u64,
    /// How long an agent's published keys are kept before they are fetched again.
    pub key_cache_ttl_secs: u64,
}

impl Default for SignaturesConfig {
    fn default() -> Self {
        Self {
            mode: Mode::default(),
            max_age_secs: 300,
            clock_skew_secs: 30,
            key_cache_ttl_secs: 300,
        }
    }
}

/// UCP's floor for caching a profile, and for force-refreshing one on an unknown `kid`.
pub(crate) const TTL_FLOOR: Duration = Duration::from_secs(60);

impl SignaturesConfig {
    pub fn problems(&self) -> Vec<ConfigProblem> {
        let mut problems = Vec::new();
        if self.max_age_secs > 86_400 {
            problems.push(ConfigProblem::new(
                "signatures.max_age_secs",
                "must be at most 86400 (0 turns the age check off)",
            ));
        }
        if self.clock_skew_secs > 600 {
            problems.push(ConfigProblem::new(
                "signatures.clock_skew_secs",
                "must be at most 600",
            ));
        }
        if !(TTL_FLOOR.as_secs()..=86_400).contains(&self.key_cache_ttl_secs) {
            problems.push(ConfigProblem::new(
                "signatures.key_cache_ttl_secs",
                "must be between 60 (UCP's profile cache floor) and 86400",
            ));
        }
        problems
    }
}

/// Why a request's signature did not authenticate it, by the registry's codes.
#[derive(Debug, Clone, thiserror::Error)]
pub enum SignatureError {
    /// SIG-031: a required signature header or field is absent (401).
    #[error("{0}")]
    Missing(String),
    /// SIG-032: verification failed (401).
    #[error("{0}")]
    Invalid(String),
    /// SIG-033: the `keyid` is not among the signer's published keys (401).
    #[error("{0}")]
    KeyNotFound(String),
    /// SIG-034: the body does not hash to its `Content-Digest` (400).
    #[error("{0}")]
    DigestMismatch(String),
    /// SIG-035: the key's algorithm is not one this bridge verifies (400).
    #[error("{0}")]
    AlgorithmUnsupported(String),
    /// The signer's profile could not be named or fetched (negotiation's codes).
    #[error("{}", .0.content)]
    Profile(NegotiationError),
}

impl SignatureError {
    /// The registry code of the refusal.
    pub fn code(&self) -> SignatureErrorCode {
        let own = SignatureErrorCode::Signature;
        match self {
            Self::Missing(_) => own(SignatureCode::SignatureMissing),
            Self::Invalid(_) => own(SignatureCode::SignatureInvalid),
            Self::KeyNotFound(_) => own(SignatureCode::KeyNotFound),
            Self::DigestMismatch(_) => own(SignatureCode::DigestMismatch),
            Self::AlgorithmUnsupported(_) => own(SignatureCode::AlgorithmUnsupported),
            Self::Profile(refusal) => SignatureErrorCode::Profile(refusal.code),
        }
    }
}

impl SignatureError {
    /// SIG-030: a nonce is good once; its reuse is answered only from the idempotency store.
    pub fn nonce_reused() -> Self {
        Self::Invalid(
            "the signature's nonce was already used, and no answer is recorded under this idempotency key for this payload".to_owned(),
        )
    }
}

/// What the signature step lets through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Passage {
    /// The request may be served; `signer` is the agent whose signature verified, if any
    /// (what idempotency charges its records to, beside the address).
    Serve { signer: Option<SignerDigest> },
    /// A verified request whose nonce was used before (its byte-identical retry): only a
    /// recorded idempotent answer may be given, nothing may run.
    ReplayOnly,
}

impl Passage {
    /// Served, nothing verified.
    pub const UNSIGNED: Self = Self::Serve { signer: None };

    fn signed_by(signer: &verify::Signer) -> Self {
        use sha2::Digest as _;
        let digest = sha2::Sha256::digest(signer.profile.as_bytes());
        let mut signer = [0; 16];
        signer.copy_from_slice(&digest[..16]);
        Self::Serve {
            signer: Some(signer),
        }
    }
}

/// A verified agent: a digest of the profile URL whose key verified the signature, small and
/// `Copy` so a front hands it on with the frame.
pub type SignerDigest = [u8; 16];

/// The signature check of the MCP endpoints, shared by every namespace.
pub struct SignatureCheck {
    mode: Mode,
    verifier: verify::Verifier,
}

impl SignatureCheck {
    /// `profiles`: the fetcher shared with negotiation, so one call's check and negotiation
    /// fetch a profile once.
    pub fn new(config: &SignaturesConfig, profiles: ProfileClient) -> Self {
        Self {
            mode: config.mode,
            verifier: verify::Verifier::new(config, profiles),
        }
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// Whether the request may be served, or only answered from the idempotency store.
    pub async fn admit(&self, received: &Received<'_>) -> Result<Passage, SignatureError> {
        if self.mode == Mode::Off {
            return Ok(Passage::UNSIGNED);
        }
        let outcome = self.verifier.verify(received).await;
        match (self.mode, outcome) {
            (Mode::Enforce, Ok(Some(signer))) if signer.nonce_reused => {
                tracing::debug!(profile = %signer.profile, keyid = %signer.keyid, "signed request retried: answered from the idempotency store only");
                Ok(Passage::ReplayOnly)
            }
            (_, Ok(Some(signer))) if signer.nonce_reused => {
                let error = SignatureError::nonce_reused();
                tracing::warn!(
                    code = error.code().as_str(),
                    "request signature's nonce reused; served because signatures.mode = \"log\""
                );
                Ok(Passage::signed_by(&signer))
            }
            (_, Ok(Some(signer))) => {
                tracing::debug!(profile = %signer.profile, keyid = %signer.keyid, "request signature verified");
                Ok(Passage::signed_by(&signer))
            }
            (Mode::Enforce, Ok(None)) => Err(SignatureError::Missing(
                "this business requires RFC 9421 request signatures: send Signature-Input, Signature and Content-Digest, signed with a key published in your profile".to_owned(),
            )),
            (Mode::Enforce, Err(error)) => {
                tracing::info!(code = error.code().as_str(), reason = %error, "request signature refused");
                Err(error)
            }
            (_, Ok(None)) => {
                tracing::debug!(
                    "unsigned request served (signatures.mode = \"log\"; \"enforce\" would refuse it)"
                );
                Ok(Passage::UNSIGNED)
            }
            (_, Err(error)) => {
                tracing::warn!(
                    code = error.code().as_str(),
                    reason = %error,
                    "request signature failed; served because signatures.mode = \"log\""
                );
                Ok(Passage::UNSIGNED)
            }
        }
    }
}
