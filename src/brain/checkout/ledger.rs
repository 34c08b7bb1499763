//! "Placed at most once": which Complete Checkout owns each checkout. The idempotency layer
//! replays a stored answer for a repeated key; this ledger holds what that layer cannot see,
//! the order a key already placed and a completion still running, so that no interleaving of
//! retries and new keys ever reaches the store's place operation twice.
//!
//! The narrow retry rule (checkout.md "Complete Checkout"): only the identical request under
//! the SAME key may be tried again, and only when the first attempt's outcome is unknown (the
//! store did not answer). A new key while one is running or after the order exists places
//! nothing.
//!
//! Bounded (issue 35 item 2): entries are keyed by checkout ids agents send, so the ledger
//! holds at most `MAX_BYTES` of them and none for longer than a day. What may leave, and why
//! that never lets an order be placed twice:
//! - a `Placed` entry (oldest first at the bound, any after a day): a later completion reads
//!   the store before placing, and the store holds the checkout as placed (or no longer
//!   knows it); placing runs only for an open checkout, and every adapter that places refuses
//!   a checkout it already placed (the sample store by its stage, WooCommerce by the order it
//!   keeps and by the emptied cart). Only the answer to a same-key replay changes (the
//!   checkout as it is, rather than "already placed") — and the idempotency layer answers a
//!   replay first.
//! - an `Unsettled` entry, or a `Running` one no completion settled in `RUNNING_STALE` (its
//!   request was dropped): the same store re-read decides, as above.
//! - a `Running` entry younger than that never leaves: its place call may be in flight, and a
//!   second key must not race it to the store. There are as many as completions in flight.
//!
//! An entry for an id the store does not know lives only while its completion asks the store
//! (`Running`, then removed by `settle`).

use std::collections::{HashMap, VecDeque};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// About 100,000 placed checkouts.
const MAX_BYTES: usize = 16 << 20;
/// How long an entry is kept: the idempotency key's life, past which no retry is one.
const KEPT: Duration = Duration::from_secs(24 * 3600);
/// Far past any place call's timeouts and retries: a completion still `Running` after it was
/// dropped with its request.
const RUNNING_STALE: Duration = Duration::from_secs(15 * 60);
/// A record, its row in an age queue and the map's own share.
const ENTRY_OVERHEAD: usize = 96;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Entry {
    /// A completion under this key is talking to the store now.
    Running(String),
    /// The store did not answer this key's placement: the order may or may not exist.
    Unsettled(String),
    /// This key placed the order.
    Placed(String),
}

impl Entry {
    fn owner(&self) -> &str {
        match self {
            Self::Running(owner) | Self::Unsettled(owner) | Self::Placed(owner) => owner,
        }
    }
}

/// Whose turn it is to place a checkout's order, as the ledger answers a Complete Checkout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Turn {
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

struct Record {
    entry: Entry,
    since: Instant,
    /// Which row of the age queues is this record's (older rows of the checkout are stale).
    stamp: u64,
}

struct Row {
    checkout: String,
    stamp: u64,
}

#[derive(Clone, Copy)]
struct Limits {
    max_bytes: usize,
    kept: Duration,
    running_stale: Duration,
}

#[derive(Default)]
struct Book {
    records: HashMap<String, Record>,
    /// `Placed` records, oldest first: the first to go at the bound.
    placed: VecDeque<Row>,
    /// `Running` and `Unsettled` records, oldest first.
    pending: VecDeque<Row>,
    bytes: usize,
    stamp: u64,
}

fn weight(checkout: &str, entry: &Entry) -> usize {
    // The id is held twice: the map's key and its queue row.
    2 * checkout.len() + entry.owner().len() + ENTRY_OVERHEAD
}

impl Book {
    fn get(&self, checkout: &str) -> Option<&Entry> {
        self.records.get(checkout).map(|record| &record.entry)
    }

    fn set(&mut self, checkout: &str, entry: Entry) {
        self.remove(checkout);
        self.stamp += 1;
        let row = Row {
            checkout: checkout.to_owned(),
            stamp: self.stamp,
        };
        if matches!(entry, Entry::Placed(_)) {
            self.placed.push_back(row);
        } else {
            self.pending.push_back(row);
        }
        self.bytes += weight(checkout, &entry);
        self.records.insert(
            checkout.to_owned(),
            Record {
                entry,
                since: Instant::now(),
                stamp: self.stamp,
            },
        );
    }

    fn remove(&mut self, checkout: &str) {
        if let Some(record) = self.records.remove(checkout) {
            self.bytes = self.bytes.saturating_sub(weight(checkout, &record.entry));
        }
    }

    /// The live record the front row of `queue` stands for, dropping stale rows on the way.
    fn front(&mut self, placed: bool) -> Option<(String, Duration, bool)> {
        loop {
            let queue = if placed {
                &mut self.placed
            } else {
                &mut self.pending
            };
            let row = queue.front()?;
            match self.records.get(&row.checkout) {
                Some(record) if record.stamp == row.stamp => {
                    let running = matches!(record.entry, Entry::Running(_));
                    return Some((row.checkout.clone(), record.since.elapsed(), running));
                }
                _ => {
                    queue.pop_front();
                }
            }
        }
    }

    fn evict_front(&mut self, placed: bool, checkout: &str) {
        self.remove(checkout);
        if placed {
            self.placed.pop_front();
        } else {
            self.pending.pop_front();
        }
    }

    /// Old entries out, then the oldest evictable ones while over the bound (see the module
    /// comment for which may go). Each row is dropped once: O(1) per write, amortised.
    fn tidy(&mut self, limits: Limits) {
        while let Some((checkout, age, _)) = self.front(true) {
            if age < limits.kept && self.bytes <= limits.max_bytes {
                break;
            }
            self.evict_front(true, &checkout);
        }
        while let Some((checkout, age, running)) = self.front(false) {
            // A young `Running` entry may have its place call in flight: it stays, and so
            // does every younger row behind it.
            if running && age < limits.running_stale {
                break;
            }
            if age < limits.kept && self.bytes <= limits.max_bytes {
                break;
            }
            self.evict_front(false, &checkout);
        }
        // Rows left behind by records that changed or left, past twice the live ones.
        if self.placed.len() + self.pending.len() > 2 * self.records.len() + 64 {
            let records = &self.records;
            let live = |row: &Row| {
                records
                    .get(&row.checkout)
                    .is_some_and(|record| record.stamp == row.stamp)
            };
            self.placed.retain(live);
            self.pending.retain(live);
        }
    }
}

pub struct Ledger {
    book: Mutex<Book>,
    limits: Limits,
}

impl Default for Ledger {
    fn default() -> Self {
        Self::bounded(Limits {
            max_bytes: MAX_BYTES,
            kept: KEPT,
            running_stale: RUNNING_STALE,
        })
    }
}

impl Ledger {
    fn bounded(limits: Limits) -> Self {
        Self {
            book: Mutex::new(Book::default()),
            limits,
        }
    }

    fn lock(&self) -> MutexGuard<'_, Book> {
        // Every change replaces whole records and keeps `bytes` beside them: a poisoned book
        // is still consistent.
        let mut book = self
            .book
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        book.tidy(self.limits);
        book
    }

    pub fn admit(&self, checkout: &str, key: &str) -> Turn {
        let mut book = self.lock();
        let stale = self.limits.running_stale;
        match book.records.get(checkout) {
            None => {
                book.set(checkout, Entry::Running(key.to_owned()));
                Turn::Place
            }
            Some(record) => match &record.entry {
                // A completion dropped with its request never settled: as if the store had
                // not answered it.
                Entry::Running(owner) if owner == key && record.since.elapsed() < stale => {
                    Turn::InProgress
                }
                Entry::Running(owner) | Entry::Unsettled(owner) if owner == key => {
                    book.set(checkout, Entry::Running(key.to_owned()));
                    Turn::Recheck
                }
                Entry::Running(_) | Entry::Unsettled(_) => Turn::Busy,
                Entry::Placed(owner) => Turn::Placed {
                    same_key: owner == key,
                },
            },
        }
    }

    /// Whether a completion is running or unsettled (updates are refused meanwhile).
    pub fn frozen(&self, checkout: &str) -> bool {
        matches!(
            self.lock().get(checkout),
            Some(Entry::Running(_) | Entry::Unsettled(_))
        )
    }

    pub fn settle(&self, checkout: &str, key: &str, how: Settled) {
        let mut book = self.lock();
        if book.get(checkout).is_none_or(|entry| entry.owner() != key) {
            return;
        }
        match how {
            Settled::Placed => book.set(checkout, Entry::Placed(key.to_owned())),
            Settled::Refused => book.remove(checkout),
            Settled::Unknown => book.set(checkout, Entry::Unsettled(key.to_owned())),
        }
    }

    /// The store already holds the order (seen on a read): remember it for later keys.
    pub fn placed_elsewhere(&self, checkout: &str) {
        let mut book = self.lock();
        if book.get(checkout).is_none() {
            book.set(checkout, Entry::Placed(String::new()));
        }
    }

    /// A cancelled or vanished checkout keeps no entry.
    pub fn forget(&self, checkout: &str) {
        self.lock().remove(checkout);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_key_places_once_and_replays_after() {
        // CHK-048 and checkout.md "Complete Checkout": the order is placed at most once.
        let ledger = Ledger::default();
        assert_eq!(ledger.admit("c1", "k1"), Turn::Place);
        assert_eq!(ledger.admit("c1", "k1"), Turn::InProgress);
        assert_eq!(ledger.admit("c1", "k2"), Turn::Busy);
        assert!(ledger.frozen("c1"));
        ledger.settle("c1", "k1", Settled::Placed);
        assert_eq!(ledger.admit("c1", "k1"), Turn::Placed { same_key: true });
        assert_eq!(ledger.admit("c1", "k2"), Turn::Placed { same_key: false });
        assert!(!ledger.frozen("c1"));
    }

    #[test]
    fn only_the_same_key_retries_an_unknown_outcome() {
        // CHK-094: the narrow lost-response retry: identical request, same key, never a new key.
        let ledger = Ledger::default();
        assert_eq!(ledger.admit("c1", "k1"), Turn::Place);
        ledger.settle("c1", "k1", Settled::Unknown);
        assert_eq!(ledger.admit("c1", "k2"), Turn::Busy);
        assert_eq!(ledger.admit("c1", "k1"), Turn::Recheck);
        ledger.settle("c1", "k1", Settled::Placed);
        assert_eq!(ledger.admit("c1", "k1"), Turn::Placed { same_key: true });
    }

    #[test]
    fn a_refusal_frees_the_checkout_for_a_fresh_key() {
        let ledger = Ledger::default();
        assert_eq!(ledger.admit("c1", "k1"), Turn::Place);
        ledger.settle("c1", "k1", Settled::Refused);
        assert_eq!(ledger.admit("c1", "k2"), Turn::Place);
        // A stale settle from the first key does not touch the second key's entry.
        ledger.settle("c1", "k1", Settled::Placed);
        assert_eq!(ledger.admit("c1", "k2"), Turn::InProgress);
    }

    fn limits(max_bytes: usize, kept: Duration) -> Limits {
        Limits {
            max_bytes,
            kept,
            running_stale: RUNNING_STALE,
        }
    }

    fn bytes(ledger: &Ledger) -> usize {
        ledger.lock().bytes
    }

    /// Issue 35 item 2: a flood of placed checkouts keeps the ledger within its byte bound,
    /// the oldest leaving first.
    #[test]
    fn a_flood_stays_within_the_byte_bound() {
        let bound = 64 * 1024;
        let ledger = Ledger::bounded(limits(bound, KEPT));
        for index in 0..5000 {
            let checkout = format!("chk_{index:032}");
            assert_eq!(ledger.admit(&checkout, "k"), Turn::Place);
            ledger.settle(&checkout, "k", Settled::Placed);
            assert!(
                bytes(&ledger) <= bound + 512,
                "{} after {index}",
                bytes(&ledger)
            );
        }
        let book = ledger.lock();
        assert!(book.records.len() < 5000);
        assert!(book.placed.len() <= 2 * book.records.len() + 64);
        assert!(book.records.contains_key(&format!("chk_{:032}", 4999)));
        assert!(!book.records.contains_key(&format!("chk_{:032}", 0)));
    }

    /// Ids the store refused leave nothing behind: their completion settles `Refused`.
    #[test]
    fn a_refused_id_keeps_no_entry() {
        let ledger = Ledger::default();
        for index in 0..1000 {
            let checkout = format!("forged_{index}");
            assert_eq!(ledger.admit(&checkout, "k"), Turn::Place);
            ledger.settle(&checkout, "k", Settled::Refused);
        }
        let book = ledger.lock();
        assert!(book.records.is_empty());
        assert_eq!(book.bytes, 0);
        assert!(book.pending.len() <= 64, "{}", book.pending.len());
    }

    /// A running completion is never pushed out by the bound: a second key stays `Busy`
    /// however many other checkouts were placed meanwhile.
    #[test]
    fn a_running_completion_survives_any_flood() {
        let ledger = Ledger::bounded(limits(16 * 1024, KEPT));
        assert_eq!(ledger.admit("buyer", "k1"), Turn::Place);
        for index in 0..2000 {
            let checkout = format!("flood_{index}");
            ledger.admit(&checkout, "k");
            ledger.settle(&checkout, "k", Settled::Placed);
        }
        assert_eq!(ledger.admit("buyer", "k2"), Turn::Busy);
        assert!(ledger.frozen("buyer"));
        ledger.settle("buyer", "k1", Settled::Placed);
        assert_eq!(ledger.admit("buyer", "k1"), Turn::Placed { same_key: true });
    }

    /// An expired `Placed` entry is gone; what guards the checkout then is the store's
    /// re-read before placing (module comment), so a new key is admitted to that re-read.
    #[test]
    fn an_expired_entry_is_gone() {
        let ledger = Ledger::bounded(limits(MAX_BYTES, Duration::ZERO));
        ledger.placed_elsewhere("c1");
        assert!(ledger.lock().records.is_empty());
        assert_eq!(bytes(&ledger), 0);
        assert_eq!(ledger.admit("c2", "k1"), Turn::Place);
    }

    /// A completion dropped with its request (never settled) does not hold the checkout
    /// forever: its own key re-checks the store.
    #[test]
    fn a_stale_running_entry_is_rechecked_by_its_key() {
        let ledger = Ledger::bounded(Limits {
            max_bytes: MAX_BYTES,
            kept: KEPT,
            running_stale: Duration::ZERO,
        });
        assert_eq!(ledger.admit("c1", "k1"), Turn::Place);
        assert_eq!(ledger.admit("c1", "k1"), Turn::Recheck);
        assert_eq!(ledger.admit("c1", "k2"), Turn::Busy);
    }
}
