//! A bounded fuzz of the HTTP fronts (runs in `cargo test`): random and mutated JSON-RPC
//! frames against a real bridge on loopback, every tool included (catalog, cart, checkout,
//! order). Every answer is JSON-RPC-shaped JSON (or empty with 202 for a notification), no
//! answer is a 5xx, a well-formed id comes back as written, and the bridge still serves a
//! normal call afterwards. The REST binding gets the same: random bodies, ids and headers on
//! every route, every answer under 500 and an error in REST's envelope (issue 27 item 7).

use crate::support::TestBridge;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use serde_json::Value;

/// JSON text of any shape, small.
fn json_text() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        Just("null".to_owned()),
        any::<bool>().prop_map(|b| b.to_string()),
        any::<i64>().prop_map(|n| n.to_string()),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(|f| format!("{f:?}")),
        any::<String>().prop_map(|s| serde_json::to_string(&s).unwrap()),
        Just("123456789012345678901234567890".to_owned()),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4)
                .prop_map(|items| format!("[{}]", items.join(","))),
            prop::collection::vec((key(), inner), 0..4).prop_map(|members| {
                let members: Vec<String> = members
                    .into_iter()
                    .map(|(key, value)| format!("{key}:{value}"))
                    .collect();
                format!("{{{}}}", members.join(","))
            }),
        ]
    })
}

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("\"name\"".to_owned()),
        Just("\"arguments\"".to_owned()),
        Just("\"meta\"".to_owned()),
        Just("\"catalog\"".to_owned()),
        Just("\"query\"".to_owned()),
        Just("\"line_items\"".to_owned()),
        Just("\"buyer\"".to_owned()),
        Just("\"fulfillment\"".to_owned()),
        Just("\"payment\"".to_owned()),
        Just("\"cart_id\"".to_owned()),
        Just("\"id\"".to_owned()),
        any::<String>().prop_map(|s| serde_json::to_string(&s).unwrap()),
    ]
}

/// An id as written, and whether JSON-RPC (and MCP) allow it.
fn id() -> impl Strategy<Value = (String, bool)> {
    prop_oneof![
        any::<i64>().prop_map(|n| (n.to_string(), true)),
        Just(("123456789012345678901234567890".to_owned(), true)),
        Just(("-18446744073709551617".to_owned(), true)),
        any::<String>().prop_map(|s| (serde_json::to_string(&s).unwrap(), true)),
        Just((r#""a\u0062\n""#.to_owned(), true)),
        Just(("true".to_owned(), false)),
        Just(("null".to_owned(), false)),
        Just(("[]".to_owned(), false)),
        Just(("{}".to_owned(), false)),
        Just(("1.5".to_owned(), false)),
    ]
}

fn method() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("\"ping\"".to_owned()),
        Just("\"initialize\"".to_owned()),
        Just("\"tools/list\"".to_owned()),
        Just("\"tools/call\"".to_owned()),
        Just("\"notifications/cancelled\"".to_owned()),
        Just("\"notifications/initialized\"".to_owned()),
        any::<String>().prop_map(|s| serde_json::to_string(&s).unwrap()),
        json_text(),
    ]
}

fn params() -> impl Strategy<Value = String> {
    prop_oneof![
        json_text(),
        (key(), json_text()).prop_map(|(name, arguments)| format!(
            r#"{{"name":"search_catalog","arguments":{{"meta":{{"ucp-agent":{{"profile":"https://agent.example/p.json"}}}},"catalog":{{{name}:{arguments}}}}}}}"#
        )),
        tool().prop_flat_map(|tool| json_text().prop_map(move |arguments| format!(
            r#"{{"name":"{tool}","arguments":{arguments}}}"#
        ))),
        // Well-formed envelopes around damaged tool bodies: past the schema's first look.
        (tool(), json_text(), key(), json_text()).prop_map(|(tool, id, name, value)| format!(
            r#"{{"name":"{tool}","arguments":{{"meta":{{"ucp-agent":{{"profile":"https://agent.example/p.json"}},"idempotency-key":"fuzz-key"}},"id":{id},"cart":{{{name}:{value}}},"checkout":{{{name}:{value}}}}}}}"#
        )),
    ]
}

/// Every tool the sample store serves, checkout and order included.
fn tool() -> impl Strategy<Value = &'static str> {
    prop::sample::select(crate::support::values::checkout_store_tools())
}

#[derive(Debug, Clone)]
struct Frame {
    text: String,
    /// The id as written when the frame is an object with one allowed id.
    id: Option<String>,
}

fn frame() -> impl Strategy<Value = Frame> {
    let members = (
        prop::option::weighted(0.9, Just("\"2.0\"".to_owned())),
        prop::option::weighted(0.8, id()),
        prop::option::weighted(0.95, method()),
        prop::option::weighted(0.7, params()),
        any::<bool>(),
    );
    let object = members
        .prop_map(|(jsonrpc, id, method, params, duplicate)| {
            let mut parts = Vec::new();
            if let Some(jsonrpc) = jsonrpc {
                parts.push(format!("\"jsonrpc\":{jsonrpc}"));
            }
            if let Some((id, _)) = &id {
                parts.push(format!("\"id\":{id}"));
            }
            if let Some(method) = &method {
                parts.push(format!("\"method\":{method}"));
            }
            if let Some(params) = params {
                parts.push(format!("\"params\":{params}"));
            }
            if duplicate && let Some(method) = &method {
                parts.push(format!("\"method\":{method}"));
            }
            let allowed = id.filter(|(_, allowed)| *allowed).map(|(id, _)| id);
            Frame {
                text: format!("{{{}}}", parts.join(",")),
                id: allowed,
            }
        })
        .boxed();
    prop_oneof![
        8 => object.clone(),
        // Byte-level damage: truncation and flipped bytes.
        1 => (object.clone(), any::<prop::sample::Index>()).prop_map(|(frame, cut)| {
            let bytes = frame.text.as_bytes();
            let cut = cut.index(bytes.len() + 1);
            Frame {
                text: String::from_utf8_lossy(&bytes[..cut]).into_owned(),
                id: None,
            }
        }),
        1 => (object, any::<prop::sample::Index>(), any::<u8>()).prop_map(|(frame, at, byte)| {
            let mut bytes = frame.text.into_bytes();
            let at = at.index(bytes.len());
            bytes[at] = byte;
            Frame { text: String::from_utf8_lossy(&bytes).into_owned(), id: None }
        }),
        1 => json_text().prop_map(|text| Frame { text, id: None }),
    ]
}

fn check(frame: &Frame, status: u16, text: &str) -> Result<(), TestCaseError> {
    prop_assert!(status < 500, "{status} for {}: {text}", frame.text);
    if text.is_empty() {
        prop_assert_eq!(
            status,
            202,
            "empty answer with {} for {}",
            status,
            &frame.text
        );
        return Ok(());
    }
    let reply: Value = serde_json::from_str(text).map_err(|_| {
        TestCaseError::fail(format!("not JSON ({status}) for {}: {text}", frame.text))
    })?;
    prop_assert_eq!(&reply["jsonrpc"], "2.0", "{}", text);
    prop_assert!(
        reply.get("result").is_some() != reply.get("error").is_some(),
        "result xor error: {text}"
    );
    prop_assert!(reply.get("id").is_some(), "no id: {text}");
    if let Some(id) = &frame.id
        && !reply["id"].is_null()
    {
        prop_assert!(
            text.contains(&format!("\"id\":{id}")),
            "id {id} of {} came back as {text}",
            frame.text
        );
    }
    Ok(())
}

/// A fuzz campaign (`BCP_FUZZ_CASES`) sends thousands of calls from one address on purpose:
/// the default per-client budgets would answer most of them 429 and test nothing else.
const UNTHROTTLED: &str = "[inbound]\nper_ip_per_minute = 0\nper_agent_per_minute = 0\n";

#[test]
fn random_frames_get_json_rpc_answers_and_the_bridge_keeps_serving() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let bridge = runtime.block_on(TestBridge::start(UNTHROTTLED));
    let mut runner = TestRunner::new(Config {
        // 256 keeps CI at well under a second; BCP_FUZZ_CASES runs a longer campaign.
        cases: std::env::var("BCP_FUZZ_CASES")
            .ok()
            .and_then(|cases| cases.parse().ok())
            .unwrap_or(256),
        failure_persistence: None,
        ..Config::default()
    });
    runner
        .run(&frame(), |frame| {
            let (status, text) = runtime.block_on(bridge.post_raw(&frame.text));
            check(&frame, status.as_u16(), &text)
        })
        .unwrap();
    let reply = runtime
        .block_on(bridge.rpc(serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "ping"})));
    assert_eq!(reply.0, 200, "{}", reply.1);
    assert_eq!(reply.1["id"], 1);
}

/// A REST request: a route (its `{id}` any text), a method, a body of any shape, and maybe
/// an `Idempotency-Key`.
fn rest_request() -> impl Strategy<Value = (reqwest::Method, String, Option<String>, bool)> {
    let route = prop::sample::select(vec![
        ("POST", "/catalog/search"),
        ("POST", "/catalog/lookup"),
        ("POST", "/catalog/product"),
        ("POST", "/carts"),
        ("GET", "/carts/{id}"),
        ("PUT", "/carts/{id}"),
        ("POST", "/carts/{id}/cancel"),
        ("POST", "/checkout-sessions"),
        ("GET", "/checkout-sessions/{id}"),
        ("PUT", "/checkout-sessions/{id}"),
        ("POST", "/checkout-sessions/{id}/complete"),
        ("POST", "/checkout-sessions/{id}/cancel"),
        ("GET", "/orders/{id}"),
        ("DELETE", "/carts/{id}"),
    ]);
    let id = prop_oneof![
        Just("cart_0".to_owned()),
        Just("..%2F..%2Fetc".to_owned()),
        Just("%00".to_owned()),
        "[a-zA-Z0-9_%.-]{1,40}",
    ];
    let body = prop_oneof![
        json_text(),
        (key(), json_text()).prop_map(|(name, value)| format!(
            r#"{{"catalog":{{{name}:{value}}},"cart":{{{name}:{value}}},"checkout":{{{name}:{value}}}}}"#
        )),
        any::<String>(),
    ];
    (route, id, prop::option::weighted(0.8, body), any::<bool>()).prop_map(
        |((method, path), id, body, keyed)| {
            let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
            (method, path.replace("{id}", &id), body, keyed)
        },
    )
}

#[test]
fn random_rest_requests_get_rest_answers_and_no_5xx() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let bridge = runtime.block_on(TestBridge::start(UNTHROTTLED));
    let base = bridge.endpoints[0]
        .rest_url
        .clone()
        .expect("REST is served");
    let mut runner = TestRunner::new(Config {
        cases: std::env::var("BCP_FUZZ_CASES")
            .ok()
            .and_then(|cases| cases.parse().ok())
            .unwrap_or(256),
        failure_persistence: None,
        ..Config::default()
    });
    runner
        .run(&rest_request(), |(method, path, body, keyed)| {
            let (status, text) = runtime.block_on(async {
                let mut request = bridge
                    .client
                    .request(method.clone(), format!("{base}{path}"))
                    .header("ucp-agent", "profile=\"https://agent.example/p.json\"")
                    .header("request-id", "fuzz");
                if keyed {
                    request = request.header("idempotency-key", "fuzz-key");
                }
                if let Some(body) = &body {
                    request = request
                        .header("content-type", "application/json")
                        .body(body.clone());
                }
                let response = request.send().await.unwrap();
                (response.status(), response.text().await.unwrap_or_default())
            });
            prop_assert!(
                status.as_u16() < 500,
                "{status} for {method} {path} {body:?}: {text}"
            );
            if !status.is_success() && !text.is_empty() {
                let reply: Value = serde_json::from_str(&text).map_err(|_| {
                    TestCaseError::fail(format!("not JSON ({status}) for {method} {path}: {text}"))
                })?;
                // A path no route matches (an id of "." or ".." resolves away) gets the
                // router's own 404/405, which names no REST code.
                let unrouted = matches!(status.as_u16(), 404 | 405) && reply["error"].is_string();
                prop_assert!(
                    reply["messages"][0]["code"].is_string() || unrouted,
                    "no error code ({status}) for {method} {path}: {text}"
                );
            }
            Ok(())
        })
        .unwrap();
    let (status, text) = runtime.block_on(bridge.rest(
        reqwest::Method::POST,
        "/catalog/search",
        Some(&serde_json::json!({"query": "shirt"})),
        &[],
    ));
    assert_eq!(status, 200, "{text}");
}
