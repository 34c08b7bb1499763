//! How many profile fetches may be on the wire: a global cap (so a flood of distinct profile
//! URLs cannot open unbounded outbound sockets) and a per-host cap (so one host cannot take
//! every slot). A host slot is taken before a global one: waiters queued behind one busy host
//! then hold no global slot.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};

use tokio::sync::{Notify, Semaphore, SemaphorePermit};

pub(super) struct FetchLimits {
    global: Semaphore,
    per_host: usize,
    /// Fetches in flight per host; a host leaves the map when its count drops to zero, so the
    /// map never holds more entries than there are fetches.
    hosts: Mutex<HashMap<String, usize>>,
    released: Notify,
}

/// Held for one request on the wire; gives both slots back when dropped.
pub(super) struct Admission<'a> {
    _global: SemaphorePermit<'a>,
    _host: HostSlot<'a>,
}

struct HostSlot<'a> {
    limits: &'a FetchLimits,
    host: String,
}

impl FetchLimits {
    pub(super) fn new(global: usize, per_host: usize) -> Self {
        Self {
            global: Semaphore::new(global.max(1)),
            per_host: per_host.max(1),
            hosts: Mutex::new(HashMap::new()),
            released: Notify::new(),
        }
    }

    fn hosts(&self) -> MutexGuard<'_, HashMap<String, usize>> {
        // A panic elsewhere cannot leave a count half-updated: every update is one statement.
        self.hosts.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Waits for a slot for `host` and a global one. The caller bounds the wait.
    pub(super) async fn admit(&self, host: &str) -> Option<Admission<'_>> {
        let host = self.host_slot(host).await;
        let global = self.global.acquire().await.ok()?;
        Some(Admission {
            _global: global,
            _host: host,
        })
    }

    async fn host_slot(&self, host: &str) -> HostSlot<'_> {
        loop {
            // Registered before the check, so a release between check and wait is not lost.
            let released = self.released.notified();
            {
                let mut hosts = self.hosts();
                let count = hosts.entry(host.to_owned()).or_insert(0);
                if *count < self.per_host {
                    *count += 1;
                    return HostSlot {
                        limits: self,
                        host: host.to_owned(),
                    };
                }
            }
            released.await;
        }
    }

    fn release(&self, host: &str) {
        {
            let mut hosts = self.hosts();
            if let Some(count) = hosts.get_mut(host) {
                *count = count.saturating_sub(1);
                if *count == 0 {
                    hosts.remove(host);
                }
            }
        }
        self.released.notify_waiters();
    }

    #[cfg(test)]
    pub(super) fn hosts_tracked(&self) -> usize {
        self.hosts().len()
    }
}

impl Drop for HostSlot<'_> {
    fn drop(&mut self) {
        self.limits.release(&self.host);
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use std::time::Duration;

    use super::FetchLimits;

    #[tokio::test]
    async fn a_waiter_that_gives_up_leaves_nothing_behind() {
        let limits = FetchLimits::new(2, 1);
        let held = limits.admit("a.test").await.unwrap();
        let waited = tokio::time::timeout(Duration::from_millis(50), limits.admit("a.test")).await;
        assert!(waited.is_err(), "the host slot was taken");
        // The global slot left over is still free for another host.
        let other = limits.admit("b.test").await.unwrap();
        assert_eq!(limits.hosts_tracked(), 2);
        drop((held, other));
        assert_eq!(limits.hosts_tracked(), 0);
        let again = tokio::time::timeout(Duration::from_millis(50), limits.admit("a.test")).await;
        assert!(again.is_ok_and(|admission| admission.is_some()));
        assert_eq!(limits.hosts_tracked(), 0);
    }
}
