//! What the merchant page shows of the bridge's own traffic since start: calls per tool and
//! outcome, and the last few refusals. One per running bridge (the Prometheus recorder is
//! process-wide, this is not), bounded, and holding no buyer data: a refusal is kept as its
//! tool, outcome, JSON-RPC code and a reason taken from a closed vocabulary or an argument
//! path, never a message or an argument value.

use std::collections::VecDeque;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Instant, SystemTime};

use crate::protocol::answer::Label;

/// Refusals kept; older ones are dropped.
pub const MAX_RECENT_ERRORS: usize = 20;
/// Characters kept of a reason (argument paths are the client's words).
const MAX_REASON_CHARS: usize = 80;

/// One refused or failed call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecentError {
    pub at: SystemTime,
    pub tool: &'static str,
    pub outcome: &'static str,
    /// The JSON-RPC error code; `None` for an answer whose `ucp.status` is `error`.
    pub code: Option<i32>,
    pub reason: String,
}

/// Calls of one tool since start, by outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCounts {
    pub tool: &'static str,
    /// `(outcome, calls)` for every outcome seen at least once.
    pub outcomes: Vec<(&'static str, u64)>,
}

impl ToolCounts {
    pub fn total(&self) -> u64 {
        self.outcomes.iter().map(|(_, calls)| calls).sum()
    }
}

pub struct Activity {
    started: Instant,
    /// The tools counted apart, in the order the page lists them; any other name is counted
    /// as `unknown`.
    tools: Vec<&'static str>,
    /// `[tool][outcome]`, tools in `tools` order plus one slot for unknown names.
    counts: Vec<[AtomicU64; Label::ALL.len()]>,
    recent: Mutex<VecDeque<RecentError>>,
}

impl Activity {
    pub fn new(tools: Vec<&'static str>) -> Self {
        Self {
            started: Instant::now(),
            counts: (0..=tools.len())
                .map(|_| std::array::from_fn(|_| AtomicU64::new(0)))
                .collect(),
            recent: Mutex::new(VecDeque::with_capacity(MAX_RECENT_ERRORS)),
            tools,
        }
    }

    pub fn uptime(&self) -> std::time::Duration {
        self.started.elapsed()
    }

    fn tool_slot(&self, tool: &str) -> (usize, &'static str) {
        self.tools
            .iter()
            .position(|name| *name == tool)
            .map(|index| (index, self.tools[index]))
            .unwrap_or((self.tools.len(), "unknown"))
    }

    /// Counts one answered call.
    pub fn record(&self, tool: &str, label: Label) {
        let (slot, _) = self.tool_slot(tool);
        if let Some(row) = self.counts.get(slot) {
            row[label as usize].fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Keeps one refusal; `reason` is a fixed word or an argument path, never free text.
    pub fn record_error(&self, tool: &str, label: Label, code: Option<i32>, reason: &str) {
        let (_, tool) = self.tool_slot(tool);
        let error = RecentError {
            at: SystemTime::now(),
            tool,
            outcome: label.as_str(),
            code,
            reason: reason.chars().take(MAX_REASON_CHARS).collect(),
        };
        // A poisoned lock only means another thread panicked mid-push: the queue is intact.
        let mut recent = self
            .recent
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if recent.len() == MAX_RECENT_ERRORS {
            recent.pop_front();
        }
        recent.push_back(error);
    }

    /// Every tool with at least one call, in the tool table's order.
    pub fn counts(&self) -> Vec<ToolCounts> {
        let names = self.tools.iter().copied().chain(std::iter::once("unknown"));
        names
            .zip(&self.counts)
            .filter_map(|(tool, row)| {
                let outcomes: Vec<_> = Label::ALL
                    .iter()
                    .zip(row)
                    .map(|(label, calls)| (label.as_str(), calls.load(Ordering::Relaxed)))
                    .filter(|(_, calls)| *calls > 0)
                    .collect();
                (!outcomes.is_empty()).then_some(ToolCounts { tool, outcomes })
            })
            .collect()
    }

    /// The kept refusals, newest first.
    pub fn recent_errors(&self) -> Vec<RecentError> {
        let recent = self
            .recent
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        recent.iter().rev().cloned().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn activity() -> Activity {
        Activity::new(vec!["search_catalog", "get_cart"])
    }

    #[test]
    fn counts_are_per_tool_and_outcome_and_unknown_names_share_one_row() {
        let activity = activity();
        activity.record("search_catalog", Label::Success);
        activity.record("search_catalog", Label::Success);
        activity.record("search_catalog", Label::Invalid);
        activity.record("no_such_tool_1", Label::Invalid);
        activity.record("no_such_tool_2", Label::Invalid);
        let counts = activity.counts();
        assert_eq!(counts.len(), 2);
        assert_eq!(counts[0].tool, "search_catalog");
        assert_eq!(counts[0].outcomes, vec![("success", 2), ("invalid", 1)]);
        assert_eq!(counts[0].total(), 3);
        assert_eq!(counts[1].tool, "unknown");
        assert_eq!(counts[1].total(), 2);
    }

    #[test]
    fn the_error_record_is_bounded_and_newest_first() {
        let activity = activity();
        for index in 0..(MAX_RECENT_ERRORS + 5) {
            activity.record_error(
                "get_cart",
                Label::Invalid,
                Some(-32602),
                &format!("$.id{index}"),
            );
        }
        let recent = activity.recent_errors();
        assert_eq!(recent.len(), MAX_RECENT_ERRORS);
        assert_eq!(recent[0].reason, format!("$.id{}", MAX_RECENT_ERRORS + 4));
        assert_eq!(recent[MAX_RECENT_ERRORS - 1].reason, "$.id5");
    }

    #[test]
    fn reasons_are_cut_short() {
        let activity = activity();
        activity.record_error("get_cart", Label::Invalid, Some(-32602), &"x".repeat(500));
        assert_eq!(activity.recent_errors()[0].reason.len(), MAX_REASON_CHARS);
    }
}
