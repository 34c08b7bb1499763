//! An order the store refused for fields the buyer can still give or fix
//! (`Placement::Refused`): one message per requirement at the path the agent fixes it at,
//! in the store's words; nothing was placed, so the checkout stays as it was and usable.

use crate::model::checkout::Unmet;
use crate::model::fiscal::Requirement;
use crate::protocol::{Message, MessageCode, Severity};

use super::super::untrusted;
use super::{Judged, Status};

pub fn with_unmet(mut judged: Judged, unmet: &[Unmet]) -> Judged {
    let messages = unmet.iter().map(|unmet| {
        let reason = untrusted::line(&unmet.reason, untrusted::MESSAGE_MAX).into_owned();
        match &unmet.requirement {
            // Only the store's own page can collect a field the bridge does not know.
            Requirement::Other { .. } => Message::error(
                MessageCode::Missing,
                format!("{reason} (the store's checkout page, continue_url, collects it)"),
                Severity::RequiresBuyerInput,
            ),
            requirement => {
                let message = Message::error(
                    if unmet.missing {
                        MessageCode::Missing
                    } else {
                        MessageCode::Invalid
                    },
                    reason,
                    Severity::Recoverable,
                );
                match super::requirements::path(&judged.state, requirement) {
                    Some(path) => message.at(path),
                    None => message,
                }
            }
        }
    });
    let mut messages: Vec<Message> = messages.collect();
    // The store said the checkout is not complete: it is not ready until the agent acts.
    if judged.status == Status::ReadyForComplete {
        let escalate = unmet
            .iter()
            .any(|unmet| matches!(unmet.requirement, Requirement::Other { .. }))
            && judged.state.continue_url.is_some();
        judged.status = if escalate {
            Status::RequiresEscalation
        } else {
            Status::Incomplete
        };
    }
    messages.append(&mut judged.messages);
    judged.messages = messages;
    judged
}
