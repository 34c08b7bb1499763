//! `continue_url` handoff: a browser with no cookies opening the cart's checkout URL must see
//! the agent's cart. The checkout page preloads the Store API cart into its HTML
//! (`createPreloadingMiddleware( JSON.parse( decodeURIComponent( '…' ) ) )`); that is decoded
//! here, and the session cookie the page sets is then used to read the cart as the browser would.

use serde_json::{Value, json};

use super::cart::create;
use super::store::{Line, RealStore, bcp_lines, cart_lines, items, real_store, shared};
use crate::support::meta_with_key;

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
    let (carts, cookies) = open_checkout(store, continue_url, &[]).await;
    assert!(!carts.is_empty(), "the checkout page preloads a cart");
    for cart in &carts {
        assert_eq!(cart, &expected, "preloaded cart");
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

/// The browser keeps its session cookie after the first visit; the agent then changes the
/// cart. Opening `continue_url` again (cookie sent, as a browser does) must show the cart
/// as the agent left it.
#[tokio::test]
#[ignore = "issue 10: after the first visit WooCommerce's session cookie wins over ?session="]
async fn a_returning_browser_sees_the_agents_later_updates() {
    let Some(store) = real_store("a_returning_browser_sees_the_agents_later_updates") else {
        return;
    };
    let _shared = shared().await;
    let bridge = store.bridge("").await;
    let created = create(&bridge, &[(store.sid("bolsa"), 1)]).await;
    let id = created["id"].as_str().unwrap().to_owned();
    let continue_url = created["continue_url"].as_str().unwrap().to_owned();
    let (first, cookies) = open_checkout(store, &continue_url, &[]).await;
    assert_eq!(first, [bcp_lines(&created)], "first visit");
    // Issue 10 measured it: the second visit still shows this first cart.

    let updated = bridge
        .call(
            "update_cart",
            json!({"meta": meta_with_key("handoff-u1"), "id": id, "cart": {"line_items": items(&[(store.sid("caneca"), 2)])}}),
        )
        .await;
    let expected = bcp_lines(&updated);
    assert_eq!(expected, [(store.id("caneca"), 2)], "{updated}");
    let continue_url = updated["continue_url"].as_str().unwrap();
    let (again, _) = open_checkout(store, continue_url, &cookies).await;
    assert_eq!(again, [expected], "second visit with the browser's cookie");
}

/// GET the checkout page with `cookies`; the carts it preloads and the cookies it sets.
async fn open_checkout(
    store: &RealStore,
    url: &str,
    cookies: &[String],
) -> (Vec<Vec<Line>>, Vec<String>) {
    let mut request = store.http.get(url);
    if !cookies.is_empty() {
        request = request.header("cookie", cookies.join("; "));
    }
    let page = request.send().await.unwrap();
    assert_eq!(page.status(), 200);
    let set: Vec<String> = page
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
    let carts = preloaded_carts(&page.text().await.unwrap())
        .iter()
        .map(cart_lines)
        .collect();
    (
        carts,
        if set.is_empty() {
            cookies.to_vec()
        } else {
            set
        },
    )
}
