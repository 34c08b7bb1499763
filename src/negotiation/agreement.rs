//! What an agent profile and this bridge agree on: the protocol version, and which of this
//! namespace's capabilities the agent declares at it.

use serde_json::Value;

use super::{NegotiationCode, NegotiationError};
use crate::protocol::{Capability, Namespace};

/// The outcome of negotiating with one agent profile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Agreement {
    /// The newest version both speak (one of the namespace's, so `'static`).
    pub version: &'static str,
    /// The namespace's capabilities the agent declares at `version`. `None` when the agent
    /// declares none of this namespace's capabilities, or the version was chosen from its
    /// `supported_versions` (whose leaf profile is not fetched): no opinion, all are served.
    pub capabilities: Option<Vec<Capability>>,
    /// Where the agent takes order events: the `config.webhook_url` of its order capability
    /// (order.md "Webhook URL Configuration"), as written; whether the bridge may post there
    /// is decided when it does, by the fetch rules.
    pub webhook_url: Option<String>,
}

impl Agreement {
    /// Whether a call of `capability` is in the intersection (NEG-002).
    pub fn covers(&self, capability: Capability) -> bool {
        self.capabilities
            .as_ref()
            .is_none_or(|declared| declared.contains(&capability))
    }
}

/// Versions are dated `YYYY-MM-DD`, so the newest is the greatest string.
fn newest<'a>(versions: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    versions.max()
}

/// The versions an agent profile offers: `ucp.version` plus the keys of
/// `ucp.supported_versions` (an object `{version: leaf URI}`; an array of versions, seen in
/// drafts, is read the same way).
fn offered(ucp: &Value) -> Vec<&str> {
    let mut versions: Vec<&str> = ucp
        .get("version")
        .and_then(Value::as_str)
        .into_iter()
        .collect();
    match ucp.get("supported_versions") {
        Some(Value::Object(leaves)) => versions.extend(leaves.keys().map(String::as_str)),
        Some(Value::Array(list)) => versions.extend(list.iter().filter_map(Value::as_str)),
        _ => {}
    }
    versions
}

/// The namespace's capabilities the profile declares at `version`, matched by exact version
/// equality (UCP 2026-08-25 "Capability Versions"): `None` when it names none of them.
fn declared(namespace: &Namespace, ucp: &Value, version: &str) -> Option<Vec<Capability>> {
    let capabilities = ucp.get("capabilities")?.as_object()?;
    let mut named_any = false;
    let mut at_version = Vec::new();
    for capability in Capability::ALL {
        let Some(entries) = capabilities.get(&namespace.capability_name(capability)) else {
            continue;
        };
        named_any = true;
        let entries = match entries {
            Value::Array(entries) => entries.as_slice(),
            single => std::slice::from_ref(single),
        };
        if entries
            .iter()
            .any(|entry| entry.get("version").and_then(Value::as_str) == Some(version))
        {
            at_version.push(capability);
        }
    }
    named_any.then_some(at_version)
}

/// The order capability's `config.webhook_url` in the profile's root `ucp.capabilities`: the
/// entry at `version` first, else any entry that names one (a platform lists one URL).
fn webhook_url(namespace: &Namespace, ucp: &Value, version: &str) -> Option<String> {
    let entries = ucp
        .get("capabilities")?
        .get(namespace.capability_name(Capability::Order))?;
    let entries = match entries {
        Value::Array(entries) => entries.as_slice(),
        single => std::slice::from_ref(single),
    };
    let url = |entry: &Value| {
        entry
            .get("config")?
            .get("webhook_url")?
            .as_str()
            .filter(|url| !url.is_empty() && url.len() <= 2048)
            .map(str::to_owned)
    };
    entries
        .iter()
        .filter(|entry| entry.get("version").and_then(Value::as_str) == Some(version))
        .chain(entries.iter())
        .find_map(url)
}

/// Settles a fetched agent profile against the namespace's versions: the newest version both
/// speak, or `version_unsupported` (NEG-001) when they share none.
pub(super) fn settle(
    namespace: &Namespace,
    document: &Value,
) -> Result<Agreement, NegotiationError> {
    let ucp = document
        .get("ucp")
        .filter(|ucp| ucp.get("version").and_then(Value::as_str).is_some())
        .ok_or_else(|| {
            NegotiationError::malformed("the agent profile has no ucp.version string")
        })?;
    let offers = offered(ucp);
    let Some(version) = newest(namespace.versions().filter(|ours| offers.contains(ours))) else {
        let shown: Vec<String> = offers
            .iter()
            .take(8)
            .map(|version| version.chars().take(40).collect())
            .collect();
        let served: Vec<&str> = namespace.versions().collect();
        return Err(NegotiationError::new(
            NegotiationCode::VersionUnsupported,
            format!(
                "protocol version {} is not supported; this business serves {}",
                shown.join(", "),
                served.join(", ")
            ),
        ));
    };
    let root = ucp.get("version").and_then(Value::as_str);
    let capabilities = if root == Some(version) {
        declared(namespace, ucp, version)
    } else {
        None
    };
    Ok(Agreement {
        version,
        capabilities,
        webhook_url: webhook_url(namespace, ucp, version),
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use serde_json::json;

    use super::*;

    fn settled(profile: Value) -> Result<Agreement, NegotiationCode> {
        settle(&Namespace::UCP, &profile).map_err(|refusal| refusal.code)
    }

    #[test]
    fn the_newest_shared_version_wins() {
        // NEG-006: the platform's version is checked on every request; the newest shared one
        // is chosen from `version` and the keys of `supported_versions`.
        let both = json!({"ucp": {"version": "2026-08-25", "supported_versions": {"2026-04-08": "https://a.example/p/2026-04-08"}}});
        assert_eq!(settled(both).unwrap().version, "2026-08-25");
        let old_root = json!({"ucp": {"version": "2026-04-08", "supported_versions": {"2026-08-25": "https://a.example/p/2026-08-25"}}});
        assert_eq!(settled(old_root).unwrap().version, "2026-08-25");
        let only_new = json!({"ucp": {"version": "2026-08-25"}});
        assert_eq!(settled(only_new).unwrap().version, "2026-08-25");
        let only_old = json!({"ucp": {"version": "2026-04-08"}});
        assert_eq!(settled(only_old).unwrap().version, "2026-04-08");
        let future = json!({"ucp": {"version": "2027-01-01", "supported_versions": {"2026-04-08": "https://a.example/p/old", "2026-01-23": "https://a.example/p/older"}}});
        let agreed = settled(future).unwrap();
        assert_eq!(agreed.version, "2026-04-08");
        assert_eq!(
            agreed.capabilities, None,
            "a leaf's capabilities are not known"
        );
    }

    #[test]
    fn no_shared_version_is_version_unsupported() {
        // NEG-001
        let none = json!({"ucp": {"version": "2026-01-23", "supported_versions": {"2026-01-11": "https://a.example/p"}}});
        assert_eq!(settled(none), Err(NegotiationCode::VersionUnsupported));
        assert_eq!(
            settled(json!({"ucp": {}})),
            Err(NegotiationCode::ProfileMalformed)
        );
        assert_eq!(
            settled(json!({"ucp": {"version": 7}})),
            Err(NegotiationCode::ProfileMalformed)
        );
    }

    #[test]
    fn capabilities_match_by_exact_version() {
        let profile = json!({"ucp": {"version": "2026-08-25", "capabilities": {
            "dev.ucp.shopping.catalog.search": [{"version": "2026-08-25"}],
            "dev.ucp.shopping.cart": [{"version": "2026-04-08"}],
            "com.example.loyalty": [{"version": "2025-01-01"}]
        }}});
        let agreed = settled(profile).unwrap();
        assert!(agreed.covers(Capability::CatalogSearch));
        // A 04-08 cart inside an 08-25 profile is not a match (NEG-009).
        assert!(!agreed.covers(Capability::Cart));
        assert!(!agreed.covers(Capability::CatalogLookup));
        let silent =
            json!({"ucp": {"version": "2026-08-25", "capabilities": {"com.example.x": []}}});
        assert!(settled(silent).unwrap().covers(Capability::Cart));
    }

    #[test]
    fn the_order_webhook_url_is_read_from_the_order_capability_config() {
        // order.md "Webhook URL Configuration": config.webhook_url of dev.ucp.shopping.order.
        let profile = json!({"ucp": {"version": "2026-08-25", "capabilities": {
            "dev.ucp.shopping.order": [
                {"version": "2026-04-08", "config": {"webhook_url": "https://a.example/old"}},
                {"version": "2026-08-25", "config": {"webhook_url": "https://a.example/hooks"}}
            ]
        }}});
        assert_eq!(
            settled(profile).unwrap().webhook_url.as_deref(),
            Some("https://a.example/hooks")
        );
        let none = json!({"ucp": {"version": "2026-08-25", "capabilities": {
            "dev.ucp.shopping.order": [{"version": "2026-08-25"}]
        }}});
        assert_eq!(settled(none).unwrap().webhook_url, None);
    }
}
