//! UCP 2026-08-25 beside 2026-04-08 on one endpoint. Agent profiles are served on loopback;
//! each agent gets the newest version both speak, and every answer validates against the
//! vendored schemas of its own release (tests/fixtures/ucp-2026-08-25 and
//! tests/fixtures/ucp-2026-04-08, each registered under its `$id`). Ids are those of
//! shared/spec/ucp-2026-08-25/requirements.

use std::net::SocketAddr;
use std::path::Path;

use crate::schemas::{load, problems};
use crate::support::TestBridge;
use crate::support::values::line;
use axum::Router;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use jsonschema::{Registry, Validator};
use reqwest::StatusCode;
use serde_json::{Value, json};

const SCHEMAS: &str = "https://ucp.dev/schemas";
const NEW: &str = "2026-08-25";
const OLD: &str = "2026-04-08";
/// What these agents declare: every root capability and both checkout extensions (an agent
/// that leaves an extension out gets checkout answers without it, OVR-005).
const CAPABILITIES: [&str; 7] = [
    "dev.ucp.shopping.catalog.search",
    "dev.ucp.shopping.catalog.lookup",
    "dev.ucp.shopping.cart",
    "dev.ucp.shopping.checkout",
    "dev.ucp.shopping.order",
    "dev.ucp.shopping.fulfillment",
    "dev.ucp.shopping.discount",
];

/// The 2026-08-25 validators: error responses and shared types now live in `common/types`.
struct Schemas {
    search: Validator,
    lookup: Validator,
    get_product: Validator,
    cart: Validator,
    checkout: Validator,
    order: Validator,
    error: Validator,
    profile: Validator,
    tool_reply: Validator,
}

impl Schemas {
    fn load() -> Self {
        let mut files = Vec::new();
        load(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ucp-2026-08-25"),
            &mut files,
        );
        assert!(files.len() > 100, "UCP 2026-08-25 schemas present");
        let mut builder = Registry::new();
        for (id, schema) in files {
            builder = builder.add(id, schema).unwrap();
        }
        let registry = builder.prepare().unwrap();
        let compile = |schema: Value| {
            let mut schema = schema;
            schema["$schema"] = json!("https://json-schema.org/draft/2020-12/schema");
            jsonschema::options()
                .with_registry(&registry)
                .should_validate_formats(true)
                .build(&schema)
                .unwrap_or_else(|error| panic!("{schema}: {error}"))
        };
        let either = |resource: &str| {
            compile(json!({"oneOf": [
                {"$ref": format!("{SCHEMAS}/{resource}")},
                {"$ref": format!("{SCHEMAS}/common/types/error_response.json")}
            ]}))
        };
        Self {
            search: compile(
                json!({"$ref": format!("{SCHEMAS}/shopping/catalog_search.json#/$defs/search_response")}),
            ),
            lookup: compile(
                json!({"$ref": format!("{SCHEMAS}/shopping/catalog_lookup.json#/$defs/lookup_response")}),
            ),
            get_product: either("shopping/catalog_lookup.json#/$defs/get_product_response"),
            cart: either("shopping/cart.json"),
            checkout: either("shopping/checkout.json"),
            order: either("shopping/order.json"),
            error: compile(json!({"$ref": format!("{SCHEMAS}/common/types/error_response.json")})),
            profile: compile(
                json!({"$ref": format!("{SCHEMAS}/profile.json#/$defs/business_schema")}),
            ),
            tool_reply: compile(
                json!({"$ref": format!("{SCHEMAS}/transports/mcp_tool_call.json#/$defs/response")}),
            ),
        }
    }

    fn for_tool(&self, tool: &str) -> &Validator {
        match tool {
            "search_catalog" => &self.search,
            "lookup_catalog" => &self.lookup,
            "get_product" => &self.get_product,
            "get_order" => &self.order,
            tool if tool.ends_with("_checkout") => &self.checkout,
            _ => &self.cart,
        }
    }
}

fn json_response(body: Value) -> Response {
    (
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

/// An agent profile declaring `capabilities` at `version`, with optional older leaves.
fn agent(version: &str, capabilities: &[&str], older: Option<(&str, String)>) -> Value {
    let declared: serde_json::Map<String, Value> = capabilities
        .iter()
        .map(|name| ((*name).to_owned(), json!([{"version": version}])))
        .collect();
    let mut profile = json!({"ucp": {
        "version": version,
        "services": {},
        "capabilities": declared,
        "payment_handlers": {}
    }});
    if let Some((old, url)) = older {
        profile["ucp"]["supported_versions"] = json!({ old: url });
    }
    profile
}

/// The agents' profile host, on loopback.
async fn agents() -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let leaf = format!("http://{addr}/only-0408");
    let app = Router::new()
        .route(
            "/only-0825",
            get(|| async { json_response(agent(NEW, &CAPABILITIES, None)) }),
        )
        .route(
            "/only-0408",
            get(|| async { json_response(agent(OLD, &CAPABILITIES, None)) }),
        )
        .route(
            "/both",
            get(move || {
                let leaf = leaf.clone();
                async move { json_response(agent(NEW, &CAPABILITIES, Some((OLD, leaf)))) }
            }),
        )
        .route(
            "/catalog-only",
            get(|| async { json_response(agent(NEW, &CAPABILITIES[..2], None)) }),
        )
        .route(
            // A 04-08 cart declaration inside an 08-25 profile is not an 08-25 cart (NEG-009).
            "/mixed",
            get(|| async {
                let mut profile = agent(NEW, &CAPABILITIES[..2], None);
                profile["ucp"]["capabilities"]["dev.ucp.shopping.cart"] = json!([{"version": OLD}]);
                json_response(profile)
            }),
        )
        .route(
            "/too-old",
            get(|| async { json_response(agent("2026-01-23", &CAPABILITIES, None)) }),
        )
        .route(
            // DISC-012: a cap of no less than 128 KiB lets a 100 KiB profile through.
            "/padded",
            get(|| async {
                let mut profile = agent(NEW, &CAPABILITIES, None);
                profile["ucp"]["x-padding"] = json!("x".repeat(100 * 1024));
                json_response(profile)
            }),
        );
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    addr
}

async fn bridge() -> TestBridge {
    TestBridge::start(
        "[server]\nprotocol = \"ucp\"\n[negotiation]\nenabled = true\nallow_http_hosts = [\"127.0.0.1\"]\nallow_private_hosts = [\"127.0.0.1\"]\ntimeout_ms = 2000\n",
    )
    .await
}

fn meta(profile: &str) -> Value {
    json!({"ucp-agent": {"profile": profile}})
}

fn meta_with_key(profile: &str, key: &str) -> Value {
    json!({"ucp-agent": {"profile": profile}, "idempotency-key": key})
}

/// Calls tools as one agent and records every schema violation and every envelope that does
/// not carry the expected version.
struct Agent<'a> {
    bridge: &'a TestBridge,
    profile: String,
    version: &'static str,
    check: &'a dyn Fn(&str, &Value) -> Vec<String>,
    violations: Vec<String>,
    seen: Vec<String>,
}

impl Agent<'_> {
    async fn call(&mut self, label: &str, tool: &str, mut arguments: Value) -> Value {
        if arguments.get("meta").is_none() {
            arguments["meta"] = meta(&self.profile);
        }
        let answer = self.bridge.call(tool, arguments).await;
        self.seen.push(label.to_owned());
        for problem in (self.check)(tool, &answer) {
            self.violations.push(format!("{label}: {problem}"));
        }
        // NEG-007: the negotiated version, in the envelope and in every capability entry.
        let ucp = &answer["ucp"];
        if ucp["version"] != self.version {
            self.violations
                .push(format!("{label}: ucp.version {}", ucp["version"]));
        }
        for (name, entries) in ucp["capabilities"].as_object().into_iter().flatten() {
            for entry in entries.as_array().into_iter().flatten() {
                if entry["version"] != self.version {
                    self.violations.push(format!("{label}: {name} at {entry}"));
                }
            }
        }
        // OVR-022: no `ucp` member directly inside `ucp`.
        if ucp.get("ucp").is_some() {
            self.violations.push(format!("{label}: ucp.ucp"));
        }
        answer
    }

    async fn catalog(&mut self, label: &str, tool: &str, catalog: Value) -> Value {
        self.call(label, tool, json!({"catalog": catalog})).await
    }
}

/// Catalog and cart end to end, every outcome the sample store can provoke.
async fn shop(agent: &mut Agent<'_>) {
    // CAT-046: 2026-08-25 context members (location, payment, eligibility) are accepted and
    // ignored without error.
    agent
        .catalog(
            "search query",
            "search_catalog",
            json!({"query": "blue running shoes", "context": {
                "address_country": "US", "location": "store_42",
                "payment": [{"handler": "com.example.unknown", "types": ["card"]}],
                "eligibility": ["com.example-shop.member"]
            }}),
        )
        .await;
    let first = agent
        .catalog(
            "search browse",
            "search_catalog",
            json!({"filters": {"categories": ["Clothing"]}, "pagination": {"limit": 2}}),
        )
        .await;
    assert_eq!(first["pagination"]["has_next_page"], true, "{first}");
    agent
        .catalog(
            "search page 2",
            "search_catalog",
            json!({"filters": {"categories": ["Clothing"]}, "pagination": {"limit": 2, "cursor": first["pagination"]["cursor"]}}),
        )
        .await;
    let none = agent
        .catalog(
            "search none",
            "search_catalog",
            json!({"query": "zzzz-nothing"}),
        )
        .await;
    assert_eq!(none["products"], json!([]));
    agent
        .catalog(
            "lookup",
            "lookup_catalog",
            json!({"ids": ["prod_abc123", "prod_abc123_blu_10", "prod_def456"]}),
        )
        .await;
    let partial = agent
        .catalog(
            "lookup partial",
            "lookup_catalog",
            json!({"ids": ["prod_abc123", "prod_notfound1"]}),
        )
        .await;
    assert_eq!(partial["messages"][0]["code"], "not_found", "{partial}");
    agent
        .catalog(
            "get_product",
            "get_product",
            json!({"id": "prod_abc123", "selected": [{"name": "Color", "label": "Blue"}], "preferences": ["Color", "Size"]}),
        )
        .await;
    agent
        .catalog(
            "get_product variant",
            "get_product",
            json!({"id": "prod_abc123_red_12"}),
        )
        .await;
    // CAT-045: an unknown id is unrecoverable.
    let missing = agent
        .catalog(
            "get_product missing",
            "get_product",
            json!({"id": "prod_invalid"}),
        )
        .await;
    assert_eq!(missing["ucp"]["status"], "error");
    assert_eq!(missing["messages"][0]["code"], "not_found");
    assert_eq!(missing["messages"][0]["severity"], "unrecoverable");

    let cart = agent
        .call(
            "create_cart",
            "create_cart",
            json!({"cart": {"line_items": [line("item_123", 2), line("item_456", 1)]}}),
        )
        .await;
    let id = cart["id"].clone();
    assert!(id.is_string(), "{cart}");
    // ERR-035: a message's path is relative to the root of the answer.
    let partial_cart = agent
        .call(
            "create_cart partial",
            "create_cart",
            json!({"cart": {"line_items": [line("item_123", 1), line("prod_electric_kettle_default", 1)]}}),
        )
        .await;
    let paths: Vec<&str> = partial_cart["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|message| message["path"].as_str())
        .collect();
    assert!(
        paths.iter().all(|path| path.starts_with("$.line_items[")),
        "{partial_cart}"
    );
    agent.call("get_cart", "get_cart", json!({"id": id})).await;
    let updated = agent
        .call(
            "update_cart",
            "update_cart",
            json!({"id": id, "cart": {"line_items": [line("item_123", 3)]}}),
        )
        .await;
    assert_eq!(updated["line_items"][0]["quantity"], 3, "{updated}");
    let cancelled = agent
        .call(
            "cancel_cart",
            "cancel_cart",
            json!({"meta": meta_with_key(&agent.profile, &uuid::Uuid::new_v4().to_string()), "id": id}),
        )
        .await;
    assert_eq!(cancelled["id"], id);
    // A cancelled cart is gone; the not-found answer is an error_response.
    let gone = agent
        .call("get_cart cancelled", "get_cart", json!({"id": id}))
        .await;
    assert_eq!(gone["ucp"]["status"], "error");
    let sold_out = agent
        .call(
            "create_cart sold out",
            "create_cart",
            json!({"cart": {"line_items": [line("prod_electric_kettle_default", 1)]}}),
        )
        .await;
    assert_eq!(sold_out["ucp"]["status"], "error");
    assert!(agent.seen.len() >= 16);
}

fn assert_clean(violations: &[String]) {
    assert!(
        violations.is_empty(),
        "{} violation(s):\n{}",
        violations.len(),
        violations.join("\n")
    );
}

#[tokio::test]
async fn an_agent_speaking_only_2026_08_25_shops_in_2026_08_25() {
    // NEG-006, NEG-007; MCP-016 (structuredContent plus its text mirror, checked by
    // `TestBridge::call`).
    let schemas = Schemas::load();
    let agents = agents().await;
    let bridge = bridge().await;
    let check = |tool: &str, answer: &Value| problems(schemas.for_tool(tool), answer);
    let mut agent = Agent {
        bridge: &bridge,
        profile: format!("http://{agents}/only-0825"),
        version: NEW,
        check: &check,
        violations: Vec::new(),
        seen: Vec::new(),
    };
    shop(&mut agent).await;
    assert_clean(&agent.violations);
    // A real answer, spoiled, is refused: the checks above are not vacuous.
    let mut spoiled = json!({"ucp": {"version": NEW, "status": "error"}, "messages": []});
    assert!(!problems(&schemas.error, &spoiled).is_empty());
    spoiled["messages"] =
        json!([{"type": "error", "code": "x", "content": "y", "severity": "unrecoverable"}]);
    assert!(problems(&schemas.error, &spoiled).is_empty());
}

#[tokio::test]
async fn an_agent_speaking_only_2026_04_08_is_unchanged() {
    let old_schemas = crate::schemas::Schemas::load();
    let agents = agents().await;
    let bridge = bridge().await;
    let check = |tool: &str, answer: &Value| problems(old_schemas.for_tool(tool), answer);
    let mut agent = Agent {
        bridge: &bridge,
        profile: format!("http://{agents}/only-0408"),
        version: OLD,
        check: &check,
        violations: Vec::new(),
        seen: Vec::new(),
    };
    shop(&mut agent).await;
    assert_clean(&agent.violations);
}

#[tokio::test]
async fn an_agent_speaking_both_gets_the_newest() {
    let schemas = Schemas::load();
    let agents = agents().await;
    let bridge = bridge().await;
    for path in ["both", "padded"] {
        let answer = bridge
            .call(
                "search_catalog",
                json!({"meta": meta(&format!("http://{agents}/{path}")), "catalog": {"query": "shirt"}}),
            )
            .await;
        assert_eq!(answer["ucp"]["version"], NEW, "{path}: {answer}");
        assert_clean(&problems(&schemas.search, &answer));
    }
}

#[tokio::test]
async fn tool_replies_fit_the_2026_08_25_mcp_envelope() {
    // MCP-014, MCP-016: the whole JSON-RPC reply, not only structuredContent.
    let schemas = Schemas::load();
    let agents = agents().await;
    let bridge = bridge().await;
    let (status, reply) = bridge
        .call_raw(
            "lookup_catalog",
            json!({"meta": meta(&format!("http://{agents}/only-0825")), "catalog": {"ids": ["prod_abc123"]}}),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_clean(&problems(&schemas.tool_reply, &reply));
    assert!(reply["result"]["structuredContent"].is_object());
}

#[tokio::test]
async fn no_shared_version_is_a_protocol_error() {
    // NEG-001: -32001 with HTTP 422, never a result.
    let agents = agents().await;
    let bridge = bridge().await;
    let (status, error) = bridge
        .call_error(
            "search_catalog",
            json!({"meta": meta(&format!("http://{agents}/too-old")), "catalog": {"query": "shirt"}}),
        )
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(error["code"], -32001);
    assert_eq!(error["data"]["code"], "version_unsupported");
    let content = error["data"]["content"].as_str().unwrap();
    assert!(content.contains("2026-08-25, 2026-04-08"), "{content}");
}

#[tokio::test]
async fn a_capability_the_agent_does_not_declare_is_incompatible() {
    // NEG-002, NEG-011: a business outcome (HTTP 200, result), not a protocol error; NEG-009:
    // a 04-08 cart entry inside an 08-25 profile does not count.
    let schemas = Schemas::load();
    let agents = agents().await;
    let bridge = bridge().await;
    for path in ["catalog-only", "mixed"] {
        let profile = format!("http://{agents}/{path}");
        let refused = bridge
            .call(
                "create_cart",
                json!({"meta": meta_with_key(&profile, &uuid::Uuid::new_v4().to_string()), "cart": {"line_items": [line("item_123", 1)]}}),
            )
            .await;
        assert_eq!(refused["ucp"]["status"], "error", "{refused}");
        assert_eq!(refused["ucp"]["version"], NEW);
        assert_eq!(refused["messages"][0]["code"], "capabilities_incompatible");
        assert_eq!(refused["messages"][0]["severity"], "unrecoverable");
        assert!(refused["continue_url"].is_string(), "{refused}");
        assert_clean(&problems(&schemas.error, &refused));
        // The declared catalog still works.
        let search = bridge
            .call(
                "search_catalog",
                json!({"meta": meta(&profile), "catalog": {"query": "shirt"}}),
            )
            .await;
        assert!(search["products"].is_array(), "{search}");
    }
}

#[tokio::test]
async fn a_cart_id_in_the_update_payload_is_refused() {
    // CART-034: `cart.id` is `ucp_request: omit` on update too; the id is `arguments.id`.
    let agents = agents().await;
    let bridge = bridge().await;
    let profile = format!("http://{agents}/only-0825");
    let cart = bridge
        .call(
            "create_cart",
            json!({"meta": meta(&profile), "cart": {"line_items": [line("item_123", 1)]}}),
        )
        .await;
    let (status, error) = bridge
        .call_error(
            "update_cart",
            json!({"meta": meta(&profile), "id": cart["id"], "cart": {"id": cart["id"], "line_items": [line("item_123", 2)]}}),
        )
        .await;
    assert_eq!(error["code"], -32602, "{status}: {error}");
}

#[tokio::test]
async fn idempotent_retries_replay_and_changed_payloads_conflict() {
    // SIG-044: a duplicate with the same payload replays the stored answer (also when the
    // retry carries another JSON-RPC id, which hashing the raw body would not allow: see the
    // README, "Idempotency"); SIG-045: a changed payload is -32000 with HTTP 409 and does not
    // run. SIG-047 asks for the SHA-256 of the raw body; the bridge hashes the canonical
    // arguments without `meta` instead.
    let agents = agents().await;
    let bridge = bridge().await;
    let profile = format!("http://{agents}/only-0825");
    let key = uuid::Uuid::new_v4().to_string();
    let arguments = json!({"meta": meta_with_key(&profile, &key), "cart": {"line_items": [line("item_123", 1)]}});
    let first = bridge.call("create_cart", arguments.clone()).await;
    let again = bridge.call("create_cart", arguments).await;
    assert_eq!(first, again);
    assert_eq!(again["ucp"]["version"], NEW);
    let (status, reply) = bridge
        .call_raw(
            "create_cart",
            json!({"meta": meta_with_key(&profile, &key), "cart": {"line_items": [line("item_123", 2)]}}),
        )
        .await;
    assert_eq!(status, StatusCode::CONFLICT, "{reply}");
    assert_eq!(reply["error"]["code"], -32000);
}

#[tokio::test]
async fn the_profile_offers_2026_08_25_and_a_2026_04_08_leaf() {
    let schemas = Schemas::load();
    let old_schemas = crate::schemas::Schemas::load();
    let bridge = bridge().await;
    let response = bridge.get("/.well-known/ucp").await;
    // DISC-008: publicly cacheable for at least a minute.
    let cache = response.headers()["cache-control"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(
        cache.contains("public") && !cache.contains("no-"),
        "{cache}"
    );
    let root: Value = response.json().await.unwrap();
    assert_clean(&problems(&schemas.profile, &root));
    let ucp = &root["ucp"];
    assert_eq!(ucp["version"], NEW);
    // DISC-013: both registries present, even when empty.
    assert!(ucp["payment_handlers"].is_object() && ucp["services"].is_object());
    // OVR-020: every dev.ucp.* entry at the profile's version; OVR-015: each capability has a
    // schema on ucp.dev (OVR-016); spec URLs under the shopping vertical (CHANGES 1.6).
    let binding = &ucp["services"]["dev.ucp.shopping"][0];
    assert_eq!(binding["version"], NEW);
    assert_eq!(
        binding["spec"],
        "https://ucp.dev/2026-08-25/specification/overview/"
    );
    for name in CAPABILITIES {
        let entry = &ucp["capabilities"][name][0];
        assert_eq!(entry["version"], NEW, "{name}");
        assert!(
            entry["schema"]
                .as_str()
                .unwrap()
                .starts_with("https://ucp.dev/2026-08-25/schemas/shopping/"),
            "{entry}"
        );
        // The root capabilities moved under the vertical (CHANGES 1.6); the release's own
        // examples keep linking the checkout extensions without it.
        let spec = entry["spec"].as_str().unwrap();
        match name.strip_prefix("dev.ucp.shopping.") {
            Some(extension @ ("fulfillment" | "discount")) => {
                assert_eq!(
                    spec,
                    format!("https://ucp.dev/2026-08-25/specification/{extension}")
                );
                assert_eq!(entry["extends"], "dev.ucp.shopping.checkout", "{entry}");
            }
            _ => assert!(
                spec.starts_with("https://ucp.dev/2026-08-25/specification/shopping/"),
                "{entry}"
            ),
        }
    }
    // The older release is a leaf whose ucp.version equals its key (NEG-008) and which has no
    // supported_versions of its own.
    let leaf_url = ucp["supported_versions"][OLD].as_str().unwrap();
    assert_eq!(
        leaf_url,
        format!("{}/.well-known/ucp/{OLD}", bridge.base_url)
    );
    let leaf: Value = bridge
        .client
        .get(leaf_url)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(leaf["ucp"]["version"], OLD);
    assert!(leaf["ucp"].get("supported_versions").is_none(), "{leaf}");
    assert!(!leaf.to_string().contains(NEW), "{leaf}");
    assert_eq!(
        leaf["ucp"]["capabilities"]["dev.ucp.shopping.cart"][0]["spec"],
        "https://ucp.dev/2026-04-08/specification/cart"
    );
    assert_clean(&problems(&old_schemas.profile, &leaf));
    // DISC-014: no signing keys are published by this bridge, so neither `keys` nor the
    // 04-08 `signing_keys` appears.
    assert!(root.get("keys").is_none() && ucp.get("signing_keys").is_none());
}

#[tokio::test]
async fn an_asserted_sale_basis_other_than_each_is_refused_for_its_line() {
    // CART-036: an asserted `quantity_unit` is compared by (unit, effective scale); a
    // mismatch is a recoverable rejection of that line, never read as pieces. An explicit
    // C62 at scale 0 matches the store's each.
    let agents = agents().await;
    let bridge = bridge().await;
    let profile = format!("http://{agents}/only-0825");
    let kilograms = json!({"unit": "KGM", "scale": 3, "display_text": "kg"});
    let each = json!({"unit": "C62", "display_text": "each"});
    let cart = bridge
        .call(
            "create_cart",
            json!({"meta": meta(&profile), "cart": {"line_items": [
                {"item": {"id": "item_123", "quantity_unit": kilograms}, "quantity": 750},
                {"item": {"id": "item_456", "quantity_unit": each}, "quantity": 2}
            ]}}),
        )
        .await;
    let lines: Vec<(&str, u64)> = cart["line_items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|line| {
            (
                line["item"]["id"].as_str().unwrap(),
                line["quantity"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(lines, vec![("item_456", 2)], "{cart}");
    let message = &cart["messages"][0];
    assert_eq!(message["code"], "quantity_unit_mismatch", "{cart}");
    assert_eq!(message["severity"], "recoverable", "{cart}");
    assert_eq!(
        message["path"], "$.line_items[0].item.quantity_unit",
        "{cart}"
    );

    let (_, error) = bridge
        .call_error(
            "create_cart",
            json!({"meta": meta(&profile), "cart": {"line_items": [
                {"item": {"id": "item_123", "quantity_unit": {"scale": 2}}, "quantity": 1}
            ]}}),
        )
        .await;
    assert_eq!(error["code"], -32602, "{error}");
}

/// Checkout end to end as an agent speaking only 2026-08-25: every answer fits that release's
/// checkout and order schemas and carries the negotiated version.
#[tokio::test]
async fn an_agent_speaking_only_2026_08_25_checks_out_in_2026_08_25() {
    let schemas = Schemas::load();
    let agents = agents().await;
    let bridge = bridge().await;
    let check = |tool: &str, answer: &Value| problems(schemas.for_tool(tool), answer);
    let profile = format!("http://{agents}/only-0825");
    let mut agent = Agent {
        bridge: &bridge,
        profile: profile.clone(),
        version: NEW,
        check: &check,
        violations: Vec::new(),
        seen: Vec::new(),
    };
    let key = |n: u32| format!("0825-checkout-{n}");
    let created = agent
        .call(
            "create",
            "create_checkout",
            json!({"meta": meta_with_key(&profile, &key(1)), "checkout": {
                "line_items": [{"item": {"id": "prod_chinelo_praia_azm_3334"}, "quantity": 1}],
                "buyer": {"email": "ana@example.com"}
            }}),
        )
        .await;
    let id = created["id"].as_str().unwrap().to_owned();
    let addressed = agent
        .call(
            "address",
            "update_checkout",
            json!({"id": id, "checkout": {"fulfillment": {"methods": [{"type": "shipping", "destinations": [{
                "type": "shipping_address", "street_address": "Rua Augusta 100",
                "address_locality": "São Paulo", "address_region": "SP",
                "postal_code": "01305-000", "address_country": "BR"
            }]}]}}}),
        )
        .await;
    // 2026-08-25 types the destination.
    assert_eq!(
        addressed["fulfillment"]["methods"][0]["destinations"][0]["type"],
        "shipping_address"
    );
    agent
        .call(
            "select",
            "update_checkout",
            json!({"id": id, "checkout": {"fulfillment": {"methods": [{"id": "ful_1", "groups": [{"id": "grp_1", "selected_option_id": "pickup"}]}]}, "discounts": {"codes": ["BEMVINDO10", "NOPE"]}}}),
        )
        .await;
    let completed = agent
        .call(
            "complete",
            "complete_checkout",
            json!({"meta": meta_with_key(&profile, &key(2)), "id": id, "checkout": {"payment": {"instruments": [{"id": "i1", "handler_id": "sample_test_approve", "type": "card"}]}}}),
        )
        .await;
    assert_eq!(completed["status"], "completed", "{completed}");
    let order_id = completed["order"]["id"].as_str().unwrap().to_owned();
    agent
        .call("order", "get_order", json!({"id": order_id}))
        .await;
    let other = agent
        .call(
            "create from nothing buyable",
            "create_checkout",
            json!({"meta": meta_with_key(&profile, &key(3)), "checkout": {"line_items": [{"item": {"id": "nope"}, "quantity": 1}]}}),
        )
        .await;
    assert_eq!(other["ucp"]["status"], "error");
    assert_clean(&agent.violations);
}

#[tokio::test]
async fn a_rest_refusal_names_the_release_the_agent_agreed_on() {
    // ERR-028: the error envelope's `ucp.version` is the negotiated release, not the door's
    // unnegotiated default, for a refusal after negotiation (here, a bad field).
    let agents = agents().await;
    let bridge = bridge().await;
    let rest = bridge.endpoints[0]
        .rest_url
        .clone()
        .expect("REST is served");
    for (path, version) in [("only-0825", NEW), ("only-0408", OLD)] {
        let reply = bridge
            .client
            .post(format!("{rest}/catalog/search"))
            .header("content-type", "application/json")
            .header("request-id", "r-1")
            .header("ucp-agent", format!("profile=\"http://{agents}/{path}\""))
            .body(r#"{"query": "shirt", "pagination": {"limit": 0}}"#)
            .send()
            .await
            .unwrap();
        assert_eq!(reply.status(), StatusCode::BAD_REQUEST);
        let body: Value = reply.json().await.unwrap();
        assert_eq!(body["ucp"]["status"], "error", "{body}");
        assert_eq!(body["ucp"]["version"], version, "{path}: {body}");
    }
}
