//! UCP compatibility (`server.protocol = "ucp" | "both"`): names, profile path, versions and
//! spec/schema hosts follow the UCP column of SPEC.md's Names table, and in `both` every
//! answer speaks the namespace of the endpoint it came through.

use std::process::Command;

use crate::support::binary::{BIN, Running};
use crate::support::{TestBridge, meta, meta_with_key};
use reqwest::StatusCode;
use serde_json::{Value, json};

// The sample store implements the checkout port: checkout is declared beside the cart.
const UCP_CAPABILITIES: [&str; 7] = [
    "dev.ucp.shopping.cart",
    "dev.ucp.shopping.catalog.lookup",
    "dev.ucp.shopping.catalog.search",
    "dev.ucp.shopping.checkout",
    "dev.ucp.shopping.discount",
    "dev.ucp.shopping.fulfillment",
    "dev.ucp.shopping.order",
];

async fn profile(bridge: &TestBridge, path: &str) -> Value {
    let response = bridge.get(path).await;
    assert_eq!(response.status(), StatusCode::OK, "{path}");
    response.json().await.unwrap()
}

fn capability_keys(envelope: &Value) -> Vec<String> {
    envelope["capabilities"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect()
}

/// The same bridge, talking through another of its endpoints.
fn through(bridge: &mut TestBridge, service: &str) {
    bridge.mcp_url = bridge
        .endpoints
        .iter()
        .find(|endpoint| endpoint.service == service)
        .unwrap_or_else(|| panic!("no {service} endpoint"))
        .mcp_url
        .clone()
        .expect("MCP is served");
}

#[tokio::test]
async fn ucp_profile_uses_ucp_names_hosts_and_version() {
    let bridge = TestBridge::start("[server]\nprotocol = \"ucp\"\n").await;
    let response = bridge.get("/.well-known/ucp").await;
    // DISC-003: publicly cacheable for at least a minute.
    assert!(
        response.headers()["cache-control"]
            .to_str()
            .unwrap()
            .contains("public")
    );
    let root: Value = response.json().await.unwrap();
    // The root speaks 2026-08-25 (tests/suite/ucp_2026_08_25.rs) and names 2026-04-08 as a
    // leaf, which is what a 2026-04-08 client uses.
    assert_eq!(root["ucp"]["version"], "2026-08-25");
    let leaf_url = format!("{}/.well-known/ucp/2026-04-08", bridge.base_url);
    assert_eq!(root["ucp"]["supported_versions"]["2026-04-08"], leaf_url);
    let profile = profile(&bridge, "/.well-known/ucp/2026-04-08").await;
    let ucp = &profile["ucp"];
    assert_eq!(ucp["version"], "2026-04-08");
    // OVR-009: a leaf names nothing older.
    assert!(ucp.get("supported_versions").is_none(), "{profile}");
    // OVR-001: reverse-domain names in the dev.ucp namespace only.
    let services = ucp["services"].as_object().unwrap();
    assert_eq!(services.keys().collect::<Vec<_>>(), ["dev.ucp.shopping"]);
    let binding = &services["dev.ucp.shopping"][0];
    assert_eq!(binding["transport"], "mcp");
    assert_eq!(binding["version"], "2026-04-08");
    assert_eq!(binding["endpoint"], format!("{}/ucp/mcp", bridge.base_url));
    assert_eq!(
        binding["schema"],
        "https://ucp.dev/2026-04-08/services/shopping/mcp.openrpc.json"
    );
    assert_eq!(capability_keys(ucp), UCP_CAPABILITIES);
    for (name, entries) in ucp["capabilities"].as_object().unwrap() {
        // OVR-002, OVR-003: spec and schema on the namespace's own authority, ucp.dev.
        for key in ["spec", "schema"] {
            let url = entries[0][key].as_str().unwrap();
            assert!(
                url.starts_with("https://ucp.dev/2026-04-08/"),
                "{name}: {url}"
            );
        }
        assert_eq!(entries[0]["version"], "2026-04-08");
    }
    assert_eq!(
        ucp["capabilities"]["dev.ucp.shopping.catalog.search"][0]["schema"],
        "https://ucp.dev/2026-04-08/schemas/shopping/catalog_search.json"
    );
    // Only the UCP doors are open.
    for path in ["/.well-known/bcp", "/.well-known/ucp.json"] {
        assert_eq!(
            bridge.get(path).await.status(),
            StatusCode::NOT_FOUND,
            "{path}"
        );
    }
    let bcp_mcp = bridge
        .client
        .post(format!("{}/bcp/mcp", bridge.base_url))
        .body(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(bcp_mcp.status(), StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn ucp_mode_answers_with_ucp_envelopes() {
    let bridge = TestBridge::start("[server]\nprotocol = \"ucp\"\n").await;
    assert!(bridge.mcp_url.ends_with("/ucp/mcp"), "{}", bridge.mcp_url);

    // OVR-004, OVR-005: the processing version and only the operation's capability.
    let search = bridge
        .call(
            "search_catalog",
            json!({"meta": meta(), "catalog": {"query": "shoes"}}),
        )
        .await;
    assert_eq!(search["ucp"]["version"], "2026-04-08");
    assert_eq!(
        capability_keys(&search["ucp"]),
        ["dev.ucp.shopping.catalog.search"]
    );
    assert_eq!(
        search["ucp"]["capabilities"]["dev.ucp.shopping.catalog.search"],
        json!([{"version": "2026-04-08"}])
    );

    let missing = bridge
        .call(
            "get_product",
            json!({"meta": meta(), "catalog": {"id": "prod_invalid"}}),
        )
        .await;
    assert_eq!(missing["ucp"]["status"], "error");
    assert_eq!(
        capability_keys(&missing["ucp"]),
        ["dev.ucp.shopping.catalog.lookup"]
    );

    let cart = bridge
        .call(
            "create_cart",
            json!({"meta": meta(), "cart": {"line_items": [{"item": {"id": "item_123"}, "quantity": 1}]}}),
        )
        .await;
    assert_eq!(capability_keys(&cart["ucp"]), ["dev.ucp.shopping.cart"]);
    let cancelled = bridge
        .call(
            "cancel_cart",
            json!({"meta": meta_with_key("ucp-cancel-1"), "id": cart["id"]}),
        )
        .await;
    assert_eq!(cancelled["ucp"]["version"], "2026-04-08");

    // The client spck-conformance imitates posts without any Accept header.
    let response = bridge
        .client
        .post(&bridge.mcp_url)
        .header("content-type", "application/json")
        .body(
            json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
                "name": "lookup_catalog",
                "arguments": {"meta": meta(), "catalog": {"ids": ["prod_abc123"]}}
            }})
            .to_string(),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let reply: Value = response.json().await.unwrap();
    assert_eq!(reply["id"], 7);
    assert_eq!(
        capability_keys(&reply["result"]["structuredContent"]["ucp"]),
        ["dev.ucp.shopping.catalog.lookup"]
    );
}

#[tokio::test]
async fn both_serves_two_profiles_and_two_endpoints() {
    let bridge = TestBridge::start("[server]\nprotocol = \"both\"\n").await;
    let bcp = profile(&bridge, "/.well-known/bcp").await;
    let ucp = profile(&bridge, "/.well-known/ucp").await;
    assert_eq!(bcp["ucp"]["version"], "2026-07-28");
    assert_eq!(ucp["ucp"]["version"], "2026-08-25");
    assert_eq!(
        bcp["ucp"]["services"]["br.dev.bcp.shopping"][0]["endpoint"],
        format!("{}/bcp/mcp", bridge.base_url)
    );
    assert_eq!(
        ucp["ucp"]["services"]["dev.ucp.shopping"][0]["endpoint"],
        format!("{}/ucp/mcp", bridge.base_url)
    );
    // OVR-003: neither profile borrows the other's names or hosts.
    assert!(!bcp.to_string().contains("dev.ucp."), "{bcp}");
    assert!(!bcp.to_string().contains("ucp.dev/"), "{bcp}");
    assert!(!ucp.to_string().contains("bcp"), "{ucp}");
    // The BCP leaf for the older catalog version is still there.
    let leaf = profile(&bridge, "/.well-known/bcp/2026-07-14").await;
    assert_eq!(leaf["ucp"]["version"], "2026-07-14");
    assert_eq!(
        bridge.get("/.well-known/ucp/2026-07-14").await.status(),
        StatusCode::NOT_FOUND
    );
    let services: Vec<_> = bridge.endpoints.iter().map(|e| e.service).collect();
    assert_eq!(services, ["br.dev.bcp.shopping", "dev.ucp.shopping"]);
}

#[tokio::test]
async fn both_answers_in_the_namespace_of_the_endpoint() {
    let mut bridge = TestBridge::start("[server]\nprotocol = \"both\"\n").await;
    let search = json!({"meta": meta(), "catalog": {"query": "shoes"}});

    through(&mut bridge, "dev.ucp.shopping");
    let via_ucp = bridge.call("search_catalog", search.clone()).await;
    let cart = bridge
        .call(
            "create_cart",
            json!({"meta": meta(), "cart": {"line_items": [{"item": {"id": "item_123"}, "quantity": 2}]}}),
        )
        .await;
    assert_eq!(capability_keys(&cart["ucp"]), ["dev.ucp.shopping.cart"]);

    through(&mut bridge, "br.dev.bcp.shopping");
    let via_bcp = bridge.call("search_catalog", search).await;
    assert_eq!(via_ucp["ucp"]["version"], "2026-04-08");
    assert_eq!(via_bcp["ucp"]["version"], "2026-07-28");
    assert_eq!(
        capability_keys(&via_bcp["ucp"]),
        ["br.dev.bcp.shopping.catalog.search"]
    );
    // Same store behind both doors: only the envelope differs.
    assert_eq!(via_ucp["products"], via_bcp["products"]);

    // One store, one cart: created through UCP, read through BCP in BCP's names.
    let read = bridge
        .call("get_cart", json!({"meta": meta(), "id": cart["id"]}))
        .await;
    assert_eq!(read["ucp"]["version"], "2026-07-28");
    assert_eq!(capability_keys(&read["ucp"]), ["br.dev.bcp.shopping.cart"]);
    assert_eq!(read["line_items"], cart["line_items"]);

    // MCP-001: both endpoints list the full tool set.
    for service in ["dev.ucp.shopping", "br.dev.bcp.shopping"] {
        through(&mut bridge, service);
        let (status, reply) = bridge
            .rpc(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
            .await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(
            reply["result"]["tools"].as_array().unwrap().len(),
            13,
            "{service}"
        );
    }
}

#[tokio::test]
async fn bcp_default_does_not_open_the_ucp_door() {
    let bridge = TestBridge::sample().await;
    assert_eq!(
        bridge.get("/.well-known/ucp").await.status(),
        StatusCode::NOT_FOUND
    );
    assert_eq!(bridge.endpoints.len(), 1);
    assert_eq!(
        profile(&bridge, "/.well-known/bcp").await["ucp"]["version"],
        "2026-07-28"
    );
}

#[test]
fn demo_takes_protocol() {
    let mut demo = Running::start(&["demo", "--listen", "127.0.0.1:0", "--protocol", "both"]);
    demo.wait_for(|line| line.starts_with("Try it"));
    let banner = demo.banner.join("\n");
    drop(demo);
    assert!(banner.contains("/bcp/mcp"), "{banner}");
    assert!(banner.contains("/.well-known/bcp"), "{banner}");
    assert!(
        banner.contains("MCP endpoint (dev.ucp.shopping): http://127.0.0.1:"),
        "{banner}"
    );
    assert!(banner.contains("/.well-known/ucp"), "{banner}");

    let refused = Command::new(BIN)
        .args(["demo", "--protocol", "acp"])
        .output()
        .unwrap();
    assert!(!refused.status.success());
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("bcp, ucp, both"),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );
}
