//! Native TLS (`[server.tls]`): the real binary with certificates made here by a test CA,
//! reached over loopback by rustls clients that pin the protocol version.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, DnType, IsCa, KeyPair};
use rustls::pki_types::{CertificateDer, ServerName};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;

use crate::support::AGENT_PROFILE;
use crate::support::binary::{BIN, Running};

/// A CA that signs every certificate of one test, so a client trusting it accepts each reload.
struct Pki {
    ca: CertifiedIssuer<'static, KeyPair>,
    dir: PathBuf,
}

/// A certificate for localhost and 127.0.0.1 with its key, as PEM, and the leaf's DER.
struct Leaf {
    cert_pem: String,
    key_pem: String,
    der: Vec<u8>,
}

impl Pki {
    fn new(name: &str) -> Self {
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params
            .distinguished_name
            .push(DnType::CommonName, "bcp-bridge test CA");
        let ca = CertifiedIssuer::self_signed(params, KeyPair::generate().unwrap()).unwrap();
        let dir = std::env::temp_dir().join(format!("bcp-tls-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Self { ca, dir }
    }

    fn leaf(&self) -> Leaf {
        let key = KeyPair::generate().unwrap();
        let params =
            CertificateParams::new(vec!["localhost".to_owned(), "127.0.0.1".to_owned()]).unwrap();
        let cert = params.signed_by(&key, &self.ca).unwrap();
        Leaf {
            cert_pem: cert.pem(),
            key_pem: key.serialize_pem(),
            der: cert.der().to_vec(),
        }
    }

    fn cert_path(&self) -> PathBuf {
        self.dir.join("cert.pem")
    }

    fn key_path(&self) -> PathBuf {
        self.dir.join("key.pem")
    }

    /// Writes `leaf` where the configuration points (each file replaced whole, as tools do).
    fn install(&self, leaf: &Leaf) {
        replace(&self.cert_path(), &leaf.cert_pem);
        replace(&self.key_path(), &leaf.key_pem);
    }

    fn config(&self, extra_server: &str) -> PathBuf {
        let path = self.dir.join("bridge.toml");
        let text = format!(
            "[server]\n{extra_server}\n[server.tls]\ncert = {:?}\nkey = {:?}\n\n[negotiation]\nenabled = false\n",
            self.cert_path().display().to_string(),
            self.key_path().display().to_string(),
        );
        std::fs::write(&path, text).unwrap();
        path
    }

    fn client(&self, versions: &[&'static rustls::SupportedProtocolVersion]) -> TlsConnector {
        let mut roots = rustls::RootCertStore::empty();
        roots
            .add(CertificateDer::from(self.ca.der().to_vec()))
            .unwrap();
        let config = rustls::ClientConfig::builder_with_provider(Arc::new(
            rustls::crypto::aws_lc_rs::default_provider(),
        ))
        .with_protocol_versions(versions)
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
        TlsConnector::from(Arc::new(config))
    }
}

impl Drop for Pki {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn replace(path: &Path, text: &str) {
    let staged = path.with_extension("new");
    std::fs::write(&staged, text).unwrap();
    std::fs::rename(&staged, path).unwrap();
}

struct Served {
    bridge: Running,
    endpoint: String,
    port: u16,
    log: PathBuf,
}

impl Served {
    fn start(pki: &Pki, extra_server: &str) -> Self {
        Self::start_with(pki, &pki.config(extra_server))
    }

    /// The bridge on a configuration file the test wrote itself.
    fn start_with(pki: &Pki, config: &Path) -> Self {
        let log = pki.dir.join("bridge.log");
        let mut bridge = Running::start_logging_to(
            &[
                "serve",
                "--config",
                config.to_str().unwrap(),
                "--listen",
                "127.0.0.1:0",
            ],
            &log,
        );
        let endpoint = bridge.endpoint();
        let port = endpoint
            .trim_start_matches("https://127.0.0.1:")
            .split('/')
            .next()
            .unwrap()
            .parse()
            .unwrap_or_else(|_| panic!("an https endpoint on loopback: {endpoint}"));
        Self {
            bridge,
            endpoint,
            port,
            log,
        }
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    fn hangup(&self) {
        let sent = Command::new("kill")
            .args(["-HUP", &self.bridge.child.id().to_string()])
            .status()
            .unwrap();
        assert!(sent.success());
    }

    /// The leaf certificate the bridge presents to a TLS 1.3 client now.
    async fn peer_leaf(&self, pki: &Pki) -> Vec<u8> {
        let tcp = TcpStream::connect(("127.0.0.1", self.port)).await.unwrap();
        let tls = pki
            .client(&[&rustls::version::TLS13])
            .connect(ServerName::try_from("localhost").unwrap(), tcp)
            .await
            .unwrap();
        tls.get_ref().1.peer_certificates().unwrap()[0].to_vec()
    }

    /// Waits until the bridge presents `leaf`.
    async fn until_serving(&self, pki: &Pki, leaf: &Leaf) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while self.peer_leaf(pki).await != leaf.der {
            assert!(
                Instant::now() < deadline,
                "the new certificate was never served; log:\n{}",
                self.log()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Waits until the log holds a line with every one of `parts`; returns that line.
    async fn until_logged(&self, parts: &[&str]) -> String {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(line) = self
                .log()
                .lines()
                .find(|line| parts.iter().all(|part| line.contains(part)))
            {
                return line.to_owned();
            }
            assert!(
                Instant::now() < deadline,
                "no log line with {parts:?}:\n{}",
                self.log()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

#[tokio::test]
async fn tls13_is_served_and_tls12_and_plain_http_are_refused() {
    let pki = Pki::new("versions");
    let leaf = pki.leaf();
    pki.install(&leaf);
    let served = Served::start(&pki, "");

    let tcp = TcpStream::connect(("127.0.0.1", served.port))
        .await
        .unwrap();
    let mut tls = pki
        .client(&[&rustls::version::TLS13])
        .connect(ServerName::try_from("localhost").unwrap(), tcp)
        .await
        .unwrap();
    assert_eq!(
        tls.get_ref().1.protocol_version(),
        Some(rustls::ProtocolVersion::TLSv1_3)
    );
    assert_eq!(tls.get_ref().1.alpn_protocol(), None);
    tls.write_all(b"GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n\r\n")
        .await
        .unwrap();
    let mut answer = Vec::new();
    let _ = tls.read_to_end(&mut answer).await;
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");

    let tcp = TcpStream::connect(("127.0.0.1", served.port))
        .await
        .unwrap();
    let refused = pki
        .client(&[&rustls::version::TLS12])
        .connect(ServerName::try_from("localhost").unwrap(), tcp)
        .await;
    let Err(error) = refused else {
        panic!("a TLS 1.2-only client is refused")
    };
    assert!(
        error.to_string().contains("ProtocolVersion") || error.to_string().contains("version"),
        "{error}"
    );

    // Plain HTTP on the TLS port gets no HTTP answer.
    let mut plain = TcpStream::connect(("127.0.0.1", served.port))
        .await
        .unwrap();
    plain
        .write_all(b"GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n")
        .await
        .unwrap();
    let mut bytes = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(5), plain.read_to_end(&mut bytes)).await;
    assert!(
        !bytes.starts_with(b"HTTP/"),
        "{:?}",
        String::from_utf8_lossy(&bytes)
    );
}

#[tokio::test]
async fn a_full_mcp_session_works_over_https() {
    let pki = Pki::new("mcp");
    pki.install(&pki.leaf());
    let served = Served::start(&pki, "");
    assert!(
        served.endpoint.starts_with("https://"),
        "{}",
        served.endpoint
    );
    let client = reqwest::Client::builder()
        .tls_certs_only([reqwest::Certificate::from_pem(pki.ca.pem().as_bytes()).unwrap()])
        .build()
        .unwrap();
    let post = |body: Value| {
        client
            .post(&served.endpoint)
            .header("accept", "application/json, text/event-stream")
            .json(&body)
            .send()
    };
    let initialized = post(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "tls-test", "version": "1"}}}))
        .await
        .unwrap();
    assert_eq!(initialized.status(), 200);
    let reply: Value = initialized.json().await.unwrap();
    assert!(reply["result"]["serverInfo"].is_object(), "{reply}");

    let searched = post(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "search_catalog", "arguments": {"meta": {"ucp-agent": {"profile": AGENT_PROFILE}}, "catalog": {"query": "shoes"}}}}))
        .await
        .unwrap();
    assert_eq!(searched.status(), 200);
    let reply: Value = searched.json().await.unwrap();
    assert_eq!(reply["id"], 2, "{reply}");
    let products = reply["result"]["structuredContent"]["products"]
        .as_array()
        .unwrap_or_else(|| panic!("products in {reply}"));
    assert!(!products.is_empty(), "{reply}");
}

#[tokio::test]
async fn sighup_serves_a_renewed_certificate_and_a_broken_one_keeps_the_old() {
    let pki = Pki::new("sighup");
    let first = pki.leaf();
    pki.install(&first);
    // No file watching: only the signal reloads here.
    let served = Served::start(&pki, "");
    assert_eq!(served.peer_leaf(&pki).await, first.der);
    let renewed = pki.leaf();
    pki.install(&renewed);
    served.hangup();
    served.until_serving(&pki, &renewed).await;
    served
        .until_logged(&["TLS certificate reloaded", "SIGHUP"])
        .await;

    // A damaged certificate file: logged by key, the renewed certificate stays in service.
    replace(
        &pki.cert_path(),
        "-----BEGIN CERTIFICATE-----\nnot base64 at all\n",
    );
    served.hangup();
    let line = served
        .until_logged(&["TLS certificate reload failed", "server.tls.cert"])
        .await;
    assert!(line.contains("ERROR"), "{line}");
    // A key from another certificate: refused the same way.
    replace(&pki.cert_path(), &renewed.cert_pem);
    replace(&pki.key_path(), &pki.leaf().key_pem);
    served.hangup();
    served
        .until_logged(&[
            "TLS certificate reload failed",
            "server.tls.key",
            "does not belong",
        ])
        .await;
    assert_eq!(served.peer_leaf(&pki).await, renewed.der);
    let mut bridge = served.bridge;
    assert!(bridge.child.try_wait().unwrap().is_none(), "still running");
}

#[tokio::test]
async fn a_renewed_certificate_is_picked_up_from_the_files_without_a_signal() {
    let pki = Pki::new("watch");
    pki.install(&pki.leaf());
    let config = pki.config("");
    // The same configuration with a fast watch interval.
    let text = std::fs::read_to_string(&config)
        .unwrap()
        .replace("[negotiation]", "watch_interval_ms = 100\n\n[negotiation]");
    std::fs::write(&config, text).unwrap();
    let served = Served::start_with(&pki, &config);
    let renewed = pki.leaf();
    pki.install(&renewed);
    served.until_serving(&pki, &renewed).await;
    served
        .until_logged(&["TLS certificate reloaded", "file change"])
        .await;
}

#[tokio::test]
async fn handshakes_have_the_header_deadline() {
    let pki = Pki::new("deadline");
    pki.install(&pki.leaf());
    let served = Served::start(&pki, "header_read_timeout_ms = 300");
    // A client that opens the connection and never says hello.
    let mut silent = TcpStream::connect(("127.0.0.1", served.port))
        .await
        .unwrap();
    // Without the deadline on the handshake it would be held until the 60 s idle timeout.
    let mut sink = Vec::new();
    let closed = tokio::time::timeout(Duration::from_secs(5), silent.read_to_end(&mut sink)).await;
    assert!(closed.is_ok(), "a silent TLS client is closed");
    // A client that stops half-way through its hello.
    let mut stalled = TcpStream::connect(("127.0.0.1", served.port))
        .await
        .unwrap();
    stalled
        .write_all(&[0x16, 0x03, 0x01, 0x02, 0x00, 0x01])
        .await
        .unwrap();
    let closed = tokio::time::timeout(Duration::from_secs(5), stalled.read_to_end(&mut sink)).await;
    assert!(closed.is_ok(), "a stalled handshake is closed");
    // And the bridge still serves.
    assert!(!served.peer_leaf(&pki).await.is_empty());
}

#[tokio::test]
async fn connections_over_the_limit_are_shed_over_tls_with_a_jsonrpc_answer() {
    let pki = Pki::new("shed");
    pki.install(&pki.leaf());
    let served = Served::start(&pki, "max_connections = 1");
    let connector = pki.client(&[&rustls::version::TLS13]);
    let tcp = TcpStream::connect(("127.0.0.1", served.port))
        .await
        .unwrap();
    let _held = connector
        .connect(ServerName::try_from("localhost").unwrap(), tcp)
        .await
        .unwrap();
    let tcp = TcpStream::connect(("127.0.0.1", served.port))
        .await
        .unwrap();
    let mut shed = connector
        .connect(ServerName::try_from("localhost").unwrap(), tcp)
        .await
        .unwrap();
    shed.write_all(b"GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n")
        .await
        .unwrap();
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(5), shed.read_to_end(&mut answer)).await;
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
    assert!(answer.contains("\"code\":-32000"), "{answer}");
}

/// `check` and `serve` name the key whose file is wrong, and exit 2.
#[test]
fn check_names_the_tls_key_of_each_broken_file() {
    let pki = Pki::new("check");
    let good = pki.leaf();
    let other = pki.leaf();
    type Case<'a> = (&'a str, Option<&'a str>, Option<&'a str>, &'a [&'a str]);
    let cases: [Case; 4] = [
        (
            "missing certificate",
            None,
            Some(&good.key_pem),
            &["server.tls.cert", "cannot read"],
        ),
        (
            "not PEM",
            Some("hello"),
            Some(&good.key_pem),
            &["server.tls.cert", "no PEM certificate"],
        ),
        (
            "no key in the key file",
            Some(&good.cert_pem),
            Some(&good.cert_pem),
            &["server.tls.key", "no PEM private key"],
        ),
        (
            "another certificate's key",
            Some(&good.cert_pem),
            Some(&other.key_pem),
            &["server.tls.key", "does not belong"],
        ),
    ];
    for (case, cert, key, expected) in cases {
        let _ = std::fs::remove_file(pki.cert_path());
        let _ = std::fs::remove_file(pki.key_path());
        if let Some(cert) = cert {
            std::fs::write(pki.cert_path(), cert).unwrap();
        }
        if let Some(key) = key {
            std::fs::write(pki.key_path(), key).unwrap();
        }
        let config = pki.config("");
        let config = config.to_str().unwrap();
        for args in [
            &["check", "--config", config][..],
            &["serve", "--config", config, "--listen", "127.0.0.1:0"][..],
        ] {
            let command = args[0];
            let output = Command::new(BIN).args(args).output().unwrap();
            let text = format!(
                "{}{}",
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            );
            assert_eq!(output.status.code(), Some(2), "{case} ({command}): {text}");
            for part in expected {
                assert!(text.contains(part), "{case} ({command}): {text}");
            }
            assert!(
                !text.contains("PRIVATE KEY-----\n"),
                "{case}: key material echoed"
            );
        }
    }
    std::fs::write(pki.cert_path(), &good.cert_pem).unwrap();
    std::fs::write(pki.key_path(), &good.key_pem).unwrap();
    let output = Command::new(BIN)
        .args(["check", "--config", pki.config("").to_str().unwrap()])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    assert!(
        String::from_utf8_lossy(&output.stdout).contains("https://"),
        "{output:?}"
    );
}

#[tokio::test]
async fn sigterm_over_tls_exits_within_the_grace_period_despite_hostile_connections() {
    let pki = Pki::new("sigterm");
    pki.install(&pki.leaf());
    let mut served = Served::start(
        &pki,
        "shutdown_grace_ms = 500\nheader_read_timeout_ms = 60000\nidle_timeout_ms = 60000",
    );
    // One client stalls its handshake, another holds half-sent headers inside TLS.
    let mut stalled = TcpStream::connect(("127.0.0.1", served.port))
        .await
        .unwrap();
    stalled.write_all(&[0x16, 0x03, 0x01]).await.unwrap();
    let tcp = TcpStream::connect(("127.0.0.1", served.port))
        .await
        .unwrap();
    let mut half = pki
        .client(&[&rustls::version::TLS13])
        .connect(ServerName::try_from("localhost").unwrap(), tcp)
        .await
        .unwrap();
    half.write_all(b"POST /bcp/mcp HTTP/1.1\r\nhost: 127.0.0.1\r\n")
        .await
        .unwrap();
    half.flush().await.unwrap();
    let sent = Command::new("kill")
        .args(["-TERM", &served.bridge.child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    // Without the grace period the bridge would wait for the 60 s header and idle timeouts:
    // exiting before the event-wait deadline (far below 60 s) is the grace period's doing.
    crate::support::wait::until("the bridge to exit after SIGTERM", || {
        served.bridge.child.try_wait().unwrap().is_some()
    })
    .await;
    let status = served.bridge.child.wait().unwrap();
    assert!(status.success(), "{status:?}");
}
