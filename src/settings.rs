//! The vocabulary every module's configuration section is written in: a problem located by
//! its dotted key, secrets that may come from the environment, and deserialisation that names
//! the exact key that failed. A leaf: it imports nothing of the crate, so each module can own
//! its own section without reaching up to the assembler (`startup::configure`).

use std::fmt;

use secrecy::SecretString;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer};

/// One thing wrong with a configuration, located by its dotted key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigProblem {
    pub key: String,
    pub message: String,
}

impl ConfigProblem {
    pub fn new(key: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            key: key.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for ConfigProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.key, self.message)
    }
}

/// A secret from the file (`key = "value"`) or from the environment (`key = { env = "NAME" }`).
/// Debug output and error messages never contain the value.
#[derive(Clone)]
pub struct Secret(pub SecretString);

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret([REDACTED])")
    }
}

impl<'de> Deserialize<'de> for Secret {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Source {
            Literal(String),
            Env { env: String },
        }
        match Source::deserialize(deserializer) {
            Ok(Source::Literal(value)) if value.is_empty() => {
                Err(serde::de::Error::custom("the secret is empty"))
            }
            Ok(Source::Literal(value)) => match env_reference(&value) {
                Some(name) => Err(serde::de::Error::custom(format!(
                    "looks like the environment variable {name}, but the file is not shell-expanded: write {{ env = \"{name}\" }}"
                ))),
                None => Ok(Self(SecretString::from(value))),
            },
            Ok(Source::Env { env }) => match std::env::var(&env) {
                Ok(value) if !value.is_empty() => Ok(Self(SecretString::from(value))),
                _ => Err(serde::de::Error::custom(format!(
                    "environment variable {env} is not set or empty"
                ))),
            },
            Err(_) => Err(serde::de::Error::custom(
                "expected a string or a table { env = \"VARIABLE_NAME\" }",
            )),
        }
    }
}

impl schemars::JsonSchema for Secret {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Secret".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "A secret: the value itself, or { env = \"NAME\" } to read it from the environment.",
            "oneOf": [
                {"type": "string", "minLength": 1},
                {
                    "type": "object",
                    "properties": {"env": {"type": "string", "minLength": 1}},
                    "required": ["env"],
                    "additionalProperties": false
                }
            ]
        })
    }
}

/// The variable named by a shell-style reference (`$NAME` or `${NAME}`), which a secret
/// written that way in TOML would otherwise be taken literally as.
fn env_reference(value: &str) -> Option<&str> {
    let rest = value.strip_prefix('$')?;
    let name = rest
        .strip_prefix('{')
        .and_then(|inner| inner.strip_suffix('}'))
        .unwrap_or(rest);
    let valid = !name.is_empty()
        && name
            .bytes()
            .all(|byte| byte.is_ascii_uppercase() || byte.is_ascii_digit() || byte == b'_');
    valid.then_some(name)
}

/// Deserialises a TOML value, turning each error into a problem that names the full key
/// (`server.listen`, `store.shop_domain`, …). serde stops at the first error, so a failing
/// key is set aside and the rest tried again: every bad key of a table is reported in one run.
/// Used by every section and by platform adapters for their own tables.
pub fn deserialize_at<T: DeserializeOwned>(
    mut value: toml::Value,
    prefix: &str,
    problems: &mut Vec<ConfigProblem>,
) -> Option<T> {
    let mut failed = false;
    let mut set_aside: Vec<String> = Vec::new();
    // Each round removes one key, so this ends; the bound is only a guard.
    for _ in 0..64 {
        let error = match serde_path_to_error::deserialize::<_, T>(value.clone()) {
            Ok(parsed) if !failed => return Some(parsed),
            Ok(_) => return None,
            Err(error) => error,
        };
        failed = true;
        let inner = error.inner().to_string();
        // toml repeats the key on a line of its own ("\nin `listen`"): the key says it already.
        let inner = inner
            .split_once("\nin `")
            .map_or(inner.as_str(), |(message, _)| message)
            .trim()
            .to_owned();
        // A key set aside in an earlier round is now "missing": already reported.
        if missing_field_name(&inner)
            .is_some_and(|missing| set_aside.iter().any(|key| key == missing))
        {
            return None;
        }
        let path = error.path().to_string();
        let path = if path == "." { String::new() } else { path };
        let mut key = if path.is_empty() {
            prefix.to_owned()
        } else {
            format!("{prefix}.{path}")
        };
        // serde names an unknown key only in its message; make it part of the key.
        let unknown = unknown_field_name(&inner);
        if let Some(unknown) = unknown
            && !key.ends_with(&format!(".{unknown}"))
        {
            key = format!("{key}.{unknown}");
        }
        problems.push(ConfigProblem::new(key, inner.clone()));
        // The top-level key the error is under, to set aside before the next round.
        let culprit = path
            .split(['.', '['])
            .next()
            .filter(|head| !head.is_empty())
            .map(str::to_owned)
            .or_else(|| unknown.map(str::to_owned));
        let removed = match (&mut value, culprit) {
            (toml::Value::Table(table), Some(culprit)) => {
                let removed = table.remove(&culprit).is_some();
                set_aside.push(culprit);
                removed
            }
            _ => false,
        };
        if !removed {
            return None;
        }
    }
    None
}

fn missing_field_name(message: &str) -> Option<&str> {
    let rest = message.strip_prefix("missing field `")?;
    rest.split('`').next()
}

fn unknown_field_name(message: &str) -> Option<&str> {
    let rest = message.strip_prefix("unknown field `")?;
    rest.split('`').next()
}

/// Whether a configured URL points at this machine (where plain http cannot be overheard).
pub fn is_loopback_url(url: &url::Url) -> bool {
    match url.host() {
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        Some(url::Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
        None => false,
    }
}

/// Two settings that only work together (a key and its secret): both or neither. A lone one
/// is a problem named on the key that is missing.
pub fn both_or_neither<T>(
    (first_key, first): (&str, Option<T>),
    (second_key, second): (&str, Option<T>),
    problems: &mut Vec<ConfigProblem>,
) -> Option<(T, T)> {
    match (first, second) {
        (Some(first), Some(second)) => Some((first, second)),
        (None, None) => None,
        (Some(_), None) => {
            problems.push(ConfigProblem::new(
                second_key,
                format!("is required with {first_key}"),
            ));
            None
        }
        (None, Some(_)) => {
            problems.push(ConfigProblem::new(
                first_key,
                format!("is required with {second_key}"),
            ));
            None
        }
    }
}

/// Deserialises a platform's `[store]` table into its own struct, without the `platform` key.
pub fn store_settings<T: DeserializeOwned>(
    store: &toml::Table,
    problems: &mut Vec<ConfigProblem>,
) -> Option<T> {
    let mut table = store.clone();
    table.remove("platform");
    deserialize_at(toml::Value::Table(table), "store", problems)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]
    use super::*;

    #[test]
    fn secrets_come_from_the_environment_and_never_print() {
        #[derive(Deserialize, Debug)]
        struct WithSecret {
            token: Secret,
        }
        // set_var is unsafe in edition 2024 (and the crate forbids unsafe), so read a variable
        // every test environment has.
        let from_env: WithSecret = toml::from_str("token = { env = \"PATH\" }").unwrap();
        assert!(!format!("{from_env:?}").contains('/'));
        use secrecy::ExposeSecret;
        assert_eq!(
            from_env.token.0.expose_secret(),
            std::env::var("PATH").unwrap()
        );
        let literal: WithSecret = toml::from_str("token = \"shpat_supersecret\"").unwrap();
        for reference in ["$SHOPIFY_STOREFRONT_PRIVATE_TOKEN", "${SHOPIFY_TOKEN}"] {
            let refused = toml::from_str::<WithSecret>(&format!("token = \"{reference}\""))
                .unwrap_err()
                .to_string();
            assert!(refused.contains("{ env = \"SHOPIFY_"), "{refused}");
        }
        assert!(!format!("{literal:?}").contains("supersecret"));
        let missing = toml::from_str::<WithSecret>("token = { env = \"BCP_TEST_UNSET_VAR\" }")
            .unwrap_err()
            .to_string();
        assert!(missing.contains("BCP_TEST_UNSET_VAR"), "{missing}");
    }
}
