//! The protocol brain: every BCP rule, written once over the internal model and the
//! `Platform` port. Tool handlers decode arguments, call one method here, and send back the
//! JSON it returns.

pub mod address;
pub mod cart;
pub mod checkout;
pub mod cursor;
pub mod filters;
pub mod fiscal;
pub mod handoff;
pub mod limits;
mod memo;
pub mod nfe;
pub mod render;
pub mod selection;
pub mod untrusted;

mod catalog;

use serde::Serialize;

use crate::platform::{CartPort, CatalogPort, PlatformError, SharedPlatform, StoreInfo};
use crate::protocol::answer::{Answer, Outcome};
use crate::protocol::catalog::ErrorResponse;
use crate::protocol::envelope::{Status, Ucp};
use crate::protocol::{Capability, Message, MessageCode, Namespace, Release};

pub use fiscal::SellerConfig;
pub use handoff::{CartConfig, CheckoutRewrite};
pub use limits::LimitsConfig;

#[derive(Debug, thiserror::Error)]
pub enum BrainError {
    /// The request is well-formed JSON but asks for something impossible (-32602).
    #[error("{path}: {message}")]
    InvalidParams { path: String, message: String },
    #[error(transparent)]
    Platform(#[from] PlatformError),
    #[error("internal error: {0}")]
    Internal(String),
}

impl BrainError {
    /// `path` names the argument in JSONPath, as schema errors do (`$.catalog.ids`); a path
    /// written from the arguments' root (`catalog.ids`) gets its `$.`, so every -32602 spells
    /// paths one way.
    pub fn invalid(path: impl Into<String>, message: impl Into<String>) -> Self {
        let path = path.into();
        let path = if path.starts_with('$') {
            path
        } else {
            format!("$.{path}")
        };
        Self::InvalidParams {
            path,
            message: message.into(),
        }
    }
}

pub struct Brain {
    platform: SharedPlatform,
    namespace: Namespace,
    limits: LimitsConfig,
    /// The store's checkout URL as buyers are sent to it (`continue_url`).
    continue_urls: CheckoutRewrite,
    /// The checkout rules, when the platform implements the checkout port.
    checkout_rules: Option<std::sync::Arc<checkout::CheckoutBrain>>,
    /// Where placed orders' events go (`[order_webhooks]`), when enabled.
    order_events: Option<std::sync::Arc<dyn checkout::OrderEvents>>,
    /// BCP's fiscal identity: on the BCP door only (`with_fiscal`).
    fiscal: Option<fiscal::Fiscal>,
}

impl Brain {
    pub fn new(
        platform: SharedPlatform,
        namespace: Namespace,
        limits: LimitsConfig,
        cart: &CartConfig,
    ) -> Self {
        Self {
            platform,
            namespace,
            limits,
            continue_urls: CheckoutRewrite::new(cart),
            checkout_rules: None,
            order_events: None,
            fiscal: None,
        }
    }

    /// Keys of the store's checkout URL the agent's attribution may never set.
    pub fn with_reserved_checkout_params(mut self, reserved: &'static [&'static str]) -> Self {
        self.continue_urls = self.continue_urls.with_reserved(reserved);
        self
    }

    pub fn store(&self) -> &StoreInfo {
        self.platform.info()
    }

    pub fn platform(&self) -> &SharedPlatform {
        &self.platform
    }

    fn catalog(&self) -> &dyn CatalogPort {
        self.platform.catalog.as_ref()
    }

    fn carts(&self) -> &dyn CartPort {
        self.platform.carts.as_ref()
    }

    pub fn namespace(&self) -> &Namespace {
        &self.namespace
    }

    pub fn limits(&self) -> &LimitsConfig {
        &self.limits
    }

    /// The typed answer serialised once; the transport writes these bytes as they are.
    fn to_json<T: Serialize>(value: &T) -> Result<Answer, BrainError> {
        Answer::encode(value, Outcome::Success)
            .map_err(|error| BrainError::Internal(error.to_string()))
    }

    /// A business outcome without a resource (`ucp.status: "error"`).
    fn business_error(
        &self,
        release: Release,
        capability: Capability,
        messages: Vec<Message>,
        continue_url: Option<String>,
    ) -> Result<Answer, BrainError> {
        let ucp = self.namespace.envelope(release, capability, Status::Error);
        Self::error_answer(ucp, messages, continue_url)
    }

    fn error_answer(
        ucp: Ucp,
        messages: Vec<Message>,
        continue_url: Option<String>,
    ) -> Result<Answer, BrainError> {
        let reason = messages
            .first()
            .map(|message| message.code.as_str().to_owned());
        let response = ErrorResponse {
            ucp,
            messages,
            continue_url,
        };
        Answer::encode(&response, Outcome::BusinessError)
            .map(|answer| answer.with_reason(reason))
            .map_err(|error| BrainError::Internal(error.to_string()))
    }

    /// NEG-002: the agent's profile declares the namespace's capabilities, but not the one of
    /// this operation at the negotiated version. A business outcome, not a protocol error.
    pub fn capabilities_incompatible(
        &self,
        release: Release,
        capability: Capability,
    ) -> Result<Answer, BrainError> {
        let name = self.namespace.capability_name(capability);
        let mut ucp = self.namespace.envelope(release, capability, Status::Error);
        ucp.capabilities.clear();
        Self::error_answer(
            ucp,
            vec![Message::error(
                MessageCode::CapabilitiesIncompatible,
                format!(
                    "the agent profile does not declare {name} at the negotiated protocol version, so this operation has no capability in common"
                ),
                crate::protocol::Severity::Unrecoverable,
            )],
            self.storefront_url(),
        )
    }

    /// The shop's home page with the configured attribution, for outcomes with no cart.
    fn storefront_url(&self) -> Option<String> {
        self.continue_urls.rewrite(&self.store().storefront_url)
    }
}
