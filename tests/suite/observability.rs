//! deploy/observability/ names only metrics the bridge really exports (issue 26): the Grafana
//! dashboard's every query and every metric of the alert rules and their tests are checked
//! against the `/metrics` output of a real bridge that has served calls on the WooCommerce
//! stand-in, with a real Redis, a store error and an agent over its inbound budget, and of a
//! second bridge serving TLS (the certificate-expiry gauge).

use std::collections::BTreeSet;

use serde_json::{Value, json};

use crate::support::binary::Running;
use crate::support::redis::RedisServer;
use crate::support::woo_standin::{Fault, WooStandin};

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/deploy/observability");

/// Every `bcp_…` name in `text` (metric names; alert names are CamelCase, the group
/// `bcp-bridge` has a hyphen).
fn metric_names(text: &str) -> BTreeSet<String> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
        .filter(|token| token.starts_with("bcp_"))
        .map(str::to_owned)
        .collect()
}

/// The series names a `/metrics` page exports: each `# TYPE` name, with a histogram's
/// `_bucket`, `_sum` and `_count` series.
fn exported(page: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for line in page.lines() {
        let mut words = line.split_whitespace();
        if let (Some("#"), Some("TYPE"), Some(name), Some(kind)) =
            (words.next(), words.next(), words.next(), words.next())
        {
            names.insert(name.to_owned());
            if kind == "histogram" || kind == "summary" {
                for suffix in ["_bucket", "_sum", "_count"] {
                    names.insert(format!("{name}{suffix}"));
                }
            }
        }
    }
    names
}

/// Every `expr` string of the dashboard, wherever it sits in the panel tree.
fn exprs(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (key, inner) in map {
                match (key.as_str(), inner) {
                    ("expr", Value::String(expr)) => out.push(expr.clone()),
                    _ => exprs(inner, out),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|item| exprs(item, out)),
        _ => {}
    }
}

async fn call(mcp: &str, agent: &str, id: u64, tool: &str, arguments: Value) -> Value {
    let mut arguments = arguments;
    arguments["meta"] = json!({"ucp-agent": {"profile": agent}});
    reqwest::Client::new()
        .post(mcp)
        .header("Accept", "application/json, text/event-stream")
        .json(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                      "params": {"name": tool, "arguments": arguments}}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

/// The metric names of a bridge serving `[server.tls]` with a fresh self-signed certificate,
/// after checking that its expiry gauge holds a date in the future.
async fn tls_bridge_metrics() -> BTreeSet<String> {
    let dir = std::env::temp_dir().join(format!("bcp-observability-tls-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let certified = rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_owned()]).unwrap();
    let (cert, key) = (dir.join("cert.pem"), dir.join("key.pem"));
    std::fs::write(&cert, certified.cert.pem()).unwrap();
    std::fs::write(&key, certified.signing_key.serialize_pem()).unwrap();
    let config = dir.join("bridge.toml");
    std::fs::write(
        &config,
        format!(
            "[server.tls]\ncert = \"{}\"\nkey = \"{}\"\n\n[negotiation]\nenabled = false\n",
            cert.display(),
            key.display()
        ),
    )
    .unwrap();
    let mut bridge = Running::serve(&config);
    let base = bridge.endpoint().trim_end_matches("/bcp/mcp").to_owned();
    assert!(base.starts_with("https://"), "{base}");
    let page = reqwest::Client::builder()
        .tls_danger_accept_invalid_certs(true)
        .build()
        .unwrap()
        .get(format!("{base}/metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let expiry: f64 = page
        .lines()
        .find_map(|line| line.strip_prefix("bcp_tls_cert_expiry_timestamp_seconds "))
        .unwrap_or_else(|| panic!("no certificate expiry gauge:\n{page}"))
        .trim()
        .parse()
        .unwrap();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    assert!(expiry > now + 86_400.0, "expiry {expiry}, now {now}");
    let _ = bridge.child.kill();
    exported(&page)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs redis-server: cargo test -- --include-ignored with redis-server on the PATH (.ci/run installs it)"]
async fn dashboard_and_alerts_name_only_metrics_the_bridge_exports() {
    // A real Redis, so that bcp_redis_up and the other Redis series are exported to compare
    // against.
    let redis = RedisServer::run(None);
    let woo = WooStandin::start().await;
    let config =
        std::env::temp_dir().join(format!("bcp-observability-{}.toml", std::process::id()));
    std::fs::write(
        &config,
        format!(
            "{}\n[negotiation]\nenabled = false\n\n[cache]\nenabled = true\nsearch = true\n\n[inbound]\nper_agent_per_minute = 3\n\n[redis]\nurl = \"{}\"\n",
            woo.config(""),
            redis.url(None)
        ),
    )
    .unwrap();
    let mut bridge = Running::serve(&config);
    let mcp = bridge.endpoint();
    let base = mcp.trim_end_matches("/bcp/mcp").to_owned();
    let agent = "https://metrics-agent.example/profile.json";

    // Two searches (cache misses, then a kept answer), the same search spelled with its
    // default page size (another answer, from the cached page), a cart, a store error,
    // /readyz (Redis), and an agent over its inbound budget.
    for id in 1..=2 {
        call(
            &mcp,
            agent,
            id,
            "search_catalog",
            json!({"catalog": {"query": "shirt"}}),
        )
        .await;
    }
    call(
        &mcp,
        "https://other.example/profile.json",
        5,
        "search_catalog",
        json!({"catalog": {"query": "shirt", "pagination": {"limit": 10}}}),
    )
    .await;
    call(
        &mcp,
        agent,
        3,
        "create_cart",
        json!({"cart": {"line_items": [{"item": {"id": "30"}, "quantity": 1}]}}),
    )
    .await;
    woo.set_fault(Fault::ServerError);
    let failed = call(
        &mcp,
        "https://other.example/profile.json",
        4,
        "get_product",
        json!({"catalog": {"id": "31"}}),
    )
    .await;
    woo.set_fault(Fault::None);
    assert!(
        failed.get("error").is_some() || failed["result"]["isError"] == true,
        "{failed}"
    );
    let client = reqwest::Client::new();
    let ready = client.get(format!("{base}/readyz")).send().await.unwrap();
    assert_eq!(ready.status(), 200);
    for id in 10..16 {
        call(
            &mcp,
            "https://flood.example/profile.json",
            id,
            "search_catalog",
            json!({"catalog": {"query": "x"}}),
        )
        .await;
    }

    let page = client
        .get(format!("{base}/metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let mut exported = exported(&page);
    exported.extend(tls_bridge_metrics().await);

    let dashboard: Value =
        serde_json::from_str(&std::fs::read_to_string(format!("{DIR}/dashboard.json")).unwrap())
            .unwrap();
    let mut queries = Vec::new();
    exprs(&dashboard, &mut queries);
    let panels = dashboard["panels"].as_array().unwrap();
    assert!(!panels.is_empty());
    for panel in panels {
        let mut own = Vec::new();
        exprs(panel, &mut own);
        assert!(
            !own.is_empty(),
            "a panel without a query: {}",
            panel["title"]
        );
    }
    for query in &queries {
        let names = metric_names(query);
        assert!(
            !names.is_empty(),
            "a query that names no bridge metric: {query}"
        );
        for name in names {
            assert!(
                exported.contains(&name),
                "dashboard query names {name}, which /metrics does not export:\n{query}\n--- /metrics:\n{page}"
            );
        }
    }
    for file in ["alerts.yaml", "alerts.test.yaml"] {
        let text = std::fs::read_to_string(format!("{DIR}/{file}")).unwrap();
        let names = metric_names(&text);
        assert!(!names.is_empty(), "{file} names no metric");
        for name in names {
            assert!(
                exported.contains(&name),
                "{file} names {name}, which /metrics does not export\n--- /metrics:\n{page}"
            );
        }
    }
    let _ = bridge.child.kill();
}
