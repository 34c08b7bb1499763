//! What the store says it requires before it takes an order (`CheckoutState::requirements`,
//! read by the adapter from the store itself), judged against the checkout: each one unmet is
//! one recoverable message at the path the agent fills (checkout.md "The path Field"), in
//! words that say how; a field only the store's page can collect is a hand-off with
//! `continue_url`. Never a protocol error (issue 37 item 3).

use crate::brain::address::NO_NUMBER;
use crate::brain::untrusted;
use crate::model::checkout::{CheckoutState, MethodKind};
use crate::model::fiscal::{Requirement, TaxpayerKind};
use crate::protocol::{Message, MessageCode, Severity};

/// Where an agent gives the buyer's CPF/CNPJ (BCP fiscal identity).
pub const TAXPAYER_PATH: &str = "$.buyer.taxpayer_id";

/// The selected shipping destination's path, e.g. `$.fulfillment.methods[0].destinations[0]`.
fn destination_path(state: &CheckoutState) -> String {
    let found = state
        .fulfillment
        .iter()
        .enumerate()
        .find_map(|(m, method)| {
            let selected = method.selected_destination.as_ref()?;
            (method.kind == MethodKind::Shipping)
                .then(|| {
                    method
                        .destinations
                        .iter()
                        .position(|place| place.id == *selected)
                        .map(|d| format!("$.fulfillment.methods[{m}].destinations[{d}]"))
                })
                .flatten()
        });
    found.unwrap_or_else(|| "$.fulfillment.methods[0].destinations[0]".to_owned())
}

fn kinds_words(kinds: &[TaxpayerKind]) -> String {
    let accepts = |kind| kinds.is_empty() || kinds.contains(&kind);
    let mut forms = Vec::new();
    if accepts(TaxpayerKind::Cpf) {
        forms.push(r#"{"kind": "cpf", "value": "<the CPF's 11 digits>"}"#);
    }
    if accepts(TaxpayerKind::Cnpj) {
        forms.push(r#"{"kind": "cnpj", "value": "<the CNPJ's 14 characters>"}"#);
    }
    if accepts(TaxpayerKind::Foreign) && !kinds.is_empty() {
        forms.push(r#"{"kind": "id_estrangeiro", "value": "<the foreign document>"}"#);
    }
    forms.join(" or ")
}

/// Where the agent gives what `requirement` asks for; none for a field only the store's
/// page collects.
pub fn path(state: &CheckoutState, requirement: &Requirement) -> Option<String> {
    match requirement {
        Requirement::TaxpayerId { .. } => Some(TAXPAYER_PATH.to_owned()),
        Requirement::HouseNumber => Some(format!("{}.street_address", destination_path(state))),
        // The bairro is written in `extended_address` (docs/merchants/brazil.md).
        Requirement::Neighborhood => Some(format!("{}.extended_address", destination_path(state))),
        Requirement::Other { .. } => None,
    }
}

fn missing(path: Option<String>, content: String) -> Message {
    let message = Message::error(MessageCode::Missing, content, Severity::Recoverable);
    match path {
        Some(path) => message.at(path),
        None => message,
    }
}

/// One recoverable message per requirement the checkout does not meet. The address parts are
/// asked for once there is an address (until then the destination itself is what is missing).
pub fn gaps(state: &CheckoutState) -> Vec<Message> {
    let mut out = Vec::new();
    for requirement in &state.requirements {
        match requirement {
            Requirement::TaxpayerId { kinds } => {
                let met = state
                    .buyer
                    .taxpayer_id
                    .as_ref()
                    .is_some_and(|document| kinds.is_empty() || kinds.contains(&document.kind));
                if !met {
                    out.push(missing(
                        path(state, requirement),
                        format!(
                            "The store needs the buyer's CPF or CNPJ for the invoice (NF-e): send buyer.taxpayer_id as {}",
                            kinds_words(kinds)
                        ),
                    ));
                }
            }
            Requirement::HouseNumber => {
                if state
                    .address
                    .as_ref()
                    .is_some_and(|address| address.number.is_none())
                {
                    out.push(missing(
                        path(state, requirement),
                        format!(
                            "The store needs the house number of the shipping address: write it after the street in street_address, as \"Rua Doutor Quirino, 1481\" (or \"Rua Doutor Quirino, {NO_NUMBER}\" for a house without one), with address_country \"BR\""
                        ),
                    ));
                }
            }
            Requirement::Neighborhood => {
                if state
                    .address
                    .as_ref()
                    .is_some_and(|address| address.neighborhood.is_none())
                {
                    out.push(missing(
                        path(state, requirement),
                        "The store needs the bairro (neighbourhood) of the shipping address: add it to extended_address marked by the word Bairro, after the complement if there is one, as \"Sala 42 - Bairro Centro\" or \"Bairro Centro\"".to_owned(),
                    ));
                }
            }
            Requirement::Other { .. } => {}
        }
    }
    out
}

/// The fields only the store's own page collects: the buyer is handed off for them.
pub fn escalations(state: &CheckoutState) -> Vec<Message> {
    state
        .requirements
        .iter()
        .filter_map(|requirement| match requirement {
            Requirement::Other { key, label } => {
                let named = if label.trim().is_empty() { key } else { label };
                Some(Message::error(
                    MessageCode::Missing,
                    format!(
                        "The store needs \"{}\", which only its own page collects: hand the buyer off with continue_url",
                        untrusted::line(named, 120)
                    ),
                    Severity::RequiresBuyerInput,
                ))
            }
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use std::sync::Arc;

    use super::super::status::{Status, judge};
    use super::super::{CheckoutBrain, CheckoutUpdate};
    use crate::model::checkout::{Address, Buyer, CheckoutDraft, CheckoutSource, CheckoutState};
    use crate::model::fiscal::{Requirement, TaxpayerKind};
    use crate::model::{BuyerContext, CartLineInput};
    use crate::platform::sample::{self, checkout::SampleCheckout};
    use crate::protocol::{MessageCode, Severity};

    /// A sample-store checkout with nothing missing, as the store holds it.
    async fn ready() -> CheckoutState {
        let port = SampleCheckout::new(sample::open(&toml::Table::new()).unwrap());
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
                street_address: Some("Rua Doutor Quirino".into()),
                address_country: Some("BR".into()),
                ..Address::default()
            }),
            selections: vec![("grp_1".into(), "pac".into())],
            ..CheckoutUpdate::default()
        };
        brain.update(&id, &update).await.unwrap();
        let state = brain.get(&id).await.unwrap();
        assert_eq!(state.status, Status::ReadyForComplete);
        state.state
    }

    /// Issue 37 item 3: one recoverable message per unmet requirement, at the field's path.
    #[tokio::test]
    async fn each_unmet_requirement_is_one_recoverable_message_at_its_path() {
        let mut state = ready().await;
        state.requirements = vec![
            Requirement::TaxpayerId {
                kinds: vec![TaxpayerKind::Cpf],
            },
            Requirement::HouseNumber,
            Requirement::Neighborhood,
        ];
        let judged = judge(state.clone());
        assert_eq!(judged.status, Status::Incomplete);
        let paths: Vec<&str> = judged
            .messages
            .iter()
            .filter_map(|message| message.path.as_deref())
            .collect();
        assert_eq!(
            paths,
            [
                "$.buyer.taxpayer_id",
                "$.fulfillment.methods[0].destinations[0].street_address",
                "$.fulfillment.methods[0].destinations[0].extended_address",
            ]
        );
        for message in &judged.messages {
            assert_eq!(message.code, MessageCode::Missing);
            assert_eq!(message.severity, Some(Severity::Recoverable));
        }
        assert!(judged.messages[2].content.contains("Bairro"));
        // Met, they say nothing: a CNPJ is not the CPF this store takes.
        if let Some(address) = &mut state.address {
            address.number = Some("1481".into());
            address.neighborhood = Some("Centro".into());
        }
        state.buyer.taxpayer_id =
            Some(crate::brain::fiscal::taxpayer(TaxpayerKind::Cnpj, "19131243000197").unwrap());
        assert_eq!(judge(state.clone()).messages.len(), 1);
        state.buyer.taxpayer_id =
            Some(crate::brain::fiscal::taxpayer(TaxpayerKind::Cpf, "39053344705").unwrap());
        assert_eq!(judge(state).status, Status::ReadyForComplete);
    }

    /// A field only the store's page collects is a hand-off with continue_url, after the
    /// recoverable gaps are resolved (checkout.md: recoverable errors first).
    #[tokio::test]
    async fn a_field_only_the_store_page_collects_escalates() {
        let mut state = ready().await;
        state.requirements = vec![Requirement::Other {
            key: "billing_ie".into(),
            label: "Inscrição estadual".into(),
        }];
        let judged = judge(state.clone());
        assert_eq!(judged.status, Status::RequiresEscalation);
        assert_eq!(
            judged.messages[0].severity,
            Some(Severity::RequiresBuyerInput)
        );
        assert!(judged.messages[0].content.contains("Inscrição estadual"));
        assert!(judged.state.continue_url.is_some());
        state.requirements.push(Requirement::HouseNumber);
        assert_eq!(judge(state).status, Status::Incomplete);
    }
}
