//! The real binary at `RUST_LOG=debug`, its log in a file: for the tests that prove buyer data
//! reaches no log line (issue 24 item 7) after a whole checkout over MCP.

use std::path::PathBuf;

use serde_json::{Value, json};

use super::binary::Running;

pub struct DebugBridge {
    running: Running,
    endpoint: String,
    client: reqwest::Client,
    log: PathBuf,
    next: u64,
}

impl DebugBridge {
    /// `serve` with `config` (negotiation off, as the agents here have no real profile).
    pub fn start(name: &str, config: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("bcp-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("bridge.toml");
        std::fs::write(&path, format!("{config}\n[negotiation]\nenabled = false\n")).unwrap();
        let log = dir.join("bridge.log");
        let mut running = Running::start_logging_with_env(
            &[
                "serve",
                "--config",
                path.to_str().unwrap(),
                "--listen",
                "127.0.0.1:0",
            ],
            &log,
            &[("RUST_LOG", "debug")],
        );
        let endpoint = running.endpoint();
        Self {
            running,
            endpoint,
            client: reqwest::Client::new(),
            log,
            next: 0,
        }
    }

    /// The base URL (the merchant page is at its `/`).
    pub fn base_url(&self) -> &str {
        self.endpoint.trim_end_matches("/bcp/mcp")
    }

    pub fn client(&self) -> &reqwest::Client {
        &self.client
    }

    /// A `tools/call`'s `structuredContent`.
    pub async fn call(&mut self, tool: &str, arguments: Value) -> Value {
        self.next += 1;
        let reply: Value = self
            .client
            .post(&self.endpoint)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(
                json!({"jsonrpc": "2.0", "id": self.next, "method": "tools/call", "params": {"name": tool, "arguments": arguments}})
                    .to_string(),
            )
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        reply["result"]["structuredContent"].clone()
    }

    /// Stops the bridge and answers its whole log.
    pub fn log(self) -> String {
        let Self { running, log, .. } = self;
        drop(running);
        std::fs::read_to_string(&log).unwrap()
    }

    /// Stops the bridge and asserts that its whole log, written at debug, holds none of
    /// `secrets`.
    pub fn assert_log_holds_none(self, secrets: &[&str]) {
        let logged = self.log();
        assert!(
            logged.contains("DEBUG") || logged.contains("debug"),
            "the log ran at debug"
        );
        for secret in secrets {
            assert!(!logged.contains(secret), "{secret} in the log");
        }
    }
}
