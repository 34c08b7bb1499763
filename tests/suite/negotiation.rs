//! Version negotiation against agent profiles served on loopback (NEG-001, NEG-003, NEG-004,
//! NEG-005), and the SSRF guards of the profile fetch.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use crate::support::TestBridge;
use axum::Router;
use axum::body::Body;
use axum::extract::State;
use axum::http::{StatusCode as AxumStatus, header};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use reqwest::StatusCode;
use serde_json::{Value, json};

#[derive(Clone, Default)]
struct Hits(Arc<AtomicUsize>);

fn profile(version: &str) -> Response {
    (
        [(header::CONTENT_TYPE, "application/json")],
        json!({"ucp": {"version": version, "capabilities": {}}}).to_string(),
    )
        .into_response()
}

/// A current profile declaring exactly `capabilities`.
fn declaring(capabilities: &[&str]) -> Response {
    let declared: serde_json::Map<String, Value> = capabilities
        .iter()
        .map(|name| ((*name).to_owned(), json!([{"version": "2026-07-28"}])))
        .collect();
    (
        [(header::CONTENT_TYPE, "application/json")],
        json!({"ucp": {"version": "2026-07-28", "capabilities": declared}}).to_string(),
    )
        .into_response()
}

/// An agent's profile host, on loopback.
async fn profile_server() -> (SocketAddr, Hits) {
    let hits = Hits::default();
    let app = Router::new()
        .route("/current", get(|| async { profile("2026-07-28") }))
        .route("/older", get(|| async { profile("2026-07-14") }))
        .route("/future", get(|| async { profile("2099-01-01") }))
        .route(
            "/checkout-only",
            get(|| async {
                declaring(&["br.dev.bcp.shopping.checkout", "br.dev.bcp.shopping.order"])
            }),
        )
        .route(
            "/discount-only",
            get(|| async { declaring(&["br.dev.bcp.shopping.discount"]) }),
        )
        .route("/garbage", get(|| async { "<html>not a profile</html>" }))
        .route("/no-version", get(|| async { "{\"name\": \"agent\"}" }))
        .route("/missing", get(|| async { (AxumStatus::NOT_FOUND, "no") }))
        .route(
            "/big",
            get(|| async { format!("{{\"pad\": \"{}\"}}", "x".repeat(200 * 1024)) }),
        )
        .route(
            "/big-chunked",
            get(|| async {
                // No Content-Length: only the streaming cap can stop it.
                let chunks = (0..300).map(|_| Ok::<_, std::io::Error>("x".repeat(1024)));
                Body::from_stream(futures_util::stream::iter(chunks))
            }),
        )
        .route(
            "/slow",
            get(|| async {
                tokio::time::sleep(Duration::from_secs(5)).await;
                profile("2026-07-28")
            }),
        )
        .route("/loop", get(|| async { Redirect::temporary("/loop") }))
        .route("/hop1", get(|| async { Redirect::temporary("/hop2") }))
        .route("/hop2", get(|| async { Redirect::temporary("/current") }))
        .route(
            "/counted",
            get(|State(hits): State<Hits>| async move {
                hits.0.fetch_add(1, Ordering::SeqCst);
                profile("2026-07-28")
            }),
        )
        .route(
            "/counted-missing",
            get(|State(hits): State<Hits>| async move {
                hits.0.fetch_add(1, Ordering::SeqCst);
                AxumStatus::NOT_FOUND
            }),
        )
        .with_state(hits.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (addr, hits)
}

/// A bridge that may fetch profiles over http from loopback (tests only).
async fn bridge() -> TestBridge {
    TestBridge::start(
        "[negotiation]\nenabled = true\nallow_http_hosts = [\"127.0.0.1\", \"localhost\"]\nallow_private_hosts = [\"127.0.0.1\"]\ntimeout_ms = 500\n",
    )
    .await
}

fn search(profile: &str) -> Value {
    json!({"meta": {"ucp-agent": {"profile": profile}}, "catalog": {"query": "shirt"}})
}

async fn refused(bridge: &TestBridge, profile: &str) -> (StatusCode, String) {
    let (status, error) = bridge.call_error("search_catalog", search(profile)).await;
    assert_eq!(error["code"], -32001, "{profile}: {error}");
    let content = error["data"]["content"].as_str().unwrap_or_default();
    assert!(!content.is_empty(), "{error}");
    (status, error["data"]["code"].as_str().unwrap().to_owned())
}

#[tokio::test]
async fn supported_versions_are_served() {
    let (addr, _) = profile_server().await;
    let bridge = bridge().await;
    for path in ["current", "older"] {
        let result = bridge
            .call("search_catalog", search(&format!("http://{addr}/{path}")))
            .await;
        assert!(result["products"].is_array(), "{path}: {result}");
    }
}

#[tokio::test]
async fn unsupported_version_is_422() {
    // NEG-001
    let (addr, _) = profile_server().await;
    let bridge = bridge().await;
    let (status, code) = refused(&bridge, &format!("http://{addr}/future")).await;
    assert_eq!(
        (status, code.as_str()),
        (StatusCode::UNPROCESSABLE_ENTITY, "version_unsupported")
    );
}

#[tokio::test]
async fn unfetchable_profiles_are_424() {
    // NEG-003: non-2xx, timeout, a redirect, nothing listening. DISC-002: redirects are
    // refused, not followed, even when the next hop would be a good profile.
    let (addr, _) = profile_server().await;
    let bridge = bridge().await;
    let closed = support_closed_port();
    for url in [
        format!("http://{addr}/missing"),
        format!("http://{addr}/slow"),
        format!("http://{addr}/loop"),
        format!("http://{addr}/hop1"),
        format!("http://127.0.0.1:{closed}/current"),
    ] {
        let (status, code) = refused(&bridge, &url).await;
        assert_eq!(
            (status, code.as_str()),
            (StatusCode::FAILED_DEPENDENCY, "profile_unreachable"),
            "{url}"
        );
    }
}

fn support_closed_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[tokio::test]
async fn malformed_or_oversized_profiles_are_422() {
    // NEG-004
    let (addr, _) = profile_server().await;
    let bridge = bridge().await;
    for path in ["garbage", "no-version", "big", "big-chunked"] {
        let (status, code) = refused(&bridge, &format!("http://{addr}/{path}")).await;
        assert_eq!(
            (status, code.as_str()),
            (StatusCode::UNPROCESSABLE_ENTITY, "profile_malformed"),
            "{path}"
        );
    }
}

#[tokio::test]
async fn bad_or_forbidden_profile_urls_are_400() {
    // NEG-005, plus the SSRF guards: none of these is ever connected to.
    let (addr, _) = profile_server().await;
    let bridge = bridge().await;
    let port = addr.port();
    for url in [
        "not a url".to_owned(),
        "ftp://agent.example/profile.json".to_owned(),
        "file:///etc/passwd".to_owned(),
        // http only for hosts listed in allow_http_hosts
        format!("http://127.0.0.2:{port}/current"),
        // private, link-local, unique-local, unspecified, mapped-loopback: never fetched
        "https://10.0.0.1/profile.json".to_owned(),
        "https://169.254.169.254/latest/meta-data".to_owned(),
        "https://[fd00::1]/profile.json".to_owned(),
        "https://0.0.0.0/profile.json".to_owned(),
        "https://[::ffff:127.0.0.1]/profile.json".to_owned(),
        // localhost may use http here but resolves to loopback, which is not allowed for it
        format!("http://localhost:{port}/current"),
        "https://user:pw@agent.example/profile.json".to_owned(),
    ] {
        let (status, code) = refused(&bridge, &url).await;
        assert_eq!(
            (status, code.as_str()),
            (StatusCode::BAD_REQUEST, "invalid_profile_url"),
            "{url}"
        );
    }
}

#[tokio::test]
async fn loopback_is_refused_unless_listed() {
    let (addr, _) = profile_server().await;
    let strict = TestBridge::start("[negotiation]\nallow_http_hosts = [\"127.0.0.1\"]\n").await;
    let (status, code) = refused(&strict, &format!("http://{addr}/current")).await;
    assert_eq!(
        (status, code.as_str()),
        (StatusCode::BAD_REQUEST, "invalid_profile_url")
    );
}

#[tokio::test]
async fn redirects_are_refused_and_never_followed() {
    // DISC-002: a redirect to a good, allowed profile is still refused, and its target is
    // never fetched.
    let (addr, hits) = profile_server().await;
    let target = format!("http://{addr}/counted");
    let app = Router::new().route(
        "/bounce",
        get(move || {
            let target = target.clone();
            async move { Redirect::temporary(&target) }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let bouncer = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    let bridge = bridge().await;
    let (status, error) = bridge
        .call_error(
            "search_catalog",
            search(&format!("http://{bouncer}/bounce")),
        )
        .await;
    assert_eq!(status, StatusCode::FAILED_DEPENDENCY, "{error}");
    assert_eq!(error["data"]["code"], "profile_unreachable", "{error}");
    assert!(
        error["data"]["content"]
            .as_str()
            .unwrap()
            .contains("redirect"),
        "{error}"
    );
    assert_eq!(hits.0.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn outcomes_are_cached() {
    let (addr, hits) = profile_server().await;
    let bridge = bridge().await;
    for _ in 0..3 {
        bridge
            .call("search_catalog", search(&format!("http://{addr}/counted")))
            .await;
    }
    assert_eq!(hits.0.load(Ordering::SeqCst), 1);
    for _ in 0..3 {
        refused(&bridge, &format!("http://{addr}/counted-missing")).await;
    }
    assert_eq!(hits.0.load(Ordering::SeqCst), 2, "failures are cached too");
}

#[tokio::test]
async fn negotiation_runs_before_any_tool_work() {
    // A cart mutation from an unsupported agent never reaches idempotency or the store.
    let (addr, _) = profile_server().await;
    let bridge = bridge().await;
    let (status, error) = bridge
        .call_error(
            "create_cart",
            json!({"meta": {"ucp-agent": {"profile": format!("http://{addr}/future")}, "idempotency-key": "k"}, "cart": {"line_items": [{"item": {"id": "item_123"}, "quantity": 1}]}}),
        )
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(error["data"]["code"], "version_unsupported");
}

#[test]
fn serve_negotiates_by_default_and_demo_does_not() {
    let config = bcp_bridge::startup::BridgeConfig::from_toml("").unwrap();
    assert!(config.negotiation.enabled);
    assert!(
        !bcp_bridge::startup::BridgeConfig::demo()
            .negotiation
            .enabled
    );
}

#[test]
fn restricted_ranges() {
    use bcp_bridge::negotiation::is_restricted;
    for ip in [
        "127.0.0.1",
        "10.1.2.3",
        "172.16.0.1",
        "192.168.1.1",
        "169.254.169.254",
        "100.64.0.1",
        "0.0.0.0",
        "224.0.0.1",
        "::1",
        "::",
        "fe80::1",
        "fc00::1",
        "ff02::1",
        "::ffff:10.0.0.1",
        "64:ff9b::a00:1",
        // NAT64 is refused whatever IPv4 it embeds (issue 17): a translator could reach any.
        "64:ff9b::808:808",
    ] {
        assert!(is_restricted(ip.parse().unwrap()), "{ip}");
    }
    for ip in ["8.8.8.8", "2001:4860:4860::8888", "100.128.0.1"] {
        assert!(!is_restricted(ip.parse().unwrap()), "{ip}");
    }
}

#[tokio::test]
async fn checkout_answers_declare_only_the_extensions_the_agent_shares() {
    let (addr, _) = profile_server().await;
    let bridge = bridge().await;
    let create = |profile: &str| {
        json!({"meta": {"ucp-agent": {"profile": profile}, "idempotency-key": uuid::Uuid::new_v4().to_string()},
               "checkout": {"line_items": [{"item": {"id": "item_123"}, "quantity": 1}]}})
    };
    // OVR-005: an agent naming checkout but neither extension gets answers without them.
    let narrowed = bridge
        .call(
            "create_checkout",
            create(&format!("http://{addr}/checkout-only")),
        )
        .await;
    let names: Vec<&String> = narrowed["ucp"]["capabilities"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(names, ["br.dev.bcp.shopping.checkout"], "{narrowed}");
    // ... and without their fields.
    assert!(narrowed.get("discounts").is_none(), "{narrowed}");
    assert!(narrowed.get("fulfillment").is_none(), "{narrowed}");
    // An agent that names no capability has no opinion: both extensions are in force.
    let open = bridge
        .call("create_checkout", create(&format!("http://{addr}/current")))
        .await;
    let names: Vec<&String> = open["ucp"]["capabilities"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(
        names,
        [
            "br.dev.bcp.shopping.checkout",
            "br.dev.bcp.shopping.discount",
            "br.dev.bcp.shopping.fulfillment"
        ]
    );
    assert!(open.get("discounts").is_some(), "{open}");
    // OVR-012: an extension without its parent is excluded, which leaves nothing shared.
    let orphan = bridge
        .call(
            "create_checkout",
            create(&format!("http://{addr}/discount-only")),
        )
        .await;
    assert_eq!(orphan["ucp"]["status"], "error", "{orphan}");
    assert_eq!(orphan["messages"][0]["code"], "capabilities_incompatible");
    assert!(orphan.get("id").is_none(), "no checkout was made: {orphan}");
}
