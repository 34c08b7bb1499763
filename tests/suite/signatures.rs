//! RFC 9421 request signatures on the MCP endpoint (`[signatures]`): a test agent signs its
//! calls with keys its profile publishes on loopback, and the bridge accepts, refuses (with
//! the registry's codes and statuses) or only logs, by mode.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::support::TestBridge;
use crate::support::signer::{ProfileHost, Signing, TestKey};

fn config(mode: &str) -> String {
    format!(
        "[negotiation]\nenabled = false\nallow_http_hosts = [\"127.0.0.1\"]\nallow_private_hosts = [\"127.0.0.1\"]\ntimeout_ms = 1000\n[signatures]\nmode = \"{mode}\"\n"
    )
}

fn search_body(profile: &str) -> Vec<u8> {
    json!({
        "jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "search_catalog", "arguments": {
            "meta": {"ucp-agent": {"profile": profile}}, "catalog": {"query": "shirt"}}}
    })
    .to_string()
    .into_bytes()
}

async fn send(
    bridge: &TestBridge,
    headers: &[(String, String)],
    body: Vec<u8>,
) -> (StatusCode, Value) {
    let mut request = bridge
        .client
        .post(&bridge.mcp_url)
        .header("accept", "application/json");
    for (name, value) in headers {
        request = request.header(name, value);
    }
    let response = request.body(body).send().await.unwrap();
    let status = response.status();
    let text = response.text().await.unwrap();
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

/// The registry code, JSON-RPC code and HTTP status of a refusal; the id is echoed.
fn refusal(status: StatusCode, reply: &Value) -> (u16, i64, String) {
    assert_eq!(reply["id"], 7, "{reply}");
    assert!(
        !reply["error"]["data"]["content"]
            .as_str()
            .unwrap_or("")
            .is_empty(),
        "{reply}"
    );
    (
        status.as_u16(),
        reply["error"]["code"].as_i64().unwrap_or(0),
        reply["error"]["data"]["code"]
            .as_str()
            .unwrap_or("")
            .to_owned(),
    )
}

fn served(status: StatusCode, reply: &Value) {
    assert_eq!(status, StatusCode::OK, "{reply}");
    assert!(
        reply["result"]["structuredContent"]["products"].is_array(),
        "{reply}"
    );
}

#[tokio::test]
async fn es256_and_ed25519_signed_requests_are_served() {
    // SIG-001, SIG-002, SIG-010, SIG-019 (ES256 raw r‖s); SIG-046 (Ed25519); SIG-008
    // (04-08 signing_keys) and SIG-043 (08-25 keys).
    let es256 = TestKey::es256();
    let ed25519 = TestKey::ed25519();
    let host = ProfileHost::start(vec![es256.jwk("p256-1"), ed25519.jwk("ed-1")]).await;
    let bridge = TestBridge::start(&config("enforce")).await;
    for (key, kid, path) in [
        (&es256, "p256-1", "agent-0408"),
        (&ed25519, "ed-1", "agent-0408"),
        (&es256, "p256-1", "agent-0825"),
        (&ed25519, "ed-1", "agent-0825"),
    ] {
        let profile = host.url(path);
        let body = search_body(&profile);
        let headers = Signing::new(key, kid, &profile).headers(&bridge.mcp_url, &body);
        let (status, reply) = send(&bridge, &headers, body).await;
        served(status, &reply);
    }
    // SIG-008: keys are cached per profile, not fetched per request.
    assert_eq!(host.fetches(), 2);
}

#[tokio::test]
async fn a_key_removed_from_keys_no_longer_verifies() {
    // SIG-043: keys[] is what every 08-25 verifier reads; removing a key there revokes it,
    // whatever an old signing_keys beside it still lists.
    let key = TestKey::es256();
    let host = ProfileHost::start(vec![key.jwk("k1")]).await;
    let bridge = TestBridge::start(&config("enforce")).await;
    let profile = host.url("agent-revoked");
    let body = search_body(&profile);
    let headers = Signing::new(&key, "k1", &profile).headers(&bridge.mcp_url, &body);
    let (status, reply) = send(&bridge, &headers, body).await;
    assert_eq!(
        refusal(status, &reply),
        (401, -32000, "key_not_found".to_owned())
    );
}

#[tokio::test]
async fn unsigned_requests_are_refused_in_enforce() {
    // SIG-013, SIG-031: signature_missing → 401 / -32000.
    let bridge = TestBridge::start(&config("enforce")).await;
    let body = search_body("https://agent.example/.well-known/ucp");
    let headers = vec![("content-type".to_owned(), "application/json".to_owned())];
    let (status, reply) = send(&bridge, &headers, body).await;
    assert_eq!(
        refusal(status, &reply),
        (401, -32000, "signature_missing".to_owned())
    );
}

#[tokio::test]
async fn a_tampered_body_is_a_digest_mismatch() {
    // SIG-010, SIG-034, SIG-038: digest_mismatch → 400 / -32600.
    let key = TestKey::es256();
    let host = ProfileHost::start(vec![key.jwk("k1")]).await;
    let bridge = TestBridge::start(&config("enforce")).await;
    let profile = host.url("agent-0825");
    let body = search_body(&profile);
    let headers = Signing::new(&key, "k1", &profile).headers(&bridge.mcp_url, &body);
    let tampered = String::from_utf8(body)
        .unwrap()
        .replace("shirt", "shoes")
        .into_bytes();
    let (status, reply) = send(&bridge, &headers, tampered).await;
    assert_eq!(
        refusal(status, &reply),
        (400, -32600, "digest_mismatch".to_owned())
    );
}

#[tokio::test]
async fn a_signature_by_another_key_is_invalid() {
    // SIG-032, SIG-036: signature_invalid → 401. The kid is published, the signer is not
    // its owner; and a signature over a digest of another body fails the same way.
    let published = TestKey::es256();
    let impostor = TestKey::es256();
    let host = ProfileHost::start(vec![published.jwk("k1")]).await;
    let bridge = TestBridge::start(&config("enforce")).await;
    let profile = host.url("agent-0408");
    let body = search_body(&profile);
    let headers = Signing::new(&impostor, "k1", &profile).headers(&bridge.mcp_url, &body);
    let (status, reply) = send(&bridge, &headers, body.clone()).await;
    assert_eq!(
        refusal(status, &reply),
        (401, -32000, "signature_invalid".to_owned())
    );
    // A signature copied onto a request to another path does not verify either.
    let elsewhere = bridge.mcp_url.replace("/bcp/mcp", "/other/mcp");
    let headers = Signing::new(&published, "k1", &profile).headers(&elsewhere, &body);
    let (status, reply) = send(&bridge, &headers, body).await;
    assert_eq!(
        refusal(status, &reply),
        (401, -32000, "signature_invalid".to_owned())
    );
}

#[tokio::test]
async fn an_unknown_kid_is_key_not_found_after_one_refresh() {
    // SIG-033, SIG-037: key_not_found → 401; the profile is re-fetched once for an unknown
    // kid, not on every request.
    let key = TestKey::ed25519();
    let host = ProfileHost::start(vec![key.jwk("known")]).await;
    let bridge = TestBridge::start(&config("enforce")).await;
    let profile = host.url("agent-0825");
    for _ in 0..3 {
        let body = search_body(&profile);
        let headers = Signing::new(&key, "unknown", &profile).headers(&bridge.mcp_url, &body);
        let (status, reply) = send(&bridge, &headers, body).await;
        assert_eq!(
            refusal(status, &reply),
            (401, -32000, "key_not_found".to_owned())
        );
    }
    assert_eq!(host.fetches(), 2);
}

#[tokio::test]
async fn a_profile_with_an_etag_is_revalidated_not_fetched_whole() {
    // DISC-009 (issue 27 item 8): the profile came with an ETag, so the refresh for an unknown
    // kid asks If-None-Match, and the 304 reuses the document held.
    let key = TestKey::ed25519();
    let host = ProfileHost::start(vec![key.jwk("known")]).await;
    let bridge = TestBridge::start(&config("enforce")).await;
    let profile = host.url("agent-etag");
    let body = search_body(&profile);
    let headers = Signing::new(&key, "known", &profile).headers(&bridge.mcp_url, &body);
    let (status, reply) = send(&bridge, &headers, body).await;
    served(status, &reply);
    let body = search_body(&profile);
    let headers = Signing::new(&key, "unknown", &profile).headers(&bridge.mcp_url, &body);
    let (status, reply) = send(&bridge, &headers, body).await;
    assert_eq!(
        refusal(status, &reply),
        (401, -32000, "key_not_found".to_owned())
    );
    assert_eq!((host.fetches(), host.not_modified()), (2, 1));
}

#[tokio::test]
async fn on_a_cold_cache_the_signature_check_and_negotiation_fetch_the_profile_once() {
    // Issue 27 item 8: one call's two readers of the agent profile share one fetch.
    let key = TestKey::ed25519();
    let host = ProfileHost::start(vec![key.jwk("k1")]).await;
    let bridge =
        TestBridge::start(&config("enforce").replace("enabled = false", "enabled = true")).await;
    let profile = host.url("agent-0825");
    let body = search_body(&profile);
    let headers = Signing::new(&key, "k1", &profile).headers(&bridge.mcp_url, &body);
    let (_, reply) = send(&bridge, &headers, body).await;
    // Negotiated (whatever it agreed): the profile was read by both steps.
    assert!(
        reply["error"]["data"]["code"] != "signature_invalid",
        "{reply}"
    );
    assert_eq!(host.fetches(), 1, "{reply}");
}

#[tokio::test]
async fn a_key_of_an_unsupported_type_is_algorithm_unsupported() {
    // SIG-035: the kid resolves to a key whose algorithm is not verified here → 400 / -32600;
    // SIG-049: the rest of the key set still works.
    let key = TestKey::es256();
    let rsa = json!({"kid": "rsa-1", "kty": "RSA", "n": "sXch", "e": "AQAB", "alg": "RS256"});
    let host = ProfileHost::start(vec![rsa, key.jwk("k1")]).await;
    let bridge = TestBridge::start(&config("enforce")).await;
    let profile = host.url("agent-0825");
    let body = search_body(&profile);
    let headers = Signing::new(&key, "rsa-1", &profile).headers(&bridge.mcp_url, &body);
    let (status, reply) = send(&bridge, &headers, body).await;
    assert_eq!(
        refusal(status, &reply),
        (400, -32600, "algorithm_unsupported".to_owned())
    );
    let body = search_body(&profile);
    let headers = Signing::new(&key, "k1", &profile).headers(&bridge.mcp_url, &body);
    let (status, reply) = send(&bridge, &headers, body).await;
    served(status, &reply);
}

#[tokio::test]
async fn a_signature_must_cover_the_body_and_the_agent() {
    // SIG-051 (SIG-014, SIG-015, SIG-018 enforced by the verifier): a signature that leaves
    // the digest or the UCP-Agent header uncovered authenticates nothing.
    let key = TestKey::es256();
    let host = ProfileHost::start(vec![key.jwk("k1")]).await;
    let bridge = TestBridge::start(&config("enforce")).await;
    let profile = host.url("agent-0408");
    for dropped in ["content-digest", "ucp-agent", "@path"] {
        let body = search_body(&profile);
        let mut signing = Signing::new(&key, "k1", &profile);
        signing.components.retain(|component| *component != dropped);
        let headers = signing.headers(&bridge.mcp_url, &body);
        let (status, reply) = send(&bridge, &headers, body).await;
        assert_eq!(
            refusal(status, &reply),
            (401, -32000, "signature_invalid".to_owned()),
            "{dropped}"
        );
    }
}

fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}

#[tokio::test]
async fn expired_stale_and_replayed_signatures_are_refused() {
    // SIG-030: `created` is optional; when a signature carries a window it is held to it,
    // and a nonce is good once.
    let key = TestKey::ed25519();
    let host = ProfileHost::start(vec![key.jwk("k1")]).await;
    let bridge = TestBridge::start(&config("enforce")).await;
    let profile = host.url("agent-0825");
    let now = unix_now();
    for params in [
        format!(";created={};expires={}", now - 120, now - 60),
        format!(";created={}", now - 3_600),
        format!(";created={}", now + 3_600),
    ] {
        let body = search_body(&profile);
        let mut signing = Signing::new(&key, "k1", &profile);
        signing.params = params.clone();
        let headers = signing.headers(&bridge.mcp_url, &body);
        let (status, reply) = send(&bridge, &headers, body).await;
        assert_eq!(
            refusal(status, &reply),
            (401, -32000, "signature_invalid".to_owned()),
            "{params}"
        );
    }
    let body = search_body(&profile);
    let mut signing = Signing::new(&key, "k1", &profile);
    signing.params = format!(
        ";created={now};expires={};nonce=\"n-{}\"",
        now + 300,
        uuid::Uuid::new_v4()
    );
    let headers = signing.headers(&bridge.mcp_url, &body);
    let (status, reply) = send(&bridge, &headers, body.clone()).await;
    served(status, &reply);
    let (status, reply) = send(&bridge, &headers, body).await;
    assert_eq!(
        refusal(status, &reply),
        (401, -32000, "signature_invalid".to_owned())
    );
    assert!(
        reply["error"]["data"]["content"]
            .as_str()
            .unwrap()
            .contains("nonce"),
        "{reply}"
    );
}

#[tokio::test]
async fn a_replayed_signed_mutation_is_answered_from_the_idempotency_store() {
    // SIG-030 / SIG-044: replay protection is the idempotency key: the same signed
    // create_cart sent twice makes one cart.
    let key = TestKey::es256();
    let host = ProfileHost::start(vec![key.jwk("k1")]).await;
    let bridge = TestBridge::start(&config("enforce")).await;
    let profile = host.url("agent-0408");
    let body = json!({
        "jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "create_cart", "arguments": {
            "meta": {"ucp-agent": {"profile": profile}, "idempotency-key": uuid::Uuid::new_v4().to_string()},
            "cart": {"line_items": [{"item": {"id": "item_123"}, "quantity": 1}]}}}
    })
    .to_string()
    .into_bytes();
    let headers = Signing::new(&key, "k1", &profile).headers(&bridge.mcp_url, &body);
    let (status, first) = send(&bridge, &headers, body.clone()).await;
    assert_eq!(status, StatusCode::OK, "{first}");
    let (status, second) = send(&bridge, &headers, body).await;
    assert_eq!(status, StatusCode::OK, "{second}");
    let id = &first["result"]["structuredContent"]["id"];
    assert!(id.is_string(), "{first}");
    assert_eq!(&second["result"]["structuredContent"]["id"], id);
}

/// A signed `create_cart` frame keyed `key`, for one item; `rmcp` adds the MCP 2026-07-28
/// `_meta` that sends it through rmcp rather than the front.
fn create_cart_body(profile: &str, key: &str, item: &str, rmcp: bool) -> Vec<u8> {
    let mut params = json!({"name": "create_cart", "arguments": {
        "meta": {"ucp-agent": {"profile": profile}, "idempotency-key": key},
        "cart": {"line_items": [{"item": {"id": item}, "quantity": 1}]}}});
    if rmcp {
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "signer", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {}
        });
    }
    json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params})
        .to_string()
        .into_bytes()
}

#[tokio::test]
async fn a_byte_identical_retry_with_the_same_nonce_is_answered_from_the_idempotency_store() {
    // SIG-030 / SIG-044 (issue 27 item 5): a nonce is good once, except for the retry of a
    // keyed mutation whose answer is recorded: that retry gets the recorded answer, through
    // the front and through rmcp alike; a reused nonce on anything else is refused.
    let key = TestKey::ed25519();
    let host = ProfileHost::start(vec![key.jwk("k1")]).await;
    let bridge = TestBridge::start(&config("enforce")).await;
    let profile = host.url("agent-0825");
    let now = unix_now();
    let nonce_params = || {
        format!(
            ";created={now};expires={};nonce=\"n-{}\"",
            now + 300,
            uuid::Uuid::new_v4()
        )
    };
    for rmcp in [false, true] {
        let mut extra = Vec::new();
        if rmcp {
            for (name, value) in [
                ("mcp-protocol-version", "2026-07-28"),
                ("mcp-method", "tools/call"),
                ("mcp-name", "create_cart"),
            ] {
                extra.push((name.to_owned(), value.to_owned()));
            }
        }
        let idempotency_key = uuid::Uuid::new_v4().to_string();
        let body = create_cart_body(&profile, &idempotency_key, "item_123", rmcp);
        let mut signing = Signing::new(&key, "k1", &profile);
        signing.params = nonce_params();
        let mut headers = signing.headers(&bridge.mcp_url, &body);
        headers.extend(extra.clone());
        let (status, first) = send(&bridge, &headers, body.clone()).await;
        assert_eq!(status, StatusCode::OK, "{first}");
        let id = first["result"]["structuredContent"]["id"].clone();
        assert!(id.is_string(), "{first}");
        // The same bytes, the same signature and nonce: the first answer again, no new cart.
        let (status, second) = send(&bridge, &headers, body).await;
        assert_eq!(status, StatusCode::OK, "rmcp={rmcp}: {second}");
        assert_eq!(second["result"]["structuredContent"]["id"], id, "{second}");
        // The nonce reused on another payload under the same key, or on a fresh key: nothing
        // is recorded for either, so the reuse is refused (not run, not a 409).
        for (other_key, item) in [
            (idempotency_key.as_str(), "item_456"),
            ("a-fresh-key", "item_123"),
        ] {
            let body = create_cart_body(&profile, other_key, item, rmcp);
            let mut headers = signing.headers(&bridge.mcp_url, &body);
            headers.extend(extra.clone());
            let (status, reply) = send(&bridge, &headers, body).await;
            // rmcp answers a tool's refusal with HTTP 200; the front with the code's status.
            let expected = if rmcp {
                StatusCode::OK
            } else {
                StatusCode::UNAUTHORIZED
            };
            assert_eq!(status, expected, "rmcp={rmcp}: {reply}");
            assert_eq!(
                reply["error"]["data"]["code"], "signature_invalid",
                "{reply}"
            );
        }
    }
}

#[tokio::test]
async fn the_signed_profile_must_be_the_calls_profile() {
    // Identity binding: a key of one agent does not speak for another agent's profile.
    let key = TestKey::es256();
    let host = ProfileHost::start(vec![key.jwk("k1")]).await;
    let bridge = TestBridge::start(&config("enforce")).await;
    let body = search_body("https://someone-else.example/.well-known/ucp");
    let headers = Signing::new(&key, "k1", &host.url("agent-0408")).headers(&bridge.mcp_url, &body);
    let (status, reply) = send(&bridge, &headers, body).await;
    assert_eq!(
        refusal(status, &reply),
        (401, -32000, "signature_invalid".to_owned())
    );
}

#[tokio::test]
async fn log_mode_serves_unsigned_and_failing_requests() {
    let key = TestKey::es256();
    let host = ProfileHost::start(vec![key.jwk("k1")]).await;
    let bridge = TestBridge::start(&config("log")).await;
    let profile = host.url("agent-0408");
    let unsigned = vec![("content-type".to_owned(), "application/json".to_owned())];
    let (status, reply) = send(&bridge, &unsigned, search_body(&profile)).await;
    served(status, &reply);
    let body = search_body(&profile);
    let mut signing = Signing::new(&key, "k1", &profile);
    signing.digest_override = Some("sha-256=:AAAA:".to_owned());
    let headers = signing.headers(&bridge.mcp_url, &body);
    let (status, reply) = send(&bridge, &headers, body).await;
    served(status, &reply);
    // The failing one was checked (its keys fetched) before it was served.
    assert_eq!(host.fetches(), 1);
}

#[tokio::test]
async fn log_is_the_default_and_its_warning_names_the_code() {
    let config = bcp_bridge::startup::BridgeConfig::from_toml("").unwrap();
    assert_eq!(config.signatures.mode, bcp_bridge::signatures::Mode::Log);
    // The warning a failing signature leaves in log mode, as the binary writes it (stderr).
    let mut child = std::process::Command::new(crate::support::binary::BIN)
        .args(["demo", "--listen", "127.0.0.1:0"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let url = std::io::BufRead::lines(stdout)
        .map_while(Result::ok)
        .find_map(|line| {
            line.strip_prefix("MCP endpoint: ")
                .map(|url| url.trim().to_owned())
        })
        .unwrap();
    let response = reqwest::Client::new()
        .post(&url)
        .header("content-type", "application/json")
        .header("accept", "application/json")
        .header("signature-input", "sig1=(\"@method\");keyid=\"k\"")
        .body(search_body("https://agent.example/.well-known/ucp"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let line = tokio::task::spawn_blocking(move || {
        std::io::BufRead::lines(stderr)
            .map_while(Result::ok)
            .find(|line| line.contains("request signature failed"))
    })
    .await
    .unwrap();
    let _ = child.kill();
    let _ = child.wait();
    let line = line.unwrap();
    assert!(line.contains("signature_missing"), "{line}");
}

#[tokio::test]
async fn off_mode_does_not_look() {
    let key = TestKey::es256();
    let host = ProfileHost::start(vec![key.jwk("k1")]).await;
    let bridge = TestBridge::start(&config("off")).await;
    let profile = host.url("agent-0408");
    let body = search_body(&profile);
    let mut signing = Signing::new(&key, "unknown", &profile);
    signing.digest_override = Some("sha-256=:AAAA:".to_owned());
    let headers = signing.headers(&bridge.mcp_url, &body);
    let (status, reply) = send(&bridge, &headers, body).await;
    served(status, &reply);
    assert_eq!(host.fetches(), 0);
}

#[tokio::test]
async fn the_section_is_checked_by_key() {
    for (text, key) in [
        ("[signatures]\nmode = \"strict\"\n", "signatures.mode"),
        (
            "[signatures]\nkey_cache_ttl_secs = 5\n",
            "signatures.key_cache_ttl_secs",
        ),
        ("[signatures]\nmod = \"off\"\n", "signatures.mod"),
    ] {
        let Err(bcp_bridge::startup::ConfigError::Invalid(problems)) =
            bcp_bridge::startup::BridgeConfig::from_toml(text)
        else {
            panic!("{text} should be refused");
        };
        assert_eq!(problems[0].key, key, "{text}");
    }
}
