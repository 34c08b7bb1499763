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
use axum::extract::{Path as UrlPath, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{post, put};
use base64::Engine as _;
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

/// How the charge's BR Code names what it pays.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PayloadStyle {
    /// 26/01 the key, 54 the amount, 62/05 the txid.
    KeyAndTxid,
    /// The manual's dynamic code: 26/25 the location, 54 the amount, 62/05 `***`.
    Location,
}

/// A deliberately wrong payload, for the bridge to refuse.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tamper {
    Crc,
    Amount,
    Key,
    Txid,
}

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
        self.notify(json!({"pix": [received]})).await;
        end_to_end_id
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

fn router(shared: Arc<Shared>) -> Router {
    Router::new()
        .route("/oauth/token", post(token))
        .route("/api/v2/cob/{txid}", put(put_cob).get(get_cob))
        .route("/api/v2/webhook/{chave}", put(put_webhook).get(get_webhook))
        .with_state(shared)
}

/// RFC 7807 as API Pix answers its errors.
fn problem(status: StatusCode, kind: &str, title: &str, detail: &str) -> Response {
    (
        status,
        [("content-type", "application/problem+json")],
        json!({
            "type": format!("https://pix.bcb.gov.br/api/v2/error/{kind}"),
            "title": title,
            "status": status.as_u16(),
            "detail": detail,
        })
        .to_string(),
    )
        .into_response()
}

/// Counts the call; the PSP's state of health answers before the route does.
fn arrive(shared: &Shared, route: &str) -> Option<Response> {
    let mut inner = shared.inner.lock().unwrap();
    *inner.calls.entry(route.to_owned()).or_insert(0) += 1;
    inner.down.map(|_| {
        problem(
            StatusCode::SERVICE_UNAVAILABLE,
            "ServicoIndisponivel",
            "Serviço Indisponível",
            "Serviço não está disponível no momento.",
        )
    })
}

fn authorized(shared: &Shared, headers: &HeaderMap) -> Option<Response> {
    let token = headers
        .get("authorization")
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "));
    let inner = shared.inner.lock().unwrap();
    let valid = token
        .and_then(|token| inner.tokens.get(token))
        .is_some_and(|expires| Instant::now() < *expires);
    (!valid).then(|| {
        problem(
            StatusCode::UNAUTHORIZED,
            "AcessoNegado",
            "Acesso Negado",
            "Token ausente, inválido ou expirado.",
        )
    })
}

async fn token(State(shared): State<Arc<Shared>>, headers: HeaderMap, body: String) -> Response {
    if let Some(down) = arrive(&shared, "POST /token") {
        return down;
    }
    let expected = format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(format!("{CLIENT_ID}:{CLIENT_SECRET}"))
    );
    let basic = headers
        .get("authorization")
        .and_then(|value| value.to_str().ok());
    if basic != Some(expected.as_str()) {
        return (
            StatusCode::UNAUTHORIZED,
            [("content-type", "application/json")],
            json!({"error": "invalid_client", "error_description": "bad client credentials"})
                .to_string(),
        )
            .into_response();
    }
    if !body
        .split('&')
        .any(|pair| pair == "grant_type=client_credentials")
    {
        return (
            StatusCode::BAD_REQUEST,
            [("content-type", "application/json")],
            json!({"error": "unsupported_grant_type"}).to_string(),
        )
            .into_response();
    }
    let token = format!("psp-token-{}", uuid::Uuid::new_v4().simple());
    let mut inner = shared.inner.lock().unwrap();
    let life = inner.token_life;
    inner.tokens.insert(token.clone(), Instant::now() + life);
    axum::Json(json!({
        "access_token": token,
        "token_type": "Bearer",
        "expires_in": life.as_secs(),
        "scope": "cob.write cob.read webhook.write webhook.read",
    }))
    .into_response()
}

fn txid_valid(txid: &str) -> bool {
    (26..=35).contains(&txid.len()) && txid.bytes().all(|byte| byte.is_ascii_alphanumeric())
}

fn cob_invalid(detail: &str) -> Response {
    problem(
        StatusCode::BAD_REQUEST,
        "CobOperacaoInvalida",
        "Cobrança inválida.",
        detail,
    )
}

async fn put_cob(
    State(shared): State<Arc<Shared>>,
    UrlPath(txid): UrlPath<String>,
    headers: HeaderMap,
    body: String,
) -> Response {
    if let Some(refused) = arrive(&shared, "PUT /cob").or_else(|| authorized(&shared, &headers)) {
        return refused;
    }
    if !txid_valid(&txid) {
        return cob_invalid("O campo txid não respeita o schema.");
    }
    let Ok(body) = serde_json::from_str::<Value>(&body) else {
        return cob_invalid("O corpo não é JSON.");
    };
    let expiracao = body["calendario"]["expiracao"].as_i64().unwrap_or(86_400);
    let original = body["valor"]["original"].as_str().unwrap_or("");
    let amount_ok = original.split_once('.').is_some_and(|(units, cents)| {
        !units.is_empty()
            && units.len() <= 10
            && cents.len() == 2
            && units
                .bytes()
                .chain(cents.bytes())
                .all(|b| b.is_ascii_digit())
    }) && original.bytes().any(|b| (b'1'..=b'9').contains(&b));
    if expiracao <= 0 {
        return cob_invalid("O campo cob.calendario.expiracao é igual ou menor que zero.");
    }
    if !amount_ok {
        return cob_invalid("O campo cob.valor.original não respeita o schema.");
    }
    if body["chave"] != KEY {
        return cob_invalid(
            "O campo cob.chave corresponde a uma conta que não pertence a este usuário recebedor.",
        );
    }
    if let Some(devedor) = body.get("devedor") {
        let cpf = devedor["cpf"].as_str().is_some_and(|cpf| cpf.len() == 11);
        let cnpj = devedor["cnpj"]
            .as_str()
            .is_some_and(|cnpj| cnpj.len() == 14);
        if !(cpf ^ cnpj) || !devedor["nome"].is_string() {
            return cob_invalid("O objeto cob.devedor não respeita o schema.");
        }
    }
    let mut inner = shared.inner.lock().unwrap();
    inner.cob_bodies.push(body.clone());
    if let Some(existing) = inner.charges.get(&txid) {
        if existing.cob["status"] != "ATIVA" {
            return cob_invalid(
                "A cobrança já existe, não está no status ATIVA, e a presente requisição busca alterá-la.",
            );
        }
        if existing.cob["valor"]["original"] == original {
            return axum::Json(existing.cob.clone()).into_response();
        }
    }
    let loc_id = inner.next_loc;
    inner.next_loc += 1;
    let location = format!("{}/qr/v2/{}", shared.host, uuid::Uuid::new_v4().simple());
    let payload = br_code(inner.style, inner.tamper, &txid, original, &location);
    let created = OffsetDateTime::now_utc();
    let mut cob = json!({
        "calendario": {"criacao": created.format(&Rfc3339).unwrap(), "expiracao": expiracao},
        "txid": txid,
        "revisao": 0,
        "loc": {"id": loc_id, "location": location, "tipoCob": "cob"},
        "location": location,
        "status": "ATIVA",
        "valor": {"original": original},
        "chave": KEY,
        "pixCopiaECola": payload,
    });
    if let Some(devedor) = body.get("devedor") {
        cob["devedor"] = devedor.clone();
    }
    if let Some(note) = body.get("solicitacaoPagador") {
        cob["solicitacaoPagador"] = note.clone();
    }
    inner.charges.insert(
        txid,
        Charge {
            cob: cob.clone(),
            created,
        },
    );
    (StatusCode::CREATED, axum::Json(cob)).into_response()
}

async fn get_cob(
    State(shared): State<Arc<Shared>>,
    UrlPath(txid): UrlPath<String>,
    headers: HeaderMap,
) -> Response {
    if let Some(refused) = arrive(&shared, "GET /cob").or_else(|| authorized(&shared, &headers)) {
        return refused;
    }
    let inner = shared.inner.lock().unwrap();
    match inner.charges.get(&txid) {
        Some(charge) => axum::Json(charge.cob.clone()).into_response(),
        None => problem(
            StatusCode::NOT_FOUND,
            "CobNaoEncontrado",
            "Cobrança não encontrada.",
            "Cobrança não encontrada para o txid informado.",
        ),
    }
}

async fn put_webhook(
    State(shared): State<Arc<Shared>>,
    UrlPath(chave): UrlPath<String>,
    headers: HeaderMap,
    body: String,
) -> Response {
    if let Some(refused) = arrive(&shared, "PUT /webhook").or_else(|| authorized(&shared, &headers))
    {
        return refused;
    }
    if chave != KEY {
        return problem(
            StatusCode::BAD_REQUEST,
            "WebhookOperacaoInvalida",
            "Webhook inválido.",
            "A chave não pertence a este usuário recebedor.",
        );
    }
    let url = serde_json::from_str::<Value>(&body)
        .ok()
        .and_then(|body| body["webhookUrl"].as_str().map(str::to_owned));
    let Some(url) = url.filter(|url| url::Url::parse(url).is_ok()) else {
        return problem(
            StatusCode::BAD_REQUEST,
            "WebhookOperacaoInvalida",
            "Webhook inválido.",
            "O campo webhookUrl não respeita o schema.",
        );
    };
    shared.inner.lock().unwrap().webhooks.insert(chave, url);
    StatusCode::OK.into_response()
}

async fn get_webhook(
    State(shared): State<Arc<Shared>>,
    UrlPath(chave): UrlPath<String>,
    headers: HeaderMap,
) -> Response {
    if let Some(refused) = arrive(&shared, "GET /webhook").or_else(|| authorized(&shared, &headers))
    {
        return refused;
    }
    let inner = shared.inner.lock().unwrap();
    match inner.webhooks.get(&chave) {
        Some(url) => axum::Json(json!({
            "webhookUrl": url,
            "chave": chave,
            "criacao": OffsetDateTime::now_utc().format(&Rfc3339).unwrap(),
        }))
        .into_response(),
        None => problem(
            StatusCode::NOT_FOUND,
            "WebhookNaoEncontrado",
            "Webhook não encontrado.",
            "Webhook não encontrado para a chave informada.",
        ),
    }
}

fn tlv(id: u8, value: &str) -> String {
    format!("{id:02}{:02}{value}", value.chars().count())
}

/// CRC16-CCITT-FALSE (polynomial 0x1021, initial 0xFFFF), as the BR Code's field 63.
pub fn crc16(data: &[u8]) -> u16 {
    let mut crc: u16 = 0xFFFF;
    for byte in data {
        crc ^= u16::from(*byte) << 8;
        for _ in 0..8 {
            crc = if crc & 0x8000 == 0 {
                crc << 1
            } else {
                (crc << 1) ^ 0x1021
            };
        }
    }
    crc
}

/// The charge's BR Code, by the Central Bank's manual (EMV MPM fields 00 to 63).
fn br_code(
    style: PayloadStyle,
    tamper: Option<Tamper>,
    txid: &str,
    amount: &str,
    location: &str,
) -> String {
    let key = if tamper == Some(Tamper::Key) {
        "someone-else@example.com"
    } else {
        KEY
    };
    let amount = if tamper == Some(Tamper::Amount) {
        "0.01"
    } else {
        amount
    };
    let txid = if tamper == Some(Tamper::Txid) {
        "bcpAnotherChargeEntirely000000000"
    } else {
        txid
    };
    let (account, reference) = match style {
        PayloadStyle::KeyAndTxid => (tlv(1, key), txid),
        PayloadStyle::Location => (tlv(25, location), "***"),
    };
    let mut payload = [
        tlv(0, "01"),
        tlv(1, "12"),
        tlv(26, &(tlv(0, "br.gov.bcb.pix") + &account)),
        tlv(52, "0000"),
        tlv(53, "986"),
        tlv(54, amount),
        tlv(58, "BR"),
        tlv(59, MERCHANT_NAME),
        tlv(60, MERCHANT_CITY),
        tlv(62, &tlv(5, reference)),
    ]
    .concat();
    payload.push_str("6304");
    let mut crc = crc16(payload.as_bytes());
    if tamper == Some(Tamper::Crc) {
        crc ^= 0x0101;
    }
    payload.push_str(&format!("{crc:04X}"));
    payload
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
