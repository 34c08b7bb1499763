//! The mistakes merchants really make in their configuration file, each caught by `check`
//! with a message naming the key, all in one run, and the same exit code (2) at start-up.

use std::path::PathBuf;
use std::process::{Command, Output};

use crate::support::binary::BIN;

fn write(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("bcp-config-checks-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn run(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().unwrap()
}

fn check(name: &str, text: &str) -> String {
    let path = write(name, text);
    let output = run(&["check", "--config", path.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn a_wildcard_listen_address_needs_a_public_url() {
    let text = check("wildcard.toml", "[server]\nlisten = \"0.0.0.0:8080\"\n");
    assert!(text.contains("- server.public_base_url:"), "{text}");
    assert!(text.contains("http://0.0.0.0:8080/bcp/mcp"), "{text}");
    let fixed = write(
        "wildcard-fixed.toml",
        "[server]\nlisten = \"0.0.0.0:8080\"\npublic_base_url = \"https://shop.example\"\n",
    );
    assert!(
        run(&["check", "--config", fixed.to_str().unwrap()])
            .status
            .success()
    );
}

#[test]
fn a_public_url_with_a_path_is_refused() {
    let text = check(
        "path.toml",
        "[server]\npublic_base_url = \"https://shop.example/mcp\"\n",
    );
    assert!(
        text.contains("- server.public_base_url: must not have a path"),
        "{text}"
    );
    assert!(text.contains("https://shop.example/mcp/bcp/mcp"), "{text}");
}

#[test]
fn a_token_written_as_a_shell_variable_is_named() {
    let text = check(
        "dollar.toml",
        "[store]\nplatform = \"shopify\"\nshop_domain = \"x.myshopify.com\"\npublic_token = \"$SHOPIFY_STOREFRONT_PRIVATE_TOKEN\"\ncurrency = \"USD\"\n",
    );
    assert!(text.contains("- store.public_token:"), "{text}");
    assert!(
        text.contains("{ env = \"SHOPIFY_STOREFRONT_PRIVATE_TOKEN\" }"),
        "{text}"
    );
    assert!(
        !text.contains("$SHOPIFY_STOREFRONT_PRIVATE_TOKEN\""),
        "{text}"
    );
}

#[test]
fn toml_syntax_errors_give_line_and_column() {
    let text = check(
        "syntax.toml",
        "[server]\nmcp_path = \"/bcp/mcp\"\nlisten = \"127.0.0.1:80\n",
    );
    assert!(text.contains("line 3, column"), "{text}");
}

#[test]
fn every_problem_in_a_file_is_reported_in_one_run() {
    let text = check(
        "four.toml",
        "[server]\nlisten = \"nope\"\nlisen = 1\n[limits]\nmax_page_size = -3\nmax_cart_linez = 4\n",
    );
    for key in [
        "server.listen",
        "server.lisen",
        "limits.max_page_size",
        "limits.max_cart_linez",
    ] {
        assert!(text.contains(&format!("- {key}:")), "{key} in {text}");
    }
    assert!(text.contains("4 problem(s)"), "{text}");
}

#[test]
fn a_configuration_problem_at_start_up_is_printed_once_and_exits_2() {
    // The sample store, but a key the file check refuses.
    let bad = write("serve-bad.toml", "[limits]\nmax_page_size = 300\n");
    let output = run(&["serve", "--config", bad.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(
        stderr.matches("limits.max_page_size").count(),
        1,
        "{stderr}"
    );
    // A problem found only while building (no currency, and the shop cannot be asked).
    let unreachable = write(
        "serve-no-currency.toml",
        "[store]\nplatform = \"shopify\"\nshop_domain = \"x.myshopify.com\"\npublic_token = \"tok\"\nendpoint = \"http://127.0.0.1:9/api/2026-04/graphql.json\"\ntimeout_ms = 500\n",
    );
    let output = run(&[
        "serve",
        "--config",
        unreachable.to_str().unwrap(),
        "--listen",
        "127.0.0.1:0",
    ]);
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.matches("store.currency").count(), 1, "{stderr}");
}
