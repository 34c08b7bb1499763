//! `[agents]`: who a call is from when the client does not say. Stock MCP clients know nothing
//! of `arguments.meta`; MCP's own `params._meta` may carry the same keys, and a merchant can
//! name a default agent profile so such clients work from their first call.

use serde::Deserialize;
use serde_json::{Map, Value, json};
use url::Url;

use crate::protocol::request::CallMeta;
use crate::protocol::{Message, MessageCode};
use crate::settings::ConfigProblem;

/// A JSON object, as the arguments and the transport's metadata arrive.
type JsonObject = Map<String, Value>;

/// What a client must send, shown wherever a call lacks it.
pub const META_EXAMPLE: &str =
    r#"{"meta": {"ucp-agent": {"profile": "https://your-agent.example/.well-known/ucp"}}}"#;

#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct AgentsConfig {
    /// The agent profile a call without `meta["ucp-agent"].profile` is served as. It is
    /// negotiated (and cached) like any other profile, and the answer says it was used.
    pub default_profile: Option<String>,
}

impl AgentsConfig {
    pub fn problems(&self) -> Vec<ConfigProblem> {
        let mut problems = Vec::new();
        if let Some(profile) = &self.default_profile {
            let parsed = Url::parse(profile);
            if !parsed.as_ref().is_ok_and(|url| {
                matches!(url.scheme(), "http" | "https") && url.host_str().is_some()
            }) {
                problems.push(ConfigProblem::new(
                    "agents.default_profile",
                    "must be the http(s) URL of an agent profile, e.g. https://agent.example/.well-known/ucp",
                ));
            }
        }
        problems
    }
}

/// How the edge completed a call's `meta`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetaSource {
    /// The arguments carried everything.
    Arguments,
    /// Keys came from MCP's `params._meta`.
    ProtocolMeta,
    /// No profile anywhere: the configured default was used.
    DefaultProfile,
}

/// Fills `arguments.meta` from `params._meta` and then from the default profile, so the
/// schema, the gate and the brain see one shape whatever the client sent.
pub fn complete_meta(
    arguments: &mut JsonObject,
    protocol_meta: Option<&JsonObject>,
    config: &AgentsConfig,
) -> MetaSource {
    let sent_meta = arguments.contains_key("meta");
    let meta = arguments
        .entry("meta")
        .or_insert_with(|| Value::Object(JsonObject::new()));
    let Value::Object(meta) = meta else {
        // A non-object `meta` is the schema's to refuse, with its path.
        return MetaSource::Arguments;
    };
    let mut source = MetaSource::Arguments;
    if let Some(protocol_meta) = protocol_meta {
        for key in ["ucp-agent", "idempotency-key"] {
            if !meta.contains_key(key)
                && let Some(value) = protocol_meta.get(key)
            {
                meta.insert(key.to_owned(), value.clone());
                source = MetaSource::ProtocolMeta;
            }
        }
    }
    let has_profile = meta
        .get("ucp-agent")
        .and_then(|agent| agent.get("profile"))
        .is_some();
    if !has_profile && let Some(profile) = &config.default_profile {
        match meta.get_mut("ucp-agent") {
            Some(Value::Object(agent)) => {
                agent.insert("profile".to_owned(), json!(profile));
            }
            Some(_) => return source,
            None => {
                meta.insert("ucp-agent".to_owned(), json!({ "profile": profile }));
            }
        }
        return MetaSource::DefaultProfile;
    }
    if !sent_meta && meta.is_empty() {
        // Leave a missing `meta` missing, so the schema error says what is required.
        arguments.remove("meta");
    }
    source
}

/// What the checks read of the completed `arguments.meta`. Lenient on purpose: a missing or
/// malformed `meta` is the schema's to report, with its path.
pub fn read_meta(arguments: &JsonObject) -> CallMeta {
    let meta = arguments.get("meta");
    let text = |value: Option<&Value>| value.and_then(Value::as_str).map(str::to_owned);
    CallMeta {
        profile: text(
            meta.and_then(|meta| meta.get("ucp-agent"))
                .and_then(|agent| agent.get("profile")),
        ),
        idempotency_key: text(meta.and_then(|meta| meta.get("idempotency-key"))),
    }
}

/// The info message of an answer served as the default profile.
pub fn default_profile_notice(profile: &str) -> Message {
    Message::info(
        MessageCode::DefaultProfile,
        format!(
            "No meta[\"ucp-agent\"].profile was sent, so this call was served as the store's default agent profile {profile}. Send your own profile: {META_EXAMPLE}"
        ),
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn object(value: Value) -> JsonObject {
        match value {
            Value::Object(map) => map,
            _ => JsonObject::new(),
        }
    }

    #[test]
    fn protocol_meta_fills_what_arguments_lack() {
        let mut arguments = object(json!({"catalog": {"query": "x"}}));
        let protocol =
            object(json!({"ucp-agent": {"profile": "https://a.example/p"}, "progressToken": 1}));
        let source = complete_meta(&mut arguments, Some(&protocol), &AgentsConfig::default());
        assert_eq!(source, MetaSource::ProtocolMeta);
        assert_eq!(
            arguments["meta"],
            json!({"ucp-agent": {"profile": "https://a.example/p"}})
        );
    }

    #[test]
    fn the_default_profile_is_used_only_when_no_profile_is_sent() {
        let config = AgentsConfig {
            default_profile: Some("https://d.example/p".to_owned()),
        };
        let mut bare = object(json!({"catalog": {"query": "x"}}));
        assert_eq!(
            complete_meta(&mut bare, None, &config),
            MetaSource::DefaultProfile
        );
        assert_eq!(bare["meta"]["ucp-agent"]["profile"], "https://d.example/p");
        let mut own = object(json!({"meta": {"ucp-agent": {"profile": "https://own.example/p"}}}));
        assert_eq!(
            complete_meta(&mut own, None, &config),
            MetaSource::Arguments
        );
        assert_eq!(own["meta"]["ucp-agent"]["profile"], "https://own.example/p");
    }

    #[test]
    fn without_a_default_a_missing_meta_stays_missing() {
        let mut bare = object(json!({"catalog": {}}));
        complete_meta(&mut bare, None, &AgentsConfig::default());
        assert!(!bare.contains_key("meta"));
    }

    #[test]
    fn the_default_profile_must_be_a_url() {
        let config = AgentsConfig {
            default_profile: Some("agent".to_owned()),
        };
        assert_eq!(config.problems()[0].key, "agents.default_profile");
    }
}
