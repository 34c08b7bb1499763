use std::collections::BTreeMap;

use schemars::JsonSchema;
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
    Checkout,
    Order,
    /// Extends checkout: shipping destinations, the store's options, their selection.
    Fulfillment,
    /// Extends checkout: codes applied and refused, automatic discounts.
    Discount,
}

impl Capability {
    pub const ALL: [Capability; 7] = [
        Self::CatalogSearch,
        Self::CatalogLookup,
        Self::Cart,
        Self::Checkout,
        Self::Order,
        Self::Fulfillment,
        Self::Discount,
    ];

    /// The extensions of checkout this bridge serves wherever it serves checkout: every
    /// checkout port prices shipping options and takes codes.
    pub const CHECKOUT_EXTENSIONS: [Capability; 2] = [Self::Fulfillment, Self::Discount];

    /// The capability an extension extends (`extends` in a profile); `None` for a root one.
    pub fn extends(self) -> Option<Capability> {
        match self {
            Self::Fulfillment | Self::Discount => Some(Self::Checkout),
            _ => None,
        }
    }

    fn suffix(self) -> &'static str {
        match self {
            Self::CatalogSearch => "catalog.search",
            Self::CatalogLookup => "catalog.lookup",
            Self::Cart => "cart",
            Self::Checkout => "checkout",
            Self::Order => "order",
            Self::Fulfillment => "fulfillment",
            Self::Discount => "discount",
        }
    }

    fn schema_file(self) -> &'static str {
        match self {
            Self::CatalogSearch => "catalog_search.json",
            Self::CatalogLookup => "catalog_lookup.json",
            Self::Cart => "cart.json",
            Self::Checkout => "checkout.json",
            Self::Order => "order.json",
            Self::Fulfillment => "fulfillment.json",
            Self::Discount => "discount.json",
        }
    }
}

/// Names, hosts and versions of one protocol namespace (BCP now; UCP compatibility later
/// plugs in here without touching the brain).
#[derive(Debug, Clone)]
pub struct Namespace {
    pub service: &'static str,
    pub spec_host: &'static str,
    /// The newest version, the root profile's `ucp.version`.
    pub version: &'static str,
    /// Older versions, each served as a leaf profile (newest first).
    pub supported_versions: &'static [&'static str],
    pub profile_paths: &'static [&'static str],
    /// The version a call is answered in when no agent profile was negotiated
    /// (`negotiation.enabled = false`).
    pub unnegotiated: &'static str,
    /// Whether answers carry the negotiated version. BCP's seed versions share one wire and
    /// its answers have always said `version`, so BCP keeps saying it.
    pub answers_negotiated: bool,
    /// How the release of `version` is laid out on the wire.
    pub edition_of: fn(&str) -> Edition,
}

/// The wire layouts this bridge writes. A layout is named after the UCP release it follows;
/// the BCP seeds follow 2026-04-08.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Edition {
    Ucp20260408,
    Ucp20260825,
}

impl Edition {
    /// Where a capability's prose lives under `{host}/{version}/specification/`: 2026-08-25
    /// moved the shopping capabilities under their vertical (CHANGES 1.6).
    fn spec_path(self, capability: Capability) -> &'static str {
        match (self, capability) {
            (Self::Ucp20260408, Capability::CatalogSearch) => "catalog/search",
            (Self::Ucp20260408, Capability::CatalogLookup) => "catalog/lookup",
            (Self::Ucp20260408, Capability::Cart) => "cart",
            (Self::Ucp20260825, Capability::CatalogSearch) => "shopping/catalog/search",
            (Self::Ucp20260825, Capability::CatalogLookup) => "shopping/catalog/lookup",
            (Self::Ucp20260825, Capability::Cart) => "shopping/cart",
            (Self::Ucp20260408, Capability::Checkout) => "checkout",
            (Self::Ucp20260825, Capability::Checkout) => "shopping/checkout",
            (Self::Ucp20260408, Capability::Order) => "order",
            (Self::Ucp20260825, Capability::Order) => "shopping/order",
            // Both releases' own examples link the extensions without the vertical.
            (_, Capability::Fulfillment) => "fulfillment",
            (_, Capability::Discount) => "discount",
        }
    }

    fn overview_path(self) -> &'static str {
        match self {
            Self::Ucp20260408 => "overview",
            Self::Ucp20260825 => "overview/",
        }
    }
}

/// The release one call is answered in: its version string and wire layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Release {
    pub version: &'static str,
    pub edition: Edition,
    /// The checkout extensions in force for the call: all of them, unless the agent's
    /// profile names capabilities and leaves some out (OVR-005).
    pub extensions: Extensions,
}

/// Which of `Capability::CHECKOUT_EXTENSIONS` a call's answers declare.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Extensions {
    pub fulfillment: bool,
    pub discount: bool,
}

impl Extensions {
    pub const ALL: Extensions = Extensions {
        fulfillment: true,
        discount: true,
    };

    pub fn holds(self, capability: Capability) -> bool {
        match capability {
            Capability::Fulfillment => self.fulfillment,
            Capability::Discount => self.discount,
            _ => false,
        }
    }
}

impl Release {
    /// The release with only the extensions `agreed` keeps (the agent's intersection).
    pub fn agreed(self, agreed: impl Fn(Capability) -> bool) -> Release {
        Release {
            extensions: Extensions {
                fulfillment: self.extensions.fulfillment && agreed(Capability::Fulfillment),
                discount: self.extensions.discount && agreed(Capability::Discount),
            },
            ..self
        }
    }
}

impl Namespace {
    pub const BCP: Namespace = Namespace {
        service: "br.dev.bcp.shopping",
        spec_host: "https://bcp.dev.br",
        version: BCP_VERSION,
        supported_versions: BCP_SUPPORTED_VERSIONS,
        profile_paths: &["/.well-known/bcp", "/.well-known/ucp.json"],
        unnegotiated: BCP_VERSION,
        answers_negotiated: false,
        edition_of: |_| Edition::Ucp20260408,
    };

    /// Every version served, newest first.
    pub fn versions(&self) -> impl Iterator<Item = &'static str> + use<> {
        std::iter::once(self.version).chain(self.supported_versions.iter().copied())
    }

    /// The release a call is answered in, given the version negotiated for it (if any).
    pub fn release(&self, negotiated: Option<&'static str>) -> Release {
        let version = match negotiated {
            Some(version) if self.answers_negotiated => version,
            Some(_) => self.version,
            None => self.unnegotiated,
        };
        Release {
            version,
            edition: (self.edition_of)(version),
            extensions: Extensions::ALL,
        }
    }

    pub fn capability_name(&self, capability: Capability) -> String {
        format!("{}.{}", self.service, capability.suffix())
    }

    pub fn spec_url(&self, capability: Capability, version: &str) -> String {
        format!(
            "{}/{version}/specification/{}",
            self.spec_host,
            (self.edition_of)(version).spec_path(capability)
        )
    }

    pub fn schema_url(&self, capability: Capability, version: &str) -> String {
        format!(
            "{}/{version}/schemas/shopping/{}",
            self.spec_host,
            capability.schema_file()
        )
    }

    pub fn service_spec_url(&self, version: &str) -> String {
        format!(
            "{}/{version}/specification/{}",
            self.spec_host,
            (self.edition_of)(version).overview_path()
        )
    }

    pub fn service_schema_url(&self, version: &str) -> String {
        format!(
            "{}/{version}/services/shopping/mcp.openrpc.json",
            self.spec_host
        )
    }

    /// The REST binding's OpenAPI document at `version`.
    pub fn rest_schema_url(&self, version: &str) -> String {
        format!(
            "{}/{version}/services/shopping/rest.openapi.json",
            self.spec_host
        )
    }

    /// The response envelope carrying the capability of the operation and, for checkout, the
    /// extensions in force for the call.
    pub fn envelope(&self, release: Release, capability: Capability, status: Status) -> Ucp {
        let mut capabilities = BTreeMap::new();
        let extensions = Capability::CHECKOUT_EXTENSIONS
            .into_iter()
            .filter(|extension| {
                extension.extends() == Some(capability) && release.extensions.holds(*extension)
            });
        for named in std::iter::once(capability).chain(extensions) {
            capabilities.insert(
                self.capability_name(named),
                vec![CapabilityVersion {
                    version: release.version,
                }],
            );
        }
        Ucp {
            version: release.version,
            status: match status {
                Status::Success => None,
                Status::Error => Some("error"),
            },
            capabilities,
            payment_handlers: None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Success,
    Error,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct CapabilityVersion {
    pub version: &'static str,
}

/// The `ucp` key of every response.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Ucp {
    #[schemars(regex(pattern = r"^\d{4}-\d{2}-\d{2}$"))]
    pub version: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(extend("enum" = ["success", "error"]))]
    pub status: Option<&'static str>,
    pub capabilities: BTreeMap<String, Vec<CapabilityVersion>>,
    /// Checkout responses only (PAY-003: required there, possibly empty): the handlers the
    /// business takes for this checkout, keyed by handler name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub payment_handlers: Option<BTreeMap<String, Vec<HandlerDeclaration>>>,
}

/// A payment handler as a checkout response declares it (`payment_handler.json`
/// `response_schema`).
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct HandlerDeclaration {
    pub id: String,
    pub version: &'static str,
    /// The instrument types the handler takes (`[{"type": "pix"}]` for BCP's Pix).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub available_instruments: Vec<serde_json::Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub config: Option<serde_json::Value>,
}

/// BCP's Pix handler (`br.dev.bcp.pix`, pix-payment-handler.md "Handler Declaration") as
/// profiles and checkout answers declare it: added to `registry` under its own name.
pub fn declare_pix(
    registry: &mut BTreeMap<String, Vec<HandlerDeclaration>>,
    id: &str,
    version: &'static str,
) {
    registry.insert(
        "br.dev.bcp.pix".to_owned(),
        vec![HandlerDeclaration {
            id: id.to_owned(),
            version,
            available_instruments: vec![serde_json::json!({"type": "pix"})],
            config: Some(serde_json::json!({"environment": "production"})),
        }],
    );
}

/// The handlers the bridge itself completes with, as the profile and checkout answers both
/// declare them (PAY-003; overview.md: the business advertises its handlers in its profile):
/// one registry entry named under the namespace's own `service`, none when the buyer always
/// pays on the store's page.
pub fn handler_registry<'a>(
    service: &str,
    version: &'static str,
    ids: impl IntoIterator<Item = &'a str>,
) -> BTreeMap<String, Vec<HandlerDeclaration>> {
    let declared: Vec<HandlerDeclaration> = ids
        .into_iter()
        .map(|id| HandlerDeclaration {
            id: id.to_owned(),
            version,
            available_instruments: Vec::new(),
            config: None,
        })
        .collect();
    let mut registry = BTreeMap::new();
    if !declared.is_empty() {
        registry.insert(format!("{service}.bridge_payment"), declared);
    }
    registry
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn answers_carry_the_negotiated_version_everywhere() {
        // NEG-007
        let ucp = Namespace::UCP;
        let old = ucp.envelope(
            ucp.release(Some("2026-04-08")),
            Capability::Cart,
            Status::Success,
        );
        let wire = serde_json::to_value(&old).unwrap();
        assert_eq!(wire["version"], "2026-04-08");
        assert_eq!(
            wire["capabilities"]["dev.ucp.shopping.cart"][0]["version"],
            "2026-04-08"
        );
        let new = ucp.envelope(
            ucp.release(Some("2026-08-25")),
            Capability::Cart,
            Status::Success,
        );
        assert_eq!(serde_json::to_value(&new).unwrap()["version"], "2026-08-25");
    }
}
