//! Issue 38: Pix inside the conversation over real HTTP. The bridge serves the sample store
//! with `[pix]` pointing at the PSP stand-in (API Pix over mutual TLS, a CA made per run), and
//! an agent on loopback whose BCP profile names its order webhook. The PSP settles by paying
//! the charge and POSTing its notification to the webhook the bridge registered at start-up.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::{get, post};
use serde_json::{Value, json};

use crate::support::TestBridge;
use crate::support::pix_psp::{Down, KEY, PixPsp};
use crate::support::values::{amount, codes};

const SANDAL: &str = "prod_chinelo_praia_azm_3334";
const BCP_VERSION: &str = "2026-07-28";

/// The agent: its BCP profile (`/profile`, naming `/hook` as its order webhook) and the hook.
pub struct Agent {
    pub profile: String,
    pub events: Arc<Mutex<Vec<Value>>>,
}

impl Agent {
    /// The order events the hook received for `order` (its handle).
    pub fn events_for(&self, order: &str) -> usize {
        self.events
            .lock()
            .unwrap()
            .iter()
            .filter(|event| event["id"] == order)
            .count()
    }
}

pub async fn agent() -> Agent {
    agent_with(&["catalog.search", "catalog.lookup", "cart", "checkout"]).await
}

/// An agent whose profile declares the BCP capabilities `names` (and the order capability,
/// naming its hook).
pub async fn agent_with(names: &[&str]) -> Agent {
    let events: Arc<Mutex<Vec<Value>>> = Arc::default();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let hook = format!("http://{addr}/hook");
    let mut capabilities = serde_json::Map::new();
    for name in names {
        capabilities.insert(
            format!("br.dev.bcp.shopping.{name}"),
            json!([{"version": BCP_VERSION}]),
        );
    }
    capabilities.insert(
        "br.dev.bcp.shopping.order".into(),
        json!([{"version": BCP_VERSION, "config": {"webhook_url": hook}}]),
    );
    let profile = json!({"ucp": {"version": BCP_VERSION, "capabilities": capabilities}});
    let app = Router::new()
        .route(
            "/profile",
            get(move || {
                let body = profile.to_string();
                async move { ([(header::CONTENT_TYPE, "application/json")], body).into_response() }
            }),
        )
        .route(
            "/hook",
            post(
                |State(events): State<Arc<Mutex<Vec<Value>>>>, body: Bytes| async move {
                    if let Ok(event) = serde_json::from_slice(&body) {
                        events.lock().unwrap().push(event);
                    }
                    r#"{"ucp":{"version":"2026-07-28"}}"#
                },
            ),
        )
        .with_state(events.clone());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    Agent {
        profile: format!("http://{addr}/profile"),
        events,
    }
}

/// `[pix]` at `psp` with `pix_lines` added to it, the agent's profile fetched on loopback,
/// order webhooks on; then `rest` (a `[store]`, a `[redis]`…).
pub fn config_with(psp: &PixPsp, pix_lines: &str, rest: &str) -> String {
    let key = crate::order_webhooks::key_file(false);
    format!(
        "{}{pix_lines}\n[negotiation]\nenabled = true\nallow_http_hosts = [\"127.0.0.1\"]\nallow_private_hosts = [\"127.0.0.1\"]\ntimeout_ms = 2000\n\
         [order_webhooks]\nenabled = true\nkey_file = {:?}\ninitial_backoff_ms = 50\nmax_backoff_secs = 2\ntimeout_ms = 2000\n{rest}\n",
        psp.pix_toml(),
        key.display().to_string()
    )
}

/// `get_checkout` of `id` as `agent`.
pub async fn get_checkout(bridge: &TestBridge, agent: &Agent, id: &str) -> Value {
    bridge
        .call("get_checkout", json!({"meta": meta(agent, None), "id": id}))
        .await
}

pub fn meta(agent: &Agent, key: Option<&str>) -> Value {
    match key {
        Some(key) => json!({"ucp-agent": {"profile": agent.profile}, "idempotency-key": key}),
        None => json!({"ucp-agent": {"profile": agent.profile}}),
    }
}

pub fn fresh() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// Waits (bounded) until `done` holds.
pub async fn until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while !done() {
        assert!(tokio::time::Instant::now() < deadline, "waited for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

pub fn reais(minor: i64) -> String {
    format!("{}.{:02}", minor / 100, minor % 100)
}

/// The txid of the charge a `complete_in_progress` answer shows.
pub fn txid_of(answer: &Value) -> String {
    answer["payment"]["instruments"][0]["credential"]["provider_payment_id"]
        .as_str()
        .unwrap_or_else(|| panic!("no Pix charge in {answer}"))
        .to_owned()
}

/// The `complete_checkout` arguments paying `id` with the Pix handler.
pub fn pix_completion(agent: &Agent, id: &str, key: &str) -> Value {
    json!({"meta": meta(agent, Some(key)), "id": id, "checkout": {"payment": {"instruments": [
        {"id": "instr_1", "handler_id": "pix", "type": "pix"}
    ]}}})
}

/// A bridge on the sample store with `[pix]` at a PSP stand-in of its own, and its agent.
struct PixRun {
    psp: PixPsp,
    bridge: TestBridge,
    agent: Agent,
}

/// A checkout completed with Pix: its id, the store's total and the answer with the charge.
struct Charged {
    id: String,
    total: i64,
    answer: Value,
    txid: String,
}

impl PixRun {
    async fn start() -> Self {
        Self::start_with("").await
    }

    /// With `pix_lines` added to `[pix]`.
    async fn start_with(pix_lines: &str) -> Self {
        let psp = PixPsp::start().await;
        let agent = agent().await;
        let bridge = TestBridge::start(&config_with(&psp, pix_lines, "")).await;
        // Registered with the PSP at start-up (`PUT /webhook/{chave}`).
        until("the webhook registration", || psp.webhook().is_some()).await;
        assert_eq!(
            psp.webhook().unwrap(),
            format!("{}/webhooks/pix", bridge.base_url)
        );
        Self { psp, bridge, agent }
    }

    /// A checkout on the sample store, ready to complete.
    async fn ready(&self) -> Value {
        let created = self
            .bridge
            .call(
                "create_checkout",
                json!({"meta": meta(&self.agent, Some(&fresh())), "checkout": {
                    "line_items": [{"item": {"id": SANDAL}, "quantity": 2}],
                    "buyer": {"email": "ana@example.com", "first_name": "Ana"},
                    "fulfillment": {"methods": [{"type": "shipping", "destinations": [{
                        "street_address": "Rua Augusta 100", "address_locality": "São Paulo",
                        "address_region": "SP", "postal_code": "01305-000", "address_country": "BR"
                    }]}]}
                }}),
            )
            .await;
        let id = created["id"].as_str().unwrap().to_owned();
        let ready = self
            .bridge
            .call(
                "update_checkout",
                json!({"meta": meta(&self.agent, None), "id": id, "checkout": {"fulfillment": {"methods": [{"id": "ful_1", "groups": [{"id": "grp_1", "selected_option_id": "sedex"}]}]}}}),
            )
            .await;
        assert_eq!(ready["status"], "ready_for_complete", "{ready}");
        ready
    }

    async fn complete(&self, id: &str) -> Value {
        self.bridge
            .call(
                "complete_checkout",
                pix_completion(&self.agent, id, &fresh()),
            )
            .await
    }

    /// A ready checkout completed with Pix: the charge made and shown.
    async fn charged(&self) -> Charged {
        let ready = self.ready().await;
        let id = ready["id"].as_str().unwrap().to_owned();
        let total = amount(&ready, "total").unwrap();
        let answer = self.complete(&id).await;
        let txid = txid_of(&answer);
        Charged {
            id,
            total,
            answer,
            txid,
        }
    }

    async fn get(&self, id: &str) -> Value {
        get_checkout(&self.bridge, &self.agent, id).await
    }
}

#[tokio::test]
async fn issue_38_pix_on_the_sample_store_completes_once_the_psp_settles() {
    let run = PixRun::start().await;
    let (psp, bridge, agent) = (&run.psp, &run.bridge, &run.agent);
    // Declared in the BCP profile under its own name.
    let profile: Value = bridge.get("/.well-known/bcp").await.json().await.unwrap();
    assert_eq!(
        profile["ucp"]["payment_handlers"]["br.dev.bcp.pix"][0]["id"], "pix",
        "{profile}"
    );
    let ready = run.ready().await;
    let id = ready["id"].as_str().unwrap();
    assert_eq!(
        ready["ucp"]["payment_handlers"]["br.dev.bcp.pix"][0]["available_instruments"][0]["type"],
        "pix",
        "{ready}"
    );
    let total = amount(&ready, "total").unwrap();
    let answer = run.complete(id).await;
    assert_eq!(answer["status"], "complete_in_progress", "{answer}");
    let instrument = &answer["payment"]["instruments"][0];
    assert_eq!(instrument["type"], "pix");
    let credential = &instrument["credential"];
    assert_eq!(credential["type"], "pix_charge");
    assert_eq!(credential["binding"]["checkout_id"], id);
    let txid = txid_of(&answer);
    // A valid BR Code for the merchant's key, the store's total and this charge.
    let code = bcp_bridge::pix::brcode::parse(credential["copia_e_cola"].as_str().unwrap())
        .expect("a BR Code with a correct CRC16");
    assert_eq!(code.key.as_deref(), Some(KEY));
    assert_eq!(code.amount.as_deref(), Some(reais(total).as_str()));
    assert_eq!(code.txid.as_deref(), Some(txid.as_str()));
    let expires = time::OffsetDateTime::parse(
        credential["expires_at"].as_str().unwrap(),
        &time::format_description::well_known::Rfc3339,
    )
    .unwrap();
    assert!(expires > time::OffsetDateTime::now_utc());
    use base64::Engine as _;
    let png = base64::engine::general_purpose::STANDARD
        .decode(credential["qr_code_base64"].as_str().unwrap())
        .unwrap();
    assert_eq!(&png[..4], b"\x89PNG");
    // A repeated complete answers the same charge, never a second.
    let again = run.complete(id).await;
    assert_eq!(txid_of(&again), txid);
    assert_eq!(psp.calls("PUT /cob"), 1);
    // The payer pays; the PSP notifies; the bridge reads the charge back and settles.
    psp.pay(&txid, &reais(total)).await;
    assert_eq!(psp.notifications().last().unwrap().status, Some(200));
    let completed = run.get(id).await;
    assert_eq!(completed["status"], "completed", "{completed}");
    assert!(completed["payment"].get("instruments").is_none());
    let order_id = completed["order"]["id"].as_str().unwrap().to_owned();
    // The agent's webhook hears the order.
    until("the order event", || agent.events_for(&order_id) > 0).await;
    let order = bridge
        .call(
            "get_order",
            json!({"meta": meta(agent, None), "id": order_id}),
        )
        .await;
    assert_eq!(order["id"], order_id.as_str(), "{order}");
    assert_eq!(order["checkout_id"], id);
    // The PSP repeats its notification: applied once, one event.
    let repeated = psp.notifications().last().unwrap().body.clone();
    assert_eq!(psp.notify(repeated).await, Some(200));
    let events = agent.events.lock().unwrap().len();
    assert_eq!(events, 1);
}

/// Issue 38 item 2, "a QR image is rendered from the payload where asked": BCP leaves
/// `qr_code_base64` optional and neither the agent nor the handler's config asks for it, so
/// the merchant decides (`[pix] qr_code`, default true); off, the answer carries the BR Code
/// alone.
#[tokio::test]
async fn issue_38_qr_code_false_leaves_the_image_out_of_the_charge() {
    let run = PixRun::start_with("qr_code = false\n").await;
    let charged = run.charged().await;
    let credential = &charged.answer["payment"]["instruments"][0]["credential"];
    assert!(
        credential.get("qr_code_base64").is_none(),
        "{}",
        charged.answer
    );
    let code = bcp_bridge::pix::brcode::parse(credential["copia_e_cola"].as_str().unwrap())
        .expect("the BR Code is still there");
    assert_eq!(code.txid.as_deref(), Some(charged.txid.as_str()));
    // Re-read, the same: the image is not made on reads either.
    let pending = run.get(&charged.id).await;
    assert!(
        pending["payment"]["instruments"][0]["credential"]
            .get("qr_code_base64")
            .is_none(),
        "{pending}"
    );
}

#[tokio::test]
async fn issue_38_a_forged_notification_settles_nothing_and_says_nothing() {
    let run = PixRun::start().await;
    let charged = run.charged().await;
    let client = reqwest::Client::new();
    let url = format!("{}/webhooks/pix/pix", run.bridge.base_url);
    let forge = |txid: &str| {
        json!({"pix": [{"endToEndId": "E12345678202612071200forged00001", "txid": txid,
                        "valor": reais(charged.total), "chave": KEY, "horario": "2026-12-07T12:00:00Z"}]})
    };
    // The real txid, not paid: the PSP says ATIVA, so nothing is settled.
    let pending = client
        .post(&url)
        .json(&forge(&charged.txid))
        .send()
        .await
        .unwrap();
    let pending = (pending.status().as_u16(), pending.text().await.unwrap());
    // A txid the bridge never made: the same answer, so nothing is learned from it.
    let unknown = client
        .post(&url)
        .json(&forge("bcp0000000000000000000000000000000"))
        .send()
        .await
        .unwrap();
    let unknown = (unknown.status().as_u16(), unknown.text().await.unwrap());
    assert_eq!(pending, (400, String::new()));
    assert_eq!(unknown, pending);
    let garbage = client.post(&url).body("{not json").send().await.unwrap();
    assert_eq!(garbage.status().as_u16(), 400);
    let still = run.get(&charged.id).await;
    assert_eq!(still["status"], "complete_in_progress", "{still}");
    assert!(run.agent.events.lock().unwrap().is_empty());
}

#[tokio::test]
async fn issue_38_an_amount_mismatch_is_payment_failed_and_never_paid() {
    let run = PixRun::start().await;
    let charged = run.charged().await;
    run.psp
        .pay(&charged.txid, &reais(charged.total - 100))
        .await;
    let after = run.get(&charged.id).await;
    assert_ne!(after["status"], "completed", "{after}");
    assert_eq!(codes(&after)[0], "payment_failed", "{after}");
    assert!(after.get("order").is_none());
    assert!(run.agent.events.lock().unwrap().is_empty());
}

#[tokio::test]
async fn issue_38_an_expired_charge_cancels_the_order_and_answers_payment_expired() {
    let run = PixRun::start().await;
    let charged = run.charged().await;
    run.psp.expire(&charged.txid);
    let expired = run.get(&charged.id).await;
    assert_eq!(expired["status"], "canceled", "{expired}");
    assert_eq!(codes(&expired)[0], "payment_expired");
    // A platform must not present a charge after its expiry: none is shown.
    assert!(expired["payment"].get("instruments").is_none());
    // Immutable now.
    let again = run.complete(&charged.id).await;
    assert_ne!(again["status"], "complete_in_progress", "{again}");
}

#[tokio::test]
async fn issue_38_a_psp_down_at_complete_is_processor_unavailable_and_leaves_no_order() {
    let run = PixRun::start().await;
    let ready = run.ready().await;
    let id = ready["id"].as_str().unwrap();
    run.psp.go_down(Down::Refusing).await;
    let answer = run.complete(id).await;
    assert_eq!(codes(&answer)[0], "processor_unavailable", "{answer}");
    assert_eq!(answer["status"], "canceled", "{answer}");
    assert!(answer.get("order").is_none());
    assert!(answer["payment"].get("instruments").is_none());
    run.psp.come_back().await;
}

#[tokio::test]
async fn issue_38_ucp_never_offers_pix() {
    let psp = PixPsp::start().await;
    let toml = format!("{}\n[server]\nprotocol = \"ucp\"\n", psp.pix_toml());
    let bridge = TestBridge::start(&toml).await;
    let profile: Value = bridge.get("/.well-known/ucp").await.json().await.unwrap();
    assert!(
        profile["ucp"]["payment_handlers"]
            .get("br.dev.bcp.pix")
            .is_none(),
        "{profile}"
    );
}

#[tokio::test]
async fn issue_38_check_says_what_woocommerce_needs_for_pix() {
    let psp = PixPsp::start().await;
    let toml = format!(
        "{}\n[store]\nplatform = \"woocommerce\"\nbase_url = \"https://shop.example\"\ncurrency = \"BRL\"\n",
        psp.pix_toml()
    );
    let problems = match bcp_bridge::startup::BridgeConfig::from_toml(&toml) {
        Err(bcp_bridge::startup::ConfigError::Invalid(problems)) => problems,
        other => panic!("expected problems, got {other:?}"),
    };
    let keys: Vec<&str> = problems
        .iter()
        .map(|problem| problem.key.as_str())
        .collect();
    assert!(keys.contains(&"pix.store_gateway"), "{keys:?}");
    assert!(keys.contains(&"store.consumer_key"), "{keys:?}");
    // With both, nothing is missing.
    let complete = format!(
        "{}store_gateway = \"bacs\"\n[store]\nplatform = \"woocommerce\"\nbase_url = \"https://shop.example\"\ncurrency = \"BRL\"\nconsumer_key = \"ck_1\"\nconsumer_secret = \"cs_1\"\n",
        psp.pix_toml()
    );
    bcp_bridge::startup::BridgeConfig::from_toml(&complete).unwrap();
}
