//! JSON-RPC 2.0 to the letter at the MCP endpoint: id types, byte-exact ids, silent
//! notifications, duplicate keys, JSON-shaped HTTP refusals, chunked framing, gzip bodies.

use std::io::Write;

use crate::support::TestBridge;
use reqwest::StatusCode;
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

fn error_of(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|_| panic!("not JSON: {text}"))
}

#[tokio::test]
async fn ids_of_the_wrong_type_are_invalid_requests_answered_with_a_null_id() {
    let bridge = TestBridge::sample().await;
    for id in [
        "true",
        "false",
        "[]",
        "{}",
        "[1]",
        "{\"a\":1}",
        "1.5",
        "2e3",
        "null",
    ] {
        for method in ["ping", "tools/list", "no/such/method"] {
            let frame = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}"}}"#);
            let (status, text) = bridge.post_raw(&frame).await;
            let reply = error_of(&text);
            assert_eq!(status, StatusCode::BAD_REQUEST, "{frame}: {text}");
            assert_eq!(reply["error"]["code"], -32600, "{frame}: {text}");
            assert_eq!(reply["id"], Value::Null, "{frame}: {text}");
        }
    }
}

#[tokio::test]
async fn ids_come_back_exactly_as_written() {
    let bridge = TestBridge::sample().await;
    for id in [
        "123456789012345678901234567890",
        "-98765432109876543210",
        "18446744073709551616",
        "9007199254740993",
        "0",
        "-1",
        r#""plain""#,
        r#""esc\u0041ped\n""#,
        r#""""#,
    ] {
        for method in ["ping", "tools/list", "no/such/method"] {
            let frame = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}"}}"#);
            let (_, text) = bridge.post_raw(&frame).await;
            assert!(
                text.contains(&format!(r#""id":{id}"#)),
                "{frame} came back as {text}"
            );
        }
    }
}

#[tokio::test]
async fn notifications_are_never_answered_with_a_body() {
    let bridge = TestBridge::sample().await;
    for frame in [
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":[1,2]}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":[]}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/whatever","params":"x"}"#,
        r#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"search_catalog"}}"#,
        r#"{"jsonrpc":"2.0","method":"no/such/method"}"#,
        r#"{"jsonrpc":"2.0","method":42}"#,
    ] {
        let (status, text) = bridge.post_raw(frame).await;
        assert_eq!(status, StatusCode::ACCEPTED, "{frame}: {text}");
        assert!(text.is_empty(), "{frame}: {text}");
    }
}

#[tokio::test]
async fn duplicate_keys_are_refused_as_invalid_requests() {
    let bridge = TestBridge::sample().await;
    for frame in [
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search_catalog","name":"lookup_catalog","arguments":{}}}"#,
        r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search_catalog","arguments":{"catalog":{"query":"a","query":"b"}}}}"#,
    ] {
        let (status, text) = bridge.post_raw(frame).await;
        let reply = error_of(&text);
        assert_eq!(status, StatusCode::BAD_REQUEST, "{frame}: {text}");
        assert_eq!(reply["error"]["code"], -32600, "{text}");
        assert!(
            reply["error"]["message"]
                .as_str()
                .unwrap()
                .contains("duplicate key"),
            "{text}"
        );
    }
}

#[tokio::test]
async fn a_huge_method_name_is_not_echoed_whole() {
    let bridge = TestBridge::sample().await;
    let method = format!("evil\n2026-12-01 INFO FORGED{}", "x".repeat(500_000));
    let frame = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": method}).to_string();
    let (_, text) = bridge.post_raw(&frame).await;
    let reply = error_of(&text);
    assert_eq!(
        reply["error"]["code"],
        -32601,
        "{}",
        &text[..200.min(text.len())]
    );
    let message = reply["error"]["message"].as_str().unwrap();
    assert!(message.len() < 200, "{} bytes", message.len());
    assert!(!message.contains('\n'), "{message}");
    let frame = serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "x".repeat(100_000), "arguments": {}}})
    .to_string();
    let (_, text) = bridge.post_raw(&frame).await;
    let reply = error_of(&text);
    assert_eq!(
        reply["error"]["code"],
        -32602,
        "{}",
        &text[..200.min(text.len())]
    );
    assert!(
        reply["error"]["message"].as_str().unwrap().len() < 300,
        "{text:.300}"
    );
}

#[tokio::test]
async fn http_level_refusals_answer_jsonrpc_shaped_json() {
    let bridge = TestBridge::sample().await;
    let client = reqwest::Client::new();
    let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let cases = [
        client
            .post(&bridge.mcp_url)
            .header("content-type", "text/plain")
            .body(ping),
        client.get(&bridge.mcp_url),
        client.put(&bridge.mcp_url).body(ping),
        client.delete(&bridge.mcp_url),
        client
            .post(&bridge.mcp_url)
            .header("content-type", "application/json")
            .header("host", "evil.example")
            .body(ping),
        client
            .post(&bridge.mcp_url)
            .header("content-type", "application/json")
            .header("origin", "https://evil.example")
            .body(ping),
        client
            .post(&bridge.mcp_url)
            .header("content-type", "application/json")
            .body("x".repeat(2 * 1024 * 1024)),
    ];
    for case in cases {
        let response = case.send().await.unwrap();
        let status = response.status();
        assert!(status.is_client_error(), "{status}");
        let content_type = response
            .headers()
            .get("content-type")
            .map(|value| value.to_str().unwrap().to_owned())
            .unwrap_or_default();
        let text = response.text().await.unwrap();
        assert!(
            content_type.starts_with("application/json"),
            "{status}: {content_type}: {text}"
        );
        let reply = error_of(&text);
        assert_eq!(reply["jsonrpc"], "2.0", "{status}: {text}");
        assert!(reply["error"]["code"].is_i64(), "{status}: {text}");
    }
}

async fn raw(bridge: &TestBridge, request: String) -> String {
    let mut stream = tokio::net::TcpStream::connect(bridge.addr).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(
        std::time::Duration::from_secs(3),
        stream.read_to_end(&mut answer),
    )
    .await;
    String::from_utf8_lossy(&answer).into_owned()
}

#[tokio::test]
async fn malformed_chunked_framing_is_a_400_not_a_413() {
    let bridge = TestBridge::sample().await;
    let request = format!(
        "POST /bcp/mcp HTTP/1.1\r\nhost: {}\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\nzz\r\n{{}}\r\n0\r\n\r\n",
        bridge.addr
    );
    let answer = raw(&bridge, request).await;
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    assert!(answer.contains("-32600"), "{answer}");
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap()
}

#[tokio::test]
async fn gzip_bodies_are_inflated_under_the_same_cap_and_other_encodings_refused() {
    let bridge = TestBridge::sample().await;
    let client = reqwest::Client::new();
    let ping = br#"{"jsonrpc":"2.0","id":5,"method":"ping"}"#;
    let response = client
        .post(&bridge.mcp_url)
        .header("content-type", "application/json")
        .header("content-encoding", "gzip")
        .body(gzip(ping))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let reply: Value = response.json().await.unwrap();
    assert_eq!(reply["id"], 5, "{reply}");
    assert!(reply.get("result").is_some(), "{reply}");

    // 64 MiB of spaces inflate from ~64 KiB: refused at the 1 MiB body cap.
    let bomb = gzip(&vec![b' '; 64 * 1024 * 1024]);
    assert!(bomb.len() < 1024 * 1024);
    let response = client
        .post(&bridge.mcp_url)
        .header("content-type", "application/json")
        .header("content-encoding", "gzip")
        .body(bomb)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 413);
    let reply: Value = response.json().await.unwrap();
    assert_eq!(reply["error"]["code"], -32600);

    for encoding in ["br", "deflate", "zstd", "gzip, br"] {
        let response = client
            .post(&bridge.mcp_url)
            .header("content-type", "application/json")
            .header("content-encoding", encoding)
            .body(ping.to_vec())
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 415, "{encoding}");
        let reply: Value = response.json().await.unwrap();
        assert_eq!(reply["error"]["code"], -32600, "{encoding}");
    }
}
