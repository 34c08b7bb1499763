//! Order events pushed to the agent's webhook (order.md "Events"), over real HTTP on
//! loopback: an agent's profile host declares `config.webhook_url` for its order capability,
//! and a receiver standing in for the agent's webhook verifies each event as a platform
//! would, written here from the spec (RFC 9421, RFC 9530) with the public key read from the
//! bridge's own profile. Requirement ids are those of requirements/order.json (ORD-*) and the
//! spec's register (SIG-*).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::signature::{
    ECDSA_P256_SHA256_FIXED, ECDSA_P256_SHA256_FIXED_SIGNING, ED25519, EcdsaKeyPair,
    Ed25519KeyPair, UnparsedPublicKey,
};
use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri, header};
use axum::response::IntoResponse;
use axum::routing::{get, post};
use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use bcp_bridge::startup::BridgeConfig;
use serde_json::{Value, json};

use crate::support::TestBridge;

const VERSION: &str = "2026-08-25";

/// One POST the receiver took.
#[derive(Clone, Debug)]
pub(crate) struct Received {
    path: String,
    pub(crate) headers: HeaderMap,
    pub(crate) body: Bytes,
}

#[derive(Clone, Default)]
pub(crate) struct Hook {
    received: Arc<Mutex<Vec<Received>>>,
    /// Answers 503 (Retry-After: `retry_after_secs`, 1 if unset) this many times before
    /// answering 200.
    failures: Arc<Mutex<usize>>,
    pub(crate) retry_after_secs: Arc<Mutex<Option<u64>>>,
    /// The webhook URL each profile declares, by profile path.
    pub(crate) webhook: Arc<Mutex<String>>,
}

impl Hook {
    pub(crate) fn received(&self) -> Vec<Received> {
        self.received.lock().unwrap().clone()
    }
}

pub(crate) fn agent_profile(webhook_url: Option<&str>) -> Value {
    let mut capabilities = serde_json::Map::new();
    for name in [
        "catalog.search",
        "catalog.lookup",
        "cart",
        "checkout",
        "order",
    ] {
        capabilities.insert(
            format!("dev.ucp.shopping.{name}"),
            json!([{"version": VERSION}]),
        );
    }
    if let Some(url) = webhook_url {
        // order.md "Webhook URL Configuration": the platform's order capability config.
        capabilities.insert(
            "dev.ucp.shopping.order".into(),
            json!([{"version": VERSION, "config": {"webhook_url": url}}]),
        );
    }
    json!({"ucp": {"version": VERSION, "capabilities": capabilities}})
}

/// The agent: its profiles (`/with-hook`, `/without-hook`, `/private-hook`) and its webhook
/// (`POST /hook`), on one loopback port.
pub(crate) async fn agent(failures: usize) -> (String, Hook) {
    let hook = Hook::default();
    *hook.failures.lock().unwrap() = failures;
    let profile = |body: Value| {
        (
            [(header::CONTENT_TYPE, "application/json")],
            body.to_string(),
        )
            .into_response()
    };
    let app = Router::new()
        .route(
            "/with-hook",
            get(move |State(hook): State<Hook>| async move {
                let url = hook.webhook.lock().unwrap().clone();
                profile(agent_profile(Some(&url)))
            }),
        )
        .route(
            "/without-hook",
            get(move || async move { profile(agent_profile(None)) }),
        )
        .route(
            // `localhost` may be fetched over http but is not allowed to be private: the
            // webhook it names resolves to loopback and must never be contacted.
            "/private-hook",
            get(move |State(hook): State<Hook>| async move {
                let url = hook
                    .webhook
                    .lock()
                    .unwrap()
                    .replace("127.0.0.1", "localhost");
                profile(agent_profile(Some(&url)))
            }),
        )
        .route(
            "/hook",
            post(
                |State(hook): State<Hook>, uri: Uri, headers: HeaderMap, body: Bytes| async move {
                    hook.received.lock().unwrap().push(Received {
                        path: uri.path().to_owned(),
                        headers,
                        body,
                    });
                    let mut failures = hook.failures.lock().unwrap();
                    if *failures > 0 {
                        *failures -= 1;
                        let after = hook.retry_after_secs.lock().unwrap().unwrap_or(1);
                        return (
                            StatusCode::SERVICE_UNAVAILABLE,
                            [(header::RETRY_AFTER, after.to_string())],
                        )
                            .into_response();
                    }
                    (StatusCode::OK, r#"{"ucp":{"version":"2026-08-25"}}"#).into_response()
                },
            ),
        )
        .with_state(hook.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    *hook.webhook.lock().unwrap() = format!("http://{addr}/hook");
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (format!("http://{addr}"), hook)
}

fn pem(der: &[u8]) -> String {
    let lines: Vec<String> = STANDARD
        .encode(der)
        .as_bytes()
        .chunks(64)
        .map(|chunk| String::from_utf8(chunk.to_vec()).unwrap())
        .collect();
    format!(
        "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n",
        lines.join("\n")
    )
}

/// A fresh PKCS#8 PEM key file (ES256, or Ed25519).
pub(crate) fn key_file(ed25519: bool) -> std::path::PathBuf {
    let rng = SystemRandom::new();
    let der = if ed25519 {
        Ed25519KeyPair::generate_pkcs8(&rng)
            .unwrap()
            .as_ref()
            .to_vec()
    } else {
        EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng)
            .unwrap()
            .as_ref()
            .to_vec()
    };
    let path = std::env::temp_dir().join(format!("bcp-webhook-{}.pem", uuid::Uuid::new_v4()));
    std::fs::write(&path, pem(&der)).unwrap();
    path
}

pub(crate) fn config(key: &std::path::Path, extra: &str) -> String {
    format!(
        "[server]\nprotocol = \"ucp\"\n\
         [negotiation]\nenabled = true\nallow_http_hosts = [\"127.0.0.1\", \"localhost\"]\nallow_private_hosts = [\"127.0.0.1\"]\ntimeout_ms = 2000\n\
         [order_webhooks]\nenabled = true\nkey_file = {:?}\ninitial_backoff_ms = 50\nmax_backoff_secs = 2\ntimeout_ms = 2000\n{extra}",
        key.display().to_string()
    )
}

/// A checkout placed through the bridge by the agent at `profile`: the order id.
pub(crate) async fn place_order(bridge: &TestBridge, profile: &str) -> String {
    place_order_through(
        async |tool, arguments| bridge.call(tool, arguments).await,
        profile,
    )
    .await
}

/// `place_order` through any bridge: `call` makes a tool call and answers its result.
pub(crate) async fn place_order_through(
    call: impl AsyncFn(&str, Value) -> Value,
    profile: &str,
) -> String {
    let meta = |key: Option<&str>| match key {
        Some(key) => json!({"ucp-agent": {"profile": profile}, "idempotency-key": key}),
        None => json!({"ucp-agent": {"profile": profile}}),
    };
    let key = uuid::Uuid::new_v4().to_string();
    let created = call(
        "create_checkout",
        json!({"meta": meta(Some(&key)), "checkout": {
            "line_items": [{"item": {"id": "prod_chinelo_praia_azm_3334"}, "quantity": 1}],
            "buyer": {"email": "ana@example.com", "first_name": "Ana"},
            "fulfillment": {"methods": [{"type": "shipping", "destinations": [{
                "type": "shipping_address", "street_address": "Rua Augusta 100",
                "address_locality": "São Paulo", "address_region": "SP",
                "postal_code": "01305-000", "address_country": "BR"
            }]}]}
        }}),
    )
    .await;
    let id = created["id"].as_str().unwrap().to_owned();
    let ready = call(
            "update_checkout",
            json!({"meta": meta(None), "id": id, "checkout": {"fulfillment": {"methods": [{"id": "ful_1", "groups": [{"id": "grp_1", "selected_option_id": "sedex"}]}]}}}),
        )
        .await;
    assert_eq!(ready["status"], "ready_for_complete", "{ready}");
    let key = uuid::Uuid::new_v4().to_string();
    let completed = call(
            "complete_checkout",
            json!({"meta": meta(Some(&key)), "id": id, "checkout": {"payment": {"instruments": [{"id": "i1", "handler_id": "sample_test_approve", "type": "card"}]}}}),
        )
        .await;
    assert_eq!(completed["status"], "completed", "{completed}");
    completed["order"]["id"].as_str().unwrap().to_owned()
}

/// A checkout an agent handed off to Shopify's page, on a bridge that reads Shopify's order
/// webhooks (signed with `secret`) and pushes order events to that agent's hook.
pub(crate) struct ShopifyHandOff {
    pub bridge: TestBridge,
    pub hook: Hook,
    /// The bridge's signing key file (removed on drop).
    pub key: std::path::PathBuf,
    /// The checkout id, as the bridge answered it.
    pub id: String,
    /// The `complete_checkout` answer (`requires_escalation`).
    pub handed: Value,
    profile: String,
    _standin: crate::support::shopify_standin::Standin,
}

impl ShopifyHandOff {
    /// `[order_webhooks]` keys beyond the signing key go in `extra`.
    pub async fn start(secret: &str, extra: &str) -> Self {
        use crate::support::shopify_orders::mug_shipped_express_to_new_york;
        let (agent_url, hook) = agent(0).await;
        let key = key_file(false);
        let standin = crate::support::shopify_standin::Standin::start();
        let bridge = TestBridge::start(&format!(
            "{}{}",
            standin.config(&format!("orders_webhook_secret = \"{secret}\"")),
            config(&key, extra)
        ))
        .await;
        let profile = format!("{agent_url}/with-hook");
        let keyed = || json!({"ucp-agent": {"profile": profile}, "idempotency-key": uuid::Uuid::new_v4().to_string()});
        let created = bridge
            .call(
                "create_checkout",
                json!({"meta": keyed(), "checkout": mug_shipped_express_to_new_york()}),
            )
            .await;
        let id = created["id"].as_str().unwrap().to_owned();
        let handed = bridge
            .call(
                "complete_checkout",
                json!({"meta": keyed(), "id": id, "checkout": {}}),
            )
            .await;
        assert_eq!(handed["status"], "requires_escalation", "{handed}");
        Self {
            bridge,
            hook,
            key,
            id,
            handed,
            profile,
            _standin: standin,
        }
    }

    /// The agent's `meta` for a read.
    pub fn meta(&self) -> Value {
        json!({"ucp-agent": {"profile": self.profile}})
    }
}

impl Drop for ShopifyHandOff {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.key);
    }
}

pub(crate) async fn wait_for(hook: &Hook, count: usize, within: Duration) -> Vec<Received> {
    let deadline = tokio::time::Instant::now() + within;
    loop {
        let received = hook.received();
        if received.len() >= count || tokio::time::Instant::now() >= deadline {
            return received;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

pub(crate) fn text<'a>(headers: &'a HeaderMap, name: &str) -> &'a str {
    headers
        .get(name)
        .unwrap_or_else(|| panic!("no {name} header"))
        .to_str()
        .unwrap()
}

/// The platform's verification (order.md "Verification (Platform)"), from the spec: the
/// `keyid`'s key in the business profile's keys, the digest of the raw body, the signature
/// base rebuilt from the request as received, and the signature checked. Returns the keyid.
pub(crate) fn verify(request: &Received, keys: &[Value]) -> String {
    let input = text(&request.headers, "signature-input");
    let params = input.strip_prefix("sig1=").expect("labelled sig1");
    let (list, parameters) = params.split_once(')').unwrap();
    let components: Vec<&str> = list
        .trim_start_matches('(')
        .split(' ')
        .map(|name| name.trim_matches('"'))
        .collect();
    // SIG-014 … SIG-018 as the webhook section asks: the target, the signer's identity, the
    // idempotency key of a POST and the body.
    for required in [
        "@method",
        "@authority",
        "@path",
        "ucp-agent",
        "idempotency-key",
        "content-digest",
        "content-type",
    ] {
        assert!(components.contains(&required), "{required} in {input}");
    }
    let keyid = parameters
        .split(';')
        .find_map(|parameter| parameter.strip_prefix("keyid="))
        .unwrap()
        .trim_matches('"')
        .to_owned();
    // RFC 9530: sha-256 over the raw bytes.
    let digest = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, &request.body);
    assert_eq!(
        text(&request.headers, "content-digest"),
        format!("sha-256=:{}:", STANDARD.encode(digest.as_ref()))
    );
    let mut base = String::new();
    for component in &components {
        let value = match *component {
            "@method" => "POST".to_owned(),
            "@authority" => text(&request.headers, "host").to_owned(),
            "@path" => request.path.clone(),
            header => text(&request.headers, header).to_owned(),
        };
        base.push_str(&format!("\"{component}\": {value}\n"));
    }
    base.push_str(&format!("\"@signature-params\": {params}"));
    let signature = STANDARD
        .decode(
            text(&request.headers, "signature")
                .strip_prefix("sig1=:")
                .unwrap()
                .trim_end_matches(':'),
        )
        .unwrap();
    let jwk = keys
        .iter()
        .find(|key| key["kid"] == keyid.as_str())
        .unwrap_or_else(|| panic!("keyid {keyid} is not in the bridge's keys {keys:?}"));
    let decode = |name: &str| URL_SAFE_NO_PAD.decode(jwk[name].as_str().unwrap()).unwrap();
    let verified = match jwk["kty"].as_str() {
        Some("EC") => {
            let mut point = vec![4u8];
            point.extend(decode("x"));
            point.extend(decode("y"));
            UnparsedPublicKey::new(&ECDSA_P256_SHA256_FIXED, point)
                .verify(base.as_bytes(), &signature)
                .is_ok()
        }
        Some("OKP") => UnparsedPublicKey::new(&ED25519, decode("x"))
            .verify(base.as_bytes(), &signature)
            .is_ok(),
        other => panic!("unexpected key type {other:?}"),
    };
    assert!(verified, "the signature does not verify over:\n{base}");
    keyid
}

#[tokio::test]
async fn a_placed_order_is_pushed_signed_and_retried_under_one_idempotency_key() {
    let (agent_url, hook) = agent(1).await;
    let key = key_file(false);
    let bridge = TestBridge::start(&config(&key, "")).await;
    let profile = format!("{agent_url}/with-hook");
    let order_id = place_order(&bridge, &profile).await;
    // Delivery is asynchronous: the complete answer did not wait for the 503 and its retry
    // (which comes a Retry-After second later).
    assert!(hook.received().len() < 2, "{:?}", hook.received());
    // ORD-031: the first delivery answered 503 (Retry-After: 1), the retry is delivered.
    let received = wait_for(&hook, 2, Duration::from_secs(10)).await;
    assert_eq!(received.len(), 2, "{received:?}");
    // The bridge's public key, from its own profile (08-25 `keys`, SIG-043, DISC-014).
    let business: Value = bridge.get("/.well-known/ucp").await.json().await.unwrap();
    let keys = business["keys"]
        .as_array()
        .expect("keys[] published")
        .clone();
    assert_eq!(keys.len(), 1);
    assert!(keys[0].get("d").is_none(), "no private member is published");
    for request in &received {
        // ORD-026, ORD-027, ORD-036, SIG-027: signed, and the signature verifies.
        let keyid = verify(request, &keys);
        assert_eq!(keys[0]["kid"], keyid.as_str());
        // ORD-028: UCP-Agent names the business profile the key was read from.
        assert_eq!(
            text(&request.headers, "ucp-agent"),
            format!("profile=\"{}/.well-known/ucp\"", bridge.base_url)
        );
        assert_eq!(text(&request.headers, "content-type"), "application/json");
        text(&request.headers, "webhook-timestamp")
            .parse::<i64>()
            .expect("Webhook-Timestamp is unix seconds");
    }
    // One event: the same Webhook-Id / Idempotency-Key and body on every attempt.
    let ids: Vec<(&str, &str)> = received
        .iter()
        .map(|request| {
            (
                text(&request.headers, "webhook-id"),
                text(&request.headers, "idempotency-key"),
            )
        })
        .collect();
    assert_eq!(ids[0], ids[1]);
    assert_eq!(ids[0].0, ids[0].1);
    assert_eq!(received[0].body, received[1].body);
    // ORD-029, ORD-030: the full order entity, as get_order answers it, with the event's id.
    let mut event: Value = serde_json::from_slice(&received[0].body).unwrap();
    assert_eq!(event["event_id"], ids[0].0);
    assert!(event["created_time"].is_string());
    let object = event.as_object_mut().unwrap();
    object.remove("event_id");
    object.remove("created_time");
    let order = bridge
        .call(
            "get_order",
            json!({"meta": {"ucp-agent": {"profile": profile}}, "id": order_id}),
        )
        .await;
    // (get_order's answers hold to the order schema: ucp_2026_08_25.rs checks them.)
    assert_eq!(event, order);
    // No more deliveries once one was acknowledged: the next event the agent hears is the
    // next order's, not this one again.
    let next = place_order(&bridge, &profile).await;
    let received = wait_for(&hook, 3, Duration::from_secs(10)).await;
    assert_eq!(received.len(), 3, "{received:?}");
    let third: Value = serde_json::from_slice(&received[2].body).unwrap();
    assert_eq!(third["id"], json!(next), "{third}");
    let _ = std::fs::remove_file(key);
}

#[tokio::test]
async fn nothing_is_sent_without_a_declared_webhook_or_to_a_forbidden_one() {
    let (agent_url, hook) = agent(0).await;
    let key = key_file(true);
    let bridge = TestBridge::start(&config(&key, "")).await;
    // The agent declares no webhook_url: no event.
    place_order(&bridge, &format!("{agent_url}/without-hook")).await;
    // The webhook names `localhost`, which resolves to loopback and is not among
    // negotiation.allow_private_hosts: the fetch rules forbid it, nothing connects.
    place_order(&bridge, &format!("{agent_url}/private-hook")).await;
    // An Ed25519 key is published too (OKP, RFC 8037), at both releases' fields.
    let current: Value = bridge.get("/.well-known/ucp").await.json().await.unwrap();
    assert_eq!(current["keys"][0]["kty"], "OKP");
    assert!(current.get("signing_keys").is_none());
    let older: Value = bridge
        .get("/.well-known/ucp/2026-04-08")
        .await
        .json()
        .await
        .unwrap();
    // SIG-008: 2026-04-08 reads `signing_keys`.
    assert_eq!(older["signing_keys"], current["keys"]);
    // The same agent with a webhook does get the Ed25519-signed event, and it is the only
    // event the hook ever heard: the two orders before it sent nothing.
    let heard = place_order(&bridge, &format!("{agent_url}/with-hook")).await;
    let received = wait_for(&hook, 1, Duration::from_secs(5)).await;
    assert_eq!(received.len(), 1);
    let event: Value = serde_json::from_slice(&received[0].body).unwrap();
    assert_eq!(event["id"], json!(heard), "{event}");
    verify(&received[0], current["keys"].as_array().unwrap());
    let _ = std::fs::remove_file(key);
}

#[tokio::test]
async fn webhooks_off_publish_no_key_and_send_nothing() {
    let (agent_url, hook) = agent(0).await;
    let bridge = TestBridge::start(
        "[server]\nprotocol = \"ucp\"\n[negotiation]\nenabled = true\nallow_http_hosts = [\"127.0.0.1\"]\nallow_private_hosts = [\"127.0.0.1\"]\ntimeout_ms = 2000\n",
    )
    .await;
    place_order(&bridge, &format!("{agent_url}/with-hook")).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(hook.received().is_empty());
    let profile: Value = bridge.get("/.well-known/ucp").await.json().await.unwrap();
    assert!(profile.get("keys").is_none(), "{profile}");
}

#[test]
fn a_bad_or_missing_key_is_a_start_up_error_naming_the_key() {
    let problems = |text: &str| match BridgeConfig::from_toml(text) {
        Err(error) => error.to_string(),
        Ok(_) => panic!("accepted: {text}"),
    };
    let garbage = std::env::temp_dir().join(format!("bcp-webhook-{}.pem", uuid::Uuid::new_v4()));
    std::fs::write(&garbage, "not a key").unwrap();
    let message = problems(&format!(
        "[order_webhooks]\nenabled = true\nkey_file = {:?}\n",
        garbage.display().to_string()
    ));
    assert!(message.contains("order_webhooks.key_file"), "{message}");
    assert!(message.contains("no PEM private key"), "{message}");
    let message =
        problems("[order_webhooks]\nenabled = true\nkey_file = \"/nonexistent/key.pem\"\n");
    assert!(
        message.contains("order_webhooks.key_file: /nonexistent/key.pem: cannot read"),
        "{message}"
    );
    let message = problems("[order_webhooks]\nenabled = true\n");
    assert!(message.contains("order_webhooks.key_file"), "{message}");
    let message = problems("[order_webhooks]\nkey = { env = \"BCP_TEST_UNSET_WEBHOOK_KEY\" }\n");
    assert!(
        message.contains("order_webhooks.key: environment variable BCP_TEST_UNSET_WEBHOOK_KEY"),
        "{message}"
    );
    let message = problems("[order_webhooks]\nmax_attempts = 0\nkey_id = \"a\\\"b\"\n");
    assert!(message.contains("order_webhooks.max_attempts"), "{message}");
    assert!(message.contains("order_webhooks.key_id"), "{message}");
    let _ = std::fs::remove_file(garbage);
}

/// A Shopify checkout hands the buyer to Shopify's page: no order exists when complete
/// answers. When Shopify's `orders/create` webhook reports the order, the event goes to the
/// webhook of the agent that completed the checkout, signed, with the order as `get_order`
/// answers it; a later `orders/*` event is pushed too, with the full entity again (ORD-029,
/// ORD-030). An order of a checkout no agent handed off is pushed nowhere.
#[tokio::test]
async fn an_order_placed_on_shopifys_page_is_pushed_when_shopify_reports_it() {
    use crate::support::shopify_orders::{OrderWebhooks, cart_token, shopify_order};
    const SECRET: &str = "shpss_events_secret";
    let handoff = ShopifyHandOff::start(SECRET, "").await;
    let (bridge, hook, id, handed) = (&handoff.bridge, &handoff.hook, &handoff.id, &handoff.handed);

    // Nothing is placed at the hand-off: the first event the agent hears is the order that
    // Shopify reports (checked below to be exactly what `get_order` answers).
    let shop = OrderWebhooks::to(&bridge.base_url, SECRET);
    let placed = shopify_order(&cart_token(id), handed);
    let placed = placed.to_string();
    let status = shop.deliver_raw(placed.as_bytes(), Some("orders/create"), None);
    assert_eq!(status.await, 200);
    let received = wait_for(hook, 1, Duration::from_secs(10)).await;
    assert_eq!(received.len(), 1, "{received:?}");
    let business: Value = bridge.get("/.well-known/ucp").await.json().await.unwrap();
    let keys = business["keys"].as_array().unwrap().clone();
    verify(&received[0], &keys);
    let mut event: Value = serde_json::from_slice(&received[0].body).unwrap();
    let object = event.as_object_mut().unwrap();
    object.remove("event_id");
    object.remove("created_time");
    // The event names the order by the handle `get_order` opens, never by Shopify's own id.
    let handle = event["id"].as_str().unwrap().to_owned();
    assert!(!handle.contains("820982911946154508"), "{handle}");
    let order = bridge
        .call("get_order", json!({"meta": handoff.meta(), "id": handle}))
        .await;
    assert_eq!(event["checkout_id"], json!(id));
    assert_eq!(event, order);

    // Shopify reports the cancellation: the full entity again.
    let mut cancelled = shopify_order("", handed);
    cancelled["cancelled_at"] = json!("2026-12-06T09:00:00-05:00");
    cancelled["updated_at"] = json!("2026-12-06T09:00:00-05:00");
    let cancelled = cancelled.to_string();
    let status = shop.deliver_raw(cancelled.as_bytes(), Some("orders/cancelled"), None);
    assert_eq!(status.await, 200);
    let received = wait_for(hook, 2, Duration::from_secs(10)).await;
    assert_eq!(received.len(), 2);
    let update: Value = serde_json::from_slice(&received[1].body).unwrap();
    assert_eq!(update["line_items"][0]["status"], "removed", "{update}");
    assert_ne!(
        text(&received[0].headers, "webhook-id"),
        text(&received[1].headers, "webhook-id"),
        "two events"
    );
}
