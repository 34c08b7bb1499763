use std::collections::BTreeMap;

use serde::Serialize;

/// Protocol version this bridge speaks (cart seed) and the older one it still accepts
/// (catalog seed).
pub const BCP_VERSION: &str = "2026-07-28";
pub const BCP_SUPPORTED_VERSIONS: &[&str] = &["2026-07-14"];

/// A capability of the shopping service; its wire name depends on the namespace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Capability {
    CatalogSearch,
    CatalogLookup,
    Cart,
}

impl Capability {
    pub const ALL: [Capability; 3] = [Self::CatalogSearch, Self::CatalogLookup, Self::Cart];

    fn suffix(self) -> &'static str {
        match self {
            Self::CatalogSearch => "catalog.search",
            Self::CatalogLookup => "catalog.lookup",
            Self::Cart => "cart",
        }
    }

    fn spec_path(self) -> &'static str {
        match self {
            Self::CatalogSearch => "catalog/search",
            Self::CatalogLookup => "catalog/lookup",
            Self::Cart => "cart",
        }
    }

    fn schema_file(self) -> &'static str {
        match self {
            Self::CatalogSearch => "catalog_search.json",
            Self::CatalogLookup => "catalog_lookup.json",
            Self::Cart => "cart.json",
        }
    }
}

/// Names, hosts and versions of one protocol namespace (BCP now; UCP compatibility later
/// plugs in here without touching the brain).
#[derive(Debug, Clone)]
pub struct Namespace {
    pub service: &'static str,
    pub spec_host: &'static str,
    pub version: &'static str,
    pub supported_versions: &'static [&'static str],
    pub profile_paths: &'static [&'static str],
}

impl Namespace {
    pub const BCP: Namespace = Namespace {
        service: "br.dev.bcp.shopping",
        spec_host: "https://bcp.dev.br",
        version: BCP_VERSION,
        supported_versions: BCP_SUPPORTED_VERSIONS,
        profile_paths: &["/.well-known/bcp", "/.well-known/ucp.json"],
    };

    pub fn capability_name(&self, capability: Capability) -> String {
        format!("{}.{}", self.service, capability.suffix())
    }

    pub fn spec_url(&self, capability: Capability) -> String {
        format!(
            "{}/{}/specification/{}",
            self.spec_host,
            self.version,
            capability.spec_path()
        )
    }

    pub fn schema_url(&self, capability: Capability) -> String {
        format!(
            "{}/{}/schemas/shopping/{}",
            self.spec_host,
            self.version,
            capability.schema_file()
        )
    }

    pub fn service_spec_url(&self) -> String {
        format!("{}/{}/specification/overview", self.spec_host, self.version)
    }

    pub fn service_schema_url(&self) -> String {
        format!(
            "{}/{}/services/shopping/mcp.openrpc.json",
            self.spec_host, self.version
        )
    }

    /// The response envelope carrying only the capability of the operation.
    pub fn envelope(&self, capability: Capability, status: Status) -> Ucp {
        let mut capabilities = BTreeMap::new();
        capabilities.insert(
            self.capability_name(capability),
            vec![CapabilityVersion {
                version: self.version,
            }],
        );
        Ucp {
            version: self.version,
            status: match status {
                Status::Success => None,
                Status::Error => Some("error"),
            },
            capabilities,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Success,
    Error,
}

#[derive(Debug, Clone, Serialize)]
pub struct CapabilityVersion {
    pub version: &'static str,
}

/// The `ucp` key of every response.
#[derive(Debug, Clone, Serialize)]
pub struct Ucp {
    pub version: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<&'static str>,
    pub capabilities: BTreeMap<String, Vec<CapabilityVersion>>,
}
