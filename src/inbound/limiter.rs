//! A per-key rate limiter (GCRA) that tracks a bounded number of keys with O(log n) work per
//! check, however many keys it holds: a hash map finds a key's state, and an ordered index by
//! the time each state runs out finds the next to forget. A key whose theoretical arrival time
//! has passed is indistinguishable from a new one, so dropping it loses nothing; a few such
//! keys are dropped on every check. At the bound, a new key evicts the one nearest to running
//! out (the least budget forgiven), so spoofed agent names cannot grow memory or slow checks.

use std::collections::{BTreeMap, HashMap};
use std::hash::Hash;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

/// Run-out states dropped per check at most: more than the one key a check can add.
const EXPIRED_PER_CHECK: usize = 2;

#[derive(Clone, Copy)]
struct Slot {
    /// Nanoseconds after `started` when the key's budget is whole again.
    tat: u64,
    /// Tells apart keys with the same `tat` in the index.
    seq: u64,
}

/// Index operations done, for tests at the bound.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Work {
    /// Entries inserted into, removed from or popped off the expiry index.
    pub index_steps: u64,
    pub dropped_expired: u64,
    pub evicted_live: u64,
}

struct State<K> {
    slots: HashMap<K, Slot>,
    by_expiry: BTreeMap<(u64, u64), K>,
    next_seq: u64,
    work: Work,
}

pub struct BoundedKeyed<K> {
    /// One call's worth of budget, in nanoseconds (a minute / calls per minute).
    interval: u64,
    /// How far ahead of now a key's `tat` may run before it is refused (burst − 1 intervals).
    tolerance: u64,
    max_keys: usize,
    started: Instant,
    state: Mutex<State<K>>,
}

impl<K: Hash + Eq + Clone> BoundedKeyed<K> {
    /// `per_minute` calls per minute, all of them available at once; at most `max_keys` tracked.
    pub fn per_minute(per_minute: u32, max_keys: usize) -> Self {
        let per_minute = u64::from(per_minute.max(1));
        let interval = 60_000_000_000 / per_minute;
        Self {
            interval,
            tolerance: interval.saturating_mul(per_minute - 1),
            max_keys: max_keys.max(1),
            started: Instant::now(),
            state: Mutex::new(State {
                slots: HashMap::new(),
                by_expiry: BTreeMap::new(),
                next_seq: 0,
                work: Work::default(),
            }),
        }
    }

    /// One call by `key`: allowed, or refused with how long until it would be.
    pub fn check(&self, key: &K) -> Result<(), Duration> {
        let now = u64::try_from(self.started.elapsed().as_nanos()).unwrap_or(u64::MAX);
        self.check_at(key, now)
    }

    fn check_at(&self, key: &K, now: u64) -> Result<(), Duration> {
        let mut guard = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let State {
            slots,
            by_expiry,
            next_seq,
            work,
        } = &mut *guard;
        for _ in 0..EXPIRED_PER_CHECK {
            match by_expiry.first_key_value() {
                Some((&(tat, _), _)) if tat <= now => {
                    if let Some((_, gone)) = by_expiry.pop_first() {
                        slots.remove(&gone);
                    }
                    work.index_steps += 1;
                    work.dropped_expired += 1;
                }
                _ => break,
            }
        }
        if let Some(slot) = slots.get_mut(key) {
            let start = slot.tat.max(now);
            let ahead = start - now;
            if ahead > self.tolerance {
                return Err(Duration::from_nanos(ahead - self.tolerance));
            }
            let tat = start.saturating_add(self.interval);
            if let Some(moved) = by_expiry.remove(&(slot.tat, slot.seq)) {
                by_expiry.insert((tat, slot.seq), moved);
            }
            work.index_steps += 2;
            slot.tat = tat;
            return Ok(());
        }
        if slots.len() >= self.max_keys
            && let Some((_, evicted)) = by_expiry.pop_first()
        {
            slots.remove(&evicted);
            work.index_steps += 1;
            work.evicted_live += 1;
        }
        let slot = Slot {
            tat: now.saturating_add(self.interval),
            seq: *next_seq,
        };
        *next_seq += 1;
        slots.insert(key.clone(), slot);
        by_expiry.insert((slot.tat, slot.seq), key.clone());
        work.index_steps += 1;
        Ok(())
    }

    #[cfg(test)]
    fn work(&self) -> (Work, usize) {
        let state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        (state.work, state.slots.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINUTE: u64 = 60_000_000_000;

    #[test]
    fn a_key_gets_its_burst_then_waits_one_interval() {
        let limiter = BoundedKeyed::per_minute(3, 10);
        for _ in 0..3 {
            assert!(limiter.check_at(&"a", 0).is_ok());
        }
        assert_eq!(
            limiter.check_at(&"a", 0),
            Err(Duration::from_nanos(MINUTE / 3))
        );
        assert!(limiter.check_at(&"b", 0).is_ok());
        assert!(limiter.check_at(&"a", MINUTE / 3).is_ok());
        assert!(limiter.check_at(&"a", MINUTE / 3).is_err());
    }

    /// Index operations of each check in `checks`, at most.
    fn max_steps_per_check(
        limiter: &BoundedKeyed<u64>,
        checks: impl Iterator<Item = (u64, u64)>,
    ) -> u64 {
        let mut worst = 0;
        for (key, now) in checks {
            let (before, _) = limiter.work();
            let _ = limiter.check_at(&key, now);
            let (after, _) = limiter.work();
            worst = worst.max(after.index_steps - before.index_steps);
        }
        worst
    }

    #[test]
    fn work_per_check_does_not_grow_with_the_keys_tracked_at_the_bound() {
        const BOUND: usize = 50_000;
        let limiter = BoundedKeyed::per_minute(2, BOUND);
        // Filling up, then far past the bound with distinct agents, then a known key.
        let filling = max_steps_per_check(&limiter, (0..BOUND as u64).map(|key| (key, 0)));
        let (work, tracked) = limiter.work();
        assert_eq!((tracked, work.evicted_live), (BOUND, 0));
        let past_bound = max_steps_per_check(
            &limiter,
            (BOUND as u64..4 * BOUND as u64).map(|key| (key, 1)),
        );
        let (work, tracked) = limiter.work();
        assert_eq!(tracked, BOUND, "the bound holds");
        assert_eq!(
            work.evicted_live,
            3 * BOUND as u64,
            "one eviction per new key"
        );
        let known = max_steps_per_check(&limiter, (0..1_000).map(|_| (4 * BOUND as u64 - 1, 2)));
        // The same handful of O(log n) index operations with 1 key tracked or 50,000.
        assert!(
            filling <= 3 && past_bound <= 3 && known <= 3,
            "{filling} {past_bound} {known}"
        );
        // Once every state has run out, each check drops a bounded few, never sweeps them all.
        let later = max_steps_per_check(&limiter, (0..1_000).map(|key| (key, 2 * MINUTE)));
        let (work, tracked) = limiter.work();
        assert!(later <= 3 + EXPIRED_PER_CHECK as u64, "{later}");
        assert_eq!(work.dropped_expired, 2_000);
        assert_eq!(tracked, BOUND - 2_000 + 1_000);
    }

    #[test]
    fn at_the_bound_the_key_nearest_to_running_out_goes_first() {
        let limiter = BoundedKeyed::per_minute(1, 2);
        assert!(limiter.check_at(&1, 0).is_ok());
        assert!(limiter.check_at(&2, 10).is_ok());
        assert!(limiter.check_at(&3, 20).is_ok());
        // Key 1 was evicted and starts afresh; key 2 is still limited.
        assert!(limiter.check_at(&2, 30).is_err());
        assert!(limiter.check_at(&1, 30).is_ok());
    }
}
