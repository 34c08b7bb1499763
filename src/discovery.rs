//! The discovery profile (`/.well-known/bcp`): what this store serves, where, in which version.

use std::collections::BTreeMap;

use crate::protocol::envelope::handler_registry;
use crate::protocol::profile::{CapabilityEntry, Extends, Profile, ProfileUcp, ServiceBinding};
use crate::protocol::{Capability, Edition, Namespace};

pub mod brazil;

/// One transport a namespace is served over, and where (a path under the base URL): the
/// MCP endpoint, or the REST binding's base path its OpenAPI `{endpoint}` stands for.
#[derive(Debug, Clone, Copy)]
pub struct Binding<'a> {
    pub transport: &'static str,
    pub path: &'a str,
}

/// The profile for `version` (the current one, or a leaf for an older supported version,
/// which per UCP carries no `supported_versions` of its own). Every entry says the profile's
/// own version and links that release's documents: 2026-08-25 rejects a `dev.ucp.*` entry
/// whose version differs from `ucp.version` (OVR-020, NEG-009). `keys` are the bridge's
/// public signing keys (JWK, with `kid`): published under `keys` at 2026-08-25 and under
/// `signing_keys` at 2026-04-08, where each release's profile schema reads them. `handlers`
/// are the ids of the payment handlers checkout answers can offer.
pub fn profile(
    namespace: &Namespace,
    version: &'static str,
    base_url: &str,
    bindings: &[Binding<'_>],
    capabilities: &[Capability],
    keys: &[serde_json::Value],
    handlers: &[&str],
) -> Profile {
    let mut supported_versions = BTreeMap::new();
    if version == namespace.version {
        for older in namespace.supported_versions {
            supported_versions.insert(
                *older,
                format!("{base_url}{}/{older}", namespace.profile_paths[0]),
            );
        }
    }
    let mut services = BTreeMap::new();
    services.insert(
        namespace.service,
        bindings
            .iter()
            .map(|binding| ServiceBinding {
                version,
                spec: namespace.service_spec_url(version),
                transport: binding.transport,
                schema: match binding.transport {
                    "rest" => namespace.rest_schema_url(version),
                    _ => namespace.service_schema_url(version),
                },
                endpoint: format!("{base_url}{}", binding.path),
            })
            .collect(),
    );
    let capabilities = capabilities
        .iter()
        .map(|capability| {
            (
                namespace.capability_name(*capability),
                vec![CapabilityEntry {
                    version,
                    spec: namespace.spec_url(*capability, version),
                    schema: namespace.schema_url(*capability, version),
                    extends: capability
                        .extends()
                        .map(|parent| Extends::One(namespace.capability_name(parent))),
                    config: None,
                }],
            )
        })
        .collect();
    let (keys, signing_keys) = match (namespace.edition_of)(version) {
        Edition::Ucp20260408 => (Vec::new(), keys.to_vec()),
        _ => (keys.to_vec(), Vec::new()),
    };
    Profile {
        ucp: ProfileUcp {
            version,
            supported_versions,
            services,
            capabilities,
            payment_handlers: handler_registry(
                namespace.service,
                version,
                handlers.iter().copied(),
            ),
        },
        keys,
        signing_keys,
    }
}
