//! Every tool response of the sample store, in every outcome the tests can provoke (found,
//! partial, none, relaxed, not found, out of stock, cancelled …), validates against the UCP
//! 2026-04-08 JSON schemas, through the BCP and the UCP endpoint alike. The schemas are the
//! upstream files (tests/fixtures/ucp-2026-04-08), each registered under its `$id` so the
//! relative `$ref`s resolve without the network. Tools map to schemas as the UCP MCP OpenRPC
//! document (services/shopping/mcp.openrpc.json) maps them.

use std::path::Path;

use crate::support::values::line;
use crate::support::{TestBridge, meta, meta_with_key};
use jsonschema::{Registry, Validator};
use serde_json::{Value, json};

const SCHEMAS: &str = "https://ucp.dev/schemas";

pub(crate) fn load(dir: &Path, out: &mut Vec<(String, Value)>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            load(&path, out);
        } else if path.extension().is_some_and(|ext| ext == "json") {
            let schema: Value =
                serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            let id = schema["$id"].as_str().expect("every UCP schema has an $id");
            out.push((id.to_owned(), schema));
        }
    }
}

pub(crate) struct Schemas {
    search: Validator,
    lookup: Validator,
    get_product: Validator,
    cart: Validator,
    pub(crate) checkout: Validator,
    pub(crate) order: Validator,
    pub(crate) profile: Validator,
}

impl Schemas {
    pub(crate) fn load() -> Self {
        let mut files = Vec::new();
        load(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ucp-2026-04-08"),
            &mut files,
        );
        assert!(files.len() > 70, "UCP schemas present");
        let mut builder = Registry::new();
        for (id, schema) in files {
            if id == format!("{SCHEMAS}/ucp.json") {
                // discovery/profile_schema.json says `$id: …/schemas/discovery/profile.json`
                // but refers to `../schemas/ucp.json` as seen from its folder in the spec
                // repository; that resolves to …/schemas/schemas/ucp.json. ucp.json keeps its
                // own `$id`, so its refs still resolve from the right place.
                builder = builder
                    .add(format!("{SCHEMAS}/schemas/ucp.json"), schema.clone())
                    .unwrap();
            }
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
            json!({"oneOf": [
                {"$ref": format!("{SCHEMAS}/{resource}")},
                {"$ref": format!("{SCHEMAS}/shopping/types/error_response.json")}
            ]})
        };
        Self {
            search: compile(
                json!({"$ref": format!("{SCHEMAS}/shopping/catalog_search.json#/$defs/search_response")}),
            ),
            lookup: compile(
                json!({"$ref": format!("{SCHEMAS}/shopping/catalog_lookup.json#/$defs/lookup_response")}),
            ),
            get_product: compile(either(
                "shopping/catalog_lookup.json#/$defs/get_product_response",
            )),
            cart: compile(either("shopping/cart.json")),
            checkout: compile(either("shopping/checkout.json")),
            order: compile(json!({"$ref": format!("{SCHEMAS}/shopping/order.json")})),
            profile: compile(
                json!({"$ref": format!("{SCHEMAS}/discovery/profile.json#/$defs/business_profile")}),
            ),
        }
    }

    pub(crate) fn for_tool(&self, tool: &str) -> &Validator {
        match tool {
            "search_catalog" => &self.search,
            "lookup_catalog" => &self.lookup,
            "get_product" => &self.get_product,
            _ => &self.cart,
        }
    }
}

pub(crate) fn problems(validator: &Validator, value: &Value) -> Vec<String> {
    validator
        .iter_errors(value)
        .map(|error| {
            format!(
                "{} ({}): {error}",
                error.instance_path(),
                error.schema_path()
            )
        })
        .collect()
}

/// Calls tools through one endpoint and records every schema violation of the answers.
struct Checked<'a> {
    bridge: &'a TestBridge,
    schemas: &'a Schemas,
    seen: Vec<String>,
    violations: Vec<String>,
}

impl Checked<'_> {
    async fn call(&mut self, label: &str, tool: &str, arguments: Value) -> Value {
        let result = self.bridge.call(tool, arguments).await;
        self.seen.push(label.to_owned());
        for problem in problems(self.schemas.for_tool(tool), &result) {
            self.violations.push(format!("{label}: {problem}"));
        }
        result
    }

    async fn catalog(&mut self, label: &str, tool: &str, catalog: Value) -> Value {
        self.call(label, tool, json!({"meta": meta(), "catalog": catalog}))
            .await
    }
}

/// MCP-006: the tool outputs are checked against the UCP schemas, every outcome.
async fn exercise(bridge: &TestBridge, schemas: &Schemas) -> Vec<String> {
    let mut run = Checked {
        bridge,
        schemas,
        seen: Vec::new(),
        violations: Vec::new(),
    };
    let version = bridge
        .call(
            "search_catalog",
            json!({"meta": meta(), "catalog": {"query": "shoes"}}),
        )
        .await["ucp"]["version"]
        .clone();

    // search_catalog: query, browse by category and price, pages, no match.
    run.catalog(
        "search query",
        "search_catalog",
        json!({"query": "blue running shoes", "context": {"address_country": "US"}}),
    )
    .await;
    let first = run
        .catalog(
            "search browse page 1",
            "search_catalog",
            json!({"filters": {"categories": ["Clothing"]}, "pagination": {"limit": 2}}),
        )
        .await;
    assert_eq!(first["pagination"]["has_next_page"], true);
    run.catalog(
        "search browse page 2",
        "search_catalog",
        json!({"filters": {"categories": ["Clothing"]}, "pagination": {"limit": 2, "cursor": first["pagination"]["cursor"]}}),
    )
    .await;
    run.catalog(
        "search price filter",
        "search_catalog",
        json!({"query": "shirt", "filters": {"price": {"min": 1000, "max": 5000}}}),
    )
    .await;
    let none = run
        .catalog(
            "search no match",
            "search_catalog",
            json!({"query": "zzzz-nothing"}),
        )
        .await;
    assert_eq!(none["products"], json!([]));

    // lookup_catalog: products, variants, partial, none.
    run.catalog(
        "lookup found",
        "lookup_catalog",
        json!({"ids": ["prod_abc123", "var_xyz789", "prod_def456"]}),
    )
    .await;
    run.catalog(
        "lookup variant ids",
        "lookup_catalog",
        json!({"ids": ["prod_abc123_blu_10", "prod_abc123_red_12", "prod_abc123"]}),
    )
    .await;
    let partial = run
        .catalog(
            "lookup partial",
            "lookup_catalog",
            json!({"ids": ["prod_abc123", "prod_notfound1"]}),
        )
        .await;
    assert_eq!(partial["messages"][0]["code"], "not_found");
    run.catalog(
        "lookup none",
        "lookup_catalog",
        json!({"ids": ["prod_invalid"]}),
    )
    .await;

    // get_product: selections, relaxation, variant id, no options, not found.
    run.catalog(
        "get_product selected",
        "get_product",
        json!({"id": "prod_abc123", "selected": [{"name": "Color", "label": "Blue"}], "preferences": ["Color", "Size"]}),
    )
    .await;
    run.catalog(
        "get_product relaxed",
        "get_product",
        json!({"id": "prod_abc123", "selected": [{"name": "Color", "label": "Green"}, {"name": "Size", "label": "15"}], "preferences": ["Color"]}),
    )
    .await;
    run.catalog(
        "get_product variant id",
        "get_product",
        json!({"id": "prod_abc123_red_12"}),
    )
    .await;
    run.catalog(
        "get_product no options",
        "get_product",
        json!({"id": "prod_moka_pot_default"}),
    )
    .await;
    let missing = run
        .catalog(
            "get_product not found",
            "get_product",
            json!({"id": "prod_invalid"}),
        )
        .await;
    assert_eq!(missing["ucp"]["status"], "error");

    // Carts: create, partial availability, get, update, cancel, gone, all sold out.
    let cart = run
        .call(
            "create_cart",
            "create_cart",
            json!({"meta": meta(), "cart": {"line_items": [line("item_123", 2), line("item_456", 1)], "context": {"address_country": "US"}}}),
        )
        .await;
    let id = cart["id"].clone();
    assert!(id.is_string(), "{cart}");
    // A real answer, spoiled, is refused: the check above is not vacuous.
    let mut spoiled = cart.clone();
    spoiled["line_items"][0]["item"]["price"] = json!({"amount": 1, "currency": "USD"});
    assert!(!problems(&schemas.cart, &spoiled).is_empty());
    let mut spoiled = partial.clone();
    spoiled["products"][0]["price_range"]["min"]["amount"] = json!("12.50");
    assert!(!problems(&schemas.lookup, &spoiled).is_empty());
    run.call(
        "create_cart partial",
        "create_cart",
        json!({"meta": meta(), "cart": {"line_items": [line("item_123", 1), line("prod_electric_kettle_default", 1)]}}),
    )
    .await;
    run.call("get_cart", "get_cart", json!({"meta": meta(), "id": id}))
        .await;
    run.call(
        "update_cart",
        "update_cart",
        json!({"meta": meta(), "id": id, "cart": {"line_items": [line("item_123", 3), line("prod_abc123_blu_10", 1)]}}),
    )
    .await;
    let key = format!("schemas-{}", version.as_str().unwrap());
    run.call(
        "cancel_cart",
        "cancel_cart",
        json!({"meta": meta_with_key(&key), "id": id}),
    )
    .await;
    let gone = run
        .call(
            "get_cart cancelled",
            "get_cart",
            json!({"meta": meta(), "id": id}),
        )
        .await;
    assert_eq!(gone["ucp"]["status"], "error");
    let sold_out = run
        .call(
            "create_cart out of stock",
            "create_cart",
            json!({"meta": meta(), "cart": {"line_items": [line("prod_electric_kettle_default", 1)]}}),
        )
        .await;
    assert_eq!(sold_out["ucp"]["status"], "error");

    assert!(run.seen.len() >= 20);
    run.violations
}

async fn check_endpoint(config: &str, profile_path: &str) {
    let schemas = Schemas::load();
    let bridge = TestBridge::start(config).await;
    let mut violations = exercise(&bridge, &schemas).await;
    // DISC: the discovery profile is a UCP business profile.
    let profile: Value = bridge.get(profile_path).await.json().await.unwrap();
    for problem in problems(&schemas.profile, &profile) {
        violations.push(format!("profile {profile_path}: {problem}"));
    }
    assert!(
        violations.is_empty(),
        "{} schema violation(s):\n{}",
        violations.len(),
        violations.join("\n")
    );
}

#[tokio::test]
async fn bcp_responses_match_the_ucp_schemas() {
    check_endpoint("", "/.well-known/bcp").await;
}

/// Unnegotiated calls are answered in 2026-04-08, and the 2026-04-08 profile is the leaf named
/// by the root's `supported_versions` (the root is 2026-08-25: tests/suite/ucp_2026_08_25.rs).
#[tokio::test]
async fn ucp_responses_match_the_ucp_schemas() {
    check_endpoint(
        "[server]\nprotocol = \"ucp\"\n",
        "/.well-known/ucp/2026-04-08",
    )
    .await;
}

/// The validators really bite: a catalog price as a bare integer and a cart item price as an
/// object are both refused, so a green run above means something.
#[test]
fn the_schemas_reject_wrong_money_shapes() {
    let schemas = Schemas::load();
    let ucp = json!({"version": "2026-04-08", "capabilities": {"dev.ucp.shopping.catalog.search": [{"version": "2026-04-08"}]}});
    let product = |price: Value| {
        json!({"ucp": ucp, "products": [{
            "id": "p", "title": "T", "description": {"plain": "d"},
            "price_range": {"min": {"amount": 100, "currency": "USD"}, "max": {"amount": 100, "currency": "USD"}},
            "variants": [{"id": "v", "title": "T", "description": {"plain": "d"}, "price": price}]
        }]})
    };
    assert!(
        problems(
            &schemas.search,
            &product(json!({"amount": 100, "currency": "USD"}))
        )
        .is_empty(),
        "{:?}",
        problems(
            &schemas.search,
            &product(json!({"amount": 100, "currency": "USD"}))
        )
    );
    assert!(!problems(&schemas.search, &product(json!(100))).is_empty());
    let cart = |price: Value| {
        json!({"ucp": {"version": "2026-04-08", "capabilities": {"dev.ucp.shopping.cart": [{"version": "2026-04-08"}]}},
            "id": "c", "currency": "USD",
            "line_items": [{"id": "l", "item": {"id": "i", "title": "T", "price": price}, "quantity": 1,
                "totals": [{"type": "subtotal", "amount": 100}]}],
            "totals": [{"type": "subtotal", "amount": 100}, {"type": "total", "amount": 100}]})
    };
    assert!(
        problems(&schemas.cart, &cart(json!(100))).is_empty(),
        "{:?}",
        problems(&schemas.cart, &cart(json!(100)))
    );
    assert!(
        !problems(
            &schemas.cart,
            &cart(json!({"amount": 100, "currency": "USD"}))
        )
        .is_empty()
    );
}

/// The hostile corpus, neutralised, still answers in the schemas' shapes (a plain
/// description in every product and variant, `description` never empty).
#[tokio::test]
async fn hostile_catalog_answers_match_the_ucp_schemas() {
    let schemas = Schemas::load();
    let file = crate::support::hostile::sample_store_file();
    let bridge = TestBridge::start(&format!(
        "[server]\nprotocol = \"ucp\"\n[store]\nplatform = \"sample\"\ndata = \"{}\"\n",
        file.display()
    ))
    .await;
    let mut run = Checked {
        bridge: &bridge,
        schemas: &schemas,
        seen: Vec::new(),
        violations: Vec::new(),
    };
    run.catalog(
        "hostile search",
        "search_catalog",
        json!({"query": "hostile"}),
    )
    .await;
    for id in ["hostile_widget", "hostile_gadget"] {
        run.catalog("hostile get_product", "get_product", json!({"id": id}))
            .await;
    }
    run.catalog(
        "hostile lookup",
        "lookup_catalog",
        json!({"ids": ["hostile_widget", "hostile_widget_blue", "hostile_gadget_one"]}),
    )
    .await;
    run.call(
        "hostile create_cart",
        "create_cart",
        json!({"meta": meta(), "cart": {"line_items": [{"item": {"id": "hostile_widget_red"}, "quantity": 1}]}}),
    )
    .await;
    let _ = std::fs::remove_file(file);
    assert!(
        run.violations.is_empty(),
        "{} schema violation(s):\n{}",
        run.violations.len(),
        run.violations.join("\n")
    );
}
