//! Issue 38 (PSP side): the bridge's API Pix client against the PSP stand-in over real mutual
//! TLS: the token cached and refreshed once on 401, `cob` created, read and created again
//! without a second charge, a PSP down or refusing, a client without the PSP's certificate,
//! payloads that would pay someone else refused, and nothing secret in a trace-level log.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use bcp_bridge::model::fiscal::{TaxpayerId, TaxpayerKind};
use bcp_bridge::money::Money;
use bcp_bridge::pix::ApiPix;
use bcp_bridge::pix::port::{ChargeRequest, ChargeStatus, Debtor, PixError, PixProvider};
use bcp_bridge::pix::settings::PixConfig;
use bcp_bridge::pix::txid;
use bcp_bridge::startup::BridgeConfig;

use crate::support::pix_psp::{self, CLIENT_ID, CLIENT_SECRET, Down, KEY, PixPsp, Tamper};

const BUYER_CPF: &str = "52998224725";
const BUYER_NAME: &str = "Genoveva Quixabeira";

pub fn pix_config(toml: &str) -> PixConfig {
    BridgeConfig::from_toml(toml)
        .expect("valid [pix]")
        .pix
        .expect("[pix] set")
}

fn client(psp: &PixPsp) -> ApiPix {
    ApiPix::new(&pix_config(&psp.pix_toml()), Duration::from_secs(10)).expect("client builds")
}

fn brl(minor: i64) -> Money {
    Money::new(minor, iso_currency::Currency::BRL)
}

fn request(order: &str, minor: i64) -> ChargeRequest {
    ChargeRequest {
        txid: txid::derive(b"test txid secret 0123", "sample", order),
        amount: brl(minor),
        expires_secs: 1800,
        debtor: Some(Debtor {
            document: TaxpayerId {
                kind: TaxpayerKind::Cpf,
                value: BUYER_CPF.to_owned(),
            },
            name: BUYER_NAME.to_owned(),
        }),
        note: Some("Loja Exemplo, pedido 1042".to_owned()),
    }
}

#[tokio::test]
async fn issue_38_a_charge_is_created_and_read_back_over_mutual_tls() {
    let psp = PixPsp::start().await;
    let client = client(&psp);
    let asked = request("1042", 12345);
    let created = client.create_charge(&asked).await.unwrap();
    assert_eq!(created.txid, asked.txid);
    assert_eq!(created.status, ChargeStatus::Active);
    assert_eq!(created.amount, brl(12345));
    assert_eq!(created.key, KEY);
    assert!(created.copia_e_cola.starts_with("000201"), "{created:?}");
    assert!(created.location.is_some());
    assert_eq!(
        created.expires_at - created.created_at,
        time::Duration::seconds(1800)
    );
    // What the PSP was told: the amount as a decimal string, the buyer's document and name.
    let sent = &psp.cob_bodies()[0];
    assert_eq!(sent["valor"]["original"], "123.45", "{sent}");
    assert_eq!(sent["calendario"]["expiracao"], 1800, "{sent}");
    assert_eq!(sent["devedor"]["cpf"], BUYER_CPF, "{sent}");
    assert_eq!(sent["devedor"]["nome"], BUYER_NAME, "{sent}");
    assert_eq!(sent["chave"], KEY, "{sent}");

    let read = client.read_charge(&asked.txid).await.unwrap();
    assert_eq!(read.copia_e_cola, created.copia_e_cola);
    // One token for every call while it is fresh.
    assert_eq!(psp.calls("POST /token"), 1);
    assert_eq!(psp.calls("PUT /cob"), 1);
    assert_eq!(psp.calls("GET /cob"), 1);

    let unknown = client
        .read_charge(&txid::derive(b"test txid secret 0123", "sample", "9"))
        .await;
    assert!(matches!(unknown, Err(PixError::NotFound(_))), "{unknown:?}");
}

#[tokio::test]
async fn issue_38_a_repeated_create_returns_the_same_charge_even_once_paid() {
    let psp = PixPsp::start().await;
    let client = client(&psp);
    let asked = request("1043", 5000);
    let first = client.create_charge(&asked).await.unwrap();
    let again = client.create_charge(&asked).await.unwrap();
    assert_eq!(again.copia_e_cola, first.copia_e_cola);
    assert_eq!(again.location, first.location);

    psp.pay(&asked.txid, "50.00").await;
    // API Pix refuses to alter a charge no longer ATIVA: the client reads back what the PSP
    // holds, the paid charge, rather than failing or creating another.
    let after_payment = client.create_charge(&asked).await.unwrap();
    assert_eq!(after_payment.status, ChargeStatus::Completed);
    assert_eq!(after_payment.received.len(), 1);
    assert_eq!(after_payment.received[0].amount, brl(5000));
    assert_eq!(after_payment.received[0].end_to_end_id.len(), 32);
    assert_eq!(psp.calls("PUT /cob"), 3);
    assert_eq!(psp.calls("GET /cob"), 1);
}

#[tokio::test]
async fn issue_38_an_expired_charge_reads_as_removed_with_its_expiry_passed() {
    let psp = PixPsp::start().await;
    let client = client(&psp);
    let asked = request("1044", 990);
    client.create_charge(&asked).await.unwrap();
    psp.expire(&asked.txid);
    let read = client.read_charge(&asked.txid).await.unwrap();
    assert_eq!(read.status, ChargeStatus::RemovedByPsp);
    assert!(read.expires_at < time::OffsetDateTime::now_utc());
}

#[tokio::test]
async fn the_token_is_fetched_again_once_when_the_psp_answers_401() {
    let psp = PixPsp::start().await;
    let client = client(&psp);
    let asked = request("1045", 100);
    client.create_charge(&asked).await.unwrap();
    psp.revoke_tokens();
    client.read_charge(&asked.txid).await.unwrap();
    assert_eq!(psp.calls("POST /token"), 2);
    // The refused call and its one repetition.
    assert_eq!(psp.calls("GET /cob"), 2);
    client.read_charge(&asked.txid).await.unwrap();
    assert_eq!(psp.calls("POST /token"), 2, "the new token is reused");
}

#[tokio::test]
async fn a_token_close_to_expiry_is_replaced_before_use() {
    let psp = PixPsp::start().await;
    // Four seconds of life, a quarter of it as margin: usable for three.
    psp.set_token_life(Duration::from_secs(4));
    let client = client(&psp);
    client.check_credentials().await.unwrap();
    client.check_credentials().await.unwrap();
    assert_eq!(psp.calls("POST /token"), 1);
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while psp.calls("POST /token") < 2 {
        assert!(std::time::Instant::now() < deadline, "never refreshed");
        tokio::time::sleep(Duration::from_millis(200)).await;
        client.check_credentials().await.unwrap();
    }
    // Refreshed before the PSP would have refused it: no 401 was needed.
    assert_eq!(psp.calls("GET /cob"), 0);
}

#[tokio::test]
async fn a_psp_down_is_unavailable_and_nothing_is_created() {
    let psp = PixPsp::start().await;
    let client = client(&psp);
    psp.go_down(Down::Unavailable).await;
    let answered = client.create_charge(&request("1046", 100)).await;
    assert!(
        matches!(answered, Err(PixError::Unavailable(_))),
        "{answered:?}"
    );
    psp.come_back().await;
    client.check_credentials().await.unwrap();

    psp.go_down(Down::Refusing).await;
    let refused = client.read_charge(&request("1046", 100).txid).await;
    match refused {
        Err(PixError::Unavailable(reason)) => assert!(!reason.contains("127.0.0.1"), "{reason}"),
        other => panic!("expected Unavailable, got {other:?}"),
    }
    psp.come_back().await;
    let created = client.create_charge(&request("1046", 100)).await.unwrap();
    assert_eq!(created.status, ChargeStatus::Active);
}

#[tokio::test]
async fn wrong_client_credentials_are_refused_without_echoing_them() {
    let psp = PixPsp::start().await;
    let toml = psp
        .pix_toml()
        .replace(CLIENT_SECRET, "a-wrong-secret-guessed-0001");
    let client = ApiPix::new(&pix_config(&toml), Duration::from_secs(10)).unwrap();
    match client.create_charge(&request("1047", 100)).await {
        Err(PixError::Refused(reason)) => {
            assert!(reason.contains("pix.client_secret"), "{reason}");
            assert!(reason.contains("invalid_client"), "{reason}");
            assert!(!reason.contains("a-wrong-secret"), "{reason}");
            assert!(!reason.contains(CLIENT_ID), "{reason}");
        }
        other => panic!("expected Refused, got {other:?}"),
    }
    assert_eq!(psp.calls("PUT /cob"), 0);
}

#[tokio::test]
async fn a_client_without_the_psps_certificate_gets_nothing() {
    let psp = PixPsp::start().await;
    let body = "grant_type=client_credentials";
    // No client certificate, then one from a CA the PSP does not trust.
    for identity in [
        None,
        Some((
            psp.pki.stranger_cert.as_path(),
            psp.pki.stranger_key.as_path(),
        )),
    ] {
        let answered = pix_psp::client(&psp, identity)
            .post(&psp.token_url)
            .basic_auth(CLIENT_ID, Some(CLIENT_SECRET))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(body)
            .send()
            .await;
        assert!(answered.is_err(), "{answered:?}");
    }
    assert_eq!(psp.calls("POST /token"), 0);
    // The bridge configured with the stranger's identity: no answer from the PSP at all.
    let toml = psp
        .pix_toml()
        .replace(
            &psp.pki.client_cert.display().to_string(),
            &psp.pki.stranger_cert.display().to_string(),
        )
        .replace(
            &psp.pki.client_key.display().to_string(),
            &psp.pki.stranger_key.display().to_string(),
        );
    let client = ApiPix::new(&pix_config(&toml), Duration::from_secs(10)).unwrap();
    let answered = client.check_credentials().await;
    assert!(
        matches!(answered, Err(PixError::Unavailable(_))),
        "{answered:?}"
    );
    // The PSP's own identity proves the stand-in answers a trusted client.
    let trusted = pix_psp::client(
        &psp,
        Some((psp.pki.client_cert.as_path(), psp.pki.client_key.as_path())),
    )
    .post(&psp.token_url)
    .basic_auth(CLIENT_ID, Some(CLIENT_SECRET))
    .body(body)
    .send()
    .await
    .unwrap();
    assert_eq!(trusted.status(), 200);
}

#[tokio::test]
async fn issue_38_a_payload_that_pays_anything_else_is_refused() {
    let psp = PixPsp::start().await;
    let client = client(&psp);
    for (order, tamper) in [
        ("2001", Tamper::Crc),
        ("2002", Tamper::Amount),
        ("2003", Tamper::Key),
        ("2004", Tamper::Txid),
    ] {
        psp.tamper(Some(tamper));
        let answered = client.create_charge(&request(order, 4200)).await;
        assert!(
            matches!(&answered, Err(PixError::Malformed(reason)) if reason.contains("pixCopiaECola")),
            "{tamper:?}: {answered:?}"
        );
    }
}

#[tokio::test]
async fn the_webhook_is_registered_and_read_back_for_the_key() {
    let psp = PixPsp::start().await;
    let client = client(&psp);
    assert_eq!(client.webhook().await.unwrap(), None);
    client
        .register_webhook("http://127.0.0.1:9/pix-webhook")
        .await
        .unwrap();
    assert_eq!(
        psp.webhook().as_deref(),
        Some("http://127.0.0.1:9/pix-webhook")
    );
    assert_eq!(
        client.webhook().await.unwrap().as_deref(),
        Some("http://127.0.0.1:9/pix-webhook")
    );
}

/// Everything one thread logs at TRACE, its runtime's tasks (reqwest's, hyper's) included.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn issue_38_item_4_no_credential_token_or_document_in_a_trace_log() {
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .finish();
    let tokens = std::thread::spawn(move || {
        let _guard = tracing::subscriber::set_default(subscriber);
        // One thread runs every task, so the thread's subscriber sees every event.
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let psp = PixPsp::start().await;
            let client = client(&psp);
            let asked = request("3001", 7777);
            client.create_charge(&asked).await.unwrap();
            psp.revoke_tokens();
            client.read_charge(&asked.txid).await.unwrap();
            client
                .register_webhook("http://127.0.0.1:9/w")
                .await
                .unwrap();
            let wrong = psp.pix_toml().replace(CLIENT_SECRET, "wrong-secret-zz9");
            let refused = ApiPix::new(&pix_config(&wrong), Duration::from_secs(10)).unwrap();
            assert!(refused.check_credentials().await.is_err());
            psp.calls("POST /token")
        })
    })
    .join()
    .unwrap();
    assert_eq!(tokens, 3);
    let log = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
    assert!(log.contains("API Pix call"), "nothing captured:\n{log}");
    let basic = base64_credentials();
    for secret in [
        CLIENT_SECRET,
        CLIENT_ID,
        "wrong-secret-zz9",
        "psp-token-",
        basic.as_str(),
        BUYER_CPF,
        BUYER_NAME,
        "Genoveva",
    ] {
        assert!(!log.contains(secret), "{secret} in the log:\n{log}");
    }
}

fn base64_credentials() -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(format!("{CLIENT_ID}:{CLIENT_SECRET}"))
}
