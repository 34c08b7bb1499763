//! Who may use the agent endpoints: bearer tokens (kept in configuration only as SHA-256 hashes,
//! compared in constant time) and/or an allow-list of agent profile URLs. The tokens also
//! guard the merchant page and `/metrics`; discovery and health probes are not behind them.

pub mod hosts;

use std::net::IpAddr;

use serde::Deserialize;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use crate::protocol::request::CallMeta;
use crate::settings::ConfigProblem;

/// Why a caller was turned away.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum AccessDenied {
    #[error("no accepted bearer token")]
    Unauthorized,
    #[error("agent profile not allowed")]
    Forbidden,
}

#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct AccessConfig {
    /// SHA-256 (hex) of each accepted bearer token: `printf %s "$TOKEN" | sha256sum`.
    pub bearer_token_sha256: Vec<String>,
    /// Agent profile URLs allowed to call tools (exact match); empty allows any.
    pub allowed_profiles: Vec<String>,
}

impl AccessConfig {
    pub fn problems(&self) -> Vec<ConfigProblem> {
        let mut problems = Vec::new();
        for (index, digest) in self.bearer_token_sha256.iter().enumerate() {
            if digest.len() != 64 || hex::decode(digest).is_err() {
                problems.push(ConfigProblem::new(
                    format!("access.bearer_token_sha256[{index}]"),
                    "must be 64 hex digits (printf %s \"$TOKEN\" | sha256sum)",
                ));
            }
        }
        for (index, profile) in self.allowed_profiles.iter().enumerate() {
            if url::Url::parse(profile).is_err() {
                problems.push(ConfigProblem::new(
                    format!("access.allowed_profiles[{index}]"),
                    "must be an absolute URL",
                ));
            }
        }
        problems
    }
}

#[derive(Clone, Default)]
pub struct Access {
    digests: std::sync::Arc<Vec<[u8; 32]>>,
    profiles: std::sync::Arc<Vec<String>>,
}

impl Access {
    pub fn new(config: &AccessConfig) -> Self {
        let digests = config
            .bearer_token_sha256
            .iter()
            .filter_map(|digest| hex::decode(digest).ok()?.try_into().ok())
            .collect();
        Self {
            digests: std::sync::Arc::new(digests),
            profiles: std::sync::Arc::new(config.allowed_profiles.clone()),
        }
    }

    /// `Ok` when no tokens are configured or `authorization` carries one of them.
    pub fn check_bearer(&self, authorization: Option<&str>) -> Result<(), AccessDenied> {
        if self.digests.is_empty() {
            return Ok(());
        }
        let token = authorization
            .and_then(|value| {
                let (scheme, rest) = value.split_once(' ')?;
                scheme.eq_ignore_ascii_case("bearer").then(|| rest.trim())
            })
            .filter(|token| !token.is_empty())
            .ok_or(AccessDenied::Unauthorized)?;
        let presented: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        // Every configured digest is compared, so timing does not tell which one matched.
        let mut matched = subtle::Choice::from(0);
        for digest in self.digests.iter() {
            matched |= digest.ct_eq(&presented);
        }
        if bool::from(matched) {
            Ok(())
        } else {
            Err(AccessDenied::Unauthorized)
        }
    }

    pub fn check_profile(&self, meta: &CallMeta) -> Result<(), AccessDenied> {
        if self.profiles.is_empty() {
            return Ok(());
        }
        match meta.profile.as_deref() {
            Some(profile) if self.profiles.iter().any(|allowed| allowed == profile) => Ok(()),
            // A missing profile is an argument error, reported by validation.
            None => Ok(()),
            Some(_) => Err(AccessDenied::Forbidden),
        }
    }
}

/// The client an address stands for, wherever a per-client bound counts calls or bytes: an
/// IPv4 address as it is (an IPv4-mapped IPv6 one too), an IPv6 address by its /64, since a
/// host is given a whole /64 and could otherwise take 2^64 shares.
pub fn client_address(ip: IpAddr) -> IpAddr {
    match ip.to_canonical() {
        IpAddr::V6(v6) => IpAddr::V6((u128::from(v6) & (u128::MAX << 64)).into()),
        v4 => v4,
    }
}
