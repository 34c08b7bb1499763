//! "Placed at most once": which Complete Checkout owns each checkout. The idempotency layer
//! replays a stored answer for a repeated key; this ledger holds what that layer cannot see,
//! the order a key already placed and a completion still running, so that no interleaving of
//! retries and new keys ever reaches the store's place operation twice.
//!
//! The narrow retry rule (checkout.md "Complete Checkout"): only the identical request under
//! the SAME key may be tried again, and only when the first attempt's outcome is unknown (the
//! store did not answer). A new key while one is running or after the order exists places
//! nothing.

use std::collections::HashMap;
use std::sync::Mutex;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Entry {
    /// A completion under this key is talking to the store now.
    Running(String),
    /// The store did not answer this key's placement: the order may or may not exist.
    Unsettled(String),
    /// This key placed the order.
    Placed(String),
}

/// What a Complete Checkout may do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Admission {
    /// Place the order; report back with `settle`.
    Place,
    /// The same key's earlier attempt may have placed it: read the store first, place only
    /// if the store still holds the checkout open.
    Recheck,
    /// This key's completion is running: `complete_in_progress`.
    InProgress,
    /// Another key's completion is running or unsettled: nothing is placed.
    Busy,
    /// The order exists (placed under `key` — the same key is a replay).
    Placed { same_key: bool },
}

/// How a placement attempt ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Settled {
    Placed,
    /// The store refused (declined, invalid): the checkout is open again for a new key.
    Refused,
    /// No answer: the same key may retry after a re-check.
    Unknown,
}

#[derive(Default)]
pub struct Ledger {
    entries: Mutex<HashMap<String, Entry>>,
}

impl Ledger {
    pub fn admit(&self, checkout: &str, key: &str) -> Admission {
        let Ok(mut entries) = self.entries.lock() else {
            return Admission::Busy;
        };
        match entries.get(checkout).cloned() {
            None => {
                entries.insert(checkout.to_owned(), Entry::Running(key.to_owned()));
                Admission::Place
            }
            Some(Entry::Running(owner)) if owner == key => Admission::InProgress,
            Some(Entry::Unsettled(owner)) if owner == key => {
                entries.insert(checkout.to_owned(), Entry::Running(key.to_owned()));
                Admission::Recheck
            }
            Some(Entry::Running(_) | Entry::Unsettled(_)) => Admission::Busy,
            Some(Entry::Placed(owner)) => Admission::Placed {
                same_key: owner == key,
            },
        }
    }

    /// Whether a completion is running or unsettled (updates are refused meanwhile).
    pub fn frozen(&self, checkout: &str) -> bool {
        self.entries.lock().is_ok_and(|entries| {
            matches!(
                entries.get(checkout),
                Some(Entry::Running(_) | Entry::Unsettled(_))
            )
        })
    }

    pub fn settle(&self, checkout: &str, key: &str, how: Settled) {
        let Ok(mut entries) = self.entries.lock() else {
            return;
        };
        if !owns(entries.get(checkout), key) {
            return;
        }
        match how {
            Settled::Placed => {
                entries.insert(checkout.to_owned(), Entry::Placed(key.to_owned()));
            }
            Settled::Refused => {
                entries.remove(checkout);
            }
            Settled::Unknown => {
                entries.insert(checkout.to_owned(), Entry::Unsettled(key.to_owned()));
            }
        }
    }

    /// The store already holds the order (seen on a read): remember it for later keys.
    pub fn placed_elsewhere(&self, checkout: &str) {
        if let Ok(mut entries) = self.entries.lock() {
            entries
                .entry(checkout.to_owned())
                .or_insert_with(|| Entry::Placed(String::new()));
        }
    }

    /// A cancelled or vanished checkout keeps no entry.
    pub fn forget(&self, checkout: &str) {
        if let Ok(mut entries) = self.entries.lock() {
            entries.remove(checkout);
        }
    }
}

fn owns(entry: Option<&Entry>, key: &str) -> bool {
    matches!(entry, Some(Entry::Running(owner) | Entry::Unsettled(owner) | Entry::Placed(owner)) if owner == key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_key_places_once_and_replays_after() {
        // CHK-048 and checkout.md "Complete Checkout": the order is placed at most once.
        let ledger = Ledger::default();
        assert_eq!(ledger.admit("c1", "k1"), Admission::Place);
        assert_eq!(ledger.admit("c1", "k1"), Admission::InProgress);
        assert_eq!(ledger.admit("c1", "k2"), Admission::Busy);
        assert!(ledger.frozen("c1"));
        ledger.settle("c1", "k1", Settled::Placed);
        assert_eq!(
            ledger.admit("c1", "k1"),
            Admission::Placed { same_key: true }
        );
        assert_eq!(
            ledger.admit("c1", "k2"),
            Admission::Placed { same_key: false }
        );
        assert!(!ledger.frozen("c1"));
    }

    #[test]
    fn only_the_same_key_retries_an_unknown_outcome() {
        // CHK-094: the narrow lost-response retry: identical request, same key, never a new key.
        let ledger = Ledger::default();
        assert_eq!(ledger.admit("c1", "k1"), Admission::Place);
        ledger.settle("c1", "k1", Settled::Unknown);
        assert_eq!(ledger.admit("c1", "k2"), Admission::Busy);
        assert_eq!(ledger.admit("c1", "k1"), Admission::Recheck);
        ledger.settle("c1", "k1", Settled::Placed);
        assert_eq!(
            ledger.admit("c1", "k1"),
            Admission::Placed { same_key: true }
        );
    }

    #[test]
    fn a_refusal_frees_the_checkout_for_a_fresh_key() {
        let ledger = Ledger::default();
        assert_eq!(ledger.admit("c1", "k1"), Admission::Place);
        ledger.settle("c1", "k1", Settled::Refused);
        assert_eq!(ledger.admit("c1", "k2"), Admission::Place);
        // A stale settle from the first key does not touch the second key's entry.
        ledger.settle("c1", "k1", Settled::Placed);
        assert_eq!(ledger.admit("c1", "k2"), Admission::InProgress);
    }
}
