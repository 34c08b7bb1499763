//! `bcp-bridge config-schema`: the committed schema is what the command prints, every example
//! configuration (the files under `config/` and the TOML blocks of README.md and docs/) validates against
//! it, and an unknown key is refused by the schema as by serde.

use std::path::Path;
use std::process::Command;

use bcp_bridge::startup::{BridgeConfig, ConfigError};
use serde_json::Value;

use crate::support::binary::BIN;

fn printed() -> String {
    let output = Command::new(BIN).arg("config-schema").output().unwrap();
    assert!(output.status.success(), "{output:?}");
    String::from_utf8(output.stdout).unwrap()
}

fn validator() -> jsonschema::Validator {
    let schema: Value = serde_json::from_str(&printed()).unwrap();
    jsonschema::validator_for(&schema).unwrap()
}

fn as_json(toml_text: &str) -> Value {
    let table: toml::Table = toml_text.parse().unwrap();
    serde_json::to_value(table).unwrap()
}

fn schema_errors(validator: &jsonschema::Validator, toml_text: &str) -> Vec<String> {
    validator
        .iter_errors(&as_json(toml_text))
        .map(|error| format!("{} at {}", error, error.instance_path()))
        .collect()
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn the_committed_schema_is_the_printed_one() {
    let committed = std::fs::read_to_string(root().join("config/bcp-bridge.schema.json")).unwrap();
    assert_eq!(
        committed.trim_end(),
        printed().trim_end(),
        "regenerate: bcp-bridge config-schema > config/bcp-bridge.schema.json"
    );
}

#[test]
fn every_example_config_validates_and_names_the_schema() {
    let validator = validator();
    let mut seen = 0;
    for entry in std::fs::read_dir(root().join("config")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|ext| ext != "toml") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.starts_with("#:schema ./bcp-bridge.schema.json\n"),
            "{} lacks the #:schema line editors read",
            path.display()
        );
        let errors = schema_errors(&validator, &text);
        assert!(errors.is_empty(), "{}: {errors:?}", path.display());
        seen += 1;
    }
    assert!(seen >= 4, "only {seen} example configs found");
}

#[test]
fn the_deployment_config_validates_and_names_the_schema() {
    // The file the image, compose, the replicas' ConfigMap and the unit read.
    let text = std::fs::read_to_string(root().join("deploy/bridge.toml")).unwrap();
    assert!(
        text.starts_with("#:schema ../config/bcp-bridge.schema.json\n"),
        "deploy/bridge.toml lacks the #:schema line editors read"
    );
    let errors = schema_errors(&validator(), &text);
    assert!(errors.is_empty(), "deploy/bridge.toml: {errors:?}");
}

fn markdown_files(dir: &Path, found: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            markdown_files(&path, found);
        } else if path.extension().is_some_and(|ext| ext == "md") {
            found.push(path);
        }
    }
}

#[test]
fn the_documented_toml_examples_validate() {
    let validator = validator();
    let mut pages = vec![root().join("README.md")];
    markdown_files(&root().join("docs"), &mut pages);
    let mut blocks = 0;
    for page in &pages {
        let text = std::fs::read_to_string(page).unwrap();
        for block in text.split("```toml\n").skip(1) {
            let toml_text = block.split("```").next().unwrap();
            let errors = schema_errors(&validator, toml_text);
            assert!(
                errors.is_empty(),
                "{} block:\n{toml_text}\n{errors:?}",
                page.display()
            );
            blocks += 1;
        }
    }
    // The merchant, operator and agent pages show the configuration by example.
    assert!(
        blocks >= 10,
        "only {blocks} TOML examples in README.md and docs/"
    );
}

#[test]
fn an_unknown_key_is_refused_by_serde_and_by_the_schema() {
    let validator = validator();
    for text in [
        "[server]\nlisen = \"127.0.0.1:1\"\n",
        "[serverr]\n",
        "[store]\nplatform = \"sample\"\nshop_domain = \"x.myshopify.com\"\n",
        "[server.tls]\ncert = \"a.pem\"\nkey = \"b.pem\"\nwatch = 1\n",
    ] {
        assert!(
            matches!(BridgeConfig::from_toml(text), Err(ConfigError::Invalid(_))),
            "serde accepted {text:?}"
        );
        assert!(
            !schema_errors(&validator, text).is_empty(),
            "the schema accepted {text:?}"
        );
    }
}

#[test]
fn a_bad_value_is_refused_by_the_schema() {
    let validator = validator();
    for text in [
        "[server]\nprotocol = \"acp\"\n",
        "[store]\nplatform = \"magento\"\n",
        "[store]\nplatform = \"shopify\"\n",
        "[redis]\nurl = { envv = \"REDIS_URL\" }\n",
    ] {
        assert!(
            !schema_errors(&validator, text).is_empty(),
            "the schema accepted {text:?}"
        );
    }
}
