//! `bcp-bridge healthcheck` (the image's HEALTHCHECK) and the `--log-json` banner (issue 26):
//! the probe finds the port in the config file the server reads, and a server started with
//! `--log-json` writes nothing but JSON.

use std::process::Command;

use crate::support::binary::{BIN, Running, logged_endpoint};

/// A loopback port nothing listens on right now (the OS picks it, then it is released).
fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

fn config_on(dir: &std::path::Path, port: u16) -> std::path::PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let config = dir.join("bridge.toml");
    std::fs::write(
        &config,
        format!(
            "[server]\nlisten = \"127.0.0.1:{port}\"\n\n[store]\nplatform = \"sample\"\n\n[negotiation]\nenabled = false\n"
        ),
    )
    .unwrap();
    config
}

fn healthcheck(config: &std::path::Path) -> std::process::Output {
    Command::new(BIN)
        .args(["healthcheck", "--config", config.to_str().unwrap()])
        .output()
        .unwrap()
}

#[test]
fn healthcheck_follows_the_configured_port_and_json_logs_hold_the_banner() {
    let dir = std::env::temp_dir().join(format!("bcp-healthcheck-{}", std::process::id()));
    let port = free_port();
    let config = config_on(&dir, port);
    let log = dir.join("bridge.log");
    let mut bridge = Running::start_logging_to(
        &["--log-json", "serve", "--config", config.to_str().unwrap()],
        &log,
    );
    let endpoint = logged_endpoint(&log);
    assert!(endpoint.contains(&format!(":{port}/")), "{endpoint}");

    let probed = healthcheck(&config);
    assert!(
        probed.status.success(),
        "{}",
        String::from_utf8_lossy(&probed.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&probed.stdout).trim(), "ok");

    let _ = bridge.child.kill();
    let _ = bridge.child.wait();
    assert!(
        bridge.banner.is_empty(),
        "stdout read so far: {:?}",
        bridge.banner
    );
    let text = std::fs::read_to_string(&log).unwrap();
    for line in text.lines().filter(|line| !line.trim().is_empty()) {
        let parsed: serde_json::Value = serde_json::from_str(line)
            .unwrap_or_else(|_| panic!("a log line that is not JSON: {line}"));
        assert!(parsed["fields"]["message"].is_string(), "{line}");
    }
    assert!(
        text.contains(&format!("bcp-bridge listening on 127.0.0.1:{port}")),
        "{text}"
    );
}

#[test]
fn healthcheck_fails_when_nothing_serves_the_configured_port() {
    let dir = std::env::temp_dir().join(format!("bcp-healthcheck-down-{}", std::process::id()));
    let config = config_on(&dir, free_port());
    let probed = healthcheck(&config);
    assert_eq!(probed.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&probed.stderr);
    assert!(
        stderr.starts_with("unhealthy: http://127.0.0.1:"),
        "{stderr}"
    );
}

#[test]
fn healthcheck_fails_on_a_config_it_cannot_read() {
    let probed = healthcheck(std::path::Path::new("/nonexistent/bridge.toml"));
    assert_eq!(probed.status.code(), Some(1));
}
