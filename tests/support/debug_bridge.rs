//! The real binary at `RUST_LOG=debug` (or `trace`), its log in a file: for the tests that
//! prove buyer data reaches no log line (issue 24 item 7, issue 27 item 4) after a whole
//! checkout over MCP, on the front's own path or through rmcp's.

use std::path::PathBuf;

use serde_json::{Value, json};

use super::binary::Running;

/// The MCP version whose calls the front leaves to rmcp.
const RMCP_VERSION: &str = "2026-07-28";

pub struct DebugBridge {
    running: Running,
    endpoint: String,
    client: reqwest::Client,
    log: PathBuf,
    next: u64,
    /// The `RUST_LOG` it runs at.
    level: &'static str,
    /// Whether calls are sent at [`RMCP_VERSION`], which leaves them to rmcp (whose own
    /// request logging is what must stay quiet) instead of the front.
    through_rmcp: bool,
}

impl DebugBridge {
    /// `serve` with `config` (negotiation off, as the agents here have no real profile).
    pub fn start(name: &str, config: &str) -> Self {
        Self::start_at(name, config, "debug")
    }

    /// `start` with `RUST_LOG=level` (`trace` turns on every dependency's lines too).
    pub fn start_at(name: &str, config: &str, level: &'static str) -> Self {
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
            &[("RUST_LOG", level)],
        );
        let endpoint = running.endpoint();
        Self {
            running,
            endpoint,
            client: reqwest::Client::new(),
            log,
            next: 0,
            level,
            through_rmcp: false,
        }
    }

    /// Sends every later call through rmcp rather than the front.
    pub fn through_rmcp(&mut self) {
        self.through_rmcp = true;
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
        let mut params = json!({"name": tool, "arguments": arguments});
        let mut request = self.client.post(&self.endpoint);
        if self.through_rmcp {
            // MCP 2026-07-28 (no `initialize`, per-request `_meta`) is a version the front
            // leaves to rmcp.
            params["_meta"] = json!({
                "io.modelcontextprotocol/protocolVersion": RMCP_VERSION,
                "io.modelcontextprotocol/clientInfo": {"name": "debug-bridge", "version": "1"},
                "io.modelcontextprotocol/clientCapabilities": {}
            });
            request = request
                .header("mcp-protocol-version", RMCP_VERSION)
                .header("mcp-method", "tools/call")
                .header("mcp-name", tool);
        }
        let reply: Value = request
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(
                json!({"jsonrpc": "2.0", "id": self.next, "method": "tools/call", "params": params})
                    .to_string(),
            )
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        if self.through_rmcp {
            // Only rmcp writes the 2026-07-28 result shape: the call did go through it.
            assert_eq!(reply["result"]["resultType"], "complete", "{reply}");
        }
        reply["result"]["structuredContent"].clone()
    }

    /// SIGTERM (a graceful stop: calls drain, traces are flushed) and up to 15 s for the exit;
    /// answers whether it exited 0.
    pub async fn terminate(&mut self) -> bool {
        let pid = self.running.child.id().to_string();
        let killed = std::process::Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap();
        assert!(killed.success());
        for _ in 0..300 {
            if let Some(status) = self.running.child.try_wait().unwrap() {
                return status.success();
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        false
    }

    /// Stops the bridge and answers its whole log.
    pub fn log(self) -> String {
        let Self { running, log, .. } = self;
        drop(running);
        std::fs::read_to_string(&log).unwrap()
    }

    /// Stops the bridge and asserts that its whole log, written at its level, holds none of
    /// `secrets`.
    pub fn assert_log_holds_none(self, secrets: &[&str]) {
        let level = self.level;
        let logged = self.log();
        // Debug lines show the level took (at `trace` too: the sample store's flow may fire no
        // line below debug).
        assert!(
            logged.contains("DEBUG") || logged.contains("debug"),
            "the log ran at {level}"
        );
        for secret in secrets {
            assert!(!logged.contains(secret), "{secret} in the log");
        }
    }
}
