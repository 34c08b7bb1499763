//! A receiving PSP's API Pix (v2.9.0, the Central Bank's OpenAPI), stood in for tests: HTTPS on
//! loopback with a CA made per run, mutual TLS (a client certificate signed by that CA is
//! required), the OAuth2 token endpoint (HTTP Basic client credentials), `PUT/GET /cob/{txid}`
//! answering a real BR Code with its CRC16, `PUT/GET /webhook/{chave}`, and controls a test
//! drives: pay a charge (then POST the notification to `{webhookUrl}/pix` as API Pix says),
//! expire it, revoke tokens, go down, and count the calls per route.
//!
//! ```ignore
//! let psp = PixPsp::start().await;
//! let toml = format!("{}\n[store]\n…", psp.pix_toml());
//! ```

#![allow(dead_code)]

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use hyper_util::rt::TokioIo;
use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose, IsCa,
    KeyPair,
};
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use serde_json::{Value, json};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;
use tokio::task::JoinHandle;

pub const CLIENT_ID: &str = "bcp-bridge-psp-client";
pub const CLIENT_SECRET: &str = "psp-secret-Xq81vWm2Lr7TzKp4";
/// The merchant's random Pix key (DICT issues it as a lower-case UUID).
pub const KEY: &str = "7d9f0335-8dcc-4054-9bf9-0dbd61d36906";
pub const MERCHANT_NAME: &str = "LOJA EXEMPLO";
pub const MERCHANT_CITY: &str = "SAO PAULO";

mod payload;
mod routes;
use payload::br_code;
pub use payload::{PayloadStyle, Tamper, crc16};
use routes::router;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Down {
    /// Every route answers 503 (API Pix's `ServicoIndisponivel`).
    Unavailable,
    /// The listener is closed: connections are refused.
    Refusing,
}

/// One notification POSTed to the bridge, and how it answered.
#[derive(Debug, Clone)]
pub struct Notification {
    pub url: String,
    pub body: Value,
    pub status: Option<u16>,
}

struct Charge {
    /// CobCompleta as GET /cob answers it.
    cob: Value,
    created: OffsetDateTime,
}

struct Inner {
    tokens: HashMap<String, Instant>,
    token_life: Duration,
    charges: HashMap<String, Charge>,
    webhooks: HashMap<String, String>,
    calls: HashMap<String, usize>,
    style: PayloadStyle,
    tamper: Option<Tamper>,
    down: Option<Down>,
    notifications: Vec<Notification>,
    /// The bodies of PUT /cob, as sent (what the bridge told the PSP about the buyer).
    cob_bodies: Vec<Value>,
    next_loc: u64,
}

struct Shared {
    inner: Mutex<Inner>,
    host: String,
}

/// The PSP's certificates and the client identity it issued, as PEM files for `[pix]`.
pub struct Pki {
    pub dir: PathBuf,
    pub ca_cert: PathBuf,
    pub client_cert: PathBuf,
    pub client_key: PathBuf,
    /// A client identity from a CA the PSP does not trust.
    pub stranger_cert: PathBuf,
    pub stranger_key: PathBuf,
    ca_der: Vec<u8>,
    server_der: Vec<u8>,
    server_key_der: Vec<u8>,
}

pub struct PixPsp {
    pub addr: SocketAddr,
    /// `[pix] api_url`: `cob` and `webhook` are under it.
    pub api_url: String,
    /// `[pix] token_url`.
    pub token_url: String,
    pub pki: Pki,
    shared: Arc<Shared>,
    server: Mutex<Option<JoinHandle<()>>>,
    tls: Arc<rustls::ServerConfig>,
}

impl Drop for PixPsp {
    fn drop(&mut self) {
        if let Ok(mut server) = self.server.lock()
            && let Some(server) = server.take()
        {
            server.abort();
        }
        let _ = std::fs::remove_dir_all(&self.pki.dir);
    }
}

fn ca() -> CertifiedIssuer<'static, KeyPair> {
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params
        .distinguished_name
        .push(DnType::CommonName, "PSP stand-in test CA");
    CertifiedIssuer::self_signed(params, KeyPair::generate().unwrap()).unwrap()
}

fn client_identity(issuer: &CertifiedIssuer<'static, KeyPair>) -> (String, String) {
    let key = KeyPair::generate().unwrap();
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
    params
        .distinguished_name
        .push(DnType::CommonName, "bcp-bridge merchant client");
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
    let cert = params.signed_by(&key, issuer).unwrap();
    (cert.pem(), key.serialize_pem())
}

impl Pki {
    fn new() -> Self {
        let dir = std::env::temp_dir().join(format!(
            "bcp-pix-psp-{}-{}",
            std::process::id(),
            uuid::Uuid::new_v4().simple()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let ca = ca();
        let server_key = KeyPair::generate().unwrap();
        let mut params =
            CertificateParams::new(vec!["localhost".to_owned(), "127.0.0.1".to_owned()]).unwrap();
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        let server = params.signed_by(&server_key, &ca).unwrap();
        let (client_pem, client_key_pem) = client_identity(&ca);
        let (stranger_pem, stranger_key_pem) = client_identity(&self::ca());
        let write = |name: &str, text: &str| {
            let path = dir.join(name);
            std::fs::write(&path, text).unwrap();
            path
        };
        Self {
            ca_cert: write("psp-ca.pem", &ca.pem()),
            client_cert: write("client.pem", &client_pem),
            client_key: write("client-key.pem", &client_key_pem),
            stranger_cert: write("stranger.pem", &stranger_pem),
            stranger_key: write("stranger-key.pem", &stranger_key_pem),
            ca_der: ca.der().to_vec(),
            server_der: server.der().to_vec(),
            server_key_der: server_key.serialize_der(),
            dir,
        }
    }

    /// The CA's certificate, for a client that trusts this PSP.
    pub fn ca_der(&self) -> &[u8] {
        &self.ca_der
    }
}

fn server_tls(pki: &Pki) -> Arc<rustls::ServerConfig> {
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let mut roots = rustls::RootCertStore::empty();
    roots.add(CertificateDer::from(pki.ca_der.clone())).unwrap();
    // Mutual TLS: a client without a certificate from this CA does not get past the handshake.
    let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(
        Arc::new(roots),
        provider.clone(),
    )
    .build()
    .unwrap();
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_client_cert_verifier(verifier)
        .with_single_cert(
            vec![CertificateDer::from(pki.server_der.clone())],
            PrivateKeyDer::Pkcs8(pki.server_key_der.clone().into()),
        )
        .unwrap();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Arc::new(config)
}

impl PixPsp {
    pub async fn start() -> Self {
        Self::start_with(PayloadStyle::KeyAndTxid).await
    }

    pub async fn start_with(style: PayloadStyle) -> Self {
        let pki = Pki::new();
        let tls = server_tls(&pki);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let shared = Arc::new(Shared {
            inner: Mutex::new(Inner {
                tokens: HashMap::new(),
                token_life: Duration::from_secs(3600),
                charges: HashMap::new(),
                webhooks: HashMap::new(),
                calls: HashMap::new(),
                style,
                tamper: None,
                down: None,
                notifications: Vec::new(),
                cob_bodies: Vec::new(),
                next_loc: 1,
            }),
            host: addr.to_string(),
        });
        let server = tokio::spawn(serve(listener, tls.clone(), router(shared.clone())));
        Self {
            addr,
            api_url: format!("https://{addr}/api/v2"),
            token_url: format!("https://{addr}/oauth/token"),
            pki,
            shared,
            server: Mutex::new(Some(server)),
            tls,
        }
    }

    /// `[pix]` pointing at this PSP with the identity it issued (append `[store]` etc.).
    pub fn pix_toml(&self) -> String {
        format!(
            "[pix]\napi_url = {:?}\ntoken_url = {:?}\nclient_id = {CLIENT_ID:?}\nclient_secret = {CLIENT_SECRET:?}\nclient_cert = {:?}\nclient_key = {:?}\nca_cert = {:?}\nkey = {KEY:?}\n",
            self.api_url,
            self.token_url,
            path(&self.pki.client_cert),
            path(&self.pki.client_key),
            path(&self.pki.ca_cert),
        )
    }

    fn with<T>(&self, action: impl FnOnce(&mut Inner) -> T) -> T {
        action(&mut self.shared.inner.lock().unwrap())
    }

    /// Calls served per route: "POST /token", "PUT /cob", "GET /cob", "PUT /webhook",
    /// "GET /webhook" (counted once past TLS, refused ones included).
    pub fn calls(&self, route: &str) -> usize {
        self.with(|inner| inner.calls.get(route).copied().unwrap_or(0))
    }

    /// The charge as GET /cob would answer it.
    pub fn charge(&self, txid: &str) -> Option<Value> {
        self.with(|inner| inner.charges.get(txid).map(|charge| charge.cob.clone()))
    }

    pub fn cob_bodies(&self) -> Vec<Value> {
        self.with(|inner| inner.cob_bodies.clone())
    }

    /// The webhook URL registered for the key.
    pub fn webhook(&self) -> Option<String> {
        self.with(|inner| inner.webhooks.get(KEY).cloned())
    }

    pub fn notifications(&self) -> Vec<Notification> {
        self.with(|inner| inner.notifications.clone())
    }

    pub fn set_style(&self, style: PayloadStyle) {
        self.with(|inner| inner.style = style);
    }

    /// Charges created from now on carry a payload wrong in this way.
    pub fn tamper(&self, tamper: Option<Tamper>) {
        self.with(|inner| inner.tamper = tamper);
    }

    /// Tokens issued from now on live this long.
    pub fn set_token_life(&self, life: Duration) {
        self.with(|inner| inner.token_life = life);
    }

    /// Every token issued so far stops working (the next API call answers 401).
    pub fn revoke_tokens(&self) {
        self.with(|inner| inner.tokens.clear());
    }

    /// The PSP goes down until `come_back`.
    pub async fn go_down(&self, down: Down) {
        self.with(|inner| inner.down = Some(down));
        if down == Down::Refusing {
            let server = self.server.lock().unwrap().take();
            if let Some(server) = server {
                server.abort();
                let _ = server.await;
            }
        }
    }

    pub async fn come_back(&self) {
        let refusing = self.with(|inner| inner.down.take()) == Some(Down::Refusing);
        if refusing {
            let listener = tokio::net::TcpListener::bind(self.addr).await.unwrap();
            let server = tokio::spawn(serve(
                listener,
                self.tls.clone(),
                router(self.shared.clone()),
            ));
            *self.server.lock().unwrap() = Some(server);
        }
    }

    /// The charge's time runs out unpaid: `REMOVIDA_PELO_PSP`, created long enough ago.
    pub fn expire(&self, txid: &str) {
        self.with(|inner| {
            let charge = inner.charges.get_mut(txid).expect("a charge to expire");
            let lifetime = charge.cob["calendario"]["expiracao"].as_i64().unwrap_or(0);
            let created = OffsetDateTime::now_utc() - time::Duration::seconds(lifetime + 60);
            charge.created = created;
            charge.cob["calendario"]["criacao"] = json!(created.format(&Rfc3339).unwrap());
            charge.cob["status"] = json!("REMOVIDA_PELO_PSP");
        });
    }

    /// A payer pays `txid` with `amount` ("12.34"): the charge turns CONCLUIDA with a `pix[]`
    /// entry, and the PSP notifies the registered webhook. Returns the `endToEndId`.
    pub async fn pay(&self, txid: &str, amount: &str) -> String {
        let notification = self.settle(txid, amount);
        let end_to_end_id = notification["pix"][0]["endToEndId"]
            .as_str()
            .unwrap()
            .to_owned();
        self.notify(notification).await;
        end_to_end_id
    }

    /// `pay` without the notification: the charge is CONCLUIDA and the body the PSP would
    /// post is returned, for a test to deliver where and when it wants.
    pub fn settle(&self, txid: &str, amount: &str) -> Value {
        // E + the payer PSP's ISPB + yyyyMMddHHmm + 11 characters: 32 in all.
        let now = OffsetDateTime::now_utc();
        let end_to_end_id = format!(
            "E12345678{:04}{:02}{:02}{:02}{:02}{}",
            now.year(),
            u8::from(now.month()),
            now.day(),
            now.hour(),
            now.minute(),
            &uuid::Uuid::new_v4().simple().to_string()[..11]
        );
        let horario = OffsetDateTime::now_utc().format(&Rfc3339).unwrap();
        let received = json!({
            "endToEndId": end_to_end_id,
            "txid": txid,
            "valor": amount,
            "chave": KEY,
            "horario": horario,
        });
        self.with(|inner| {
            let charge = inner.charges.get_mut(txid).expect("a charge to pay");
            charge.cob["status"] = json!("CONCLUIDA");
            match charge.cob["pix"].as_array_mut() {
                Some(pix) => pix.push(received.clone()),
                None => charge.cob["pix"] = json!([received.clone()]),
            }
        });
        json!({"pix": [received]})
    }

    /// POSTs `body` to `{webhookUrl}/pix` (a replayed or forged notification included).
    pub async fn notify(&self, body: Value) -> Option<u16> {
        let webhook = self.webhook()?;
        let url = format!("{}/pix", webhook.trim_end_matches('/'));
        let status = reqwest::Client::builder()
            .timeout(Duration::from_secs(10))
            .build()
            .unwrap()
            .post(&url)
            .json(&body)
            .send()
            .await
            .ok()
            .map(|response| response.status().as_u16());
        self.with(|inner| inner.notifications.push(Notification { url, body, status }));
        status
    }
}

fn path(path: &Path) -> String {
    path.display().to_string()
}

async fn serve(listener: tokio::net::TcpListener, tls: Arc<rustls::ServerConfig>, router: Router) {
    let acceptor = tokio_rustls::TlsAcceptor::from(tls);
    loop {
        let Ok((tcp, _)) = listener.accept().await else {
            continue;
        };
        let acceptor = acceptor.clone();
        let router = router.clone();
        tokio::spawn(async move {
            let Ok(stream) = acceptor.accept(tcp).await else {
                return;
            };
            let service = hyper::service::service_fn(
                move |request: hyper::Request<hyper::body::Incoming>| {
                    let mut router = router.clone();
                    async move {
                        tower_service::Service::call(
                            &mut router,
                            request.map(axum::body::Body::new),
                        )
                        .await
                    }
                },
            );
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

/// A client that trusts this PSP's CA, with the identity at (`cert`, `key`) or none.
pub fn client(psp: &PixPsp, identity: Option<(&Path, &Path)>) -> reqwest::Client {
    let mut builder = reqwest::Client::builder()
        .tls_certs_only([reqwest::Certificate::from_der(psp.pki.ca_der()).unwrap()])
        .timeout(Duration::from_secs(10));
    if let Some((cert, key)) = identity {
        let mut pem = std::fs::read(cert).unwrap();
        pem.extend(std::fs::read(key).unwrap());
        builder = builder.identity(reqwest::Identity::from_pem(&pem).unwrap());
    }
    builder.build().unwrap()
}
