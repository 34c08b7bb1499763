//! A test agent that signs its MCP requests as UCP's "Message Signatures" shows (RFC 9421,
//! Content-Digest per RFC 9530), written from the spec's examples rather than from the
//! bridge's verifier, and a profile host on loopback publishing its keys.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::signature::{
    ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, Ed25519KeyPair, KeyPair,
};
use axum::Router;
use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;
use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use serde_json::{Value, json};

pub enum TestKey {
    Es256(EcdsaKeyPair),
    Ed25519(Ed25519KeyPair),
}

impl TestKey {
    pub fn es256() -> Self {
        Self::Es256(EcdsaKeyPair::generate(&ECDSA_P256_SHA256_FIXED_SIGNING).unwrap())
    }

    pub fn ed25519() -> Self {
        Self::Ed25519(Ed25519KeyPair::generate().unwrap())
    }

    /// The public JWK (RFC 7517; RFC 8037 for Ed25519) with `kid`.
    pub fn jwk(&self, kid: &str) -> Value {
        match self {
            Self::Es256(pair) => {
                let point = pair.public_key().as_ref();
                json!({
                    "kid": kid, "kty": "EC", "crv": "P-256", "use": "sig", "alg": "ES256",
                    "x": URL_SAFE_NO_PAD.encode(&point[1..33]),
                    "y": URL_SAFE_NO_PAD.encode(&point[33..65]),
                })
            }
            Self::Ed25519(pair) => json!({
                "kid": kid, "kty": "OKP", "crv": "Ed25519", "use": "sig", "alg": "EdDSA",
                "x": URL_SAFE_NO_PAD.encode(pair.public_key().as_ref()),
            }),
        }
    }

    /// ES256 as raw r‖s (64 bytes), Ed25519 as R‖S (64 bytes).
    pub fn sign(&self, message: &[u8]) -> Vec<u8> {
        match self {
            Self::Es256(pair) => pair
                .sign(&SystemRandom::new(), message)
                .unwrap()
                .as_ref()
                .to_vec(),
            Self::Ed25519(pair) => pair.sign(message).as_ref().to_vec(),
        }
    }
}

/// How a request is signed; the defaults are the spec's MCP example.
pub struct Signing<'a> {
    pub key: &'a TestKey,
    pub keyid: &'a str,
    pub profile: &'a str,
    /// Covered components, in order.
    pub components: Vec<&'static str>,
    /// Extra signature parameters after `keyid`, e.g. `;created=1700000000`.
    pub params: String,
    /// The body the digest (and so the signature) is computed over.
    pub signed_body: Option<&'a [u8]>,
    /// Sent as the Content-Digest instead of the real one.
    pub digest_override: Option<String>,
}

impl<'a> Signing<'a> {
    pub fn new(key: &'a TestKey, keyid: &'a str, profile: &'a str) -> Self {
        Self {
            key,
            keyid,
            profile,
            components: vec![
                "@method",
                "@authority",
                "@path",
                "content-digest",
                "content-type",
                "ucp-agent",
            ],
            params: String::new(),
            signed_body: None,
            digest_override: None,
        }
    }

    /// The headers of a signed `POST url` carrying `body`.
    pub fn headers(&self, url: &str, body: &[u8]) -> Vec<(String, String)> {
        let url = url::Url::parse(url).unwrap();
        let authority = match url.port() {
            Some(port) => format!("{}:{port}", url.host_str().unwrap()),
            None => url.host_str().unwrap().to_owned(),
        };
        let signed = self.signed_body.unwrap_or(body);
        let digest = self.digest_override.clone().unwrap_or_else(|| {
            let hash = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, signed);
            format!("sha-256=:{}:", STANDARD.encode(hash.as_ref()))
        });
        let ucp_agent = format!("profile=\"{}\"", self.profile);
        let mut base = String::new();
        for component in &self.components {
            let value = match *component {
                "@method" => "POST".to_owned(),
                "@authority" => authority.clone(),
                "@path" => url.path().to_owned(),
                "content-digest" => digest.clone(),
                "content-type" => "application/json".to_owned(),
                "ucp-agent" => ucp_agent.clone(),
                other => panic!("the test signer does not know {other}"),
            };
            base.push_str(&format!("\"{component}\": {value}\n"));
        }
        let list = self
            .components
            .iter()
            .map(|component| format!("\"{component}\""))
            .collect::<Vec<_>>()
            .join(" ");
        let params = format!("({list});keyid=\"{}\"{}", self.keyid, self.params);
        base.push_str(&format!("\"@signature-params\": {params}"));
        let signature = self.key.sign(base.as_bytes());
        vec![
            ("content-type".to_owned(), "application/json".to_owned()),
            ("ucp-agent".to_owned(), ucp_agent),
            ("content-digest".to_owned(), digest),
            ("signature-input".to_owned(), format!("sig1={params}")),
            (
                "signature".to_owned(),
                format!("sig1=:{}:", STANDARD.encode(signature)),
            ),
        ]
    }
}

/// An agent's profile host: `/agent-0408` publishes `signing_keys`, `/agent-0825` `keys`,
/// `/agent-revoked` an empty `keys` beside a `signing_keys` still listing them, and
/// `/agent-etag` `keys` with an `ETag`, answering 304 to a request that names it.
pub struct ProfileHost {
    pub addr: SocketAddr,
    fetches: Arc<AtomicUsize>,
    not_modified: Arc<AtomicUsize>,
}

/// The `ETag` of `/agent-etag`.
const ETAG: &str = "\"keys-v1\"";

impl ProfileHost {
    pub async fn start(keys: Vec<Value>) -> Self {
        let fetches = Arc::new(AtomicUsize::new(0));
        let not_modified = Arc::new(AtomicUsize::new(0));
        let keys = Arc::new(keys);
        let etag_route = {
            let (keys, fetches, not_modified) =
                (keys.clone(), fetches.clone(), not_modified.clone());
            get(move |headers: axum::http::HeaderMap| async move {
                fetches.fetch_add(1, Ordering::SeqCst);
                if headers
                    .get(header::IF_NONE_MATCH)
                    .is_some_and(|value| value == ETAG)
                {
                    not_modified.fetch_add(1, Ordering::SeqCst);
                    return (axum::http::StatusCode::NOT_MODIFIED, [(header::ETAG, ETAG)])
                        .into_response();
                }
                (
                    [
                        (header::CONTENT_TYPE, "application/json"),
                        (header::ETAG, ETAG),
                    ],
                    json!({"ucp": {"version": "2026-08-25", "capabilities": {}}, "keys": *keys})
                        .to_string(),
                )
                    .into_response()
            })
        };
        let serve = |body: Value| {
            (
                [
                    (header::CONTENT_TYPE, "application/json"),
                    (header::CACHE_CONTROL, "public, max-age=300"),
                ],
                body.to_string(),
            )
                .into_response()
        };
        let app = Router::new()
            .route(
                "/agent-0408",
                get(
                    move |State((keys, fetches)): State<(Arc<Vec<Value>>, Arc<AtomicUsize>)>| async move {
                        fetches.fetch_add(1, Ordering::SeqCst);
                        serve(json!({"ucp": {"version": "2026-04-08", "capabilities": {}}, "signing_keys": *keys}))
                    },
                ),
            )
            .route(
                "/agent-0825",
                get(
                    move |State((keys, fetches)): State<(Arc<Vec<Value>>, Arc<AtomicUsize>)>| async move {
                        fetches.fetch_add(1, Ordering::SeqCst);
                        serve(json!({"ucp": {"version": "2026-08-25", "capabilities": {}}, "keys": *keys}))
                    },
                ),
            )
            .route(
                "/agent-revoked",
                get(
                    move |State((keys, _)): State<(Arc<Vec<Value>>, Arc<AtomicUsize>)>| async move {
                        serve(json!({"ucp": {"version": "2026-08-25", "capabilities": {}}, "keys": [], "signing_keys": *keys}))
                    },
                ),
            )
            .route("/agent-etag", etag_route)
            .with_state((keys, fetches.clone()));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        Self {
            addr,
            fetches,
            not_modified,
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}/{path}", self.addr)
    }

    pub fn fetches(&self) -> usize {
        self.fetches.load(Ordering::SeqCst)
    }

    /// Conditional requests of `/agent-etag` answered 304.
    pub fn not_modified(&self) -> usize {
        self.not_modified.load(Ordering::SeqCst)
    }
}
