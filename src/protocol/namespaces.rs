//! UCP compatibility: the `dev.ucp.*` twin of the BCP namespace, and which of the two (or
//! both) a bridge serves.

use serde::Deserialize;

use super::envelope::Namespace;

/// UCP clients compare versions exactly and read only the root `ucp.version` of the profile,
/// so UCP mode speaks the upstream release the BCP fork is based on, with no older leaves.
pub const UCP_VERSION: &str = "2026-04-08";

impl Namespace {
    pub const UCP: Namespace = Namespace {
        service: "dev.ucp.shopping",
        spec_host: "https://ucp.dev",
        version: UCP_VERSION,
        supported_versions: &[],
        profile_paths: &["/.well-known/ucp"],
    };
}

/// `server.protocol`: which namespaces the bridge serves.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Protocol {
    #[default]
    Bcp,
    Ucp,
    Both,
}

impl Protocol {
    pub const NAMES: &[&str] = &["bcp", "ucp", "both"];

    /// The namespaces served, the primary one (the one the banner and `Bridge::mcp_url`
    /// name) first.
    pub fn namespaces(self) -> &'static [Namespace] {
        const BCP: &[Namespace] = &[Namespace::BCP];
        const UCP: &[Namespace] = &[Namespace::UCP];
        const BOTH: &[Namespace] = &[Namespace::BCP, Namespace::UCP];
        match self {
            Self::Bcp => BCP,
            Self::Ucp => UCP,
            Self::Both => BOTH,
        }
    }

    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "bcp" => Some(Self::Bcp),
            "ucp" => Some(Self::Ucp),
            "both" => Some(Self::Both),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::Capability;

    #[test]
    fn ucp_names_and_urls_follow_the_spec_names_table() {
        let ucp = Namespace::UCP;
        assert_eq!(
            ucp.capability_name(Capability::CatalogSearch),
            "dev.ucp.shopping.catalog.search"
        );
        assert_eq!(
            ucp.capability_name(Capability::Cart),
            "dev.ucp.shopping.cart"
        );
        assert_eq!(
            ucp.schema_url(Capability::CatalogLookup),
            "https://ucp.dev/2026-04-08/schemas/shopping/catalog_lookup.json"
        );
        assert_eq!(
            ucp.service_schema_url(),
            "https://ucp.dev/2026-04-08/services/shopping/mcp.openrpc.json"
        );
    }

    #[test]
    fn both_serves_bcp_first() {
        let names: Vec<_> = Protocol::Both
            .namespaces()
            .iter()
            .map(|namespace| namespace.service)
            .collect();
        assert_eq!(names, ["br.dev.bcp.shopping", "dev.ucp.shopping"]);
        assert_eq!(Protocol::default(), Protocol::Bcp);
    }
}
