use std::collections::BTreeMap;

use serde::Serialize;

#[derive(Debug, Clone, Serialize)]
pub struct ServiceBinding {
    pub version: &'static str,
    pub spec: String,
    pub transport: &'static str,
    pub schema: String,
    pub endpoint: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct CapabilityEntry {
    pub version: &'static str,
    pub spec: String,
    pub schema: String,
    /// The capability an extension extends: one name, or several for a multi-parent
    /// extension (overview.md "Multi-Parent Extensions").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extends: Option<Extends>,
    /// The business's settings of the capability (e.g. the return policy).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub config: Option<serde_json::Value>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum Extends {
    One(String),
    Many(Vec<String>),
}

#[derive(Debug, Clone, Serialize)]
pub struct ProfileUcp {
    pub version: &'static str,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub supported_versions: BTreeMap<&'static str, String>,
    pub services: BTreeMap<&'static str, Vec<ServiceBinding>>,
    pub capabilities: BTreeMap<String, Vec<CapabilityEntry>>,
    pub payment_handlers: BTreeMap<String, Vec<super::envelope::HandlerDeclaration>>,
}

/// The discovery document served at `/.well-known/bcp`.
#[derive(Debug, Clone, Serialize)]
pub struct Profile {
    pub ucp: ProfileUcp,
    /// The business's public signing keys (JWK) at 2026-08-25 (SIG-043, DISC-014).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub keys: Vec<serde_json::Value>,
    /// The same keys where 2026-04-08 reads them (SIG-008).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub signing_keys: Vec<serde_json::Value>,
}
