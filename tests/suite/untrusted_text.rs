//! Merchant text cannot hijack an agent: the hostile corpus (`fixtures/hostile-store.json`:
//! script, `onerror`, `javascript:`/`data:` links, iframe, SVG `onload`, bidi overrides,
//! zero-width characters splitting "IGNORE ALL PREVIOUS INSTRUCTIONS", tag characters, a
//! megabyte of description, a plain "ignore all previous instructions" sentence) goes through
//! the real bridge over HTTP on every platform, and every catalog and cart answer comes back
//! with nothing active, nothing hidden, lengths capped and a plain description present, the
//! sentence still shown, as text.

use serde_json::json;

use crate::support::hostile::{self, INSTRUCTION, JOINED, assert_neutralised};
use crate::support::shopify_standin::{self, Standin};
use crate::support::values::{ids, line};
use crate::support::woo_standin::WooStandin;
use crate::support::{TestBridge, meta};

/// search → get_product → lookup → create_cart for the product the search finds first,
/// checking every answer; returns the answers' text.
async fn every_tool(bridge: &TestBridge, query: &str) -> String {
    let found = bridge
        .call(
            "search_catalog",
            json!({"meta": meta(), "catalog": {"query": query}}),
        )
        .await;
    assert_neutralised(&found);
    let products = &found["products"];
    assert!(
        !ids(products).is_empty(),
        "search finds the corpus: {found:.300}"
    );
    let product = &products[0];
    let product_id = product["id"].as_str().unwrap().to_owned();
    let variant_id = product["variants"][0]["id"].as_str().unwrap().to_owned();

    let detail = bridge
        .call(
            "get_product",
            json!({"meta": meta(), "catalog": {"id": product_id}}),
        )
        .await;
    assert_neutralised(&detail);
    assert_eq!(
        detail["product"]["id"],
        product_id.as_str(),
        "{detail:.300}"
    );

    let looked_up = bridge
        .call(
            "lookup_catalog",
            json!({"meta": meta(), "catalog": {"ids": [product_id, variant_id]}}),
        )
        .await;
    assert_neutralised(&looked_up);
    assert!(!ids(&looked_up["products"]).is_empty(), "{looked_up:.300}");

    let cart = bridge
        .call(
            "create_cart",
            json!({"meta": meta(), "cart": {"line_items": [line(&variant_id, 1)]}}),
        )
        .await;
    assert_neutralised(&cart);
    let line_title = cart["line_items"][0]["item"]["title"].as_str().unwrap();
    assert!(line_title.chars().count() <= 300, "{line_title}");

    [found, detail, looked_up, cart]
        .iter()
        .map(hostile::all_text)
        .collect::<Vec<_>>()
        .join("\n")
}

fn assert_shown_as_text(text: &str) {
    // Neutralised is not censored: the agent still sees what the merchant wrote, in plain
    // sight, so it (and the buyer) can judge it as data.
    assert!(text.contains(INSTRUCTION), "the instruction stays as text");
    assert!(text.contains(JOINED), "the hidden words read whole");
}

#[tokio::test]
async fn sample_store_neutralises_the_hostile_corpus() {
    let file = hostile::sample_store_file();
    let bridge = TestBridge::start(&format!(
        "[store]\nplatform = \"sample\"\ndata = \"{}\"\n",
        file.display()
    ))
    .await;
    let text = every_tool(&bridge, "hostile widget").await;
    assert_shown_as_text(&text);

    let widget = bridge
        .call(
            "get_product",
            json!({"meta": meta(), "catalog": {"id": "hostile_widget"}}),
        )
        .await;
    let product = &widget["product"];
    let plain = product["description"]["plain"].as_str().unwrap();
    assert!(plain.starts_with(INSTRUCTION), "{plain:.200}");
    assert_eq!(plain.chars().count(), 5_000, "the megabyte is capped");
    assert!(plain.ends_with('…'));
    let html = product["description"]["html"].as_str().unwrap();
    assert!(html.contains("<h2>Hostile widget</h2>"), "{html}");
    assert!(
        html.contains("<a href=\"https://widgets.example/manual\" rel=\"nofollow noopener noreferrer\">manual</a>"),
        "{html}"
    );
    assert_eq!(product["options"][0]["name"], "Colour");
    let labels: Vec<&str> = product["options"][0]["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|value| value["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels, ["Red", "Blue"]);
    assert_eq!(product["categories"][0]["value"], "Gadgets > Widgets");
    assert_eq!(product["media"][0]["alt_text"], "widget photo alert(1)");
    assert_eq!(product["metadata"], json!({"vendor": "Acme x"}));
    assert_eq!(product["variants"][0]["seller"]["name"], "Evil Corp");

    // The agent selects what it was shown, and the merchant's hidden spelling still matches.
    let selected = bridge
        .call(
            "get_product",
            json!({"meta": meta(), "catalog": {"id": "hostile_widget", "selected": [{"name": "Colour", "label": "Blue"}]}}),
        )
        .await;
    assert_eq!(
        selected["product"]["selected"],
        json!([{"name": "Colour", "label": "Blue"}])
    );
    assert_eq!(
        selected["product"]["variants"][0]["id"],
        "hostile_widget_blue"
    );

    // Only HTML in the store: the plain text is derived from the sanitised HTML.
    let gadget = bridge
        .call(
            "get_product",
            json!({"meta": meta(), "catalog": {"id": "hostile_gadget"}}),
        )
        .await;
    assert_neutralised(&gadget);
    let description = &gadget["product"]["description"];
    let plain = description["plain"].as_str().unwrap();
    assert!(
        plain.starts_with("Hostile widget\n\nSolid build."),
        "{plain:.200}"
    );
    assert!(plain.contains(INSTRUCTION));
    assert!(description["html"].as_str().unwrap().ends_with("</p>"));
    let _ = std::fs::remove_file(file);
}

#[tokio::test]
async fn woocommerce_neutralises_the_hostile_corpus() {
    let woo = WooStandin::start().await;
    let widget = hostile::widget();
    let html = widget["description_html"].as_str().unwrap();
    woo.add_product_like(
        10,
        json!({
            "id": 90,
            "name": widget["title"],
            "slug": "hostile-widget",
            "sku": "HW-1",
            "permalink": "http://127.0.0.1/product/hostile-widget/",
            "description": hostile::inflate(html),
            "short_description": html,
            "images": [{"id": 9, "src": "http://127.0.0.1/wp-content/uploads/hw.jpg", "thumbnail": "", "srcset": "", "sizes": "", "name": "hw.jpg", "alt": widget["media"][0]["alt"]}],
            "categories": [{"id": 99, "name": widget["categories"]["merchant"], "slug": "hostile", "link": ""}],
        }),
        50,
    );
    let bridge = TestBridge::start(&woo.config("")).await;
    let text = every_tool(&bridge, "hostile").await;
    assert!(text.contains(INSTRUCTION), "the instruction stays as text");
    assert!(text.contains(JOINED), "the hidden words read whole");
}

#[tokio::test]
async fn shopify_neutralises_the_hostile_corpus() {
    let standin = Standin::start();
    // A 1 MB description takes the debug build well past the stand-in's usual 1.5 s on a busy
    // 2-core machine; this test is about what the text becomes, not about upstream deadlines.
    let config = standin
        .config("")
        .replace("timeout_ms = 1500", "timeout_ms = 15000");
    let bridge = TestBridge::start(&config).await;
    let text = every_tool(&bridge, "hostile").await;
    assert_shown_as_text(&text);
    let gid = format!("gid://shopify/Product/{}", shopify_standin::HOSTILE);
    let detail = bridge
        .call(
            "get_product",
            json!({"meta": meta(), "catalog": {"id": gid}}),
        )
        .await;
    let description = &detail["product"]["description"];
    assert_eq!(
        description["plain"].as_str().unwrap().chars().count(),
        5_000
    );
    assert!(description["html"].as_str().unwrap().chars().count() <= 20_000);
    assert_eq!(
        detail["product"]["metadata"],
        json!({"vendor": "Evil Corp"})
    );
}
