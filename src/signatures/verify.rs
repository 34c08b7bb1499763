//! One request's verification, following UCP's `verify_rest_request` and the 08-25 Identity
//! Resolution Algorithm: each labelled signature is a candidate (RFC 9421 §4.3); the request
//! is authenticated by the first that verifies, and refused with the first candidate's
//! reason when none does (SIG-052, SIG-053).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use http::HeaderMap;
use http::header::HOST;
use serde_json::Value;
use sfv::{BareItem, Parameters};

use super::base::{Target, covered, signature_base};
use super::fields::{self, CONTENT_DIGEST, Candidate, UCP_AGENT};
use super::keys::{KeyDirectory, Material};
use super::replay::{MAX_NONCE_BYTES, Nonces};
use super::{Received, SignatureError, SignaturesConfig};
use crate::logging::echo;
use crate::negotiation::ProfileClient;

/// Who a verified request is from.
#[derive(Debug, Clone)]
pub struct Signer {
    /// The profile URL that supplied the verifying key (the authenticated identity).
    pub profile: String,
    pub keyid: String,
    /// The signature's nonce was used before: the request is a byte-identical retry (the
    /// signature covers the body), which only the idempotency store may answer.
    pub nonce_reused: bool,
}

const WBA_TAG: &str = "web-bot-auth";
const IDEMPOTENCY_KEY: &str = "idempotency-key";
const SIGNATURE_AGENT: &str = "signature-agent";
/// How long nonces are held when `created` is not aged: WBA bounds `expires` to 24 hours.
const UNAGED_NONCE_WINDOW: Duration = Duration::from_secs(86_400);

/// The signature parameters UCP reads (RFC 9421 §2.3); others are ignored, as the RFC allows.
#[derive(Default)]
struct Params {
    keyid: Option<String>,
    created: Option<i64>,
    expires: Option<i64>,
    nonce: Option<String>,
    alg: Option<String>,
    tag: Option<String>,
}

impl Params {
    fn read(params: &Parameters) -> Result<Self, SignatureError> {
        let mut read = Self::default();
        for (name, value) in params {
            let wrong = || {
                SignatureError::Invalid(format!(
                    "signature parameter {} has the wrong type",
                    name.as_str()
                ))
            };
            let string = || match value {
                BareItem::String(text) => Ok(text.as_str().to_owned()),
                _ => Err(wrong()),
            };
            let integer = || match value {
                BareItem::Integer(number) => Ok(i64::from(*number)),
                _ => Err(wrong()),
            };
            match name.as_str() {
                "keyid" => read.keyid = Some(string()?),
                "created" => read.created = Some(integer()?),
                "expires" => read.expires = Some(integer()?),
                "nonce" => {
                    let nonce = string()?;
                    // Issue 35 item 2: nonces are held per signer for the whole window.
                    if nonce.len() > MAX_NONCE_BYTES {
                        return Err(SignatureError::Invalid(format!(
                            "the signature's nonce is longer than {MAX_NONCE_BYTES} bytes"
                        )));
                    }
                    read.nonce = Some(nonce);
                }
                "alg" => read.alg = Some(string()?),
                "tag" => read.tag = Some(string()?),
                _ => {}
            }
        }
        Ok(read)
    }
}

pub(super) struct Verifier {
    directory: KeyDirectory,
    nonces: Nonces,
    max_age_secs: u64,
    skew_secs: u64,
}

fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| {
            i64::try_from(elapsed.as_secs()).unwrap_or(i64::MAX)
        })
}

fn secs(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

/// The call's own profile in the JSON-RPC frame: `params.arguments.meta` or `params._meta`.
fn meta_profile(frame: &[u8]) -> Option<String> {
    let frame: Value = serde_json::from_slice(frame).ok()?;
    let params = frame.get("params")?;
    [
        params
            .get("arguments")
            .and_then(|arguments| arguments.get("meta")),
        params.get("_meta"),
    ]
    .into_iter()
    .flatten()
    .find_map(|meta| meta.get("ucp-agent")?.get("profile")?.as_str())
    .map(str::to_owned)
}

fn authority(received: &Received<'_>) -> Option<String> {
    received
        .uri
        .authority()
        .map(|authority| authority.as_str().to_owned())
        .or_else(|| {
            received
                .headers
                .get(HOST)
                .and_then(|host| host.to_str().ok())
                .map(str::to_owned)
        })
        .map(|authority| authority.trim().to_ascii_lowercase())
}

/// SIG-051 (08-25 IRA step 5), which also enforces the signer's table of SIG-014 … SIG-018:
/// the target, the body when present, and each integrity-relevant header present.
fn check_coverage(
    names: &[String],
    headers: &HeaderMap,
    query: Option<&str>,
    has_body: bool,
) -> Result<(), SignatureError> {
    let mut required = vec!["@method", "@authority", "@path"];
    if query.is_some() {
        required.push("@query");
    }
    if has_body {
        required.extend([CONTENT_DIGEST, "content-type"]);
    }
    for header in [IDEMPOTENCY_KEY, UCP_AGENT, SIGNATURE_AGENT] {
        if headers.contains_key(header) {
            required.push(header);
        }
    }
    let missing: Vec<&str> = required
        .into_iter()
        .filter(|component| !names.iter().any(|name| name == component))
        .collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(SignatureError::Invalid(format!(
            "the signature does not cover {}; UCP requires them covered",
            missing.join(", ")
        )))
    }
}

/// SIG-010, SIG-012, SIG-038: the raw body against the `sha-256` of `Content-Digest`.
fn check_digest(headers: &HeaderMap, body: &[u8]) -> Result<(), SignatureError> {
    let Some(claimed) = fields::sha256_digest(headers)? else {
        return Err(SignatureError::Missing(
            "Content-Digest is required when the request has a body".to_owned(),
        ));
    };
    let actual = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, body);
    if claimed == actual.as_ref() {
        Ok(())
    } else {
        Err(SignatureError::DigestMismatch(
            "the body does not match its Content-Digest sha-256".to_owned(),
        ))
    }
}

impl Verifier {
    pub(super) fn new(config: &SignaturesConfig, profiles: ProfileClient) -> Self {
        let window = if config.max_age_secs == 0 {
            UNAGED_NONCE_WINDOW
        } else {
            Duration::from_secs(config.max_age_secs + 2 * config.clock_skew_secs)
        };
        Self {
            directory: KeyDirectory::new(profiles, Duration::from_secs(config.key_cache_ttl_secs)),
            nonces: Nonces::new(window),
            max_age_secs: config.max_age_secs,
            skew_secs: config.clock_skew_secs,
        }
    }

    /// `Ok(None)` for an unsigned request.
    pub(super) async fn verify(
        &self,
        received: &Received<'_>,
    ) -> Result<Option<Signer>, SignatureError> {
        let Some(candidates) = fields::candidates(received.headers)? else {
            return Ok(None);
        };
        let claimed = meta_profile(received.frame);
        let profile = match (fields::ucp_agent_profile(received.headers)?, claimed) {
            (Some(signed), Some(claimed)) if signed != claimed => {
                // Identity binding: the signer speaks only for the profile it signed.
                return Err(SignatureError::Invalid(format!(
                    "the UCP-Agent profile {} differs from the call's meta profile {}",
                    echo(&signed),
                    echo(&claimed)
                )));
            }
            (Some(profile), _) | (None, Some(profile)) => profile,
            (None, None) => {
                return Err(SignatureError::Missing(
                    "a signed request names its signer: send UCP-Agent: profile=\"https://…\""
                        .to_owned(),
                ));
            }
        };
        let target = Target {
            method: received.method.as_str(),
            authority: authority(received),
            path: received.uri.path(),
            query: received.uri.query(),
            headers: received.headers,
        };
        let mut first_failure = None;
        for candidate in &candidates {
            match self
                .candidate(candidate, &profile, &target, received.raw_body)
                .await
            {
                Ok(signer) => return Ok(Some(signer)),
                Err(error) => {
                    tracing::debug!(label = %echo(&candidate.label), code = error.code().as_str(), "signature candidate skipped");
                    first_failure.get_or_insert(error);
                }
            }
        }
        Err(first_failure
            .unwrap_or_else(|| SignatureError::Invalid("no signature verified".to_owned())))
    }

    /// `created` / `expires` against the clock, before any network is spent.
    fn check_window(&self, params: &Params) -> Result<(), SignatureError> {
        let now = now();
        let skew = secs(self.skew_secs);
        if let Some(created) = params.created {
            if created > now.saturating_add(skew) {
                return Err(SignatureError::Invalid(
                    "the signature was created in the future".to_owned(),
                ));
            }
            if self.max_age_secs > 0
                && now.saturating_sub(created) > secs(self.max_age_secs).saturating_add(skew)
            {
                return Err(SignatureError::Invalid(format!(
                    "the signature is older than {} s (signatures.max_age_secs)",
                    self.max_age_secs
                )));
            }
        }
        if let Some(expires) = params.expires
            && now > expires.saturating_add(skew)
        {
            return Err(SignatureError::Invalid(
                "the signature has expired".to_owned(),
            ));
        }
        Ok(())
    }

    async fn candidate(
        &self,
        candidate: &Candidate,
        profile: &str,
        target: &Target<'_>,
        body: &[u8],
    ) -> Result<Signer, SignatureError> {
        let params = Params::read(&candidate.input.params)?;
        let wba = match params.tag.as_deref() {
            None => false,
            Some(WBA_TAG) => true,
            Some(other) => {
                return Err(SignatureError::Invalid(format!(
                    "signatures tagged {} are not for UCP",
                    echo(other)
                )));
            }
        };
        self.check_window(&params)?;
        let keyid = params.keyid.clone().ok_or_else(|| {
            SignatureError::KeyNotFound("Signature-Input has no keyid".to_owned())
        })?;
        let set = self
            .directory
            .keys(profile)
            .await
            .map_err(SignatureError::Profile)?;
        let key = match set.find(&keyid) {
            Some(key) => Some(key.clone()),
            None => match self.directory.refreshed(profile).await {
                Some(fresh) => fresh
                    .map_err(SignatureError::Profile)?
                    .find(&keyid)
                    .cloned(),
                None => None,
            },
        };
        let Some(key) = key else {
            // SIG-033, SIG-037
            return Err(SignatureError::KeyNotFound(format!(
                "key {} is not among the keys the profile publishes",
                echo(&keyid)
            )));
        };
        if wba && key.thumbprint.as_deref() != Some(keyid.as_str()) {
            // SIG-054
            return Err(SignatureError::Invalid(
                "a web-bot-auth signature's keyid must be its key's RFC 7638 thumbprint".to_owned(),
            ));
        }
        let algorithm = match &key.material {
            Material::Usable { algorithm, .. } => *algorithm,
            Material::Unsupported(what) => {
                // SIG-035, SIG-049
                return Err(SignatureError::AlgorithmUnsupported(format!(
                    "key {} is of a type this business does not verify ({what}); use ES256 or Ed25519",
                    echo(&keyid)
                )));
            }
            Material::Malformed => {
                return Err(SignatureError::Invalid(format!(
                    "the published key {} does not decode",
                    echo(&keyid)
                )));
            }
        };
        if let Some(alg) = &params.alg
            && alg != algorithm.registry_name()
        {
            // SIG-006: the key decides the algorithm; an `alg` that disagrees is refused.
            return Err(SignatureError::AlgorithmUnsupported(format!(
                "alg {} does not match key {}",
                echo(alg),
                echo(&keyid)
            )));
        }
        let names = covered(&candidate.input)?;
        check_coverage(&names, target.headers, target.query, !body.is_empty())?;
        if names.iter().any(|name| name == CONTENT_DIGEST) {
            check_digest(target.headers, body)?;
        }
        let base = signature_base(target, &candidate.input)?;
        if !key.verify(base.as_bytes(), &candidate.value) {
            // SIG-032, SIG-036
            return Err(SignatureError::Invalid(format!(
                "the signature does not verify with key {}",
                echo(&keyid)
            )));
        }
        let nonce_reused = match &params.nonce {
            Some(nonce) => !self.nonces.first_use(profile, &keyid, nonce).await,
            None => false,
        };
        Ok(Signer {
            profile: profile.to_owned(),
            keyid,
            nonce_reused,
        })
    }
}
