//! The binary as a new user meets it: `demo`, `serve`, `check`, `--help`.

use std::process::Command;

use serde_json::{Value, json};

use crate::support::binary::{BIN, Running};

/// Starts the binary and reads its banner until the MCP endpoint line (and, for demo, the
/// curl example) has been printed.
fn start(args: &[&str], wait_for_curl: bool) -> (Running, String, Option<String>) {
    let mut running = Running::start(args);
    let endpoint = running.endpoint();
    let curl = wait_for_curl.then(|| {
        running
            .wait_for(|line| line.trim_start().starts_with("curl "))
            .trim()
            .to_owned()
    });
    (running, endpoint, curl)
}

#[tokio::test]
async fn demo_prints_a_working_endpoint_and_curl_call() {
    let (_demo, endpoint, curl) = start(&["demo", "--listen", "127.0.0.1:0"], true);
    assert!(endpoint.starts_with("http://127.0.0.1:"), "{endpoint}");
    assert!(
        !endpoint.ends_with(":0/bcp/mcp"),
        "the chosen port is printed: {endpoint}"
    );
    let curl = curl.unwrap();
    assert!(curl.contains(&endpoint));
    // Replay exactly the body the banner tells the user to paste.
    let body = curl.split("-d '").nth(1).unwrap().trim_end_matches('\'');
    let reply: Value = reqwest::Client::new()
        .post(&endpoint)
        .header("content-type", "application/json")
        .body(body.to_owned())
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(
        !reply["result"]["structuredContent"]["products"]
            .as_array()
            .unwrap()
            .is_empty(),
        "{reply}"
    );
}

#[tokio::test]
async fn serve_runs_the_sample_config() {
    let config = format!("{}/config/sample.toml", env!("CARGO_MANIFEST_DIR"));
    let (_server, endpoint, _) = start(
        &["serve", "--config", &config, "--listen", "127.0.0.1:0"],
        false,
    );
    let reply: Value = reqwest::Client::new()
        .post(&endpoint)
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(reply["result"], json!({}));
    // The call `demo` prints works here too: the README's next step after the demo.
    let reply: Value = reqwest::Client::new()
        .post(&endpoint)
        .json(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "search_catalog", "arguments": {"meta": {"ucp-agent": {"profile": "https://agent.example/profile.json"}}, "catalog": {"query": "blue running shoes"}}}}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(
        !reply["result"]["structuredContent"]["products"]
            .as_array()
            .unwrap_or_else(|| panic!("{reply}"))
            .is_empty(),
        "{reply}"
    );
}

#[test]
fn check_accepts_good_and_names_every_bad_key() {
    let good = Command::new(BIN)
        .args([
            "check",
            "--config",
            &format!("{}/config/sample.toml", env!("CARGO_MANIFEST_DIR")),
        ])
        .output()
        .unwrap();
    assert!(good.status.success());
    assert!(String::from_utf8_lossy(&good.stdout).contains("OK"));

    let dir = std::env::temp_dir().join(format!("bcp-check-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.toml");
    std::fs::write(
        &bad,
        "[server]\nlisen = \"127.0.0.1:1\"\n[limits]\nmax_lookup_batch = 0\n[store]\nplatform = \"magento\"\n",
    )
    .unwrap();
    let output = Command::new(BIN)
        .args(["check", "--config", bad.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(!output.status.success());
    let text = String::from_utf8_lossy(&output.stdout);
    for key in ["server.lisen", "limits.max_lookup_batch", "store.platform"] {
        assert!(text.contains(&format!("- {key}:")), "{key} in {text}");
    }
    let missing = Command::new(BIN)
        .args(["check", "--config", "/nonexistent/bcp.toml"])
        .output()
        .unwrap();
    assert!(!missing.status.success());
}

#[test]
fn every_subcommand_has_help() {
    for args in [
        vec!["--help"],
        vec!["serve", "--help"],
        vec!["demo", "--help"],
        vec!["check", "--help"],
    ] {
        let output = Command::new(BIN).args(&args).output().unwrap();
        assert!(output.status.success(), "{args:?}");
        assert!(String::from_utf8_lossy(&output.stdout).contains("Usage"));
    }
}

#[tokio::test]
async fn a_rest_only_bridge_names_no_mcp_endpoint() {
    // With `transports = ["rest"]` no MCP endpoint is mounted: the banner names the REST
    // base and `check` does too, and no line points at an MCP path.
    let sample =
        std::fs::read_to_string(format!("{}/config/sample.toml", env!("CARGO_MANIFEST_DIR")))
            .unwrap();
    let config = std::env::temp_dir().join(format!("bcp-rest-only-{}.toml", uuid::Uuid::new_v4()));
    std::fs::write(
        &config,
        sample.replacen("[server]\n", "[server]\ntransports = [\"rest\"]\n", 1),
    )
    .unwrap();
    let config = config.to_str().unwrap();
    let mut server = Running::start(&["serve", "--config", config, "--listen", "127.0.0.1:0"]);
    let rest = server.wait_for(|line| line.starts_with("REST base"));
    server.wait_for(|line| line.starts_with("Discovery"));
    assert!(rest.trim_end().ends_with("/bcp"), "{rest}");
    assert!(
        !server
            .banner
            .iter()
            .any(|line| line.contains("MCP endpoint")),
        "{:?}",
        server.banner
    );
    let checked = Command::new(BIN)
        .args(["check", "--config", config])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&checked.stdout);
    assert!(text.contains("REST base http://"), "{text}");
    assert!(!text.contains("/mcp"), "{text}");
    let _ = std::fs::remove_file(config);
}
