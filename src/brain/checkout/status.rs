//! The status lifecycle (checkout.md "Checkout Status Lifecycle"): which of `incomplete`,
//! `requires_escalation`, `ready_for_complete`, `completed`, `canceled` a checkout the store
//! holds is in, and the messages that say why, each naming what is missing by its JSONPath.

use crate::model::checkout::{CheckoutState, CodeRefusal, EscalationReason, MethodKind, Stage};
use crate::protocol::{Message, MessageCode, Severity};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Incomplete,
    RequiresEscalation,
    ReadyForComplete,
    CompleteInProgress,
    Completed,
    Canceled,
}

impl Status {
    /// CHK-033: the six values of the `status` enum.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Incomplete => "incomplete",
            Self::RequiresEscalation => "requires_escalation",
            Self::ReadyForComplete => "ready_for_complete",
            Self::CompleteInProgress => "complete_in_progress",
            Self::Completed => "completed",
            Self::Canceled => "canceled",
        }
    }

    pub fn is_terminal(self) -> bool {
        matches!(self, Self::Completed | Self::Canceled)
    }
}

/// A checkout with the status the brain judged and the messages for it.
#[derive(Debug, Clone)]
pub struct Judged {
    pub state: CheckoutState,
    pub status: Status,
    pub messages: Vec<Message>,
    /// The Pix charge the checkout waits on, shown in `payment.instruments`.
    pub pix: Option<super::pix::Shown>,
}

fn missing(path: String, content: &str) -> Message {
    Message::error(MessageCode::Missing, content, Severity::Recoverable).at(path)
}

/// What the buyer or agent still has to provide, in the order an agent fills it in.
fn gaps(state: &CheckoutState) -> Vec<Message> {
    let mut out = Vec::new();
    if state.lines.is_empty() {
        out.push(missing(
            "$.line_items".to_owned(),
            "The checkout has no line items: add at least one",
        ));
    }
    if state.needs_email && state.buyer.email.is_none() {
        out.push(missing(
            "$.buyer.email".to_owned(),
            "The store needs the buyer's email to place the order",
        ));
    }
    if !state.needs_fulfillment {
        return out;
    }
    if state.fulfillment.is_empty() {
        out.push(missing(
            "$.fulfillment.methods".to_owned(),
            "Give a shipping destination so the store can offer its delivery options",
        ));
    }
    for (m, method) in state.fulfillment.iter().enumerate() {
        if method.kind == MethodKind::Shipping && method.selected_destination.is_none() {
            out.push(missing(
                format!("$.fulfillment.methods[{m}].selected_destination_id"),
                "Give a shipping destination so the store can offer its delivery options",
            ));
            continue;
        }
        for (g, group) in method.groups.iter().enumerate() {
            if group.options.is_empty() {
                out.push(
                    Message::error(
                        MessageCode::FulfillmentUnavailable,
                        "The store offers no delivery option for this destination",
                        Severity::RequiresBuyerInput,
                    )
                    .at(format!("$.fulfillment.methods[{m}].groups[{g}]")),
                );
            } else if group.selected_option.is_none() {
                out.push(missing(
                    format!("$.fulfillment.methods[{m}].groups[{g}].selected_option_id"),
                    "Choose one of the store's delivery options for these items",
                ));
            }
        }
    }
    out
}

/// The model names the store's refusal; the wire code is the protocol's, so the mapping
/// lives here rather than in the model.
fn refusal_code(refusal: CodeRefusal) -> MessageCode {
    match refusal {
        CodeRefusal::Expired => MessageCode::DiscountCodeExpired,
        CodeRefusal::Invalid => MessageCode::DiscountCodeInvalid,
        CodeRefusal::AlreadyApplied => MessageCode::DiscountCodeAlreadyApplied,
        CodeRefusal::CombinationDisallowed => MessageCode::DiscountCodeCombinationDisallowed,
        CodeRefusal::NotLoggedIn => MessageCode::DiscountCodeUserNotLoggedIn,
        CodeRefusal::Ineligible => MessageCode::DiscountCodeUserIneligible,
    }
}

/// DSC: a refused code is a warning on its place in `discounts.codes`, in the store's words.
fn refusals(state: &CheckoutState) -> Vec<Message> {
    state
        .refused_codes
        .iter()
        .map(|refused| {
            let index = state
                .codes
                .iter()
                .position(|code| code.eq_ignore_ascii_case(&refused.code));
            let message = Message::warning(
                refusal_code(refused.refusal),
                super::super::untrusted::line(
                    &refused.reason,
                    super::super::untrusted::MESSAGE_MAX,
                ),
            );
            match index {
                Some(index) => message.at(format!("$.discounts.codes[{index}]")),
                None => message,
            }
        })
        .collect()
}

fn escalation_message(reason: EscalationReason) -> Message {
    match reason {
        EscalationReason::Payment => Message::error(
            MessageCode::PaymentRequired,
            "The buyer pays on the store's own page: hand off with continue_url",
            Severity::RequiresBuyerInput,
        )
        .at("$.payment"),
        EscalationReason::Review => Message::error(
            MessageCode::BuyerReviewRequired,
            "The store needs the buyer to review this checkout on its page",
            Severity::RequiresBuyerReview,
        ),
        EscalationReason::Login => Message::error(
            MessageCode::IdentityRequired,
            "The store needs the buyer to sign in on its page",
            Severity::RequiresBuyerInput,
        ),
    }
}

/// The status of what the store holds. An open checkout with nothing missing is
/// `ready_for_complete` only when the bridge can complete it itself (a handler it may place
/// with); otherwise the buyer has to go to the store (CHK-014, CHK-015).
pub fn judge(state: CheckoutState) -> Judged {
    let mut messages = refusals(&state);
    let status = match &state.stage {
        Stage::Canceled => Status::Canceled,
        Stage::Placed(_) => match state.escalation {
            // The order exists but the buyer must still pay on the store's page.
            Some(reason) if state.continue_url.is_some() => {
                messages.push(escalation_message(reason));
                Status::RequiresEscalation
            }
            _ => Status::Completed,
        },
        Stage::Open => {
            let mut gaps = gaps(&state);
            gaps.extend(super::requirements::gaps(&state));
            let store_page_only = super::requirements::escalations(&state);
            if !gaps.is_empty() {
                messages.extend(gaps);
                Status::Incomplete
            } else if !store_page_only.is_empty() {
                messages.extend(store_page_only);
                Status::RequiresEscalation
            } else if let Some(reason) = state.escalation {
                messages.push(escalation_message(reason));
                Status::RequiresEscalation
            } else if state.handlers.is_empty() {
                messages.push(escalation_message(EscalationReason::Payment));
                Status::RequiresEscalation
            } else {
                Status::ReadyForComplete
            }
        }
    };
    Judged {
        state,
        status,
        messages,
        pix: None,
    }
}
