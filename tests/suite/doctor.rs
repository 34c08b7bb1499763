//! `bcp-bridge doctor`: the store as agents will see it, checked before any agent comes, on
//! every platform; a refused credential is named by its key.

use std::process::Command;

use bcp_bridge::doctor;
use bcp_bridge::startup::BridgeConfig;

use crate::support::binary::BIN;
use crate::support::shopify_standin::{self, Standin};
use crate::support::woo_standin::WooStandin;

async fn report(config_toml: &str, with_cart: bool) -> doctor::Report {
    let config = BridgeConfig::from_toml(config_toml).expect("valid config");
    doctor::run(&config, with_cart).await
}

fn passed(report: &doctor::Report, name: &str) -> bool {
    report
        .checks
        .iter()
        .any(|check| check.name == name && check.passed)
}

fn assert_could_shop(report: &doctor::Report) {
    let text = report.render();
    assert!(report.agent_could_shop(), "{text}");
    for name in [
        "configuration",
        "store answers",
        "catalog",
        "sample product",
        "REST",
        "cart",
    ] {
        assert!(passed(report, name), "{name}: {text}");
    }
    assert!(text.contains("continue_url http"), "{text}");
    let product = report.sample_product.as_ref().expect("a sample product");
    assert!(product["title"].is_string(), "{product}");
    assert!(product["variants"].is_array(), "{product}");
}

#[tokio::test]
async fn the_sample_store_passes_with_a_cart_round_trip() {
    let report = report("", true).await;
    assert_could_shop(&report);
    assert!(
        report.render().contains("40 products"),
        "{}",
        report.render()
    );
}

#[tokio::test]
async fn the_rest_binding_is_asked_as_an_agent_asks_it() {
    // Over HTTP, with the headers the OpenAPI requires; the doors an agent passes with its
    // own token, key or profile (access, signatures, negotiation) do not stop the doctor.
    let guarded = report(
        "[access]\nbearer_token_sha256 = [\"0000000000000000000000000000000000000000000000000000000000000000\"]\n[negotiation]\nenabled = true\n[server]\nprotocol = \"ucp\"\n",
        false,
    )
    .await;
    let text = guarded.render();
    assert!(passed(&guarded, "REST"), "{text}");
    assert!(
        text.contains("/catalog/product answers the sample product"),
        "{text}"
    );
    // Not served: said, and no failure.
    let off = report("[server]\ntransports = [\"mcp\"]\n", false).await;
    let text = off.render();
    assert!(passed(&off, "REST"), "{text}");
    assert!(text.contains("not served"), "{text}");
    assert!(off.agent_could_shop(), "{text}");
}

#[tokio::test]
async fn the_shopify_stand_in_passes() {
    let shop = Standin::start();
    let report = report(&shop.config("currency = \"USD\""), true).await;
    assert_could_shop(&report);
}

#[tokio::test]
async fn the_woocommerce_stand_in_passes() {
    let woo = WooStandin::start().await;
    let report = report(&woo.config(""), true).await;
    assert_could_shop(&report);
}

#[tokio::test]
async fn a_refused_shopify_token_fails_naming_its_key() {
    let shop = Standin::start();
    let config = shop
        .config("currency = \"USD\"")
        .replace(shopify_standin::TOKEN, "shpat_wrong_token_0000");
    let report = report(&config, false).await;
    assert!(!report.agent_could_shop());
    let text = report.render();
    assert!(text.contains("FAIL  store answers"), "{text}");
    assert!(text.contains("fix store.public_token"), "{text}");
    assert!(
        !text.contains("shpat_wrong_token_0000"),
        "the token is never shown: {text}"
    );
}

#[tokio::test]
async fn an_unreachable_store_names_where_it_is_configured() {
    let report = report(
        "[store]\nplatform = \"woocommerce\"\nbase_url = \"http://127.0.0.1:9\"\ncurrency = \"BRL\"\n[upstream]\ntimeout_ms = 300\nread_deadline_ms = 600\n",
        false,
    )
    .await;
    assert!(!report.agent_could_shop());
    assert!(
        report.render().contains("store.base_url"),
        "{}",
        report.render()
    );
}

#[test]
fn the_command_exits_0_when_an_agent_could_shop_and_2_otherwise() {
    let config = format!("{}/config/sample.toml", env!("CARGO_MANIFEST_DIR"));
    let good = Command::new(BIN)
        .args(["doctor", "--config", &config, "--cart"])
        .output()
        .unwrap();
    assert_eq!(good.status.code(), Some(0), "{good:?}");
    let stdout = String::from_utf8_lossy(&good.stdout);
    assert!(stdout.contains("An agent could shop here: yes"), "{stdout}");
    let dir = std::env::temp_dir().join(format!("bcp-doctor-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("unreachable.toml");
    std::fs::write(
        &bad,
        "[store]\nplatform = \"woocommerce\"\nbase_url = \"http://127.0.0.1:9\"\ncurrency = \"BRL\"\n[upstream]\ntimeout_ms = 300\nread_deadline_ms = 600\n",
    )
    .unwrap();
    let failed = Command::new(BIN)
        .args(["doctor", "--config", bad.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(failed.status.code(), Some(2), "{failed:?}");
    assert!(String::from_utf8_lossy(&failed.stdout).contains("An agent could shop here: no"));
}
