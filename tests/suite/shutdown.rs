//! SIGTERM lets in-flight calls finish before the process exits.

use std::process::Command;
use std::time::Duration;

use crate::support::binary::Running;
use crate::support::wait::until;
use crate::support::woo_standin::{Fault, WooStandin};
use serde_json::{Value, json};

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

    let mut bridge = Running::serve(&config);
    let endpoint = bridge.endpoint();

    let call = tokio::spawn(async move {
        reqwest::Client::new()
            .post(&endpoint)
            .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "lookup_catalog", "arguments": {"meta": {"ucp-agent": {"profile": "https://agent.example/p.json"}}, "catalog": {"ids": ["11"]}}}}))
            .send()
            .await
    });
    // The signal is sent once the call is in flight: the (slow) store has received it.
    until("the call to reach the store", || !woo.requests().is_empty()).await;
    let killed = Command::new("kill")
        .args(["-TERM", &bridge.child.id().to_string()])
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
        if let Some(status) = bridge.child.try_wait().unwrap() {
            exited = Some(status);
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Dropping `bridge` kills it if it is still running.
    let status = exited.unwrap_or_else(|| panic!("the bridge did not exit after SIGTERM"));
    assert!(status.success(), "{status:?}");
}
