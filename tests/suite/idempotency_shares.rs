//! Issue 35 item 2, as an attacker drives it over HTTP: one client's flood of large keyed
//! mutations runs out its own share (per address, per verified agent), not the store; the
//! store's last eighth waits for completions; an answer that changed nothing is not kept 24 h,
//! while a success is replayed byte-identical for 24 h (CART-026). Clients are told apart by
//! their source address: all of 127/8 is this host.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::idempotency::redis_config;
use crate::support::redis::RedisServer;
use crate::support::values::line;
use crate::support::{TestBridge, meta, meta_with_key};

/// An agent calling from its own loopback address (all of 127/8 is this host), so the bridge
/// tells clients apart by address as it would on the internet.
struct Peer {
    client: reqwest::Client,
    url: String,
}

impl Peer {
    fn at(bridge: &TestBridge, last: u8) -> Self {
        let address = std::net::IpAddr::V4(std::net::Ipv4Addr::new(127, 0, 0, last));
        Self {
            client: reqwest::Client::builder()
                .local_address(address)
                .build()
                .unwrap(),
            url: bridge.mcp_url.clone(),
        }
    }

    /// `tools/call`; the HTTP status, the reply, and the answer's bytes as the agent got them.
    async fn call(&self, tool: &str, arguments: Value) -> (StatusCode, Value, String) {
        let response = self
            .client
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json")
            .json(&json!({
                "jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": tool, "arguments": arguments}
            }))
            .send()
            .await
            .unwrap();
        let status = response.status();
        let reply: Value = response.json().await.unwrap();
        let bytes = reply["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        (status, reply, bytes)
    }
}

/// A keyed `create_cart` as a flooder sends it: large, its attribution (twenty 500-character
/// `utm_*` values) echoed on the cart's `continue_url`.
fn large_cart(key: &str) -> Value {
    let attribution: serde_json::Map<String, Value> = (0..20)
        .map(|n| (format!("utm_flood{n}"), json!("x".repeat(500))))
        .collect();
    json!({
        "meta": meta_with_key(key),
        "cart": {"line_items": [line("item_123", 1)], "attribution": attribution}
    })
}

/// Floods keyed carts from `peer` until the bridge refuses one; returns how many it took and
/// the refusal.
async fn flood(peer: &Peer, tag: &str) -> (usize, Value) {
    for n in 0..10_000 {
        let (status, reply, _) = peer
            .call("create_cart", large_cart(&format!("{tag}-{n}")))
            .await;
        if status != StatusCode::OK {
            assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{reply}");
            return (n, reply);
        }
        assert!(
            reply["result"]["structuredContent"]["id"].is_string(),
            "{}",
            reply["result"]["structuredContent"]["messages"]
        );
    }
    panic!("{tag}: 10,000 keyed carts and never refused");
}

/// Checkout from a fresh cart to `ready_for_complete`, from `peer`, keyless.
async fn ready_checkout(peer: &Peer) -> String {
    let (_, cart, _) = peer
        .call(
            "create_cart",
            json!({"meta": meta(), "cart": {"line_items": [line("prod_cloud_stride_blu_39", 1)]}}),
        )
        .await;
    let cart_id = cart["result"]["structuredContent"]["id"].as_str().unwrap();
    let (_, created, _) = peer
        .call(
            "create_checkout",
            json!({"meta": meta(), "checkout": {"cart_id": cart_id}}),
        )
        .await;
    let id = created["result"]["structuredContent"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let address = crate::support::values::sao_paulo();
    peer.call(
        "update_checkout",
        json!({"meta": meta(), "id": id, "checkout": {
            "buyer": {"email": "ana@example.com", "first_name": "Ana"},
            "fulfillment": {"methods": [{"type": "shipping", "destinations": [address]}]}
        }}),
    )
    .await;
    let (_, ready, _) = peer
        .call(
            "update_checkout",
            json!({"meta": meta(), "id": id, "checkout": {"fulfillment": {"methods": [{"id": "ful_1", "groups": [{"id": "grp_1", "selected_option_id": "sedex"}]}]}}}),
        )
        .await;
    assert_eq!(
        ready["result"]["structuredContent"]["status"], "ready_for_complete",
        "{ready}"
    );
    id
}

fn complete(id: &str, key: &str) -> Value {
    json!({
        "meta": meta_with_key(key),
        "id": id,
        "checkout": {"payment": {"instruments": [{"handler_id": "sample_test_approve", "type": "card"}]}}
    })
}

/// Issue 35 item 2: budgets off, so only the idempotency store's shares stand between a flood
/// and the buyer. `client_bytes` 256 KiB; the store holds 1 MiB, its last eighth for completions.
const FLOOD_CONFIG: &str = "[inbound]\nper_agent_per_minute = 0\nper_ip_per_minute = 0\n\
    [idempotency]\nmemory_bytes = 1048576\nclient_bytes = 262144\nmax_record_bytes = 16384\n";

#[tokio::test]
async fn issue_35_item_2_a_keyed_flood_from_one_client_leaves_another_clients_purchase_working() {
    let bridge = TestBridge::start(FLOOD_CONFIG).await;
    let buyer = Peer::at(&bridge, 9);
    let checkout = ready_checkout(&buyer).await;

    // One client floods large keyed carts: its own share runs out, not the store.
    let flooder = Peer::at(&bridge, 2);
    let (n, refused) = flood(&flooder, "flood-a").await;
    assert!(n > 10, "refused after {n} carts: {refused}");
    assert_eq!(refused["error"]["code"], -32000, "{refused}");
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(message.contains("idempotency store is full"), "{message}");
    // Its records are successes, kept 24 h (CART-026): its share frees as they expire.
    let retry_after = refused["error"]["data"]["retry_after"].as_u64().unwrap();
    assert!(retry_after > 86_000, "retry_after {retry_after}");
    // What it holds still replays, byte for byte.
    let (status, _, first) = flooder.call("create_cart", large_cart("flood-a-0")).await;
    assert_eq!(status, StatusCode::OK);
    assert!(first.contains("utm_flood19"), "{first}");

    // Another client's keyed mutations go on.
    let (status, made, _) = buyer.call("create_cart", large_cart("buyer-cart")).await;
    assert_eq!(status, StatusCode::OK, "{}", made["error"]);
    assert!(made["result"]["structuredContent"]["id"].is_string());

    // More flooding clients fill what is shared: now even the buyer's keyed cart is refused…
    let mut last = 3;
    loop {
        let (n, _) = flood(&Peer::at(&bridge, last), &format!("flood-{last}")).await;
        if n == 0 {
            break;
        }
        last += 1;
        assert!(last < 20, "1 MiB never filled");
    }
    let (status, refused, _) = buyer.call("create_cart", large_cart("buyer-cart-2")).await;
    assert_eq!(
        status,
        StatusCode::SERVICE_UNAVAILABLE,
        "{}",
        refused["error"]
    );

    // …but a completion with a fresh key has the room kept for completions: the order is placed.
    let key = uuid::Uuid::new_v4().to_string();
    let (status, completed, bytes) = buyer
        .call("complete_checkout", complete(&checkout, &key))
        .await;
    assert_eq!(status, StatusCode::OK, "{completed}");
    let completed = &completed["result"]["structuredContent"];
    assert_eq!(completed["status"], "completed", "{completed}");
    assert!(completed["order"]["id"].is_string(), "{completed}");
    // CART-026: its retry gets the same bytes and places nothing twice.
    let (_, _, replayed) = buyer
        .call("complete_checkout", complete(&checkout, &key))
        .await;
    assert_eq!(replayed, bytes);
}

#[tokio::test]
#[ignore = "needs redis-server: cargo test -- --include-ignored with redis-server on the PATH (.ci/run installs it)"]
async fn issue_35_item_2_a_flood_with_redis_is_held_to_the_flooders_share() {
    // With Redis, each replica keeps the clients' shares: one client still cannot take them all.
    let redis = RedisServer::run(None);
    let config = format!(
        "[inbound]\nper_agent_per_minute = 0\nper_ip_per_minute = 0\n{}client_bytes = 262144\nmax_record_bytes = 16384\n",
        redis_config(&redis.url(None))
    );
    let bridge = TestBridge::start(&config).await;
    let buyer = Peer::at(&bridge, 9);
    let checkout = ready_checkout(&buyer).await;
    let (n, refused) = flood(&Peer::at(&bridge, 2), "flood").await;
    assert!(n > 10, "refused after {n} carts: {refused}");
    let retry_after = refused["error"]["data"]["retry_after"].as_u64().unwrap();
    assert!(retry_after > 86_000, "retry_after {retry_after}");
    let (status, made, _) = buyer.call("create_cart", large_cart("buyer-cart")).await;
    assert_eq!(status, StatusCode::OK, "{}", made["error"]);
    let (status, completed, _) = buyer
        .call(
            "complete_checkout",
            complete(&checkout, &uuid::Uuid::new_v4().to_string()),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{completed}");
    assert_eq!(
        completed["result"]["structuredContent"]["status"],
        "completed"
    );
}

#[tokio::test]
async fn issue_35_item_2_a_business_error_is_not_kept_24_h_and_a_success_replays_byte_identical() {
    // CART-026 keeps what changed the store for 24 h; an answer that changed nothing is kept
    // only the lock window, so it cannot hold room (or the key) for a day.
    let bridge = TestBridge::start("[idempotency]\nlock_secs = 1\n").await;
    let agent = Peer::at(&bridge, 5);
    let nothing = json!({"meta": meta_with_key("refused"), "cart": {"line_items": [line("no_such_item", 1)]}});
    let (status, refused, _) = agent.call("create_cart", nothing).await;
    assert_eq!(status, StatusCode::OK, "{refused}");
    assert_eq!(
        refused["result"]["structuredContent"]["ucp"]["status"], "error",
        "{refused}"
    );

    let made_args =
        json!({"meta": meta_with_key("made"), "cart": {"line_items": [line("item_123", 1)]}});
    let (_, made, made_bytes) = agent.call("create_cart", made_args.clone()).await;
    assert!(
        made["result"]["structuredContent"]["id"].is_string(),
        "{made}"
    );

    // Once the window passes, the refused key is free: another payload under it runs (a kept
    // record would answer 409) and gets a fresh answer, a cart.
    let deadline = std::time::Instant::now() + Duration::from_secs(15);
    let fresh = loop {
        let (status, reply, _) = agent
            .call(
                "create_cart",
                json!({"meta": meta_with_key("refused"), "cart": {"line_items": [line("item_123", 2)]}}),
            )
            .await;
        if status == StatusCode::OK {
            break reply;
        }
        assert_eq!(status, StatusCode::CONFLICT, "{reply}");
        assert!(
            std::time::Instant::now() < deadline,
            "the refusal was kept past its window"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert!(
        fresh["result"]["structuredContent"]["id"].is_string(),
        "{fresh}"
    );

    // The success outlived that window: replayed byte-identical, and still 409 for another payload.
    let (_, _, replayed) = agent.call("create_cart", made_args).await;
    assert_eq!(replayed, made_bytes);
    let (status, conflict, _) = agent
        .call(
            "create_cart",
            json!({"meta": meta_with_key("made"), "cart": {"line_items": [line("item_123", 3)]}}),
        )
        .await;
    assert_eq!(status, StatusCode::CONFLICT, "{conflict}");
}

impl Peer {
    /// A signed keyed `create_cart` (large, as `large_cart`) for `profile`, signed by `key`.
    async fn signed_cart(
        &self,
        key: &crate::support::signer::TestKey,
        profile: &str,
    ) -> (StatusCode, Value) {
        let mut arguments = large_cart(&uuid::Uuid::new_v4().to_string());
        arguments["meta"]["ucp-agent"]["profile"] = json!(profile);
        let body = json!({
            "jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "create_cart", "arguments": arguments}
        })
        .to_string()
        .into_bytes();
        let headers =
            crate::support::signer::Signing::new(key, "k1", profile).headers(&self.url, &body);
        let mut request = self
            .client
            .post(&self.url)
            .header("accept", "application/json");
        for (name, value) in headers {
            request = request.header(name, value);
        }
        let response = request.body(body).send().await.unwrap();
        (response.status(), response.json().await.unwrap())
    }
}

#[tokio::test]
async fn issue_35_item_2_a_verified_agent_has_one_share_wherever_it_calls_from() {
    // A record is charged to the address and to the agent whose signature verified: moving
    // to another address does not renew an agent's share, and signing as another profile
    // (anyone can publish one) does not renew an address's.
    use crate::support::signer::{ProfileHost, TestKey};
    let key = TestKey::es256();
    let host = ProfileHost::start(vec![key.jwk("k1")]).await;
    let config = format!(
        "[negotiation]\nenabled = false\nallow_http_hosts = [\"127.0.0.1\"]\n\
         allow_private_hosts = [\"127.0.0.1\"]\ntimeout_ms = 1000\n\
         [signatures]\nmode = \"enforce\"\n{FLOOD_CONFIG}"
    );
    let bridge = TestBridge::start(&config).await;
    let (agent_a, agent_b) = (host.url("agent-0825"), host.url("agent-0408"));
    let (first, second, third) = (
        Peer::at(&bridge, 2),
        Peer::at(&bridge, 3),
        Peer::at(&bridge, 4),
    );
    let mut served = 0;
    loop {
        let (status, reply) = first.signed_cart(&key, &agent_a).await;
        if status == StatusCode::SERVICE_UNAVAILABLE {
            break;
        }
        assert_eq!(status, StatusCode::OK, "{}", reply["error"]);
        served += 1;
        assert!(served < 1_000, "the agent's share never ran out");
    }
    assert!(served > 10, "refused after {served} carts");
    let (status, reply) = second.signed_cart(&key, &agent_a).await;
    assert_eq!(
        status,
        StatusCode::SERVICE_UNAVAILABLE,
        "the agent, elsewhere: {}",
        reply["error"]
    );
    let (status, reply) = first.signed_cart(&key, &agent_b).await;
    assert_eq!(
        status,
        StatusCode::SERVICE_UNAVAILABLE,
        "another profile, same address: {}",
        reply["error"]
    );
    let (status, reply) = third.signed_cart(&key, &agent_b).await;
    assert_eq!(
        status,
        StatusCode::OK,
        "another agent elsewhere: {}",
        reply["error"]
    );
}
