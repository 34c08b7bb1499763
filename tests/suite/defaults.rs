//! Issue 35 item 3, "sensible defaults", driven over loopback HTTP as an attacker would: the
//! per-client budgets a bridge has without any `[inbound]` section, and `/metrics` behind the
//! bearer token and the Host rule of the agent endpoints.

use std::net::IpAddr;

use reqwest::StatusCode;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::support::TestBridge;

/// `[inbound] per_ip_per_minute` when the file does not set it.
const DEFAULT_PER_IP_PER_MINUTE: usize = 600;

fn get_product(profile: &str) -> Value {
    json!({
        "meta": {"ucp-agent": {"profile": profile}},
        "catalog": {"id": "prod_abc123"}
    })
}

fn frame(profile: &str) -> String {
    json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "get_product", "arguments": get_product(profile)}
    })
    .to_string()
}

/// A client that connects from `source`, another loopback address than the test's own.
fn client_from(source: [u8; 4]) -> reqwest::Client {
    reqwest::Client::builder()
        .local_address(IpAddr::from(source))
        .build()
        .unwrap()
}

async fn post_mcp(client: &reqwest::Client, bridge: &TestBridge, profile: &str) -> (u16, Value) {
    let response = client
        .post(&bridge.mcp_url)
        .header("content-type", "application/json")
        .header("accept", "application/json")
        .body(frame(profile))
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap())
}

#[tokio::test]
async fn the_default_budgets_refuse_a_flood_from_one_address_and_still_serve_another() {
    // Issue 35 item 3: no [inbound] section at all.
    let bridge = TestBridge::sample().await;
    let flood = "https://flood.example/profile.json";
    let mut sent = 0;
    let (status, refused) = loop {
        let (status, reply) = bridge.call_raw("get_product", get_product(flood)).await;
        sent += 1;
        if status != StatusCode::OK {
            break (status, reply);
        }
        assert!(sent < 5_000, "5,000 calls from one address were all served");
    };
    // A minute's budget at once: far more than any agent's burst is served before a refusal.
    assert!(
        sent > DEFAULT_PER_IP_PER_MINUTE,
        "refused at call {sent}: {refused}"
    );
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{refused}");
    assert_eq!(refused["error"]["code"], -32000, "{refused}");
    let retry_after = refused["error"]["data"]["retry_after"].as_u64().unwrap();
    assert!((1..=60).contains(&retry_after), "{refused}");

    // The budget refills while the test runs (a token every 60 s / the minute's budget), so a
    // call may find one fresh token; a budget of its own would serve hundreds. Hence "refused
    // within a few calls" rather than "the very next call".
    const REFILL_SLACK: usize = 3;
    // Naming another agent does not buy the flooding address a new budget.
    let mut refused_another = false;
    for _ in 0..REFILL_SLACK {
        let (status, _) = bridge
            .call_raw("get_product", get_product("https://another.example/p.json"))
            .await;
        if status == StatusCode::TOO_MANY_REQUESTS {
            refused_another = true;
            break;
        }
    }
    assert!(refused_another, "another agent's name bought a new budget");
    // REST shares the budget and says when to come back in the header too.
    let rest = bridge.endpoints[0].rest_url.clone().unwrap();
    let mut response = None;
    for _ in 0..REFILL_SLACK {
        let answer = bridge
            .client
            .post(format!("{rest}/catalog/product"))
            .header("ucp-agent", format!("profile=\"{flood}\""))
            .header("request-id", "flood")
            .header("content-type", "application/json")
            .body(json!({"id": "prod_abc123"}).to_string())
            .send()
            .await
            .unwrap();
        if answer.status() == StatusCode::TOO_MANY_REQUESTS {
            response = Some(answer);
            break;
        }
    }
    let response = response.expect("REST has a budget of its own");
    let header: u64 = response.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=60).contains(&header), "Retry-After {header}");

    // Another client, from another address, is served meanwhile.
    let (status, reply) = post_mcp(
        &client_from([127, 0, 0, 2]),
        &bridge,
        "https://buyer-agent.example/profile.json",
    )
    .await;
    assert_eq!(status, 200, "{reply}");
    assert_eq!(
        reply["result"]["structuredContent"]["product"]["id"], "prod_abc123",
        "{reply}"
    );
}

#[tokio::test]
async fn budgets_set_to_zero_are_off() {
    let bridge =
        TestBridge::start("[inbound]\nper_ip_per_minute = 0\nper_agent_per_minute = 0\n").await;
    for _ in 0..DEFAULT_PER_IP_PER_MINUTE + 50 {
        bridge
            .call("get_product", get_product("https://load.example/p.json"))
            .await;
    }
}

const TOKEN: &str = "metrics-scraper-token-7f3a";

fn with_token(extra: &str) -> String {
    let digest = hex::encode(Sha256::digest(TOKEN.as_bytes()));
    format!("[access]\nbearer_token_sha256 = [\"{digest}\"]\n{extra}")
}

async fn get(bridge: &TestBridge, path: &str, headers: &[(&str, &str)]) -> reqwest::Response {
    let mut request = bridge.client.get(format!("{}{path}", bridge.base_url));
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    request.send().await.unwrap()
}

#[tokio::test]
async fn metrics_need_the_bearer_token_when_tokens_are_set() {
    // Issue 35 item 3 / 5: `/metrics` without the token is refused when tokens are set.
    let bridge = TestBridge::start(&with_token("")).await;
    let bearer = format!("Bearer {TOKEN}");
    for (headers, challenge) in [
        (&[][..], "Bearer"),
        (
            &[("authorization", "Bearer not-the-token")][..],
            "Bearer error=\"invalid_token\"",
        ),
        (
            &[("authorization", "Basic bWV0cmljczptZXRyaWNz")][..],
            "Bearer error=\"invalid_token\"",
        ),
    ] {
        let response = get(&bridge, "/metrics", headers).await;
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED, "{headers:?}");
        assert_eq!(response.headers()["www-authenticate"], challenge);
        let body = response.text().await.unwrap();
        assert!(!body.contains("bcp_"), "metrics leaked: {body}");
    }
    let response = get(&bridge, "/metrics", &[("authorization", &bearer)]).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert!(
        response.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/plain; version=0.0.4")
    );
    // The probes stay open: orchestrators send no token.
    for probe in ["/healthz", "/readyz"] {
        assert_eq!(
            get(&bridge, probe, &[]).await.status(),
            StatusCode::OK,
            "{probe}"
        );
    }
    // Without tokens configured, a loopback scrape needs none.
    let open = TestBridge::sample().await;
    assert_eq!(get(&open, "/metrics", &[]).await.status(), StatusCode::OK);
}

#[tokio::test]
async fn metrics_refuse_a_foreign_host_like_the_agent_endpoints() {
    // Issue 35 item 3: the DNS-rebinding defence of the agent endpoints covers /metrics.
    let bridge = TestBridge::start(&with_token("")).await;
    let bearer = format!("Bearer {TOKEN}");
    for host in ["evil.example", "evil.example:80", "127.0.0.1.evil.example"] {
        let response = get(
            &bridge,
            "/metrics",
            &[("host", host), ("authorization", &bearer)],
        )
        .await;
        assert_eq!(response.status(), StatusCode::FORBIDDEN, "{host}");
        let mcp = bridge
            .client
            .post(&bridge.mcp_url)
            .header("host", host)
            .header("authorization", &bearer)
            .header("content-type", "application/json")
            .body(frame("https://agent.example/p.json"))
            .send()
            .await
            .unwrap();
        assert_eq!(mcp.status(), StatusCode::FORBIDDEN, "MCP with {host}");
    }
    let foreign_origin = get(
        &bridge,
        "/metrics",
        &[
            ("origin", "https://evil.example"),
            ("authorization", &bearer),
        ],
    )
    .await;
    assert_eq!(foreign_origin.status(), StatusCode::FORBIDDEN);
    // A scraper addressing a replica by its IP (a Kubernetes pod-role scrape) is let in, with
    // the token; an IP cannot be re-bound. The agent endpoints keep to their names.
    let by_address = get(
        &bridge,
        "/metrics",
        &[("host", "10.1.2.3:8080"), ("authorization", &bearer)],
    )
    .await;
    assert_eq!(by_address.status(), StatusCode::OK);
    let by_address = get(&bridge, "/metrics", &[("host", "10.1.2.3:8080")]).await;
    assert_eq!(by_address.status(), StatusCode::UNAUTHORIZED);
}
