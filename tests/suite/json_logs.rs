//! `--log-json`: a huge client-sent value goes through a real request into a JSON log line
//! that is capped like a text one (issue 17, item 4).

use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::binary::{Running, logged_endpoint};

const SECRET: &str = "whsec_json_logs_test";
/// `logging::MAX_FIELD_CHARS`, plus room for the "…(+N chars)" note.
const MAX_FIELD_CHARS: usize = 512;

#[tokio::test]
async fn a_huge_client_value_is_capped_in_json_log_lines() {
    let dir = std::env::temp_dir().join(format!("bcp-json-logs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("bridge.toml");
    std::fs::write(
        &config,
        format!("[cache]\nwebhook_secret = \"{SECRET}\"\n\n[negotiation]\nenabled = false\n"),
    )
    .unwrap();
    let log = dir.join("bridge.log");
    let mut bridge = Running::start_logging_to(
        &[
            "--log-json",
            "serve",
            "--config",
            config.to_str().unwrap(),
            "--listen",
            "127.0.0.1:0",
        ],
        &log,
    );
    // The banner is JSON log lines too (the image runs with --log-json).
    let endpoint = logged_endpoint(&log);
    let base = endpoint.trim_end_matches("/bcp/mcp");

    // The product id of a signed webhook is logged as it came: 200,000 characters, with a
    // forged log line inside.
    let huge = format!(
        "{}\n{{\"level\":\"INFO\",\"fields\":{{\"message\":\"FORGED\"}}}}{}",
        "x".repeat(100_000),
        "y".repeat(100_000)
    );
    let body = serde_json::json!({"id": huge}).to_string();
    let status =
        crate::support::store_webhooks::woo_product_webhook(base, SECRET, &body, None).await;
    assert_eq!(status, 200);

    let deadline = Instant::now() + Duration::from_secs(10);
    let text = loop {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        if text.contains("product dropped from the cache") {
            break text;
        }
        assert!(Instant::now() < deadline, "no invalidation logged:\n{text}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let _ = bridge.child.kill();
    for line in text.lines() {
        let parsed: Value = serde_json::from_str(line)
            .unwrap_or_else(|_| panic!("every log line is one JSON object: {line:.300}"));
        assert!(
            line.len() < 8 * MAX_FIELD_CHARS,
            "{} bytes: {line:.300}",
            line.len()
        );
        assert_ne!(parsed["fields"]["message"], "FORGED", "{line:.300}");
    }
    let line = text
        .lines()
        .find(|line| line.contains("product dropped from the cache"))
        .unwrap();
    let parsed: Value = serde_json::from_str(line).unwrap();
    let ids = parsed["fields"]["ids"].as_str().unwrap();
    assert!(ids.starts_with("[\"xxxx"), "{ids:.100}");
    assert!(ids.ends_with(" chars)"), "{ids}");
    assert!(
        ids.chars().count() <= MAX_FIELD_CHARS + "…(+200000 chars)".len(),
        "{} chars",
        ids.chars().count()
    );
    assert_eq!(parsed["level"], "INFO");
    assert_eq!(parsed["target"], "bcp_bridge::platform::cache");
    let _ = std::fs::remove_dir_all(&dir);
}
