//! Issue 40 item 1: a tool is one declaration. The example tool below is declared here and
//! nowhere in the bridge: served with it, the bridge lists it with schemas derived from its
//! types, validates its arguments, answers it through its brain entry over MCP, and serves it
//! over REST where its declaration places it.

use bcp_bridge::brain::{Brain, BrainError};
use bcp_bridge::pipeline::tools::{
    BodyRole, DECLARED, Declaration, Effect, Rest, RestMethod, ToolName, Typed, answer, no_limits,
};
use bcp_bridge::protocol::answer::{Answer, Outcome};
use bcp_bridge::protocol::envelope::{Status, Ucp};
use bcp_bridge::protocol::request::AgentMeta;
use bcp_bridge::protocol::{Capability, Release};
use bcp_bridge::startup::BridgeConfig;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::support::{TestBridge, meta};

static STORE_NAME: Declaration = Declaration {
    name: ToolName::new("store_name", Capability::CatalogSearch, Effect::Reads),
    title: "Name the store",
    what: "Say the store's name.",
    example: r#"{"meta": {"ucp-agent": {"profile": "https://your-agent.example/.well-known/ucp"}}, "catalog": {"shout": true}}"#,
    destructive: false,
    idempotent: true,
    requires_key: false,
    refuses_payload_id: None,
    rest: Rest::new(RestMethod::Post, "/store/name", BodyRole::Catalog),
    limits: no_limits,
    entry: &Typed::<NameArgs, NameAnswer>::new(|brain, args, call| {
        answer(std::future::ready(store_name(brain, &args, call.release)))
    }),
};

#[derive(Deserialize, JsonSchema)]
struct NameArgs {
    // Read by the pipeline before the tool; published and required like every tool's.
    #[serde(rename = "meta")]
    _meta: AgentMeta,
    catalog: NameIn,
}

#[derive(Deserialize, JsonSchema)]
struct NameIn {
    shout: bool,
}

#[derive(Serialize, JsonSchema)]
struct NameAnswer {
    ucp: Ucp,
    name: String,
}

/// The example's brain function.
fn store_name(brain: &Brain, args: &NameArgs, release: Release) -> Result<Answer, BrainError> {
    let name = &brain.store().name;
    let answer = NameAnswer {
        ucp: brain
            .namespace()
            .envelope(release, Capability::CatalogSearch, Status::Success),
        name: if args.catalog.shout {
            name.to_uppercase()
        } else {
            name.clone()
        },
    };
    Answer::encode(&answer, Outcome::Success)
        .map_err(|error| BrainError::Internal(error.to_string()))
}

async fn with_example() -> TestBridge {
    let mut tools: Vec<&'static Declaration> = DECLARED.to_vec();
    tools.push(&STORE_NAME);
    let mut config = BridgeConfig::from_toml("").unwrap();
    config.negotiation.enabled = false;
    TestBridge::serving(config, &tools).await
}

async fn listed(bridge: &TestBridge, name: &str) -> Option<Value> {
    let (_, listing) = bridge
        .rpc(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
        .await;
    listing["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|tool| tool["name"] == name)
        .cloned()
}

#[tokio::test]
async fn a_tool_declared_once_is_listed_with_schemas_derived_from_its_types() {
    let bridge = with_example().await;
    let tool = listed(&bridge, "store_name").await.expect("listed");
    assert_eq!(tool["title"], "Name the store");
    assert!(
        tool["description"]
            .as_str()
            .unwrap()
            .starts_with("Say the store's name.")
    );
    assert_eq!(tool["annotations"]["readOnlyHint"], true);
    let input = &tool["inputSchema"];
    assert_eq!(
        input["properties"]["catalog"]["properties"]["shout"]["type"],
        "boolean"
    );
    assert_eq!(input["properties"]["catalog"]["required"], json!(["shout"]));
    let output = &tool["outputSchema"];
    assert_eq!(output["properties"]["name"]["type"], "string");
    assert_eq!(output["required"], json!(["ucp"]));
    // The bridge's own tools are unchanged beside it, and a bridge built without it knows
    // nothing of it.
    assert!(listed(&bridge, "search_catalog").await.is_some());
    let plain = TestBridge::sample().await;
    assert!(listed(&plain, "store_name").await.is_none());
}

#[tokio::test]
async fn a_tool_declared_once_is_answered_over_mcp_and_rest() {
    let bridge = with_example().await;
    let shouted = bridge
        .call(
            "store_name",
            json!({"meta": meta(), "catalog": {"shout": true}}),
        )
        .await;
    let name = shouted["name"].as_str().unwrap();
    assert!(!name.is_empty());
    assert_eq!(name, name.to_uppercase());
    let problems = bridge.output_problems("store_name", &shouted).await;
    assert!(problems.is_empty(), "{problems:?}");
    // Bad input is refused by the derived input schema, naming the member.
    let (_, refused) = bridge
        .call_error(
            "store_name",
            json!({"meta": meta(), "catalog": {"shout": "yes"}}),
        )
        .await;
    assert_eq!(refused["code"], -32602, "{refused}");
    assert_eq!(refused["data"]["path"], "$.catalog.shout");
    // REST: the declared method and path, the body nested where the tool reads it.
    let (status, body) = bridge
        .rest(
            reqwest::Method::POST,
            "/store/name",
            Some(&json!({"shout": false})),
            &[],
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let plain: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(plain["name"].as_str().unwrap().to_uppercase(), name);
    let (status, _) = bridge
        .rest(reqwest::Method::GET, "/store/name", None, &[])
        .await;
    assert_eq!(status, 405);
}
