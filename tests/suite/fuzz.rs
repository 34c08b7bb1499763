//! A bounded fuzz of the HTTP front (runs in `cargo test`): random and mutated JSON-RPC
//! frames against a real bridge on loopback. Every answer is JSON-RPC-shaped JSON (or empty
//! with 202 for a notification), no answer is a 5xx, a well-formed id comes back as written,
//! and the bridge still serves a normal call afterwards.

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
        prop_oneof![
            Just("search_catalog"),
            Just("lookup_catalog"),
            Just("get_product"),
            Just("create_cart"),
            Just("get_cart"),
        ]
        .prop_flat_map(|tool| json_text().prop_map(move |arguments| format!(
            r#"{{"name":"{tool}","arguments":{arguments}}}"#
        ))),
    ]
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

#[test]
fn random_frames_get_json_rpc_answers_and_the_bridge_keeps_serving() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let bridge = runtime.block_on(TestBridge::sample());
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
