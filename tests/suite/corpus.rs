//! The recorded corpus of wire answers: every tool over both namespaces (BCP, UCP) at each
//! release a profile can negotiate, good calls, business errors, protocol errors, refusals
//! and idempotent replays, sent as raw JSON-RPC over real HTTP, both sessionless (the direct
//! path) and with a session header (rmcp's path). The bytes must stay what they were when the
//! corpus was recorded; `CORPUS_RECORD=1 cargo test --test suite corpus` records it again.
//! Cart ids (random) and loopback ports are replaced by stable placeholders.

use std::fmt::Write as _;
use std::net::SocketAddr;

use axum::Router;
use axum::response::IntoResponse;
use axum::routing::get;
use serde_json::{Value, json};

use bcp_bridge::protocol::Namespace;

use crate::support::TestBridge;

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/corpus");

fn profile(version: &str, capabilities: &[&str]) -> String {
    let declared: serde_json::Map<String, Value> = capabilities
        .iter()
        .map(|name| ((*name).to_owned(), json!([{"version": version}])))
        .collect();
    json!({"ucp": {"version": version, "services": {}, "capabilities": declared, "payment_handlers": {}}})
        .to_string()
}

/// Agent profiles on loopback, one per (namespace, version), plus one too old to agree on.
async fn agents() -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let mut app = Router::new();
    for (path, service, version) in [
        ("/bcp-2026-07-28", "br.dev.bcp.shopping", "2026-07-28"),
        ("/bcp-2026-07-14", "br.dev.bcp.shopping", "2026-07-14"),
        ("/ucp-2026-08-25", "dev.ucp.shopping", "2026-08-25"),
        ("/ucp-2026-04-08", "dev.ucp.shopping", "2026-04-08"),
        ("/bcp-too-old", "br.dev.bcp.shopping", "2025-01-01"),
        ("/ucp-too-old", "dev.ucp.shopping", "2025-01-01"),
    ] {
        let capabilities = ["cart", "catalog.lookup", "catalog.search"]
            .map(|suffix| format!("{service}.{suffix}"));
        let names: Vec<&str> = capabilities.iter().map(String::as_str).collect();
        let body = profile(version, &names);
        app = app.route(
            path,
            get(move || {
                let body = body.clone();
                async move { ([("content-type", "application/json")], body).into_response() }
            }),
        );
    }
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    addr
}

struct Recorder<'a> {
    bridge: &'a TestBridge,
    url: String,
    agents: SocketAddr,
    out: String,
    carts: Vec<String>,
    next_id: u64,
    /// The release the agent's profile asks for, while its calls are recorded.
    release: &'static str,
    /// Every `tools/call` answer, with its tool and release, for the output schema check.
    answers: Vec<Answered>,
}

struct Answered {
    tool: String,
    release: &'static str,
    text: String,
}

impl Recorder<'_> {
    /// Replaces every `cart_<32 hex>` by `cart_#n`, numbered in order of first appearance.
    fn stable(&mut self, text: &str) -> String {
        let mut text = text
            .replace(&self.bridge.addr.to_string(), "BRIDGE")
            .replace(&self.agents.to_string(), "AGENTS");
        // Carts expire a fixed time after their last write: the instant is the clock's.
        let mut from = 0;
        while let Some(at) = text[from..].find("expires_at").map(|at| at + from) {
            let after = at + "expires_at".len();
            let Some(start) = text[after..]
                .find(|c: char| c.is_ascii_digit())
                .map(|offset| offset + after)
                .filter(|start| start - after <= 12)
            else {
                from = after;
                continue;
            };
            let len = text[start..]
                .find(|c: char| !(c.is_ascii_digit() || "-:.TZ".contains(c)))
                .unwrap_or(text.len() - start);
            text.replace_range(start..start + len, "TIME");
            from = start + 4;
        }
        let mut from = 0;
        while let Some(at) = text[from..].find("cart_").map(|at| at + from) {
            let start = at + "cart_".len();
            let hex: String = text[start..]
                .chars()
                .take_while(char::is_ascii_hexdigit)
                .collect();
            if hex.len() == 32 {
                let id = format!("cart_{hex}");
                let index = match self.carts.iter().position(|known| *known == id) {
                    Some(index) => index,
                    None => {
                        self.carts.push(id.clone());
                        self.carts.len() - 1
                    }
                };
                let placeholder = format!("cart_#{index}");
                text.replace_range(at..start + 32, &placeholder);
                from = at + placeholder.len();
            } else {
                from = start;
            }
        }
        text
    }

    /// The real cart id behind placeholder `n`.
    fn cart(&self, index: usize) -> String {
        self.carts
            .get(index)
            .cloned()
            .unwrap_or_else(|| "cart_missing".to_owned())
    }

    async fn post(&mut self, label: &str, body: &str, session: bool) -> String {
        let mut request = self
            .bridge
            .client
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(body.to_owned());
        if session {
            request = request.header("mcp-session-id", "corpus");
        }
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        let text = response.text().await.unwrap();
        let stable = self.stable(&text);
        let _ = writeln!(
            self.out,
            "### {label}{}\n{status}\n{stable}\n",
            if session { " (session)" } else { "" }
        );
        text
    }

    /// One `tools/call`, sent both ways; returns the sessionless answer.
    async fn call(&mut self, label: &str, tool: &str, arguments: Value) -> String {
        self.next_id += 1;
        let body = json!({"jsonrpc": "2.0", "id": self.next_id, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments}})
        .to_string();
        let text = self.post(label, &body, false).await;
        let release = self.release;
        let answered = |text: String| Answered {
            tool: tool.to_owned(),
            release,
            text,
        };
        self.answers.push(answered(text.clone()));
        if !tool.ends_with("_cart") || tool == "get_cart" {
            let again = self.post(label, &body, true).await;
            self.answers.push(answered(again));
        }
        text
    }
}

fn line(id: &str, quantity: u32) -> Value {
    json!({"item": {"id": id}, "quantity": quantity})
}

async fn record(recorder: &mut Recorder<'_>, profile: &str, tag: &str) {
    let meta = json!({"ucp-agent": {"profile": profile}});
    let keyed = |key: &str| json!({"ucp-agent": {"profile": profile}, "idempotency-key": format!("{tag}-{key}")});
    let r = recorder;
    r.call(
        "search",
        "search_catalog",
        json!({"meta": meta, "catalog": {"query": "shirt"}}),
    )
    .await;
    r.call(
        "search page",
        "search_catalog",
        json!({"meta": meta, "catalog": {"query": "shirt", "pagination": {"limit": 1}}}),
    )
    .await;
    r.call(
        "search empty",
        "search_catalog",
        json!({"meta": meta, "catalog": {}}),
    )
    .await;
    r.call(
        "search bad type",
        "search_catalog",
        json!({"meta": meta, "catalog": {"query": 5}}),
    )
    .await;
    r.call(
        "lookup",
        "lookup_catalog",
        json!({"meta": meta, "catalog": {"ids": ["prod_abc123", "nope", "var_xyz789"]}}),
    )
    .await;
    r.call(
        "get_product",
        "get_product",
        json!({"meta": meta, "catalog": {"id": "prod_abc123", "selected": [{"name": "Color", "label": "Blue"}]}}),
    )
    .await;
    r.call(
        "get_product repeated option",
        "get_product",
        json!({"meta": meta, "catalog": {"id": "prod_abc123", "selected": [{"name": "Color", "label": "Blue"}, {"name": "color", "label": "Red"}]}}),
    )
    .await;
    r.call(
        "get_product missing",
        "get_product",
        json!({"meta": meta, "catalog": {"id": "no_such_product"}}),
    )
    .await;
    r.call("unknown tool", "no_such_tool", json!({"meta": meta}))
        .await;
    r.call(
        "no meta",
        "search_catalog",
        json!({"catalog": {"query": "shirt"}}),
    )
    .await;
    let first = r.carts.len();
    r.call(
        "create_cart",
        "create_cart",
        json!({"meta": keyed("create"), "cart": {"line_items": [line("item_123", 2)]}}),
    )
    .await;
    r.call(
        "create_cart replay",
        "create_cart",
        json!({"meta": keyed("create"), "cart": {"line_items": [line("item_123", 2)]}}),
    )
    .await;
    r.call(
        "create_cart conflict",
        "create_cart",
        json!({"meta": keyed("create"), "cart": {"line_items": [line("item_123", 3)]}}),
    )
    .await;
    r.call(
        "create_cart unknown item",
        "create_cart",
        json!({"meta": meta, "cart": {"line_items": [line("item_nope", 1)]}}),
    )
    .await;
    r.call(
        "create_cart no lines",
        "create_cart",
        json!({"meta": meta, "cart": {"line_items": []}}),
    )
    .await;
    let cart = r.cart(first);
    r.call("get_cart", "get_cart", json!({"meta": meta, "id": cart}))
        .await;
    r.call(
        "get_cart missing",
        "get_cart",
        json!({"meta": meta, "id": "nope"}),
    )
    .await;
    r.call(
        "get_cart id in payload",
        "get_cart",
        json!({"meta": meta, "id": cart, "cart": {"id": cart}}),
    )
    .await;
    r.call(
        "update_cart",
        "update_cart",
        json!({"meta": keyed("update"), "id": cart, "cart": {"line_items": [line("item_123", 1), line("item_456", 1)]}}),
    )
    .await;
    r.call(
        "update_cart replay",
        "update_cart",
        json!({"meta": keyed("update"), "id": cart, "cart": {"line_items": [line("item_123", 1), line("item_456", 1)]}}),
    )
    .await;
    r.call(
        "update_cart bad quantity",
        "update_cart",
        json!({"meta": meta, "id": cart, "cart": {"line_items": [line("item_123", 0)]}}),
    )
    .await;
    r.call(
        "cancel_cart",
        "cancel_cart",
        json!({"meta": keyed("cancel"), "id": cart}),
    )
    .await;
    r.call(
        "cancel_cart replay",
        "cancel_cart",
        json!({"meta": keyed("cancel"), "id": cart}),
    )
    .await;
    r.call(
        "update_cart cancelled",
        "update_cart",
        json!({"meta": meta, "id": cart, "cart": {"line_items": [line("item_123", 1)]}}),
    )
    .await;
}

/// The recorded text, and each `tools/call` answer with its tool.
struct Recorded {
    text: String,
    answers: Vec<Answered>,
    listing: String,
}

async fn corpus(namespace: &str, service: &str, versions: [&'static str; 2]) -> Recorded {
    let agents = agents().await;
    let bridge = TestBridge::start(
        "[server]\nprotocol = \"both\"\n[negotiation]\nenabled = true\nallow_http_hosts = [\"127.0.0.1\"]\nallow_private_hosts = [\"127.0.0.1\"]\ntimeout_ms = 2000\n",
    )
    .await;
    let mut listing = String::new();
    let mut recorder = Recorder {
        url: bridge
            .endpoints
            .iter()
            .find(|endpoint| endpoint.service == service)
            .and_then(|endpoint| endpoint.mcp_url.clone())
            .unwrap_or_else(|| panic!("no {service} endpoint")),
        bridge: &bridge,
        agents,
        out: String::new(),
        carts: Vec::new(),
        next_id: 0,
        release: "",
        answers: Vec::new(),
    };
    for version in versions {
        recorder.release = version;
        let _ = writeln!(recorder.out, "## {namespace} {version}\n");
        let profile = format!("http://{agents}/{namespace}-{version}");
        record(&mut recorder, &profile, &format!("{namespace}-{version}")).await;
    }
    let _ = writeln!(
        recorder.out,
        "## {namespace} refusals and protocol errors\n"
    );
    recorder.release = "none agreed";
    let too_old = format!("http://{agents}/{namespace}-too-old");
    recorder
        .call(
            "version unsupported",
            "search_catalog",
            json!({"meta": {"ucp-agent": {"profile": too_old}}, "catalog": {"query": "shirt"}}),
        )
        .await;
    recorder
        .call(
            "profile unreachable",
            "search_catalog",
            json!({"meta": {"ucp-agent": {"profile": format!("http://{agents}/missing")}}, "catalog": {"query": "shirt"}}),
        )
        .await;
    for (label, body) in [
        ("parse error", "{not json"),
        (
            "method not found",
            r#"{"jsonrpc":"2.0","id":90,"method":"no/such"}"#,
        ),
        ("ping", r#"{"jsonrpc":"2.0","id":91,"method":"ping"}"#),
        (
            "tools/call without name",
            r#"{"jsonrpc":"2.0","id":92,"method":"tools/call","params":{}}"#,
        ),
        (
            "string id",
            r#"{"jsonrpc":"2.0","id":"a\"b","method":"tools/call","params":{"name":"no_such_tool","arguments":{}}}"#,
        ),
        (
            "tools/list",
            r#"{"jsonrpc":"2.0","id":93,"method":"tools/list"}"#,
        ),
    ] {
        let text = recorder.post(label, body, false).await;
        if label == "tools/list" {
            listing = text;
        }
    }
    Recorded {
        text: recorder.out,
        answers: recorder.answers,
        listing,
    }
}

/// Issue 40 item 1: every answer of the corpus is what the `outputSchema` its tool
/// advertises says, at every release the namespace serves (each must have answered).
fn conforms(recorded: &Recorded, releases: &[&str]) {
    let listing: Value = serde_json::from_str(&recorded.listing).unwrap();
    let tools = listing["result"]["tools"].as_array().unwrap();
    let validators: Vec<(&str, jsonschema::Validator)> = tools
        .iter()
        .map(|tool| {
            let name = tool["name"].as_str().unwrap();
            (
                name,
                jsonschema::validator_for(&tool["outputSchema"]).unwrap(),
            )
        })
        .collect();
    let mut checked: Vec<&str> = Vec::new();
    for Answered {
        tool,
        release,
        text,
    } in &recorded.answers
    {
        let frame: Value = serde_json::from_str(text).unwrap();
        let Some(answer) = frame.pointer("/result/structuredContent") else {
            // A protocol error: no answer of the tool's.
            continue;
        };
        let (_, validator) = validators
            .iter()
            .find(|(name, _)| name == tool)
            .unwrap_or_else(|| panic!("{tool} answered but is not listed"));
        let problems: Vec<String> = validator
            .iter_errors(answer)
            .map(|error| format!("{}: {error}", error.instance_path()))
            .collect();
        assert!(
            problems.is_empty(),
            "{tool} at {release} answered outside its outputSchema: {problems:?}\n{answer}"
        );
        checked.push(tool);
        checked.push(release);
    }
    for release in releases {
        assert!(checked.contains(release), "no answer at release {release}");
    }
    for tool in crate::support::values::CATALOG_AND_CART_TOOLS {
        assert!(checked.contains(&tool), "no answer of {tool}");
    }
}

async fn compare(name: &str, recorded: &str) {
    let file = format!("{DIR}/{name}.txt");
    if std::env::var_os("CORPUS_RECORD").is_some() {
        std::fs::write(&file, recorded).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&file).unwrap_or_else(|_| panic!("no corpus {file}"));
    for (index, (want, got)) in expected
        .split("\n### ")
        .zip(recorded.split("\n### "))
        .enumerate()
    {
        assert_eq!(
            got, want,
            "answer {index} of {name} differs from the recorded corpus"
        );
    }
    assert_eq!(recorded, expected, "{name}: the corpus changed length");
}

/// The namespace's releases, the newest first, as the bridge declares them.
fn releases(namespace: &Namespace) -> Vec<&'static str> {
    std::iter::once(namespace.version)
        .chain(namespace.supported_versions.iter().copied())
        .collect()
}

#[tokio::test]
async fn bcp_answers_are_the_recorded_bytes() {
    let releases = releases(&Namespace::BCP);
    assert_eq!(
        releases,
        ["2026-07-28", "2026-07-14"],
        "record the new release"
    );
    let recorded = corpus("bcp", "br.dev.bcp.shopping", ["2026-07-28", "2026-07-14"]).await;
    compare("bcp", &recorded.text).await;
    conforms(&recorded, &releases);
}

#[tokio::test]
async fn ucp_answers_are_the_recorded_bytes() {
    let releases = releases(&Namespace::UCP);
    assert_eq!(
        releases,
        ["2026-08-25", "2026-04-08"],
        "record the new release"
    );
    let recorded = corpus("ucp", "dev.ucp.shopping", ["2026-08-25", "2026-04-08"]).await;
    compare("ucp", &recorded.text).await;
    conforms(&recorded, &releases);
}
