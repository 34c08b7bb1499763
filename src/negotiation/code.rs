//! The discovery/negotiation codes of the BCP error registry. A `NegotiationError` names one of
//! these and nothing else, so the status and JSON-RPC code an agent sees follow from the variant:
//! adding a code without deciding them does not compile.

use http::StatusCode;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NegotiationCode {
    /// NEG-005: not a URL the bridge may fetch (scheme, host, length), or a host that does not
    /// resolve.
    InvalidProfileUrl,
    /// NEG-003: the URL resolved but the fetch failed (or every fetch slot stayed taken).
    ProfileUnreachable,
    /// The profile came back but is not a readable UCP profile.
    ProfileMalformed,
    /// NEG-001: the profile and this business share no protocol version.
    VersionUnsupported,
}

impl NegotiationCode {
    /// The code as written in `error.data.code`, the log and the merchant page.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::InvalidProfileUrl => "invalid_profile_url",
            Self::ProfileUnreachable => "profile_unreachable",
            Self::ProfileMalformed => "profile_malformed",
            Self::VersionUnsupported => "version_unsupported",
        }
    }

    /// The registry's HTTP status for the code.
    pub const fn http_status(self) -> StatusCode {
        match self {
            Self::InvalidProfileUrl => StatusCode::BAD_REQUEST,
            Self::ProfileUnreachable => StatusCode::FAILED_DEPENDENCY,
            Self::ProfileMalformed | Self::VersionUnsupported => StatusCode::UNPROCESSABLE_ENTITY,
        }
    }

    /// The registry puts every discovery/negotiation failure under one JSON-RPC code.
    pub const fn jsonrpc_code(self) -> i32 {
        match self {
            Self::InvalidProfileUrl
            | Self::ProfileUnreachable
            | Self::ProfileMalformed
            | Self::VersionUnsupported => -32001,
        }
    }

    /// What the agent's builder or the operator can do about it, appended to the refusal's
    /// content; empty where the fix is on the agent's side alone and the content says it.
    pub(super) const fn fix(self) -> &'static str {
        match self {
            Self::InvalidProfileUrl => {
                "An agent's profile is an https URL on a public host; for a test or internal agent the store operator can allow its host with negotiation.allow_http_hosts (plain http) or negotiation.allow_private_hosts (private addresses). "
            }
            Self::ProfileUnreachable => {
                "The profile must answer 200 over https within negotiation.timeout_ms. "
            }
            Self::ProfileMalformed => {
                "The profile must be a JSON object with a ucp.version string, at most negotiation.max_profile_bytes long. "
            }
            Self::VersionUnsupported => "",
        }
    }
}
