//! The mirror of `verify`: this bridge signing its own outbound requests (order webhooks) as
//! UCP's `sign_rest_request` shows. The signature base is built by the same code that
//! rebuilds an agent's (`base::signature_base`), so what is signed here is what a verifier
//! written to RFC 9421 reconstructs. Keys are ES256 (ECDSA P-256, raw r‖s, SIG-019) or
//! Ed25519 (SIG-046), read from a PKCS#8 (or SEC1) PEM; the private half never reaches a
//! message or a log line, only the public JWK is shown.

use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::signature::{
    ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, Ed25519KeyPair, KeyPair,
};
use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use http::{HeaderMap, HeaderValue};
use rustls::pki_types::PrivateKeyDer;
use rustls::pki_types::pem::{self, PemObject};
use serde_json::{Value, json};
use sfv::{Dictionary, ListEntry, Parser};
use url::Url;

use super::SignatureError;
use super::base::{Target, signature_base};
use super::fields::{CONTENT_DIGEST, serialize_inner_list};
use super::keys::thumbprint;

enum Pair {
    Es256(EcdsaKeyPair),
    Ed25519(Ed25519KeyPair),
}

/// The bridge's signing key and the `kid` it is published under.
pub struct SigningKey {
    kid: String,
    pair: Pair,
}

impl std::fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SigningKey({} [REDACTED])", self.kid)
    }
}

/// The headers a signed request adds to the ones it was signed over.
#[derive(Debug, Clone)]
pub struct SignedHeaders {
    pub content_digest: String,
    pub signature_input: String,
    pub signature: String,
}

/// Whether `kid` can be written as an RFC 8941 sf-string as it is (`keyid="…"`).
pub fn kid_is_plain(kid: &str) -> bool {
    !kid.is_empty()
        && kid.len() <= 200
        && kid
            .bytes()
            .all(|byte| (0x20..=0x7e).contains(&byte) && byte != b'"' && byte != b'\\')
}

/// RFC 9421 §2.2.1: the host, lower-case, with the port only when it is not the default.
fn authority(url: &Url) -> Option<String> {
    let host = url.host_str()?.to_ascii_lowercase();
    Some(match url.port() {
        Some(port) => format!("{host}:{port}"),
        None => host,
    })
}

impl SigningKey {
    /// Reads a PEM private key: PKCS#8 (`BEGIN PRIVATE KEY`, P-256 or Ed25519) or SEC1
    /// (`BEGIN EC PRIVATE KEY`, P-256). `kid` defaults to the key's RFC 7638 thumbprint.
    /// The error says what is wrong without quoting the file.
    pub fn from_pem(pem_text: &[u8], kid: Option<&str>) -> Result<Self, String> {
        let der = PrivateKeyDer::from_pem_slice(pem_text).map_err(|error| match error {
            pem::Error::NoItemsFound => {
                "no PEM private key (-----BEGIN PRIVATE KEY----- or EC PRIVATE KEY)".to_owned()
            }
            _ => "not valid PEM (a section is cut short, or its base64 is damaged)".to_owned(),
        })?;
        let unsupported = "not an ECDSA P-256 (ES256) or Ed25519 private key".to_owned();
        let pair = match &der {
            PrivateKeyDer::Pkcs8(key) => {
                let bytes = key.secret_pkcs8_der();
                if let Ok(pair) = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, bytes)
                {
                    Pair::Es256(pair)
                } else if let Ok(pair) = Ed25519KeyPair::from_pkcs8_maybe_unchecked(bytes) {
                    Pair::Ed25519(pair)
                } else {
                    return Err(unsupported);
                }
            }
            PrivateKeyDer::Sec1(key) => Pair::Es256(
                EcdsaKeyPair::from_private_key_der(
                    &ECDSA_P256_SHA256_FIXED_SIGNING,
                    key.secret_sec1_der(),
                )
                .map_err(|_| unsupported)?,
            ),
            _ => return Err(unsupported),
        };
        let mut key = Self {
            kid: String::new(),
            pair,
        };
        key.kid = match kid {
            Some(kid) => kid.to_owned(),
            None => thumbprint(&key.public_members())
                .ok_or_else(|| "the public key has no thumbprint".to_owned())?,
        };
        Ok(key)
    }

    pub fn kid(&self) -> &str {
        &self.kid
    }

    /// The members RFC 7638 hashes, plus the curve's JWA algorithm.
    fn public_members(&self) -> Value {
        match &self.pair {
            Pair::Es256(pair) => {
                let point = pair.public_key().as_ref();
                let x = point.get(1..33).unwrap_or_default();
                let y = point.get(33..65).unwrap_or_default();
                json!({"kty": "EC", "crv": "P-256", "x": URL_SAFE_NO_PAD.encode(x), "y": URL_SAFE_NO_PAD.encode(y)})
            }
            Pair::Ed25519(pair) => json!({
                "kty": "OKP", "crv": "Ed25519", "x": URL_SAFE_NO_PAD.encode(pair.public_key().as_ref())
            }),
        }
    }

    /// The public JWK a profile publishes (RFC 7517; RFC 8037 for Ed25519), with `kid`.
    pub fn jwk(&self) -> Value {
        let mut jwk = json!({"kid": self.kid});
        if let (Some(object), Value::Object(members)) = (jwk.as_object_mut(), self.public_members())
        {
            object.extend(members);
            object.insert("use".into(), Value::from("sig"));
            object.insert(
                "alg".into(),
                Value::from(match self.pair {
                    Pair::Es256(_) => "ES256",
                    Pair::Ed25519(_) => "EdDSA",
                }),
            );
        }
        jwk
    }

    fn sign(&self, message: &[u8]) -> Result<Vec<u8>, SignatureError> {
        match &self.pair {
            Pair::Es256(pair) => pair
                .sign(&SystemRandom::new(), message)
                .map(|signature| signature.as_ref().to_vec())
                .map_err(|_| SignatureError::Invalid("ECDSA signing failed".to_owned())),
            Pair::Ed25519(pair) => Ok(pair.sign(message).as_ref().to_vec()),
        }
    }

    /// Signs `method url` carrying `body` (SIG-014 … SIG-018): `@method`, `@authority`,
    /// `@path`, `@query` when the URL has one, each of `covered` (header names, lower-case,
    /// as they are in `headers`), then `content-digest` (RFC 9530 sha-256 of the raw body).
    pub fn sign_request(
        &self,
        method: &str,
        url: &Url,
        headers: &HeaderMap,
        covered: &[&str],
        body: &[u8],
        created: i64,
    ) -> Result<SignedHeaders, SignatureError> {
        let hash = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, body);
        let content_digest = format!("sha-256=:{}:", STANDARD.encode(hash.as_ref()));
        let mut signed = headers.clone();
        signed.insert(
            CONTENT_DIGEST,
            HeaderValue::from_str(&content_digest)
                .map_err(|_| SignatureError::Invalid("unwritable digest".to_owned()))?,
        );
        let mut names = vec!["@method", "@authority", "@path"];
        if url.query().is_some() {
            names.push("@query");
        }
        names.extend(covered.iter().copied());
        names.push(CONTENT_DIGEST);
        let list: Vec<String> = names.iter().map(|name| format!("\"{name}\"")).collect();
        if !kid_is_plain(&self.kid) {
            return Err(SignatureError::Invalid(
                "the key id cannot be written in Signature-Input".to_owned(),
            ));
        }
        let text = format!(
            "sig1=({});created={created};keyid=\"{}\"",
            list.join(" "),
            self.kid
        );
        let parsed = Parser::new(&text)
            .parse::<Dictionary>()
            .map_err(|_| SignatureError::Invalid("unwritable Signature-Input".to_owned()))?;
        let Some(ListEntry::InnerList(input)) = parsed.get("sig1") else {
            return Err(SignatureError::Invalid(
                "unwritable Signature-Input".to_owned(),
            ));
        };
        let target = Target {
            method,
            authority: authority(url),
            path: url.path(),
            query: url.query(),
            headers: &signed,
        };
        let base = signature_base(&target, input)?;
        let signature = self.sign(base.as_bytes())?;
        let params = serialize_inner_list(input)
            .ok_or_else(|| SignatureError::Invalid("unwritable Signature-Input".to_owned()))?;
        Ok(SignedHeaders {
            content_digest,
            signature_input: format!("sig1={params}"),
            signature: format!("sig1=:{}:", STANDARD.encode(signature)),
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::signatures::keys::KeySet;

    fn pem(der: &[u8]) -> String {
        format!(
            "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n",
            STANDARD.encode(der)
        )
    }

    #[test]
    fn a_signed_request_verifies_with_the_published_jwk() {
        let rng = SystemRandom::new();
        let es = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).unwrap();
        let ed = Ed25519KeyPair::generate_pkcs8(&rng).unwrap();
        for der in [es.as_ref(), ed.as_ref()] {
            let key = SigningKey::from_pem(pem(der).as_bytes(), None).unwrap();
            // The default kid is the RFC 7638 thumbprint of the published key.
            let set = KeySet::from_profile(&json!({"keys": [key.jwk()]}));
            let public = set.find(key.kid()).unwrap();
            assert_eq!(public.thumbprint.as_deref(), Some(key.kid()));
            let url = Url::parse("https://agent.example:8443/hooks/orders?x=1").unwrap();
            let mut headers = HeaderMap::new();
            headers.insert("content-type", HeaderValue::from_static("application/json"));
            headers.insert("idempotency-key", HeaderValue::from_static("evt-1"));
            let signed = key
                .sign_request(
                    "POST",
                    &url,
                    &headers,
                    &["idempotency-key", "content-type"],
                    b"{}",
                    1_700_000_000,
                )
                .unwrap();
            assert_eq!(
                signed.signature_input,
                format!(
                    "sig1=(\"@method\" \"@authority\" \"@path\" \"@query\" \"idempotency-key\" \"content-type\" \"content-digest\");created=1700000000;keyid=\"{}\"",
                    key.kid()
                )
            );
            let base = format!(
                "\"@method\": POST\n\"@authority\": agent.example:8443\n\"@path\": /hooks/orders\n\"@query\": ?x=1\n\"idempotency-key\": evt-1\n\"content-type\": application/json\n\"content-digest\": {}\n\"@signature-params\": {}",
                signed.content_digest,
                signed.signature_input.trim_start_matches("sig1=")
            );
            let value = STANDARD
                .decode(
                    signed
                        .signature
                        .trim_start_matches("sig1=:")
                        .trim_end_matches(':'),
                )
                .unwrap();
            assert!(public.verify(base.as_bytes(), &value));
        }
    }

    #[test]
    fn unusable_keys_are_named_without_their_bytes() {
        let error = SigningKey::from_pem(b"not a key", None).unwrap_err();
        assert!(error.contains("no PEM private key"), "{error}");
        let rsa_like = pem(b"\x30\x03\x02\x01\x00");
        let error = SigningKey::from_pem(rsa_like.as_bytes(), None).unwrap_err();
        assert!(error.contains("P-256"), "{error}");
    }
}
