//! A store that refuses to place the order for want of a field (as WooCommerce answers 400 to
//! a checkout without the CPF its plugin requires): the agent gets the checkout, `incomplete`,
//! with a recoverable message at the store's path, never a protocol error (issue 37 item 3).
#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use async_trait::async_trait;

use super::*;
use crate::model::BuyerContext;
use crate::model::checkout::{CheckoutSource, CodeOutcome, PaymentHandler};
use crate::platform::checkout::{CheckoutOutcome, CheckoutPort};
use crate::platform::sample::{self, checkout::APPROVE, checkout::SampleCheckout};
use crate::protocol::Severity;

/// The sample store, refusing every placement as a store whose rule the bridge did not know.
struct Refusing(SampleCheckout);

#[async_trait]
impl CheckoutPort for Refusing {
    fn handlers(&self) -> &[PaymentHandler] {
        self.0.handlers()
    }
    async fn create_checkout(&self, d: &CheckoutDraft) -> Result<CheckoutOutcome, PlatformError> {
        self.0.create_checkout(d).await
    }
    async fn get_checkout(&self, id: &str) -> Result<Option<CheckoutState>, PlatformError> {
        self.0.get_checkout(id).await
    }
    async fn set_lines(
        &self,
        id: &str,
        lines: &[CartLineInput],
    ) -> Result<Option<CheckoutOutcome>, PlatformError> {
        self.0.set_lines(id, lines).await
    }
    async fn set_buyer(&self, id: &str, b: &Buyer) -> Result<Option<CheckoutState>, PlatformError> {
        self.0.set_buyer(id, b).await
    }
    async fn set_destination(
        &self,
        id: &str,
        a: &Address,
    ) -> Result<Option<CheckoutState>, PlatformError> {
        self.0.set_destination(id, a).await
    }
    async fn select_option(
        &self,
        id: &str,
        group: &str,
        option: &str,
    ) -> Result<Option<CheckoutState>, PlatformError> {
        self.0.select_option(id, group, option).await
    }
    async fn apply_code(&self, id: &str, code: &str) -> Result<Option<CodeOutcome>, PlatformError> {
        self.0.apply_code(id, code).await
    }
    async fn remove_code(
        &self,
        id: &str,
        code: &str,
    ) -> Result<Option<CheckoutState>, PlatformError> {
        self.0.remove_code(id, code).await
    }
    async fn place(&self, _: &str, _: Option<&str>) -> Result<Option<Placement>, PlatformError> {
        Err(PlatformError::InvalidAt {
            path: "$.buyer.taxpayer_id".into(),
            message: "O CPF é obrigatório.".into(),
        })
    }
    async fn cancel_checkout(&self, id: &str) -> Result<Option<CheckoutState>, PlatformError> {
        self.0.cancel_checkout(id).await
    }
}

#[tokio::test]
async fn a_store_refusal_at_complete_is_a_recoverable_message_not_an_error() {
    let port = Refusing(SampleCheckout::new(
        sample::open(&toml::Table::new()).unwrap(),
    ));
    let brain = CheckoutBrain::new(Arc::new(port));
    let draft = CheckoutDraft {
        source: CheckoutSource::Lines(vec![CartLineInput {
            item_id: "prod_chinelo_praia_azm_3334".into(),
            quantity: 1,
        }]),
        context: BuyerContext::default(),
        buyer: Buyer::default(),
    };
    let id = brain.create(&draft).await.unwrap().0.state.id;
    let update = CheckoutUpdate {
        address: Some(Address {
            street_address: Some("Rua Augusta 100".into()),
            address_country: Some("BR".into()),
            ..Address::default()
        }),
        selections: vec![("grp_1".into(), "pac".into())],
        ..CheckoutUpdate::default()
    };
    brain.update(&id, &update).await.unwrap();
    let completion = Completion {
        idempotency_key: "k1".into(),
        handler_id: Some(APPROVE.into()),
    };
    let judged = brain.complete(&id, &completion).await.unwrap();
    assert_eq!(judged.status, Status::Incomplete);
    let first = &judged.messages[0];
    assert_eq!(first.path.as_deref(), Some("$.buyer.taxpayer_id"));
    assert_eq!(first.severity, Some(Severity::Recoverable));
    assert!(
        first.content.contains("O CPF é obrigatório."),
        "{}",
        first.content
    );
    // Nothing was placed: a fresh key may try again once the agent gave what was missing.
    let again = Completion {
        idempotency_key: "k2".into(),
        ..completion
    };
    assert_eq!(
        brain.complete(&id, &again).await.unwrap().status,
        Status::Incomplete
    );
}
