//! What an update changes, for the full replacement an update is (issue 36 item 1): whether
//! the lines asked for are the ones held, which options are chosen and offered, and the
//! message for a part the store cannot take.

use std::collections::BTreeMap;

use crate::model::checkout::{CheckoutState, FulfillmentGroup};
use crate::model::{CartLine, CartLineInput};
use crate::protocol::{Message, MessageCode, Severity};

/// Whether `wanted` asks for exactly the items and quantities `held` has, in any order and
/// whatever line ids the agent sent with them.
pub(super) fn same_lines(wanted: &[CartLineInput], held: &[CartLine]) -> bool {
    let mut counts: BTreeMap<&str, i64> = BTreeMap::new();
    for line in wanted {
        *counts.entry(line.item_id.as_str()).or_default() += i64::from(line.quantity);
    }
    for line in held {
        *counts.entry(line.variant_id.as_str()).or_default() -= i64::from(line.quantity);
    }
    counts.values().all(|count| *count == 0)
}

/// Where a store says it cannot hold the lines asked for.
pub(super) fn names_lines(path: &str) -> bool {
    matches!(path, "$.line_items" | "$.checkout.line_items")
}

pub(super) fn lines_refused(reason: String) -> Message {
    Message::error(
        MessageCode::Invalid,
        format!("The checkout's lines were not changed: {reason}"),
        Severity::Recoverable,
    )
    .at("$.line_items")
}

fn groups(state: &CheckoutState) -> impl Iterator<Item = &FulfillmentGroup> {
    state.fulfillment.iter().flat_map(|method| &method.groups)
}

pub(super) fn selected(state: &CheckoutState, group: &str, option: &str) -> bool {
    groups(state).any(|held| held.id == group && held.selected_option.as_deref() == Some(option))
}

pub(super) fn offered(state: &CheckoutState, group: &str, option: &str) -> bool {
    groups(state).any(|held| held.id == group && held.options.iter().any(|o| o.id == option))
}

/// `(group, option)` for every group with a selection.
pub(super) fn selections(state: &CheckoutState) -> Vec<(String, String)> {
    groups(state)
        .filter_map(|group| Some((group.id.clone(), group.selected_option.clone()?)))
        .collect()
}

/// The path of a group's selection in the checkout answer.
pub(super) fn option_path(state: &CheckoutState, group: &str) -> Option<String> {
    state
        .fulfillment
        .iter()
        .enumerate()
        .find_map(|(m, method)| {
            let g = method.groups.iter().position(|held| held.id == group)?;
            Some(format!(
                "$.fulfillment.methods[{m}].groups[{g}].selected_option_id"
            ))
        })
}
