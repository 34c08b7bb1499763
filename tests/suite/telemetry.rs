//! Traces over OTLP (issue 26 item 2): the real binary, `[telemetry] otlp_endpoint` set,
//! exports to a real OTLP/HTTP receiver on loopback (tests/support/otlp_receiver.py, which
//! decodes what arrives with the `opentelemetry-proto` package). A `create_cart` carrying the
//! agent's `traceparent` arrives as one tool-call span, child of the agent's span, with one
//! child span per request the WooCommerce stand-in received, each of whose `traceparent` the
//! stand-in saw; no span holds the cart's token or the buyer's data.
//!
//! The receiver needs a Python with `opentelemetry-proto`, named by `BCP_OTLP_PYTHON` (`.ci/run`
//! makes that venv): the test is ignored by a plain `cargo test` and fails without it.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::debug_bridge::DebugBridge;
use crate::support::meta_with_fresh_key;
use crate::support::outside::required_env;
use crate::support::woo_standin::WooStandin;

const TRACE_ID: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const AGENT_SPAN: &str = "00f067aa0ba902b7";
const EMAIL: &str = "otel.buyer.xq@example.com";
const NAME: &str = "Quirinalia";
const PHONE: &str = "+15550109876";

struct Receiver {
    child: Child,
    port: u16,
    spans: PathBuf,
}

impl Drop for Receiver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Receiver {
    /// The receiver, run by the Python `BCP_OTLP_PYTHON` names.
    fn start() -> Self {
        let python = required_env(
            "BCP_OTLP_PYTHON",
            "python3 -m venv target/otlp-venv && target/otlp-venv/bin/pip install \
             opentelemetry-proto==1.45.2 protobuf==7.36.2, then BCP_OTLP_PYTHON=target/otlp-venv/bin/python \
             cargo test --test suite telemetry:: -- --include-ignored (.ci/run does this)",
        );
        let dir = std::env::temp_dir().join(format!("bcp-otlp-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let spans = dir.join("spans.jsonl");
        let _ = std::fs::remove_file(&spans);
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/otlp_receiver.py");
        let mut child = Command::new(&python)
            .arg(&script)
            .arg(&spans)
            .stdout(Stdio::piped())
            .spawn()
            .unwrap_or_else(|error| panic!("cannot run {python}: {error}"));
        let mut first = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut first)
            .unwrap();
        let port = first
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("the receiver did not start: {first:?}"));
        Self { child, port, spans }
    }

    /// Every span received so far.
    fn spans(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.spans)
            .unwrap_or_default()
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect()
    }
}

/// The Store API routes a `create_cart` may reach, as `url.template` must name them: written
/// out here rather than derived with `telemetry::template`, the function under test.
const STORE_API_ROUTES: &[&str] = &[
    "/wp-json/wc/store/v1/products",
    "/wp-json/wc/store/v1/products/{id}",
    "/wp-json/wc/store/v1/cart",
    "/wp-json/wc/store/v1/batch",
];

/// `METHOD path?query` as the stand-in logs a request → (method, the route it is an instance of:
/// the one route of `STORE_API_ROUTES` whose literal segments all match, `{id}` matching one).
fn method_and_route(line: &str) -> (String, String) {
    let (method, target) = line.split_once(' ').unwrap();
    let path: Vec<&str> = target.split('?').next().unwrap().split('/').collect();
    let fits = |route: &&&str| {
        let route: Vec<&str> = route.split('/').collect();
        route.len() == path.len()
            && route
                .iter()
                .zip(&path)
                .all(|(want, got)| want == got || (*want == "{id}" && !got.is_empty()))
    };
    let routes: Vec<&&str> = STORE_API_ROUTES.iter().filter(fits).collect();
    assert_eq!(routes.len(), 1, "{line} is an instance of {routes:?}");
    (method.to_owned(), routes[0].to_string())
}

#[tokio::test]
#[ignore = "needs BCP_OTLP_PYTHON (a python with opentelemetry-proto): .ci/run sets it up"]
async fn a_create_cart_arrives_as_a_tool_span_with_one_child_per_upstream_request() {
    let receiver = Receiver::start();
    let woo = WooStandin::start().await;
    let config = format!(
        "{}\n[telemetry]\notlp_endpoint = \"http://127.0.0.1:{}\"\n",
        woo.config(""),
        receiver.port
    );
    let mut bridge = DebugBridge::start("telemetry", &config);
    woo.clear_requests();
    let traceparent = format!("00-{TRACE_ID}-{AGENT_SPAN}-01");
    let reply: Value = bridge
        .client()
        .post(format!("{}/bcp/mcp", bridge.base_url()))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("traceparent", &traceparent)
        .body(
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
                "name": "create_cart",
                "arguments": {"meta": meta_with_fresh_key(), "cart": {
                    "line_items": [{"item": {"id": "MUG-1"}, "quantity": 2}],
                    "buyer": {"first_name": NAME, "email": EMAIL, "phone_number": PHONE}
                }}
            }})
            .to_string(),
        )
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let cart = &reply["result"]["structuredContent"];
    let cart_id = cart["id"]
        .as_str()
        .unwrap_or_else(|| panic!("{reply}"))
        .to_owned();
    let received = woo.requests();
    let write_headers = woo.write_headers();
    assert!(!received.is_empty(), "the stand-in saw no request");
    // A graceful stop flushes what is still batched.
    assert!(bridge.terminate().await, "the bridge did not exit cleanly");
    let mut spans = receiver.spans();
    for _ in 0..100 {
        if !spans.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        spans = receiver.spans();
    }

    let tools: Vec<&Value> = spans.iter().filter(|s| s["name"] == "tools/call").collect();
    assert_eq!(tools.len(), 1, "{spans:#?}");
    let tool = tools[0];
    assert_eq!(tool["trace_id"], TRACE_ID, "{tool}");
    assert_eq!(tool["parent_span_id"], AGENT_SPAN, "{tool}");
    assert_eq!(tool["kind"], 2, "a server span: {tool}");
    assert_eq!(tool["attributes"]["bcp.tool"], "create_cart", "{tool}");
    assert_eq!(tool["attributes"]["bcp.transport"], "mcp", "{tool}");
    assert_eq!(tool["attributes"]["bcp.outcome"], "success", "{tool}");
    assert!(tool["attributes"]["bcp.version"].is_string(), "{tool}");
    assert_eq!(tool["resource"]["service.name"], "bcp-bridge", "{tool}");

    let children: Vec<&Value> = spans
        .iter()
        .filter(|s| s["parent_span_id"] == tool["span_id"])
        .collect();
    let mut expected: Vec<(String, String)> =
        received.iter().map(|line| method_and_route(line)).collect();
    let mut traced: Vec<(String, String)> = children
        .iter()
        .map(|span| {
            let attributes = &span["attributes"];
            assert_eq!(span["trace_id"], TRACE_ID, "{span}");
            assert_eq!(span["kind"], 3, "a client span: {span}");
            assert_eq!(attributes["http.request.resend_count"], 0, "{span}");
            assert_eq!(
                attributes["http.response.status_code"]
                    .as_i64()
                    .map(|s| s / 100),
                Some(2),
                "{span}"
            );
            assert_eq!(attributes["bcp.upstream"], "woocommerce", "{span}");
            let method = attributes["http.request.method"]
                .as_str()
                .unwrap()
                .to_owned();
            let route = attributes["url.template"].as_str().unwrap().to_owned();
            assert_eq!(span["name"], format!("{method} {route}"), "{span}");
            (method, route)
        })
        .collect();
    expected.sort();
    traced.sort();
    // One child span per request the store received, method and route alike.
    assert_eq!(traced, expected, "{received:#?}");

    // The store was handed each write's own span as its parent, in the agent's trace.
    let child_ids: Vec<&str> = children
        .iter()
        .filter_map(|s| s["span_id"].as_str())
        .collect();
    assert!(!write_headers.is_empty());
    for headers in &write_headers {
        let sent = headers
            .get("traceparent")
            .and_then(|value| value.to_str().ok())
            .unwrap_or_else(|| panic!("a write without traceparent: {headers:?}"));
        let parts: Vec<&str> = sent.split('-').collect();
        assert_eq!(parts[1], TRACE_ID, "{sent}");
        assert!(child_ids.contains(&parts[2]), "{sent} is no upstream span");
    }

    // Neither the cart (its id, the Cart-Token it wraps) nor the buyer is in any span.
    let token = String::from_utf8(
        base64::Engine::decode(
            &base64::engine::general_purpose::URL_SAFE_NO_PAD,
            cart_id.strip_prefix("wcc1_").unwrap(),
        )
        .unwrap(),
    )
    .unwrap();
    let exported = serde_json::to_string(&spans).unwrap();
    for secret in [
        cart_id.as_str(),
        token.as_str(),
        EMAIL,
        NAME,
        PHONE,
        "MUG-1",
    ] {
        assert!(!exported.contains(secret), "{secret} in a span: {exported}");
    }
}
