//! UCP compatibility: the `dev.ucp.*` twin of the BCP namespace, and which of the two (or
//! both) a bridge serves.

use serde::Deserialize;

use super::envelope::{Edition, Namespace};

/// The newest UCP release served: the root `ucp.version` of `/.well-known/ucp`.
pub const UCP_VERSION: &str = "2026-08-25";
/// The release the BCP fork is based on, still served to agents that speak only it, through
/// a `supported_versions` leaf profile.
pub const UCP_2026_04_08: &str = "2026-04-08";

fn ucp_edition(version: &str) -> Edition {
    if version == UCP_VERSION {
        Edition::Ucp20260825
    } else {
        Edition::Ucp20260408
    }
}

impl Namespace {
    pub const UCP: Namespace = Namespace {
        service: "dev.ucp.shopping",
        spec_host: "https://ucp.dev",
        version: UCP_VERSION,
        supported_versions: &[UCP_2026_04_08],
        profile_paths: &["/.well-known/ucp"],
        // Clients that were never negotiated were built against what UCP mode answered
        // before 2026-08-25 was served; a newer answer needs a profile that asks for it.
        unnegotiated: UCP_2026_04_08,
        answers_negotiated: true,
        edition_of: ucp_edition,
    };
}

/// `server.protocol`: which namespaces the bridge serves.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
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
            ucp.schema_url(Capability::CatalogLookup, UCP_2026_04_08),
            "https://ucp.dev/2026-04-08/schemas/shopping/catalog_lookup.json"
        );
        assert_eq!(
            ucp.service_schema_url(UCP_2026_04_08),
            "https://ucp.dev/2026-04-08/services/shopping/mcp.openrpc.json"
        );
        assert_eq!(
            ucp.spec_url(Capability::Cart, UCP_2026_04_08),
            "https://ucp.dev/2026-04-08/specification/cart"
        );
        // CHANGES 1.6: 2026-08-25 moved the prose under the shopping vertical; schema URLs stay.
        assert_eq!(
            ucp.spec_url(Capability::CatalogSearch, UCP_VERSION),
            "https://ucp.dev/2026-08-25/specification/shopping/catalog/search"
        );
        assert_eq!(
            ucp.service_spec_url(UCP_VERSION),
            "https://ucp.dev/2026-08-25/specification/overview/"
        );
        assert_eq!(
            ucp.schema_url(Capability::Cart, UCP_VERSION),
            "https://ucp.dev/2026-08-25/schemas/shopping/cart.json"
        );
    }

    #[test]
    fn ucp_answers_the_negotiated_release_and_bcp_its_seed_version() {
        let ucp = Namespace::UCP;
        assert_eq!(ucp.release(Some(UCP_VERSION)).edition, Edition::Ucp20260825);
        assert_eq!(ucp.release(Some(UCP_2026_04_08)).version, UCP_2026_04_08);
        assert_eq!(ucp.release(None).version, UCP_2026_04_08);
        let bcp = Namespace::BCP;
        assert_eq!(bcp.release(Some("2026-07-14")).version, "2026-07-28");
        assert_eq!(bcp.release(None).version, "2026-07-28");
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
