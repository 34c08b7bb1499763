//! A per-thread memo of pure text functions. Sanitising merchant HTML (an HTML parse, a
//! tree walk, a serialisation) is the costliest step of rendering a cached product, and a
//! product's description is the same text on every call: each worker thread keeps the
//! results it computed, with no lock, within a byte budget (cleared whole when full, so a
//! catalog larger than the budget costs what it did before, never more memory).

use std::cell::RefCell;
use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::thread::LocalKey;

/// Bytes of inputs and outputs one thread's memo holds before it starts over.
pub const BUDGET_BYTES: usize = 2 << 20;

/// The inputs an entry was computed from, kept to tell a hash collision from a hit.
type Inputs = Vec<Option<Box<str>>>;

pub struct Memo<V> {
    entries: HashMap<u64, (Inputs, V)>,
    bytes: usize,
}

impl<V> Default for Memo<V> {
    fn default() -> Self {
        Self {
            entries: HashMap::new(),
            bytes: 0,
        }
    }
}

fn key(inputs: &[Option<&str>]) -> u64 {
    let mut hasher = DefaultHasher::new();
    inputs.hash(&mut hasher);
    hasher.finish()
}

fn same(stored: &[Option<Box<str>>], inputs: &[Option<&str>]) -> bool {
    stored.len() == inputs.len()
        && stored
            .iter()
            .zip(inputs)
            .all(|(kept, given)| kept.as_deref() == *given)
}

/// `compute(inputs)`, from this thread's memo when it was computed here before. `size`
/// tells how many bytes an output holds; inputs count by their length.
pub fn cached<V: Clone + 'static>(
    memo: &'static LocalKey<RefCell<Memo<V>>>,
    inputs: &[Option<&str>],
    size: fn(&V) -> usize,
    compute: impl FnOnce() -> V,
) -> V {
    let hash = key(inputs);
    let hit = memo.with(|memo| {
        memo.borrow()
            .entries
            .get(&hash)
            .filter(|(stored, _)| same(stored, inputs))
            .map(|(_, value)| value.clone())
    });
    if let Some(value) = hit {
        return value;
    }
    let value = compute();
    let cost = inputs
        .iter()
        .flatten()
        .map(|text| text.len())
        .sum::<usize>()
        + size(&value);
    if cost <= BUDGET_BYTES / 8 {
        memo.with(|memo| {
            let mut memo = memo.borrow_mut();
            if memo.bytes + cost > BUDGET_BYTES {
                memo.entries.clear();
                memo.bytes = 0;
            }
            let stored = inputs.iter().map(|text| text.map(Box::from)).collect();
            if memo.entries.insert(hash, (stored, value.clone())).is_none() {
                memo.bytes += cost;
            }
        });
    }
    value
}

#[cfg(test)]
mod tests {
    use super::*;

    thread_local! {
        static UPPER: RefCell<Memo<String>> = RefCell::new(Memo::default());
    }

    fn upper(text: &str, calls: &mut usize) -> String {
        cached(&UPPER, &[Some(text)], String::len, || {
            *calls += 1;
            text.to_uppercase()
        })
    }

    #[test]
    fn a_repeated_input_is_computed_once_and_distinct_inputs_never_mix() {
        let mut calls = 0;
        assert_eq!(upper("abc", &mut calls), "ABC");
        assert_eq!(upper("abc", &mut calls), "ABC");
        assert_eq!(calls, 1);
        assert_eq!(upper("abd", &mut calls), "ABD");
        assert_eq!(calls, 2);
        // A different split of the same characters is a different input.
        let split = cached(&UPPER, &[Some("ab"), Some("c")], String::len, || {
            "two".into()
        });
        let whole = cached(&UPPER, &[Some("abc"), None], String::len, || "one".into());
        assert_eq!((split.as_str(), whole.as_str()), ("two", "one"));
    }

    #[test]
    fn the_memo_stays_within_its_budget() {
        let big = "x".repeat(BUDGET_BYTES / 10);
        for index in 0..40 {
            let text = format!("{index}{big}");
            cached(&UPPER, &[Some(&text)], String::len, || text.clone());
        }
        UPPER.with(|memo| assert!(memo.borrow().bytes <= BUDGET_BYTES));
    }
}
