//! `continue_url` handoff: a browser with no cookies opening the cart's checkout URL must see
//! the agent's cart. The checkout page preloads the Store API cart into its HTML
//! (`createPreloadingMiddleware( JSON.parse( decodeURIComponent( '…' ) ) )`); that is decoded
//! here, and the session cookie the page sets is then used to read the cart as the browser would.

use serde_json::{Value, json};

use super::cart::create;
use super::store::{Line, bcp_lines, cart_lines, real_store, shared};

/// `decodeURIComponent` (no `+` for space).
fn decode_uri_component(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("");
            if let Ok(byte) = u8::from_str_radix(hex, 16) {
                out.push(byte);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8(out).unwrap()
}

/// Every Store API cart the page preloads.
fn preloaded_carts(html: &str) -> Vec<Value> {
    const OPEN: &str = "createPreloadingMiddleware( JSON.parse( decodeURIComponent( '";
    let mut carts = Vec::new();
    let mut rest = html;
    while let Some(start) = rest.find(OPEN) {
        let after = &rest[start + OPEN.len()..];
        let end = after.find('\'').unwrap();
        let preload: Value = serde_json::from_str(&decode_uri_component(&after[..end])).unwrap();
        for (key, value) in preload.as_object().unwrap() {
            if key.starts_with("/wc/store/v1/cart") {
                carts.push(value["body"].clone());
            }
        }
        rest = &after[end..];
    }
    carts
}

#[tokio::test]
async fn a_fresh_browser_at_continue_url_holds_the_agents_cart() {
    let Some(store) = real_store("a_fresh_browser_at_continue_url_holds_the_agents_cart") else {
        return;
    };
    let _shared = shared().await;
    let bridge = store.bridge("").await;
    let created = create(
        &bridge,
        &[(store.sid("bolsa"), 2), (store.sid("var_preto_42"), 1)],
    )
    .await;
    let expected: Vec<Line> = bcp_lines(&created);
    assert_eq!(expected.len(), 2, "{created}");
    // CART-010: the checkout URL is on the store and carries the session.
    let continue_url = created["continue_url"].as_str().unwrap();
    assert!(continue_url.starts_with(&store.url), "{continue_url}");

    // A client with no cookie jar: nothing but the URL.
    let page = store.http.get(continue_url).send().await.unwrap();
    assert_eq!(
        page.status(),
        200,
        "checkout page answers without a redirect"
    );
    let cookies: Vec<String> = page
        .headers()
        .get_all("set-cookie")
        .iter()
        .map(|value| {
            value
                .to_str()
                .unwrap()
                .split(';')
                .next()
                .unwrap()
                .to_owned()
        })
        .collect();
    let html = page.text().await.unwrap();
    let carts = preloaded_carts(&html);
    assert!(!carts.is_empty(), "the checkout page preloads a cart");
    for cart in &carts {
        assert_eq!(cart_lines(cart), expected, "preloaded cart: {cart}");
    }
    assert!(
        cookies
            .iter()
            .any(|c| c.starts_with("wp_woocommerce_session_")),
        "{cookies:?}"
    );

    // The same browser session (its cookies, no Cart-Token) reads the same cart.
    let cart: Value = store
        .http
        .get(format!("{}wp-json/wc/store/v1/cart", store.url))
        .header("cookie", cookies.join("; "))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(cart_lines(&cart), expected, "{}", json!(cart["items"]));
}
