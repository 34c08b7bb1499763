//! The merchant page at `GET /`: what it shows, what it keeps out (buyer data, markup from
//! store text), its Content-Security-Policy, its off switch and its bearer check.

use reqwest::StatusCode;
use serde_json::json;

use crate::support::{TestBridge, meta};

/// `printf %s page-token | sha256sum`
const TOKEN: &str = "page-token";
const TOKEN_SHA256: &str = "8e6780cc7aa5b6a65a6b03d06b6e98465cf4ab02f84528f97c24ba8650d40126";

async fn page(bridge: &TestBridge) -> (StatusCode, reqwest::header::HeaderMap, String) {
    let response = bridge.get("/").await;
    let status = response.status();
    let headers = response.headers().clone();
    (status, headers, response.text().await.unwrap())
}

#[tokio::test]
async fn the_page_shows_store_endpoints_and_health_under_a_strict_policy() {
    let bridge = TestBridge::sample().await;
    let (status, headers, body) = page(&bridge).await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        headers["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/html"),
        "{headers:?}"
    );
    assert!(body.contains("Loja Exemplo BCP"), "{body}");
    assert!(body.contains(">sample<"), "platform shown: {body}");
    assert!(body.contains(&bridge.mcp_url), "{body}");
    assert!(
        body.contains(&format!("{}/.well-known/bcp", bridge.base_url)),
        "{body}"
    );
    assert!(body.contains("the store answers"), "{body}");
    assert!(body.contains(r#"data-mcp-path="/bcp/mcp""#), "{body}");
    let policy = headers["content-security-policy"].to_str().unwrap();
    assert!(policy.starts_with("default-src 'none'"), "{policy}");
    assert!(policy.contains("script-src 'sha256-"), "{policy}");
    assert!(policy.contains("connect-src 'self'"), "{policy}");
    assert!(policy.contains("frame-ancestors 'none'"), "{policy}");
    assert!(!policy.contains("unsafe"), "{policy}");
    assert_eq!(headers["x-content-type-options"], "nosniff");
    assert_eq!(headers["cache-control"], "no-store");
    // No build step and nothing from elsewhere: every script and style is inline.
    assert!(!body.contains("<script src"), "{body}");
    assert!(!body.contains("<link"), "{body}");
}

/// Issue 37 item 6: the page follows the browser's language, pt-BR or English, and says so to
/// caches.
#[tokio::test]
async fn the_page_speaks_the_browser_language() {
    let bridge = TestBridge::sample().await;
    let client = reqwest::Client::new();
    let ask = |language: &'static str| {
        client
            .get(format!("{}/", bridge.base_url))
            .header("accept-language", language)
            .send()
    };
    let response = ask("pt-BR,pt;q=0.9,en;q=0.8").await.unwrap();
    assert_eq!(response.headers()["content-language"], "pt-BR");
    assert_eq!(response.headers()["vary"], "Accept-Language");
    let body = response.text().await.unwrap();
    assert!(body.contains(r#"<html lang="pt-BR">"#), "{body}");
    assert!(body.contains("a loja responde"), "{body}");
    assert!(
        body.contains("Nenhuma chamada de ferramenta ainda."),
        "{body}"
    );
    assert!(!body.contains("the store answers"), "{body}");
    let response = ask("en-GB,pt;q=0.3").await.unwrap();
    assert_eq!(response.headers()["content-language"], "en");
    let body = response.text().await.unwrap();
    assert!(body.contains("the store answers"), "{body}");
    assert!(!body.contains("a loja responde"), "{body}");
}

#[tokio::test]
async fn both_namespaces_are_listed_when_both_are_served() {
    let bridge = TestBridge::start("[server]\nprotocol = \"both\"\n").await;
    let (_, _, body) = page(&bridge).await;
    for endpoint in &bridge.endpoints {
        assert!(
            body.contains(endpoint.mcp_url.as_deref().unwrap()),
            "{body}"
        );
        assert!(body.contains(&endpoint.profile_url), "{body}");
        assert!(
            body.contains(endpoint.rest_url.as_deref().unwrap()),
            "REST endpoint listed beside MCP: {body}"
        );
    }
}

#[tokio::test]
async fn a_rest_only_bridge_lists_no_mcp_endpoint() {
    let bridge = TestBridge::start("[server]\ntransports = [\"rest\"]\n").await;
    let (status, _, body) = page(&bridge).await;
    assert_eq!(status, StatusCode::OK);
    let rest_url = bridge.endpoints[0].rest_url.as_deref().unwrap();
    assert!(body.contains(rest_url), "{body}");
    assert!(!body.contains("MCP endpoint"), "{body}");
    assert!(!body.contains("/bcp/mcp"), "no MCP path anywhere: {body}");
    assert!(!body.contains("data-mcp-path"), "{body}");
    assert!(
        body.contains("serves none"),
        "the playground says why: {body}"
    );
}

#[tokio::test]
async fn calls_and_refusals_are_counted_without_buyer_data() {
    let bridge = TestBridge::sample().await;
    bridge
        .catalog("search_catalog", json!({"query": "running shoes"}))
        .await;
    // A refusal whose arguments carry what a buyer typed: only the path may be kept.
    let (_, error) = bridge
        .call_error(
            "search_catalog",
            json!({"meta": meta(), "catalog": {"query": "maria.silva@example.com", "pagination": {"limit": "lots"}}}),
        )
        .await;
    assert_eq!(error["code"], -32602);
    let (_, _, body) = page(&bridge).await;
    let calls = body.split(r#"id="calls""#).nth(1).unwrap();
    assert!(
        calls.contains("<td>search_catalog</td><td>2</td>"),
        "{calls}"
    );
    assert!(calls.contains("success 1, invalid 1"), "{calls}");
    let errors = body.split(r#"id="errors""#).nth(1).unwrap();
    assert!(errors.contains("-32602"), "{errors}");
    assert!(errors.contains("$.catalog.pagination.limit"), "{errors}");
    assert!(
        !body.contains("maria.silva"),
        "buyer data on the page: {body}"
    );
    assert!(!body.contains("lots"), "argument value on the page: {body}");
}

#[tokio::test]
async fn store_text_is_escaped() {
    let mut store: serde_json::Value =
        serde_json::from_str(include_str!("../../src/platform/sample/store.json")).unwrap();
    store["name"] = json!(r#"Loja <img src=x onerror=alert(1)> "&" Filhos"#);
    let path = std::env::temp_dir().join(format!(
        "bcp-page-store-{}-{}.json",
        std::process::id(),
        uuid::Uuid::new_v4()
    ));
    std::fs::write(&path, store.to_string()).unwrap();
    let bridge = TestBridge::start(&format!(
        "[store]\nplatform = \"sample\"\ndata = \"{}\"\n",
        path.display()
    ))
    .await;
    let (status, _, body) = page(&bridge).await;
    let _ = std::fs::remove_file(&path);
    assert_eq!(status, StatusCode::OK);
    assert!(!body.contains("<img"), "store text became markup: {body}");
    assert!(!body.contains(r#""&""#), "{body}");
    assert!(body.contains("Loja "), "{body}");
}

#[tokio::test]
async fn status_page_false_turns_it_off() {
    let bridge = TestBridge::start("[server]\nstatus_page = false\n").await;
    let (status, _, _) = page(&bridge).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    // Only the page: the MCP endpoint is untouched.
    bridge
        .catalog("search_catalog", json!({"query": "shoes"}))
        .await;
}

#[tokio::test]
async fn with_bearer_tokens_the_page_needs_one_too() {
    let bridge = TestBridge::start(&format!(
        "[access]\nbearer_token_sha256 = [\"{TOKEN_SHA256}\"]\n"
    ))
    .await;
    let url = format!("{}/", bridge.base_url);
    let anonymous = bridge.client.get(&url).send().await.unwrap();
    assert_eq!(anonymous.status(), StatusCode::UNAUTHORIZED);
    let challenges: Vec<_> = anonymous
        .headers()
        .get_all("www-authenticate")
        .iter()
        .map(|value| value.to_str().unwrap().to_owned())
        .collect();
    assert!(
        challenges.iter().any(|value| value.starts_with("Basic ")),
        "a browser is asked for the token: {challenges:?}"
    );
    let anonymous = anonymous.text().await.unwrap();
    assert!(!anonymous.contains("Loja Exemplo"), "{anonymous}");
    let wrong = bridge
        .client
        .get(&url)
        .bearer_auth("not-the-token")
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status(), StatusCode::UNAUTHORIZED);
    let bearer = bridge
        .client
        .get(&url)
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(bearer.status(), StatusCode::OK);
    let body = bearer.text().await.unwrap();
    assert!(body.contains("Loja Exemplo BCP"), "{body}");
    assert!(
        body.contains(r#"id="token""#),
        "the playground asks for the token"
    );
    let basic = bridge
        .client
        .get(&url)
        .basic_auth("merchant", Some(TOKEN))
        .send()
        .await
        .unwrap();
    assert_eq!(basic.status(), StatusCode::OK);
}

#[tokio::test]
async fn an_unreachable_store_is_shown_as_such() {
    let bridge = TestBridge::start(
        "[store]\nplatform = \"woocommerce\"\nbase_url = \"http://127.0.0.1:9\"\ncurrency = \"BRL\"\n[upstream]\ntimeout_ms = 300\nread_deadline_ms = 600\n",
    )
    .await;
    let (status, _, body) = page(&bridge).await;
    assert_eq!(status, StatusCode::OK, "the page itself still answers");
    assert!(body.contains(r#"id="health" class="bad""#), "{body}");
    assert!(body.contains(">woocommerce<"), "{body}");
}

/// Issue 39 item 3: the page shows how busy the bridge keeps the store (capacity, in flight,
/// queue, waits); the sample store has no upstream and no such row.
#[tokio::test]
async fn the_page_shows_the_store_load() {
    let woo = crate::support::woo_standin::WooStandin::start().await;
    let bridge = TestBridge::start(&format!(
        "{}\n[upstream]\nmax_in_flight = 3\n",
        woo.config("")
    ))
    .await;
    let (_, _, body) = page(&bridge).await;
    assert!(
        body.contains(r#"<dd id="store-load">0 requests in flight, at most 3 · 0 waiting"#),
        "{body}"
    );
    let (_, _, body) = page(&TestBridge::sample().await).await;
    assert!(!body.contains("store-load"), "{body}");
}
