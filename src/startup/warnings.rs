//! What a configuration that passed every check may still leave open: a bridge reachable
//! beyond loopback that anyone may call without limit, an allow-list of agent profiles nothing
//! authenticates, secrets in files others can read. Logged once when `serve` or `demo` starts
//! and printed by `check`; a warning never stops the bridge nor changes an exit code.

use std::fmt;
use std::net::IpAddr;
use std::path::Path;

use serde_json::{Map, Value};

use super::configure::BridgeConfig;
use crate::signatures::Mode;

/// Something the operator should know about a valid configuration, located by its key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StartWarning {
    pub key: String,
    pub message: String,
}

impl StartWarning {
    fn new(key: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            key: key.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for StartWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.key, self.message)
    }
}

/// Every warning about `config`, read from `file` (`None` for `demo`).
pub fn warnings(config: &BridgeConfig, file: Option<&Path>) -> Vec<StartWarning> {
    let mut found = Vec::new();
    found.extend(open_to_everyone(config));
    found.extend(self_asserted_profiles(config));
    if let Some(file) = file {
        found.extend(readable_config_file(file));
    }
    if let Some(tls) = &config.server.tls {
        found.extend(readable_key_file(
            "server.tls.key",
            &tls.key,
            "a TLS private key",
        ));
    }
    for (key, file) in [
        ("order_webhooks.key_file", &config.order_webhooks.key_file),
        (
            "order_webhooks.next_key_file",
            &config.order_webhooks.next_key_file,
        ),
    ] {
        if let Some(file) = file {
            found.extend(readable_key_file(
                key,
                file,
                "the order webhooks' signing key",
            ));
        }
    }
    found
}

/// Loopback is 127.0.0.0/8 and ::1 (also written IPv4-mapped).
fn beyond_loopback(ip: IpAddr) -> bool {
    !ip.to_canonical().is_loopback()
}

fn open_to_everyone(config: &BridgeConfig) -> Option<StartWarning> {
    let listen = config.server.listen;
    let tokens = !config.access.bearer_token_sha256.is_empty();
    // The per-address budget is the one a client cannot step around: the per-agent one is
    // keyed on a profile the client names itself.
    let per_client = config.inbound.per_ip_per_minute > 0;
    (beyond_loopback(listen.ip()) && !tokens && !per_client).then(|| {
        StartWarning::new(
            "server.listen",
            format!(
                "the bridge listens beyond loopback ({listen}) with no bearer token ([access] bearer_token_sha256) and no per-client budget ([inbound] per_ip_per_minute = 0): anyone who reaches it may call every tool as often as they like; set per_ip_per_minute (default 600) or bearer tokens"
            ),
        )
    })
}

fn self_asserted_profiles(config: &BridgeConfig) -> Option<StartWarning> {
    let listed = !config.access.allowed_profiles.is_empty();
    let enforced = config.signatures.mode == Mode::Enforce;
    (listed && !enforced).then(|| {
        StartWarning::new(
            "access.allowed_profiles",
            "set while request signatures are not enforced ([signatures] mode is not \"enforce\"): an agent profile is whatever the client writes, so the allow-list (and the per-agent budgets keyed on profiles) only advise; set [signatures] mode = \"enforce\", or use bearer tokens to keep others out",
        )
    })
}

/// The permission bits of `path` that let its group or others read or write it, if any.
#[cfg(unix)]
fn open_bits(path: &Path) -> Option<u32> {
    use std::os::unix::fs::PermissionsExt;
    // Follows links: what counts is the file the link points to (Kubernetes mounts secrets so).
    let mode = std::fs::metadata(path).ok()?.permissions().mode();
    (mode & 0o077 != 0).then_some(mode & 0o777)
}

#[cfg(not(unix))]
fn open_bits(_: &Path) -> Option<u32> {
    None
}

fn readable_key_file(key: &str, path: &Path, holds: &str) -> Option<StartWarning> {
    let mode = open_bits(path)?;
    Some(StartWarning::new(
        key,
        format!(
            "{} holds {holds} and is open to group/others (mode {mode:04o}): chmod 600 {}",
            path.display(),
            path.display()
        ),
    ))
}

/// The configuration file, when it holds a secret written in it and others can read it. A
/// file whose secrets all come from the environment (`{ env = "NAME" }`), as deploy/ keeps
/// it, holds nothing to protect: a ConfigMap or a committed file is fine then.
fn readable_config_file(file: &Path) -> Option<StartWarning> {
    let mode = open_bits(file)?;
    let text = std::fs::read_to_string(file).ok()?;
    let secrets = literal_secrets(&text);
    (!secrets.is_empty()).then(|| {
        StartWarning::new(
            "(file)",
            format!(
                "{} holds secrets written in it ({}) and is open to group/others (mode {mode:04o}): chmod 600 {}, or give them as {{ env = \"NAME\" }}",
                file.display(),
                secrets.join(", "),
                file.display()
            ),
        )
    })
}

/// The keys of `text` whose value is a secret written as itself rather than named in the
/// environment: every key the configuration's schema types `Secret`, so a new secret key is
/// found without being listed here.
pub fn literal_secrets(text: &str) -> Vec<String> {
    let Ok(root) = text.parse::<toml::Table>() else {
        return Vec::new();
    };
    let schema = schemars::schema_for!(BridgeConfig).to_value();
    let empty = Map::new();
    let defs = schema
        .get("$defs")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let mut found = Vec::new();
    secrets_in(&schema, &toml::Value::Table(root), "", defs, &mut found, 0);
    found.sort();
    found.dedup();
    found
}

/// Deeper than any section nests: a guard against a schema that refers to itself.
const MAX_DEPTH: usize = 32;

fn secrets_in(
    schema: &Value,
    value: &toml::Value,
    path: &str,
    defs: &Map<String, Value>,
    found: &mut Vec<String>,
    depth: usize,
) {
    if depth > MAX_DEPTH {
        return;
    }
    if let Some(name) = schema
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|reference| reference.strip_prefix("#/$defs/"))
    {
        if name == "Secret" {
            if value.is_str() {
                found.push(path.to_owned());
            }
            return;
        }
        if let Some(target) = defs.get(name) {
            secrets_in(target, value, path, defs, found, depth + 1);
        }
    }
    // Options and the platforms of `[store]`: whichever alternative the value is.
    for combinator in ["anyOf", "oneOf", "allOf"] {
        for alternative in schema
            .get(combinator)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            secrets_in(alternative, value, path, defs, found, depth + 1);
        }
    }
    match value {
        toml::Value::Table(table) => {
            for (key, child) in table {
                let child_path = if path.is_empty() {
                    key.clone()
                } else {
                    format!("{path}.{key}")
                };
                let child_schema = schema
                    .get("properties")
                    .and_then(|properties| properties.get(key))
                    .or_else(|| schema.get("additionalProperties").filter(|s| s.is_object()));
                if let Some(child_schema) = child_schema {
                    secrets_in(child_schema, child, &child_path, defs, found, depth + 1);
                }
            }
        }
        toml::Value::Array(items) => {
            if let Some(item_schema) = schema.get("items") {
                for (index, item) in items.iter().enumerate() {
                    let item_path = format!("{path}[{index}]");
                    secrets_in(item_schema, item, &item_path, defs, found, depth + 1);
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn config(text: &str) -> BridgeConfig {
        BridgeConfig::from_toml(text).unwrap()
    }

    fn keys(config: &BridgeConfig) -> Vec<String> {
        warnings(config, None)
            .into_iter()
            .map(|warning| warning.key)
            .collect()
    }

    const PUBLIC: &str =
        "[server]\nlisten = \"0.0.0.0:8080\"\npublic_base_url = \"https://shop.example\"\n";

    #[test]
    fn beyond_loopback_without_tokens_or_a_per_client_budget_is_open_to_everyone() {
        let budgets_off = format!("{PUBLIC}[inbound]\nper_ip_per_minute = 0\n");
        assert_eq!(keys(&config(&budgets_off)), ["server.listen"]);
        // The per-agent budget alone does not count: the client picks its profile.
        assert_eq!(
            keys(&config(&format!(
                "{budgets_off}per_agent_per_minute = 60\n"
            ))),
            ["server.listen"]
        );
        assert!(keys(&config(PUBLIC)).is_empty(), "default budgets");
        let digest = "a".repeat(64);
        let tokens = format!("{budgets_off}[access]\nbearer_token_sha256 = [\"{digest}\"]\n");
        assert!(keys(&config(&tokens)).is_empty());
        for loopback in ["127.0.0.1:8080", "127.1.2.3:8080", "[::1]:8080"] {
            let text =
                format!("[server]\nlisten = \"{loopback}\"\n[inbound]\nper_ip_per_minute = 0\n");
            assert!(keys(&config(&text)).is_empty(), "{loopback}");
        }
        let private = "[server]\nlisten = \"10.0.0.5:8080\"\n[inbound]\nper_ip_per_minute = 0\n";
        assert_eq!(keys(&config(private)), ["server.listen"]);
    }

    #[test]
    fn an_allow_list_without_enforced_signatures_is_advisory() {
        let listed = "[access]\nallowed_profiles = [\"https://agent.example/profile.json\"]\n";
        for mode in ["off", "log"] {
            let text = format!("{listed}[signatures]\nmode = \"{mode}\"\n");
            assert_eq!(keys(&config(&text)), ["access.allowed_profiles"], "{mode}");
        }
        assert_eq!(keys(&config(listed)), ["access.allowed_profiles"]);
        let enforced = format!("{listed}[signatures]\nmode = \"enforce\"\n");
        assert!(keys(&config(&enforced)).is_empty());
        assert!(keys(&config("[signatures]\nmode = \"log\"\n")).is_empty());
    }

    #[test]
    fn literal_secrets_are_found_by_their_schema_type_wherever_they_are() {
        // PATH is set wherever the tests run.
        let text = "[store]\nplatform = \"shopify\"\nshop_domain = \"x.myshopify.com\"\npublic_token = \"shpat_literal\"\n\n[cache]\nwebhook_secret = { env = \"PATH\" }\n\n[redis]\nurl = \"redis://:pw@127.0.0.1/\"\n";
        assert_eq!(literal_secrets(text), ["redis.url", "store.public_token"]);
        assert!(literal_secrets("[cache]\nwebhook_secret = { env = \"PATH\" }\n").is_empty());
        assert!(literal_secrets("[server]\nlisten = \"127.0.0.1:1\"\n").is_empty());
        assert_eq!(
            literal_secrets("[cache]\nwebhook_secret = \"whsec\"\n"),
            ["cache.webhook_secret"]
        );
        assert!(literal_secrets("not toml [").is_empty());
    }
}
