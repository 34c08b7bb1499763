//! The merchant page in a real headless Chromium: it renders under its own
//! Content-Security-Policy (nothing blocked), and a search typed into the playground goes
//! through the real MCP endpoint and shows product cards beside the raw JSON; a card's
//! `get_product` button shows the product.

use std::time::Duration;

use serde_json::{Value, json};

use crate::support::TestBridge;
use crate::support::chromium::Browser;

/// Runs `drive` with a browser on a blocking thread while the bridge keeps serving.
async fn with_browser(drive: impl FnOnce(&mut Browser) + Send + 'static) {
    with_browser_speaking("en-US", drive).await;
}

async fn with_browser_speaking(
    language: &'static str,
    drive: impl FnOnce(&mut Browser) + Send + 'static,
) {
    let driven = tokio::task::spawn_blocking(move || {
        let mut browser = Browser::launch_speaking(language);
        drive(&mut browser);
    })
    .await;
    if let Err(error) = driven {
        std::panic::resume_unwind(error.into_panic());
    }
}

fn no_policy_violations(browser: &Browser) {
    let blocked: Vec<_> = browser
        .console
        .iter()
        .filter(|line| line.contains("Content Security Policy") || line.starts_with("exception"))
        .collect();
    assert!(blocked.is_empty(), "{blocked:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs Chromium: cargo test -- --include-ignored with chromium on the PATH (.ci/run installs it)"]
async fn a_search_in_the_playground_shows_product_cards() {
    let bridge = TestBridge::sample().await;
    let url = format!("{}/", bridge.base_url);
    let mcp_url = bridge.mcp_url.clone();
    let rest_url = bridge.endpoints[0].rest_url.clone();
    with_browser(move |browser| {
        browser.open(&url);
        let rendered = browser.eval(
            "({shop: document.getElementById('shop-name').textContent, \
              endpoint: document.getElementById('mcp-url-0').textContent, \
              health: document.getElementById('health').textContent, \
              rest: document.getElementById('rest-url-0').textContent, \
              copies: document.querySelectorAll('button.copy').length})",
        );
        assert_eq!(rendered["shop"], "Loja Exemplo BCP", "{rendered}");
        assert_eq!(rendered["endpoint"], json!(mcp_url), "{rendered}");
        assert_eq!(rendered["health"], "the store answers", "{rendered}");
        assert_eq!(rendered["rest"], json!(rest_url), "{rendered}");
        // MCP endpoint, REST endpoint and discovery, each with its copy button.
        assert_eq!(rendered["copies"], 3, "{rendered}");

        // Typed and submitted as a merchant would.
        browser.eval(
            "document.getElementById('q').value = 'running shoes'; \
             document.getElementById('search').click(); true",
        );
        browser.wait_for(
            "document.getElementById('cards').dataset.state !== 'busy' \
             && document.getElementById('cards').dataset.state !== 'idle'",
            Duration::from_secs(20),
        );
        let shown = browser.eval(
            "({state: document.getElementById('cards').dataset.state, \
              status: document.getElementById('play-status').textContent, \
              titles: [...document.querySelectorAll('.product-card h3')].map(h => h.textContent), \
              prices: [...document.querySelectorAll('.product-card .price')].map(p => p.textContent), \
              raw: document.getElementById('raw').textContent})",
        );
        assert_eq!(shown["state"], "done", "{shown}; console: {:?}", browser.console);
        let titles = shown["titles"].as_array().unwrap();
        assert!(!titles.is_empty(), "{shown}");
        assert!(
            titles
                .iter()
                .any(|title| title.as_str().unwrap().contains("Running")),
            "{shown}"
        );
        assert!(
            shown["prices"][0].as_str().unwrap().starts_with("BRL "),
            "{shown}"
        );
        // Beside the cards: the JSON-RPC reply exactly as the endpoint sent it.
        let raw: Value = serde_json::from_str(shown["raw"].as_str().unwrap()).unwrap();
        let products = &raw["result"]["structuredContent"]["products"];
        assert_eq!(products.as_array().unwrap().len(), titles.len(), "{raw}");

        browser.eval("document.querySelector('.product-card button.details').click(); true");
        browser.wait_for(
            "document.querySelector('.product-card.detail .variants li') !== null",
            Duration::from_secs(20),
        );
        let raw: Value = serde_json::from_str(
            browser
                .eval("document.getElementById('raw').textContent")
                .as_str()
                .unwrap(),
        )
        .unwrap();
        assert!(
            raw["result"]["structuredContent"]["product"]["id"].is_string(),
            "{raw}"
        );
        no_policy_violations(browser);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs Chromium: cargo test -- --include-ignored with chromium on the PATH (.ci/run installs it)"]
async fn a_refused_call_is_shown_not_swallowed() {
    // Negotiation on and no default profile: the playground's empty profile is refused, and
    // the page says so in words and shows the JSON-RPC error.
    let bridge = TestBridge::start("[negotiation]\nenabled = true\n").await;
    let url = format!("{}/?q=shoes", bridge.base_url);
    with_browser(move |browser| {
        browser.open(&url);
        browser.wait_for(
            "document.getElementById('cards').dataset.state === 'error'",
            Duration::from_secs(20),
        );
        let status = browser.eval("document.getElementById('play-status').textContent");
        assert!(status.as_str().unwrap().contains("-32602"), "{status}");
        let raw = browser.eval("document.getElementById('raw').textContent");
        assert!(raw.as_str().unwrap().contains("\"error\""), "{raw}");
        no_policy_violations(browser);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs Chromium: cargo test -- --include-ignored with chromium on the PATH (.ci/run installs it)"]
async fn behind_a_bearer_the_playground_sends_the_token_it_is_given() {
    // printf %s page-token | sha256sum
    let bridge = TestBridge::start(
        "[access]\nbearer_token_sha256 = [\"8e6780cc7aa5b6a65a6b03d06b6e98465cf4ab02f84528f97c24ba8650d40126\"]\n",
    )
    .await;
    let url = format!("{}/", bridge.base_url);
    with_browser(move |browser| {
        // The page itself is opened with the token, then the browser forgets it: from here
        // on only what the playground sends reaches the MCP endpoint.
        browser.command("Network.enable", json!({}));
        browser.command(
            "Network.setExtraHTTPHeaders",
            json!({"headers": {"Authorization": "Bearer page-token"}}),
        );
        browser.open(&url);
        browser.command("Network.setExtraHTTPHeaders", json!({"headers": {}}));
        browser.eval(
            "document.getElementById('q').value = 'shoes'; \
             document.getElementById('search').click(); true",
        );
        browser.wait_for(
            "document.getElementById('cards').dataset.state === 'error'",
            Duration::from_secs(20),
        );
        browser.eval(
            "document.getElementById('token').value = 'page-token'; \
             document.getElementById('search').click(); true",
        );
        browser.wait_for(
            "document.getElementById('cards').dataset.state === 'done' \
             && document.querySelectorAll('.product-card').length > 0",
            Duration::from_secs(20),
        );
    })
    .await;
}

/// Issue 37 item 6: a Brazilian merchant's browser gets the page in Portuguese, the
/// playground's own words and amounts (decimal comma) included.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs Chromium: cargo test -- --include-ignored with chromium on the PATH (.ci/run installs it)"]
async fn a_brazilian_browser_reads_the_page_in_portuguese() {
    let bridge = TestBridge::sample().await;
    let url = format!("{}/", bridge.base_url);
    with_browser_speaking("pt-BR", move |browser| {
        browser.open(&url);
        let rendered = browser.eval(
            "({lang: document.documentElement.lang, \
              health: document.getElementById('health').textContent, \
              heading: document.querySelector('section h2').textContent, \
              copy: document.querySelector('button.copy').textContent})",
        );
        assert_eq!(rendered["lang"], "pt-BR", "{rendered}");
        assert_eq!(rendered["health"], "a loja responde", "{rendered}");
        assert_eq!(rendered["heading"], "Loja", "{rendered}");
        assert_eq!(rendered["copy"], "Copiar", "{rendered}");
        browser.eval(
            "document.getElementById('q').value = 'running shoes'; \
             document.getElementById('search').click(); true",
        );
        browser.wait_for(
            "document.getElementById('cards').dataset.state === 'done'",
            Duration::from_secs(20),
        );
        let shown = browser.eval(
            "({status: document.getElementById('play-status').textContent, \
              price: document.querySelector('.product-card .price').textContent})",
        );
        assert!(
            shown["status"].as_str().unwrap().contains(" produto(s)"),
            "{shown}"
        );
        let price = shown["price"].as_str().unwrap();
        assert!(price.starts_with("BRL ") && price.contains(','), "{shown}");
        assert!(!price.contains('.'), "{shown}");
        no_policy_violations(browser);
    })
    .await;
}
