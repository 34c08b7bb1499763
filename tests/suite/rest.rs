//! The UCP REST binding over real HTTP on loopback: every operation on the sample store, the
//! same business bytes as MCP's `structuredContent`, the binding's headers and its error rows.
//! Requirement ids are those of ucp-2026-08-25/requirements/*.json.

use crate::support::values::line;
use crate::support::{AGENT_PROFILE, TestBridge, meta, meta_with_key};
use reqwest::{Method, StatusCode, header::HeaderMap};
use serde_json::{Value, json};

struct Reply {
    status: StatusCode,
    headers: HeaderMap,
    text: String,
}

impl Reply {
    fn json(&self) -> Value {
        serde_json::from_str(&self.text)
            .unwrap_or_else(|_| panic!("not JSON ({}): {}", self.status, self.text))
    }

    /// The error envelope's first message (ERR-028 … ERR-030, ERR-036).
    fn error_message(&self) -> Value {
        let body = self.json();
        assert_eq!(body["ucp"]["status"], "error", "{body}");
        let keys: Vec<&String> = body.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["ucp", "messages"], "{body}");
        let message = body["messages"][0].clone();
        assert_eq!(message["type"], "error", "{body}");
        for key in ["code", "content", "severity"] {
            assert!(message.get(key).is_some(), "{key} missing: {body}");
        }
        message
    }
}

fn rest_url(bridge: &TestBridge) -> String {
    bridge.endpoints[0]
        .rest_url
        .clone()
        .expect("REST is served")
}

/// A REST request with the agent's `UCP-Agent` header and, with a body, JSON content.
async fn send(
    bridge: &TestBridge,
    method: Method,
    path: &str,
    body: Option<&Value>,
    extra: &[(&str, &str)],
) -> Reply {
    let mut request = bridge
        .client
        .request(method, format!("{}{path}", rest_url(bridge)))
        .header("ucp-agent", format!("profile=\"{AGENT_PROFILE}\""));
    // Request-Id is required on every operation; a test that names its own sends only that.
    if !extra
        .iter()
        .any(|(name, _)| name.eq_ignore_ascii_case("request-id"))
    {
        request = request.header("request-id", uuid::Uuid::new_v4().to_string());
    }
    if let Some(body) = body {
        request = request
            .header("content-type", "application/json")
            .body(body.to_string());
    }
    for (name, value) in extra {
        request = request.header(*name, *value);
    }
    let response = request.send().await.unwrap();
    Reply {
        status: response.status(),
        headers: response.headers().clone(),
        text: response.text().await.unwrap(),
    }
}

async fn post(bridge: &TestBridge, path: &str, body: Value) -> Reply {
    send(bridge, Method::POST, path, Some(&body), &[]).await
}

/// MCP's `structuredContent` for the same call, as compact JSON in the brain's key order.
async fn mcp_bytes(bridge: &TestBridge, tool: &str, arguments: Value) -> String {
    serde_json::to_string(&bridge.call(tool, arguments).await).unwrap()
}

fn cart_body() -> Value {
    json!({"line_items": [line("item_123", 2)], "context": {"address_country": "BR", "address_region": "SP", "postal_code": "01310-100"}})
}

#[tokio::test]
async fn catalog_operations_answer_the_bytes_mcp_answers() {
    // CAT-022, CAT-023: search, lookup and product are served; the business payload is the
    // one MCP carries in structuredContent, byte for byte.
    let bridge = TestBridge::sample().await;
    let search = post(&bridge, "/catalog/search", json!({"query": "shirt"})).await;
    assert_eq!(search.status, StatusCode::OK, "{}", search.text);
    assert!(
        search.headers["content-type"]
            .to_str()
            .unwrap()
            .starts_with("application/json")
    ); // OVR-008
    let mcp = mcp_bytes(
        &bridge,
        "search_catalog",
        json!({"meta": meta(), "catalog": {"query": "shirt"}}),
    )
    .await;
    assert_eq!(search.text, mcp);
    let products = search.json()["products"].clone();
    let id = products[0]["id"].as_str().unwrap().to_owned();

    let lookup_body = json!({"ids": [id, "nope_404"]});
    let lookup = post(&bridge, "/catalog/lookup", lookup_body.clone()).await;
    assert_eq!(lookup.status, StatusCode::OK); // CAT-020, CAT-021
    let mcp = mcp_bytes(
        &bridge,
        "lookup_catalog",
        json!({"meta": meta(), "catalog": lookup_body}),
    )
    .await;
    assert_eq!(lookup.text, mcp);

    let product = post(&bridge, "/catalog/product", json!({"id": id})).await;
    assert_eq!(product.status, StatusCode::OK);
    let mcp = mcp_bytes(
        &bridge,
        "get_product",
        json!({"meta": meta(), "catalog": {"id": id}}),
    )
    .await;
    assert_eq!(product.text, mcp);
}

#[tokio::test]
async fn a_cursor_at_the_top_of_the_body_pages_on() {
    // CAT-024: the spec's place is `pagination.cursor`; a client that sends the cursor at the
    // top of the body (spck-conformance 0.4.0 does) gets the same second page, not page one.
    let bridge = TestBridge::sample().await;
    let first = post(
        &bridge,
        "/catalog/search",
        json!({"query": "blue", "pagination": {"limit": 2}}),
    )
    .await
    .json();
    let cursor = first["pagination"]["cursor"].as_str().unwrap().to_owned();
    let spec = post(
        &bridge,
        "/catalog/search",
        json!({"query": "blue", "pagination": {"limit": 2, "cursor": cursor}}),
    )
    .await;
    let top = post(
        &bridge,
        "/catalog/search",
        json!({"query": "blue", "pagination": {"limit": 2}, "cursor": cursor}),
    )
    .await;
    assert_eq!(top.status, StatusCode::OK, "{}", top.text);
    assert_eq!(top.text, spec.text);
    assert_ne!(top.json()["products"], first["products"]);

    // The spec's place wins when both are sent; a bad top-level cursor is named where it is.
    let both = post(
        &bridge,
        "/catalog/search",
        json!({"query": "blue", "pagination": {"limit": 2, "cursor": cursor}, "cursor": "junk"}),
    )
    .await;
    assert_eq!(both.text, spec.text);
    let bad = post(
        &bridge,
        "/catalog/search",
        json!({"query": "blue", "cursor": "junk"}),
    )
    .await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST, "{}", bad.text);
    assert_eq!(bad.error_message()["path"], "$.cursor");
}

#[tokio::test]
async fn business_outcomes_are_200_with_messages() {
    // CAT-019, CAT-020: an unknown product is an answer (200, ucp.status error, messages),
    // the same bytes as over MCP; so is an unknown cart.
    let bridge = TestBridge::sample().await;
    let missing = post(&bridge, "/catalog/product", json!({"id": "prod_missing"})).await;
    assert_eq!(missing.status, StatusCode::OK, "{}", missing.text);
    let body = missing.json();
    assert_eq!(body["ucp"]["status"], "error");
    assert_eq!(body["messages"][0]["code"], "not_found");
    let mcp = mcp_bytes(
        &bridge,
        "get_product",
        json!({"meta": meta(), "catalog": {"id": "prod_missing"}}),
    )
    .await;
    assert_eq!(missing.text, mcp);

    // An id that is not UTF-8 once decoded is a REST refusal, not a plain-text one.
    let garbled = send(&bridge, Method::GET, "/carts/%FF", None, &[]).await;
    assert_eq!(garbled.status, StatusCode::BAD_REQUEST);
    garbled.error_message();

    let cart = send(&bridge, Method::GET, "/carts/cart_missing", None, &[]).await;
    assert_eq!(cart.status, StatusCode::OK, "{}", cart.text);
    let mcp = mcp_bytes(
        &bridge,
        "get_cart",
        json!({"meta": meta(), "id": "cart_missing"}),
    )
    .await;
    assert_eq!(cart.text, mcp);
}

#[tokio::test]
async fn the_cart_lifecycle_over_rest() {
    // create 201, get/update/cancel 200 (cart-rest.md status codes); the cart id of the path
    // is the tool's `id`.
    let bridge = TestBridge::sample().await;
    let created = send(
        &bridge,
        Method::POST,
        "/carts",
        Some(&cart_body()),
        &[("idempotency-key", &uuid::Uuid::new_v4().to_string())],
    )
    .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.text);
    let id = created.json()["id"].as_str().unwrap().to_owned();

    let got = send(&bridge, Method::GET, &format!("/carts/{id}"), None, &[]).await;
    assert_eq!(got.status, StatusCode::OK);
    let mcp = mcp_bytes(&bridge, "get_cart", json!({"meta": meta(), "id": id})).await;
    assert_eq!(got.text, mcp);

    // CART-017: a PUT sends the entire cart resource, its own id included.
    let update = json!({"id": id, "line_items": [line("item_456", 1)]});
    let updated = send(
        &bridge,
        Method::PUT,
        &format!("/carts/{id}"),
        Some(&update),
        &[("idempotency-key", &uuid::Uuid::new_v4().to_string())],
    )
    .await;
    assert_eq!(updated.status, StatusCode::OK, "{}", updated.text);
    let elsewhere = send(
        &bridge,
        Method::PUT,
        &format!("/carts/{id}"),
        Some(&json!({"id": "cart_other", "line_items": [line("item_456", 1)]})),
        &[("idempotency-key", &uuid::Uuid::new_v4().to_string())],
    )
    .await;
    assert_eq!(elsewhere.status, StatusCode::BAD_REQUEST);
    assert_eq!(elsewhere.error_message()["path"], "$.id");
    let lines = updated.json()["line_items"].clone();
    assert_eq!(lines[0]["item"]["id"], "item_456");
    assert_eq!(lines.as_array().unwrap().len(), 1);

    let key = uuid::Uuid::new_v4().to_string();
    let cancelled = send(
        &bridge,
        Method::POST,
        &format!("/carts/{id}/cancel"),
        None,
        &[("idempotency-key", &key)],
    )
    .await;
    assert_eq!(cancelled.status, StatusCode::OK, "{}", cancelled.text);
    // The same key over MCP is the same scoped key: the recorded answer comes back.
    let replay = mcp_bytes(
        &bridge,
        "cancel_cart",
        json!({"meta": meta_with_key(&key), "id": id}),
    )
    .await;
    assert_eq!(cancelled.text, replay);
}

#[tokio::test]
async fn idempotent_replay_and_conflict() {
    // SIG-044: the same key and payload replays the recorded answer (one cart, not two);
    // SIG-045: the same key with another payload is 409.
    let bridge = TestBridge::sample().await;
    let key = uuid::Uuid::new_v4().to_string();
    let headers = [("idempotency-key", key.as_str())];
    let first = send(
        &bridge,
        Method::POST,
        "/carts",
        Some(&cart_body()),
        &headers,
    )
    .await;
    let again = send(
        &bridge,
        Method::POST,
        "/carts",
        Some(&cart_body()),
        &headers,
    )
    .await;
    assert_eq!(first.status, StatusCode::CREATED);
    assert_eq!(again.status, StatusCode::CREATED);
    assert_eq!(first.text, again.text);
    let other = json!({"line_items": [line("item_456", 1)]});
    let conflict = send(&bridge, Method::POST, "/carts", Some(&other), &headers).await;
    assert_eq!(conflict.status, StatusCode::CONFLICT, "{}", conflict.text);
    assert_eq!(conflict.error_message()["code"], "idempotency_conflict");
}

#[tokio::test]
async fn request_id_is_echoed() {
    let bridge = TestBridge::sample().await;
    let id = "4f6c2a1e-0b7d-4c3e-9a51-2d8e6f0b1c3a";
    let reply = send(
        &bridge,
        Method::POST,
        "/catalog/search",
        Some(&json!({"query": "shirt"})),
        &[("request-id", id)],
    )
    .await;
    assert_eq!(reply.headers["request-id"], id);
    // A refusal carries it too; a request without one gets a fresh id to quote.
    let refused = send(
        &bridge,
        Method::POST,
        "/catalog/search",
        Some(&json!([])),
        &[("request-id", id)],
    )
    .await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST);
    assert_eq!(refused.headers["request-id"], id);
}

/// A REST request with exactly `headers` (no defaults), JSON body when given.
async fn bare(bridge: &TestBridge, method: Method, path: &str, headers: &[(&str, &str)]) -> Reply {
    let mut request = bridge
        .client
        .request(method.clone(), format!("{}{path}", rest_url(bridge)));
    if method != Method::GET {
        request = request
            .header("content-type", "application/json")
            .body("{}");
    }
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = request.send().await.unwrap();
    Reply {
        status: response.status(),
        headers: response.headers().clone(),
        text: response.text().await.unwrap(),
    }
}

#[tokio::test]
async fn headers_the_openapi_requires_are_named_when_missing() {
    let bridge = TestBridge::sample().await;
    let agent = format!("profile=\"{AGENT_PROFILE}\"");
    // Request-Id: required on every operation; the refusal still carries a fresh id to quote.
    let no_id = bare(
        &bridge,
        Method::POST,
        "/catalog/search",
        &[("ucp-agent", &agent)],
    )
    .await;
    assert_eq!(no_id.status, StatusCode::BAD_REQUEST, "{}", no_id.text);
    let message = no_id.error_message();
    assert_eq!(message["code"], "invalid_request");
    assert!(
        message["content"].as_str().unwrap().contains("Request-Id"),
        "{message}"
    );
    assert!(no_id.headers.contains_key("request-id"));
    // UCP-Agent: required on every operation (NEG-005's invalid_profile_url).
    let no_agent = bare(&bridge, Method::GET, "/carts/c1", &[("request-id", "r-1")]).await;
    assert_eq!(
        no_agent.status,
        StatusCode::BAD_REQUEST,
        "{}",
        no_agent.text
    );
    assert_eq!(no_agent.json()["code"], "invalid_profile_url");
    assert!(no_agent.text.contains("UCP-Agent"), "{}", no_agent.text);
    // Idempotency-Key: required on create, update and cancel, and nowhere else.
    let both = [("ucp-agent", agent.as_str()), ("request-id", "r-1")];
    for (method, path) in [
        (Method::POST, "/carts"),
        (Method::PUT, "/carts/c1"),
        (Method::POST, "/carts/c1/cancel"),
    ] {
        let reply = bare(&bridge, method.clone(), path, &both).await;
        assert_eq!(
            reply.status,
            StatusCode::BAD_REQUEST,
            "{path}: {}",
            reply.text
        );
        let message = reply.error_message();
        assert!(
            message["content"]
                .as_str()
                .unwrap()
                .contains("Idempotency-Key"),
            "{method} {path}: {message}"
        );
    }
    let read = bare(&bridge, Method::GET, "/carts/c1", &both).await;
    assert!(!read.text.contains("Idempotency-Key"), "{}", read.text);
    let search = send(
        &bridge,
        Method::POST,
        "/catalog/search",
        Some(&json!({"query": "shirt"})),
        &[],
    )
    .await;
    assert_eq!(search.status, StatusCode::OK, "{}", search.text);
}

#[tokio::test]
async fn bad_requests_name_the_body_path() {
    let bridge = TestBridge::sample().await;
    // A bad field: 400 with the JSONPath from the REST body's root (ERR-006, ERR-035).
    let bad = post(
        &bridge,
        "/catalog/search",
        json!({"query": "shirt", "pagination": {"limit": 0}}),
    )
    .await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST, "{}", bad.text);
    let message = bad.error_message();
    assert_eq!(message["path"], "$.pagination.limit", "{message}");

    // Malformed JSON and a body that is not an object.
    for raw in ["{not json", "[1]"] {
        let reply = bridge
            .client
            .post(format!("{}/catalog/search", rest_url(&bridge)))
            .header("content-type", "application/json")
            .header("ucp-agent", format!("profile=\"{AGENT_PROFILE}\""))
            .header("request-id", "r-1")
            .body(raw)
            .send()
            .await
            .unwrap();
        assert_eq!(reply.status(), StatusCode::BAD_REQUEST, "{raw}");
    }

    // CAT-009 … CAT-011: neither query nor filters is refused with the envelope's messages.
    let empty = post(&bridge, "/catalog/search", json!({})).await;
    assert_eq!(empty.status, StatusCode::BAD_REQUEST, "{}", empty.text);
    empty.error_message();

    // catalog/rest.md conformance 5: past the lookup batch, 400 request_too_large.
    let ids: Vec<String> = (0..51).map(|n| format!("prod_{n}")).collect();
    let batch = post(&bridge, "/catalog/lookup", json!({"ids": ids})).await;
    assert_eq!(batch.status, StatusCode::BAD_REQUEST, "{}", batch.text);
    assert_eq!(batch.error_message()["code"], "request_too_large");
}

#[tokio::test]
async fn media_types_and_body_size() {
    let bridge = TestBridge::sample().await;
    let url = format!("{}/catalog/search", rest_url(&bridge));
    let profile = format!("profile=\"{AGENT_PROFILE}\"");
    // OVR-008: a body that is not JSON is 415.
    let text = bridge
        .client
        .post(&url)
        .header("content-type", "text/plain")
        .header("ucp-agent", &profile)
        .header("request-id", "r-1")
        .body("{\"query\": \"shirt\"}")
        .send()
        .await
        .unwrap();
    assert_eq!(text.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
    // An Accept that excludes JSON is 406; one that admits it is served.
    let html = send(
        &bridge,
        Method::POST,
        "/catalog/search",
        Some(&json!({"query": "shirt"})),
        &[("accept", "text/html")],
    )
    .await;
    assert_eq!(html.status, StatusCode::NOT_ACCEPTABLE);
    let any = send(
        &bridge,
        Method::POST,
        "/catalog/search",
        Some(&json!({"query": "shirt"})),
        &[("accept", "text/html, */*;q=0.1")],
    )
    .await;
    assert_eq!(any.status, StatusCode::OK);
    // Past [limits] max_body_bytes: 413 request_too_large.
    let huge = json!({"query": "x".repeat(2 * 1024 * 1024)});
    let large = post(&bridge, "/catalog/search", huge).await;
    assert_eq!(large.status, StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(large.error_message()["code"], "request_too_large");
}

#[tokio::test]
async fn the_agent_profile_comes_from_ucp_agent() {
    // SIG-039, SIG-040, NEG-005: a UCP-Agent that is not a dictionary with a quoted profile,
    // or none at all, is 400 invalid_profile_url with the overview's {code, content}.
    let bridge = TestBridge::sample().await;
    let url = format!("{}/catalog/search", rest_url(&bridge));
    for header in [
        Some("https://agent.example/.well-known/ucp"),
        Some("v=1"),
        None,
    ] {
        let mut request = bridge
            .client
            .post(&url)
            .header("content-type", "application/json")
            .header("request-id", "r-1")
            .body(r#"{"query":"shirt"}"#);
        if let Some(header) = header {
            request = request.header("ucp-agent", header);
        }
        let reply = request.send().await.unwrap();
        assert_eq!(reply.status(), StatusCode::BAD_REQUEST, "{header:?}");
        let body: Value = reply.json().await.unwrap();
        assert_eq!(body["code"], "invalid_profile_url", "{body}");
    }
    // With [agents] default_profile the merchant lets agents without a profile in: a call
    // without UCP-Agent is served as that profile, as over MCP, and the answer says so.
    let defaulted = TestBridge::start(&format!(
        "[agents]\ndefault_profile = \"{AGENT_PROFILE}\"\n"
    ))
    .await;
    let reply = defaulted
        .client
        .post(format!("{}/catalog/search", rest_url(&defaulted)))
        .header("content-type", "application/json")
        .header("request-id", "r-1")
        .body(r#"{"query":"shirt"}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(reply.status(), StatusCode::OK);
    let body: Value = reply.json().await.unwrap();
    assert!(!body["products"].as_array().unwrap().is_empty(), "{body}");
    let notice = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|message| message["code"] == "default_profile")
        .unwrap_or_else(|| panic!("no default_profile notice: {body}"));
    assert_eq!(notice["type"], "info", "{body}");
}

#[tokio::test]
async fn an_unfetchable_profile_is_424() {
    // NEG-003 over REST.
    let bridge = TestBridge::start(
        "[negotiation]\nenabled = true\nallow_http_hosts = [\"127.0.0.1\"]\nallow_private_hosts = [\"127.0.0.1\"]\ntimeout_ms = 500\n",
    )
    .await;
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let reply = bridge
        .client
        .post(format!("{}/catalog/search", rest_url(&bridge)))
        .header("content-type", "application/json")
        .header("request-id", "r-1")
        .header(
            "ucp-agent",
            format!("profile=\"http://127.0.0.1:{closed}/p\""),
        )
        .body(r#"{"query":"shirt"}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(reply.status(), StatusCode::FAILED_DEPENDENCY);
    let body: Value = reply.json().await.unwrap();
    assert_eq!(body["code"], "profile_unreachable");
}

#[tokio::test]
async fn access_refusals_are_401_and_403() {
    use sha2::Digest;
    let token = "rest-token";
    let digest = hex::encode(sha2::Sha256::digest(token.as_bytes()));
    let bridge = TestBridge::start(&format!(
        "[access]\nbearer_token_sha256 = [\"{digest}\"]\nallowed_profiles = [\"https://someone-else.example/p\"]\n"
    ))
    .await;
    let body = json!({"query": "shirt"});
    let anonymous = post(&bridge, "/catalog/search", body.clone()).await;
    assert_eq!(anonymous.status, StatusCode::UNAUTHORIZED);
    assert_eq!(anonymous.headers["www-authenticate"], "Bearer");
    assert_eq!(anonymous.error_message()["code"], "unauthorized");
    let bearer = format!("Bearer {token}");
    let forbidden = send(
        &bridge,
        Method::POST,
        "/catalog/search",
        Some(&body),
        &[("authorization", &bearer)],
    )
    .await;
    assert_eq!(
        forbidden.status,
        StatusCode::FORBIDDEN,
        "{}",
        forbidden.text
    );
    assert_eq!(forbidden.error_message()["code"], "forbidden");
}

#[tokio::test]
async fn throttled_calls_say_when_to_retry() {
    // NEG-013: 429 carries Retry-After.
    let bridge = TestBridge::start("[inbound]\nper_agent_per_minute = 1\n").await;
    let body = json!({"query": "shirt"});
    let first = post(&bridge, "/catalog/search", body.clone()).await;
    assert_eq!(first.status, StatusCode::OK);
    let second = post(&bridge, "/catalog/search", body).await;
    assert_eq!(second.status, StatusCode::TOO_MANY_REQUESTS);
    assert!(second.headers.contains_key("retry-after"));
    assert_eq!(second.error_message()["code"], "rate_limited");
}

fn rest_binding(profile: &Value, service: &str) -> Value {
    profile["ucp"]["services"][service]
        .as_array()
        .unwrap()
        .iter()
        .find(|binding| binding["transport"] == "rest")
        .cloned()
        .unwrap_or(Value::Null)
}

#[tokio::test]
async fn profiles_declare_rest_beside_mcp() {
    // CAT-023, DISC-005 (the endpoint is where the resources are).
    let bridge = TestBridge::start("[server]\nprotocol = \"both\"\n").await;
    let base = bridge.base_url.clone();
    for (path, service, rest) in [
        ("/.well-known/bcp", "br.dev.bcp.shopping", "/bcp"),
        ("/.well-known/ucp", "dev.ucp.shopping", "/ucp"),
        ("/.well-known/ucp/2026-04-08", "dev.ucp.shopping", "/ucp"),
    ] {
        let profile: Value = bridge.get(path).await.json().await.unwrap();
        let transports: Vec<&str> = profile["ucp"]["services"][service]
            .as_array()
            .unwrap()
            .iter()
            .map(|binding| binding["transport"].as_str().unwrap())
            .collect();
        assert_eq!(transports, ["mcp", "rest"], "{path}");
        let binding = rest_binding(&profile, service);
        assert_eq!(binding["endpoint"], format!("{base}{rest}"), "{path}");
        assert!(
            binding["schema"]
                .as_str()
                .unwrap()
                .ends_with("/services/shopping/rest.openapi.json")
        );
        assert_eq!(binding["version"], profile["ucp"]["version"]);
    }
    // The UCP door answers in its own namespace over REST too.
    let ucp = bridge
        .client
        .post(format!("{base}/ucp/catalog/search"))
        .header("content-type", "application/json")
        .header("request-id", "r-1")
        .header("ucp-agent", format!("profile=\"{AGENT_PROFILE}\""))
        .body(r#"{"query":"shirt"}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(ucp.status(), StatusCode::OK);
    let body: Value = ucp.json().await.unwrap();
    assert!(
        body["ucp"]["capabilities"]
            .as_object()
            .unwrap()
            .contains_key("dev.ucp.shopping.catalog.search")
    );
}

#[tokio::test]
async fn transports_can_be_turned_off() {
    let bridge = TestBridge::start("[server]\ntransports = [\"mcp\"]\n").await;
    assert!(bridge.endpoints[0].rest_url.is_none());
    let profile: Value = bridge.get("/.well-known/bcp").await.json().await.unwrap();
    assert_eq!(rest_binding(&profile, "br.dev.bcp.shopping"), Value::Null);
    let reply = bridge
        .client
        .post(format!("{}/bcp/catalog/search", bridge.base_url))
        .header("content-type", "application/json")
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(reply.status(), StatusCode::NOT_FOUND);

    let rest_only = TestBridge::start("[server]\ntransports = [\"rest\"]\n").await;
    // No MCP endpoint is mounted, so none is named (`Bridge::mcp_url`, each endpoint's).
    assert!(rest_only.mcp_url.is_empty());
    assert!(rest_only.endpoints[0].mcp_url.is_none());
    let profile: Value = rest_only
        .get("/.well-known/bcp")
        .await
        .json()
        .await
        .unwrap();
    let transports = profile["ucp"]["services"]["br.dev.bcp.shopping"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(transports, 1);
    let search = post(&rest_only, "/catalog/search", json!({"query": "shirt"})).await;
    assert_eq!(search.status, StatusCode::OK);
}

/// A signed REST POST to `url` (the test signer covers @method, @authority, @path,
/// content-digest, content-type and ucp-agent), its signature made for `signed_url` and its
/// digest over `signed_body`.
async fn signed_post(
    bridge: &TestBridge,
    signing: &crate::support::signer::Signing<'_>,
    url: &str,
    signed_url: &str,
    body: &[u8],
) -> Reply {
    let headers = signing.headers(signed_url, body);
    let mut request = bridge
        .client
        .post(url)
        .header("request-id", "r-1")
        .body(body.to_vec());
    for (name, value) in headers {
        request = request.header(name, value);
    }
    let response = request.send().await.unwrap();
    Reply {
        status: response.status(),
        headers: response.headers().clone(),
        text: response.text().await.unwrap(),
    }
}

#[tokio::test]
async fn signatures_cover_the_rest_request_itself() {
    use crate::support::signer::{ProfileHost, Signing, TestKey};
    // SIG-001, SIG-014, SIG-015, SIG-018: the pipeline's signature step verifies the REST
    // request's own @method/@authority/@path, digest and UCP-Agent.
    let key = TestKey::es256();
    let host = ProfileHost::start(vec![key.jwk("k1")]).await;
    let profile = host.url("agent-0825");
    let bridge = TestBridge::start(
        "[negotiation]\nenabled = false\nallow_http_hosts = [\"127.0.0.1\"]\nallow_private_hosts = [\"127.0.0.1\"]\ntimeout_ms = 1000\n[signatures]\nmode = \"enforce\"\n",
    )
    .await;
    let search = format!("{}/catalog/search", rest_url(&bridge));
    let lookup = format!("{}/catalog/lookup", rest_url(&bridge));
    let body = br#"{"query":"shirt"}"#;
    let mut signing = Signing::new(&key, "k1", &profile);
    let served = signed_post(&bridge, &signing, &search, &search, body).await;
    assert_eq!(served.status, StatusCode::OK, "{}", served.text);
    // Signed for another resource: @path differs, the signature does not verify.
    let moved = signed_post(&bridge, &signing, &search, &lookup, body).await;
    assert_eq!(moved.status, StatusCode::UNAUTHORIZED, "{}", moved.text);
    assert_eq!(moved.error_message()["code"], "signature_invalid");
    // SIG-034: a body that is not the digested one.
    signing.signed_body = Some(br#"{"query":"shoes"}"#);
    let tampered = signed_post(&bridge, &signing, &search, &search, body).await;
    assert_eq!(
        tampered.status,
        StatusCode::BAD_REQUEST,
        "{}",
        tampered.text
    );
    assert_eq!(tampered.error_message()["code"], "digest_mismatch");
    // SIG-031: unsigned in enforce mode.
    let unsigned = post(&bridge, "/catalog/search", json!({"query": "shirt"})).await;
    assert_eq!(unsigned.status, StatusCode::UNAUTHORIZED);
    assert_eq!(unsigned.error_message()["code"], "signature_missing");
}

#[tokio::test]
async fn rest_calls_are_counted_like_mcp_calls() {
    // The merchant page reads the pipeline's activity record, whichever front a call used.
    let bridge = TestBridge::sample().await;
    bridge
        .catalog("search_catalog", json!({"query": "shirt"}))
        .await;
    let rest = post(&bridge, "/catalog/search", json!({"query": "shirt"})).await;
    assert_eq!(rest.status, StatusCode::OK);
    let refused = post(
        &bridge,
        "/catalog/search",
        json!({"query": "shirt", "pagination": {"limit": 0}}),
    )
    .await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST);
    let page = bridge.get("/").await.text().await.unwrap();
    let calls = page.split(r#"id="calls""#).nth(1).unwrap();
    assert!(
        calls.contains("<td>search_catalog</td><td>3</td>"),
        "{calls}"
    );
    assert!(calls.contains("success 2, invalid 1"), "{calls}");
}

#[tokio::test]
async fn foreign_host_and_origin_are_forbidden_as_on_mcp() {
    let bridge = TestBridge::sample().await;
    let body = json!({"query": "camiseta"});
    for (header, value) in [("host", "evil.example"), ("origin", "https://evil.example")] {
        let reply = send(
            &bridge,
            Method::POST,
            "/catalog/search",
            Some(&body),
            &[(header, value)],
        )
        .await;
        assert_eq!(
            reply.status,
            StatusCode::FORBIDDEN,
            "{header}: {}",
            reply.text
        );
        assert_eq!(reply.error_message()["code"], "forbidden", "{}", reply.text);
    }
    let own = bridge.base_url.clone();
    let reply = send(
        &bridge,
        Method::POST,
        "/catalog/search",
        Some(&body),
        &[("origin", own.as_str())],
    )
    .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
}

#[tokio::test]
async fn a_wrong_method_is_405_with_the_envelope_and_allow() {
    let bridge = TestBridge::sample().await;
    for (method, path, allow) in [
        (Method::GET, "/catalog/search", "POST"),
        (Method::DELETE, "/carts/c1", "GET, PUT, HEAD"),
        (Method::GET, "/carts", "POST"),
    ] {
        let reply = send(&bridge, method.clone(), path, None, &[]).await;
        assert_eq!(
            reply.status,
            StatusCode::METHOD_NOT_ALLOWED,
            "{method} {path}"
        );
        assert_eq!(reply.headers["content-type"], "application/json");
        assert_eq!(reply.headers["allow"], allow, "{method} {path}");
        assert_eq!(reply.error_message()["code"], "method_not_allowed");
    }
}
