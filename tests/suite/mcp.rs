//! The MCP transport for ordinary MCP clients and for bare JSON clients, DNS-rebinding
//! protection, and the discovery profile.

use crate::support::{TestBridge, meta};
use reqwest::StatusCode;
use serde_json::{Value, json};

// The sample store implements the checkout port, so its checkout tools are listed too.
use crate::support::values::checkout_store_tools;

fn formats(schema: &Value, found: &mut Vec<String>) {
    match schema {
        Value::Object(map) => {
            if let Some(Value::String(format)) = map.get("format") {
                found.push(format.clone());
            }
            for (key, value) in map {
                assert!(key != "$ref", "schemas are inlined");
                formats(value, found);
            }
        }
        Value::Array(items) => items.iter().for_each(|item| formats(item, found)),
        _ => {}
    }
}

#[tokio::test]
async fn initialize_list_and_ping_work_for_mcp_clients() {
    let bridge = TestBridge::sample().await;
    let response = bridge
        .client
        .post(&bridge.mcp_url)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .body(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}}).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let init: Value = response.json().await.unwrap();
    assert_eq!(init["result"]["serverInfo"]["name"], "bcp-bridge");
    assert!(init["result"]["capabilities"]["tools"].is_object());
    assert_eq!(init["result"]["protocolVersion"], "2025-06-18");

    let (status, _) = bridge
        .rpc(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    assert_eq!(status, StatusCode::ACCEPTED);

    let (_, pong) = bridge
        .rpc(json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}))
        .await;
    assert_eq!(pong["result"], json!({}));

    let (_, list) = bridge
        .rpc(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}))
        .await;
    let tools = list["result"]["tools"].as_array().unwrap();
    let names: Vec<&str> = tools
        .iter()
        .map(|tool| tool["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, checkout_store_tools());
    for tool in tools {
        // Portable schemas: object roots, no $ref, only standard formats.
        assert_eq!(tool["inputSchema"]["type"], "object");
        assert_eq!(tool["outputSchema"]["type"], "object");
        let mut found = Vec::new();
        formats(&tool["inputSchema"], &mut found);
        formats(&tool["outputSchema"], &mut found);
        assert!(
            found
                .iter()
                .all(|format| ["uri", "date-time", "uuid"].contains(&format.as_str())),
            "{found:?}"
        );
        assert!(tool["description"].as_str().unwrap().len() > 20);
    }
    // The batch limit is part of the published schema.
    let lookup = &tools[1]["inputSchema"]["properties"]["catalog"]["properties"]["ids"];
    assert_eq!(lookup["maxItems"], 50);
}

#[tokio::test]
async fn tools_list_tolerates_extra_params() {
    let bridge = TestBridge::sample().await;
    let (status, list) = bridge
        .rpc(json!({"jsonrpc": "2.0", "id": "a", "method": "tools/list", "params": {"arguments": {"meta": meta()}}}))
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(list["id"], "a");
    assert_eq!(
        list["result"]["tools"].as_array().unwrap().len(),
        checkout_store_tools().len()
    );
}

#[tokio::test]
async fn bare_post_without_accept_header_gets_plain_json() {
    let bridge = TestBridge::sample().await;
    let response = bridge
        .client
        .post(&bridge.mcp_url)
        .header("content-type", "application/json")
        .body(json!({"jsonrpc": "2.0", "id": 41, "method": "tools/call", "params": {"name": "lookup_catalog", "arguments": {"meta": meta(), "catalog": {"ids": ["item_123"]}}}}).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert!(
        response.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("application/json")
    );
    let reply: Value = response.json().await.unwrap();
    assert_eq!(reply["id"], 41);
    assert_eq!(
        reply["result"]["structuredContent"]["products"][0]["id"],
        "prod_red_tshirt"
    );
    // No Content-Type either: still understood.
    let response = bridge
        .client
        .post(&bridge.mcp_url)
        .body(json!({"jsonrpc": "2.0", "id": 42, "method": "ping"}).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
}

#[tokio::test]
async fn foreign_host_and_origin_are_forbidden() {
    let bridge = TestBridge::sample().await;
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}).to_string();
    let response = bridge
        .client
        .post(&bridge.mcp_url)
        .header("host", "evil.example")
        .header("content-type", "application/json")
        .body(body.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    let response = bridge
        .client
        .post(&bridge.mcp_url)
        .header("origin", "https://evil.example")
        .header("content-type", "application/json")
        .body(body.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    // The bridge's own origin is fine.
    let response = bridge
        .client
        .post(&bridge.mcp_url)
        .header("origin", bridge.base_url.as_str())
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
}

#[tokio::test]
async fn public_base_url_sets_allowed_host_and_profile_endpoint() {
    let bridge =
        TestBridge::start("[server]\npublic_base_url = \"https://agents.loja.example\"\n").await;
    let response = bridge
        .client
        .post(bridge.mcp_url.replace(
            "https://agents.loja.example",
            &format!("http://{}", bridge.addr),
        ))
        .header("host", "agents.loja.example")
        .header("content-type", "application/json")
        .body(json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let profile: Value = bridge
        .client
        .get(format!("http://{}/.well-known/bcp", bridge.addr))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        profile["ucp"]["services"]["br.dev.bcp.shopping"][0]["endpoint"],
        "https://agents.loja.example/bcp/mcp"
    );
}

#[tokio::test]
async fn discovery_profile_advertises_what_is_served() {
    let bridge = TestBridge::sample().await;
    for path in ["/.well-known/bcp", "/.well-known/ucp.json"] {
        let response = bridge.get(path).await;
        assert_eq!(response.status(), StatusCode::OK);
        // DISC-003: publicly cacheable for at least a minute.
        let cache = response.headers()["cache-control"]
            .to_str()
            .unwrap()
            .to_owned();
        assert!(
            cache.contains("public") && cache.contains("max-age=300"),
            "{cache}"
        );
        let profile: Value = response.json().await.unwrap();
        let ucp = &profile["ucp"];
        assert_eq!(ucp["version"], "2026-07-28");
        assert!(
            ucp["supported_versions"]["2026-07-14"]
                .as_str()
                .unwrap()
                .ends_with("/.well-known/bcp/2026-07-14")
        );
        let service = &ucp["services"]["br.dev.bcp.shopping"][0];
        assert_eq!(service["transport"], "mcp");
        assert_eq!(service["endpoint"], json!(bridge.mcp_url));
        // OVR-001/OVR-002: reverse-domain names, each with spec and schema.
        let capabilities = ucp["capabilities"].as_object().unwrap();
        let mut names: Vec<&String> = capabilities.keys().collect();
        names.sort();
        assert_eq!(
            names,
            [
                "br.dev.bcp.shopping.cart",
                "br.dev.bcp.shopping.catalog.lookup",
                "br.dev.bcp.shopping.catalog.search",
                "br.dev.bcp.shopping.checkout",
                "br.dev.bcp.shopping.discount",
                "br.dev.bcp.shopping.fulfillment",
                "br.dev.bcp.shopping.order"
            ]
        );
        // The extensions name what they extend; root capabilities name nothing.
        for extension in ["discount", "fulfillment"] {
            assert_eq!(
                capabilities[&format!("br.dev.bcp.shopping.{extension}")][0]["extends"],
                "br.dev.bcp.shopping.checkout"
            );
        }
        assert!(
            capabilities["br.dev.bcp.shopping.cart"][0]
                .get("extends")
                .is_none()
        );
        for entries in capabilities.values() {
            assert!(
                entries[0]["spec"]
                    .as_str()
                    .unwrap()
                    .starts_with("https://bcp.dev.br/")
            );
            assert!(
                entries[0]["schema"]
                    .as_str()
                    .unwrap()
                    .starts_with("https://bcp.dev.br/")
            );
        }
        // The sample store's test handlers, as its checkout answers declare them.
        let handlers = &ucp["payment_handlers"]["br.dev.bcp.shopping.bridge_payment"];
        assert!(
            handlers
                .as_array()
                .unwrap()
                .iter()
                .all(|handler| handler["version"] == ucp["version"] && handler["id"].is_string()),
            "{handlers}"
        );
    }
    // OVR-009: the leaf profile of an older version has no supported_versions.
    let leaf: Value = bridge
        .get("/.well-known/bcp/2026-07-14")
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(leaf["ucp"]["version"], "2026-07-14");
    assert!(leaf["ucp"].get("supported_versions").is_none());
    assert_eq!(
        bridge.get("/.well-known/bcp/1999-01-01").await.status(),
        StatusCode::NOT_FOUND
    );
}

#[tokio::test]
async fn health_probes_answer() {
    let bridge = TestBridge::sample().await;
    assert_eq!(bridge.get("/healthz").await.status(), StatusCode::OK);
    assert_eq!(bridge.get("/readyz").await.status(), StatusCode::OK);
    assert_eq!(bridge.get("/nope").await.status(), StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn every_response_carries_only_its_operation_capability() {
    let bridge = TestBridge::sample().await;
    // OVR-004/OVR-005.
    let cases = [
        (
            "search_catalog",
            json!({"meta": meta(), "catalog": {"query": "shoes"}}),
            "br.dev.bcp.shopping.catalog.search",
        ),
        (
            "lookup_catalog",
            json!({"meta": meta(), "catalog": {"ids": ["item_123"]}}),
            "br.dev.bcp.shopping.catalog.lookup",
        ),
        (
            "get_product",
            json!({"meta": meta(), "catalog": {"id": "item_123"}}),
            "br.dev.bcp.shopping.catalog.lookup",
        ),
        (
            "get_cart",
            json!({"meta": meta(), "id": "cart_x"}),
            "br.dev.bcp.shopping.cart",
        ),
    ];
    for (tool, arguments, capability) in cases {
        let result = bridge.call(tool, arguments).await;
        let keys: Vec<&String> = result["ucp"]["capabilities"]
            .as_object()
            .unwrap()
            .keys()
            .collect();
        assert_eq!(keys, [capability], "{tool}");
        assert_eq!(result["ucp"]["version"], "2026-07-28");
    }
}
