//! SIGTERM lets in-flight calls finish before the process exits.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#[path = "support/woo_standin/mod.rs"]
mod woo_standin;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};
use woo_standin::{Fault, WooStandin};

#[tokio::test]
async fn sigterm_finishes_in_flight_calls_then_exits_cleanly() {
    // A slow upstream keeps a call in flight while the signal arrives.
    let woo = WooStandin::start().await;
    woo.set_fault(Fault::Slow(Duration::from_millis(1500)));
    let dir = std::env::temp_dir().join(format!("bcp-shutdown-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("woo.toml");
    // The stand-in config times out at 400 ms; this call must outlive the signal instead.
    // Negotiation is off: the agent profile URL below is not fetchable from a test.
    let text = woo
        .config("")
        .replace("timeout_ms = 400", "timeout_ms = 5000")
        + "\n[negotiation]\nenabled = false\n";
    std::fs::write(&config, text).unwrap();

    let mut child = Command::new(env!("CARGO_BIN_EXE_bcp-bridge"))
        .args([
            "serve",
            "--config",
            config.to_str().unwrap(),
            "--listen",
            "127.0.0.1:0",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let endpoint = BufReader::new(stdout)
        .lines()
        .map(Result::unwrap)
        .find_map(|line| line.strip_prefix("MCP endpoint: ").map(str::to_owned))
        .unwrap();

    let call = tokio::spawn(async move {
        reqwest::Client::new()
            .post(&endpoint)
            .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "lookup_catalog", "arguments": {"meta": {"ucp-agent": {"profile": "https://agent.example/p.json"}}, "catalog": {"ids": ["11"]}}}}))
            .send()
            .await
    });
    tokio::time::sleep(Duration::from_millis(400)).await;
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());

    let response = call
        .await
        .unwrap()
        .expect("the in-flight call got its answer");
    assert_eq!(response.status(), 200);
    let reply: Value = response.json().await.unwrap();
    assert!(reply.get("result").is_some(), "{reply}");

    let mut exited = None;
    for _ in 0..100 {
        if let Some(status) = child.try_wait().unwrap() {
            exited = Some(status);
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let status = exited.unwrap_or_else(|| {
        let _ = child.kill();
        panic!("the bridge did not exit after SIGTERM");
    });
    assert!(status.success(), "{status:?}");
}
