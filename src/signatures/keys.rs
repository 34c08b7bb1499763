//! The signer's published keys: JWKs (RFC 7517) from the profile's `keys` (08-25, SIG-043)
//! or, without one, its `signing_keys` (04-08, SIG-008), fetched through negotiation's SSRF-safe client and
//! cached per profile URL. A key this bridge cannot use never spoils the set (SIG-049).

use std::sync::Arc;
use std::time::Duration;

use aws_lc_rs::digest;
use aws_lc_rs::signature::{
    ECDSA_P256_SHA256_FIXED, ECDSA_P384_SHA384_FIXED, ED25519, UnparsedPublicKey,
    VerificationAlgorithm,
};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use moka::future::Cache;
use serde_json::Value;

use super::TTL_FLOOR;
use crate::negotiation::{NegotiationError, ProfileClient};

/// The algorithms verified here, named as RFC 9421's registry names them (§6.2.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Algorithm {
    Es256,
    Es384,
    Ed25519,
}

impl Algorithm {
    pub(super) fn registry_name(self) -> &'static str {
        match self {
            Self::Es256 => "ecdsa-p256-sha256",
            Self::Es384 => "ecdsa-p384-sha384",
            Self::Ed25519 => "ed25519",
        }
    }

    fn verifier(self) -> &'static dyn VerificationAlgorithm {
        match self {
            // SIG-019: ECDSA values are raw fixed-width r‖s, not DER.
            Self::Es256 => &ECDSA_P256_SHA256_FIXED,
            Self::Es384 => &ECDSA_P384_SHA384_FIXED,
            // SIG-046: RFC 8032 R‖S.
            Self::Ed25519 => &ED25519,
        }
    }
}

/// What a published key is good for here.
#[derive(Debug, Clone)]
pub(super) enum Material {
    Usable {
        algorithm: Algorithm,
        public: Vec<u8>,
    },
    /// A type, curve or algorithm this bridge does not verify (SIG-035).
    Unsupported(String),
    /// A supported type whose coordinates do not decode.
    Malformed,
}

#[derive(Debug, Clone)]
pub(super) struct PublicKey {
    pub kid: String,
    pub material: Material,
    /// RFC 7638 thumbprint, for `tag="web-bot-auth"` signatures (SIG-054).
    pub thumbprint: Option<String>,
}

impl PublicKey {
    pub(super) fn verify(&self, message: &[u8], signature: &[u8]) -> bool {
        match &self.material {
            Material::Usable { algorithm, public } => {
                UnparsedPublicKey::new(algorithm.verifier(), public)
                    .verify(message, signature)
                    .is_ok()
            }
            _ => false,
        }
    }
}

fn text<'a>(jwk: &'a Value, name: &str) -> Option<&'a str> {
    jwk.get(name).and_then(Value::as_str)
}

fn coordinate(jwk: &Value, name: &str, length: usize) -> Option<Vec<u8>> {
    let bytes = URL_SAFE_NO_PAD.decode(text(jwk, name)?).ok()?;
    (bytes.len() == length).then_some(bytes)
}

/// RFC 7638: SHA-256 over the required members in lexicographic order, no whitespace.
pub(super) fn thumbprint(jwk: &Value) -> Option<String> {
    let canonical = match text(jwk, "kty")? {
        "EC" => serde_json::json!({
            "crv": text(jwk, "crv")?, "kty": "EC", "x": text(jwk, "x")?, "y": text(jwk, "y")?
        }),
        "OKP" => serde_json::json!({
            "crv": text(jwk, "crv")?, "kty": "OKP", "x": text(jwk, "x")?
        }),
        _ => return None,
    };
    // serde_json keeps insertion order here (preserve_order), which the literals above fix.
    let hash = digest::digest(&digest::SHA256, canonical.to_string().as_bytes());
    Some(URL_SAFE_NO_PAD.encode(hash.as_ref()))
}

fn material(jwk: &Value) -> Material {
    let kty = text(jwk, "kty").unwrap_or("");
    let crv = text(jwk, "crv").unwrap_or("");
    let ec_point = |size: usize| -> Option<Vec<u8>> {
        let mut point = vec![0x04];
        point.extend(coordinate(jwk, "x", size)?);
        point.extend(coordinate(jwk, "y", size)?);
        Some(point)
    };
    let (algorithm, public) = match (kty, crv) {
        ("EC", "P-256") => (Algorithm::Es256, ec_point(32)),
        ("EC", "P-384") => (Algorithm::Es384, ec_point(48)),
        ("OKP", "Ed25519") => (Algorithm::Ed25519, coordinate(jwk, "x", 32)),
        _ => {
            return Material::Unsupported(format!(
                "kty {:?} crv {:?}",
                kty.chars().take(20).collect::<String>(),
                crv.chars().take(20).collect::<String>()
            ));
        }
    };
    match public {
        Some(public) => Material::Usable { algorithm, public },
        None => Material::Malformed,
    }
}

/// Keys marked for encryption, or whose `key_ops` leave out "verify", do not verify
/// signatures (RFC 7517 §4.2, §4.3).
fn signature_capable(jwk: &Value) -> bool {
    if text(jwk, "use") == Some("enc") {
        return false;
    }
    match jwk.get("key_ops").and_then(Value::as_array) {
        Some(ops) => ops.iter().any(|op| op.as_str() == Some("verify")),
        None => true,
    }
}

/// The keys a profile publishes: its 08-25 `keys[]` when it has one (the canonical JWK Set,
/// whose removals revoke, so a stale `signing_keys` next to it must not keep a key alive),
/// else its 04-08 `signing_keys`.
#[derive(Debug, Default)]
pub(super) struct KeySet {
    keys: Vec<PublicKey>,
}

impl KeySet {
    pub(super) fn from_profile(document: &Value) -> Self {
        let published = document
            .get("keys")
            .and_then(Value::as_array)
            .or_else(|| document.get("signing_keys").and_then(Value::as_array));
        let keys = published
            .into_iter()
            .flatten()
            .filter(|jwk| signature_capable(jwk))
            .filter_map(|jwk| {
                Some(PublicKey {
                    kid: text(jwk, "kid")?.to_owned(),
                    material: material(jwk),
                    thumbprint: thumbprint(jwk),
                })
            })
            .collect();
        Self { keys }
    }

    pub(super) fn find(&self, kid: &str) -> Option<&PublicKey> {
        self.keys.iter().find(|key| key.kid == kid)
    }
}

type Fetched = Result<Arc<KeySet>, NegotiationError>;

const CACHE_CAP: u64 = 10_000;

pub(super) struct KeyDirectory {
    client: ProfileClient,
    /// Fetch failures are not kept: the fetch limits already bound a dead host's cost, and a
    /// transient one ("busy") must not lock an agent out.
    sets: Cache<String, Arc<KeySet>>,
    /// Origins force-refreshed for an unknown `kid` within the last TTL floor.
    refreshed: Cache<String, ()>,
}

impl KeyDirectory {
    pub(super) fn new(client: ProfileClient, ttl: Duration) -> Self {
        Self {
            client,
            sets: Cache::builder()
                .max_capacity(CACHE_CAP)
                .time_to_live(ttl)
                .build(),
            refreshed: Cache::builder()
                .max_capacity(CACHE_CAP)
                .time_to_live(TTL_FLOOR)
                .build(),
        }
    }

    /// The profile's keys, from cache or one fetch shared by concurrent callers.
    pub(super) async fn keys(&self, profile: &str) -> Fetched {
        self.sets
            .try_get_with_by_ref(profile, async {
                let body = self.client.fetch(profile).await?;
                let document: Value = serde_json::from_slice(&body).map_err(|_| {
                    NegotiationError::malformed("the agent profile is not valid JSON")
                })?;
                Ok::<_, NegotiationError>(Arc::new(KeySet::from_profile(&document)))
            })
            .await
            .map_err(|refusal| NegotiationError::clone(&refusal))
    }

    /// After an unknown `kid`: the profile fetched again, at most once per TTL floor per
    /// origin (UCP profile fetching rule 6). `None` when the budget is spent.
    pub(super) async fn refreshed(&self, profile: &str) -> Option<Fetched> {
        let origin = url::Url::parse(profile)
            .map(|url| url.origin().ascii_serialization())
            .unwrap_or_else(|_| profile.to_owned());
        if self.refreshed.contains_key(&origin) {
            return None;
        }
        self.refreshed.insert(origin, ()).await;
        self.sets.invalidate(profile).await;
        // Past the fetcher's share window too: the keys may have changed since.
        if let Err(refusal) = self.client.fetch_again(profile).await {
            return Some(Err(refusal));
        }
        Some(self.keys(profile).await)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn rfc_8037_thumbprint_example() {
        // RFC 8037 Appendix A.3.
        let jwk = json!({"kty": "OKP", "crv": "Ed25519", "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"});
        assert_eq!(
            thumbprint(&jwk).unwrap(),
            "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k"
        );
    }

    #[test]
    fn keys_are_read_from_keys_else_signing_keys_and_unusable_keys_kept_apart() {
        // SIG-008, SIG-043, SIG-049
        let profile = json!({
            "ucp": {"version": "2026-08-25"},
            "keys": [
                {"kid": "a", "kty": "OKP", "crv": "Ed25519", "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"},
                {"kid": "rsa", "kty": "RSA", "n": "AQAB", "e": "AQAB"},
                {"kid": "enc", "kty": "OKP", "crv": "Ed25519", "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo", "use": "enc"}
            ],
            "signing_keys": [{"kid": "b", "kty": "EC", "crv": "P-256", "x": "short", "y": "short"}]
        });
        let set = KeySet::from_profile(&profile);
        assert!(matches!(
            set.find("a").unwrap().material,
            Material::Usable { .. }
        ));
        assert!(matches!(
            set.find("rsa").unwrap().material,
            Material::Unsupported(_)
        ));
        assert!(set.find("enc").is_none());
        // keys[] is canonical: a signing_keys beside it is not read.
        assert!(set.find("b").is_none());
        let older = json!({"signing_keys": profile["signing_keys"].clone()});
        let set = KeySet::from_profile(&older);
        assert!(matches!(
            set.find("b").unwrap().material,
            Material::Malformed
        ));
    }
}
