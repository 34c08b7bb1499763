//! BCP's Brazilian extensions in the BCP profile (never in UCP's): the fiscal identity while
//! `[seller]` is configured (fiscal-identity.md "Discovery"), and the return policy of
//! `[returns]` (returns.md: the profile's `config` is the protocol source of the withdrawal
//! notice agents show before completion), and the NF-e reference on orders while the store's
//! adapter reads invoices (nfe.md "Discovery"). Each is declared only where its parent
//! capability is served.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::protocol::profile::{CapabilityEntry, Extends, Profile};
use crate::protocol::{Capability, Namespace};
use crate::settings::ConfigProblem;

/// The Consumer Defence Code's minimum for distance sales (art. 49: seven days).
pub const MINIMUM_WITHDRAWAL_DAYS: u32 = 7;

/// `[returns]`: the return policy declared in the BCP profile as
/// `br.dev.bcp.shopping.returns` (left out of the profile when the section is absent).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReturnsConfig {
    /// Calendar days the buyer may withdraw from the purchase, counted from confirmed
    /// delivery; at least 7 (the legal minimum for distance sales), 7 when unset.
    #[serde(default = "minimum_withdrawal_days")]
    #[schemars(range(min = 7, max = 365))]
    pub withdrawal_period_days: u32,
    /// Where the buyer asks for a return: a URL, an e-mail address or a channel's name; it
    /// must include the channel the purchase was made through.
    pub request_channel: Option<String>,
}

fn minimum_withdrawal_days() -> u32 {
    MINIMUM_WITHDRAWAL_DAYS
}

impl ReturnsConfig {
    pub fn problems(&self) -> Vec<ConfigProblem> {
        let mut problems = Vec::new();
        if !(MINIMUM_WITHDRAWAL_DAYS..=365).contains(&self.withdrawal_period_days) {
            problems.push(ConfigProblem::new(
                "returns.withdrawal_period_days",
                "must be between 7 (the legal minimum for distance sales) and 365",
            ));
        }
        if self
            .request_channel
            .as_deref()
            .is_some_and(|channel| channel.trim().is_empty() || channel.len() > 2048)
        {
            problems.push(ConfigProblem::new(
                "returns.request_channel",
                "must name the channel (a URL, an e-mail address or a name), at most 2048 bytes",
            ));
        }
        problems
    }
}

fn entry(
    namespace: &Namespace,
    version: &'static str,
    page: &str,
    schema: &str,
    parents: Vec<String>,
    config: Option<serde_json::Value>,
) -> CapabilityEntry {
    CapabilityEntry {
        version,
        spec: format!("{}/{version}/specification/{page}", namespace.spec_host),
        schema: format!(
            "{}/{version}/schemas/shopping/{schema}",
            namespace.spec_host
        ),
        extends: Some(match <[String; 1]>::try_from(parents) {
            Ok([one]) => Extends::One(one),
            Err(many) => Extends::Many(many),
        }),
        config,
    }
}

/// Adds the Brazilian extensions to the BCP `profile` at `version`, given the capabilities it
/// serves, whether `[seller]` is configured, `[returns]` and whether orders carry their NF-e
/// (`invoices`: the adapter reads the store's invoices).
pub fn declare(
    profile: &mut Profile,
    namespace: &Namespace,
    version: &'static str,
    served: &[Capability],
    seller: bool,
    returns: Option<&ReturnsConfig>,
    invoices: bool,
) {
    if namespace.service != Namespace::BCP.service {
        return;
    }
    let parents: Vec<String> = [Capability::Checkout, Capability::Order]
        .into_iter()
        .filter(|parent| served.contains(parent))
        .map(|parent| namespace.capability_name(parent))
        .collect();
    let capabilities = &mut profile.ucp.capabilities;
    if seller && served.contains(&Capability::Checkout) {
        capabilities.insert(
            format!("{}.fiscal_identity", namespace.service),
            vec![entry(
                namespace,
                version,
                "fiscal-identity",
                "fiscal_identity.json",
                parents,
                None,
            )],
        );
    }
    if let Some(returns) = returns
        && served.contains(&Capability::Order)
    {
        let mut config = json!({"withdrawal_period_days": returns.withdrawal_period_days});
        if let Some(channel) = &returns.request_channel {
            config["request_channel"] = json!(channel.trim());
        }
        capabilities.insert(
            format!("{}.returns", namespace.service),
            vec![entry(
                namespace,
                version,
                "returns",
                "returns.json",
                vec![namespace.capability_name(Capability::Order)],
                Some(config),
            )],
        );
    }
    if invoices && served.contains(&Capability::Order) {
        capabilities.insert(
            format!("{}.nfe", namespace.service),
            vec![entry(
                namespace,
                version,
                "nfe",
                "nfe.json",
                vec![namespace.capability_name(Capability::Order)],
                None,
            )],
        );
    }
}
