//! The store's capacity: how many requests it serves at once. A rate alone lets a burst
//! arrive together at a store whose PHP serves a handful at a time, where they queue
//! unseen and time out; here calls beyond the capacity wait in the order they came (tokio's
//! semaphore is fair), within `max_wait` and their own deadline, and the wait is visible
//! (merchant page, `/metrics`).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::platform::error::PlatformError;

/// What the page and the metrics show of one store's capacity.
#[derive(Debug, Default)]
pub struct Load {
    /// 0: no bound.
    capacity: usize,
    in_flight: AtomicUsize,
    queued: AtomicUsize,
    /// Calls that had to wait for a free slot, and their waits summed.
    waits: AtomicU64,
    waited_micros: AtomicU64,
    refused: AtomicU64,
}

/// A moment's reading of `Load`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoadReading {
    pub capacity: usize,
    pub in_flight: usize,
    pub queued: usize,
    pub waits: u64,
    pub mean_wait: Duration,
    pub refused: u64,
}

impl Load {
    pub fn reading(&self) -> LoadReading {
        let waits = self.waits.load(Ordering::Relaxed);
        let waited = self.waited_micros.load(Ordering::Relaxed);
        LoadReading {
            capacity: self.capacity,
            in_flight: self.in_flight.load(Ordering::Relaxed),
            queued: self.queued.load(Ordering::Relaxed),
            waits,
            mean_wait: Duration::from_micros(waited.checked_div(waits).unwrap_or(0)),
            refused: self.refused.load(Ordering::Relaxed),
        }
    }
}

/// A request's place at the store; the slot frees when it drops.
pub struct Slot {
    _permit: Option<OwnedSemaphorePermit>,
    load: Arc<Load>,
    store: &'static str,
}

impl Drop for Slot {
    fn drop(&mut self) {
        let in_flight = self.load.in_flight.fetch_sub(1, Ordering::Relaxed) - 1;
        gauge("bcp_upstream_in_flight", self.store, in_flight);
    }
}

fn gauge(name: &'static str, store: &'static str, value: usize) {
    #[allow(clippy::cast_precision_loss)] // counts of requests, far below 2^52
    metrics::gauge!(name, "store" => store).set(value as f64);
}

pub struct Capacity {
    slots: Option<Arc<Semaphore>>,
    load: Arc<Load>,
}

impl Capacity {
    /// `capacity` 0: no bound (only counted).
    pub fn new(capacity: usize) -> Self {
        Self {
            slots: (capacity > 0).then(|| Arc::new(Semaphore::new(capacity))),
            load: Arc::new(Load {
                capacity,
                ..Load::default()
            }),
        }
    }

    pub fn load(&self) -> Arc<Load> {
        self.load.clone()
    }

    /// A free slot, waiting in order until `until` at the latest; past it the call fails as
    /// the store being busy, with a Retry-After, rather than queueing at the store.
    pub async fn slot(&self, store: &'static str, until: Instant) -> Result<Slot, PlatformError> {
        let permit = match &self.slots {
            None => None,
            Some(slots) => match slots.clone().try_acquire_owned() {
                Ok(permit) => Some(permit),
                Err(_) => Some(self.wait(slots.clone(), store, until).await?),
            },
        };
        let in_flight = self.load.in_flight.fetch_add(1, Ordering::Relaxed) + 1;
        gauge("bcp_upstream_in_flight", store, in_flight);
        Ok(Slot {
            _permit: permit,
            load: self.load.clone(),
            store,
        })
    }

    async fn wait(
        &self,
        slots: Arc<Semaphore>,
        store: &'static str,
        until: Instant,
    ) -> Result<OwnedSemaphorePermit, PlatformError> {
        let started = Instant::now();
        let queued = self.load.queued.fetch_add(1, Ordering::Relaxed) + 1;
        gauge("bcp_upstream_queued", store, queued);
        let acquired = tokio::time::timeout_at(until.into(), slots.acquire_owned()).await;
        let queued = self.load.queued.fetch_sub(1, Ordering::Relaxed) - 1;
        gauge("bcp_upstream_queued", store, queued);
        let waited = started.elapsed();
        metrics::histogram!("bcp_upstream_wait_seconds", "store" => store)
            .record(waited.as_secs_f64());
        self.load.waits.fetch_add(1, Ordering::Relaxed);
        self.load.waited_micros.fetch_add(
            u64::try_from(waited.as_micros()).unwrap_or(u64::MAX),
            Ordering::Relaxed,
        );
        match acquired {
            Ok(Ok(permit)) => Ok(permit),
            // Timed out, or the semaphore closed (never: it is never closed).
            _ => {
                self.load.refused.fetch_add(1, Ordering::Relaxed);
                crate::prometheus::rate_limited("upstream_capacity", store);
                Err(PlatformError::Unavailable {
                    reason: "the store is serving as many requests as it can take at once"
                        .to_owned(),
                    retry_after: Some(Duration::from_secs(1)),
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]
    use super::*;

    #[tokio::test]
    async fn calls_beyond_the_capacity_wait_in_order_and_give_up_at_their_limit() {
        let capacity = Capacity::new(2);
        let first = capacity.slot("test", Instant::now()).await.unwrap();
        let _second = capacity.slot("test", Instant::now()).await.unwrap();
        assert_eq!(capacity.load().reading().in_flight, 2);

        // Full: a call whose limit has passed is refused as busy, with a Retry-After.
        match capacity.slot("test", Instant::now()).await {
            Err(PlatformError::Unavailable { retry_after, .. }) => {
                assert_eq!(retry_after, Some(Duration::from_secs(1)));
            }
            Err(other) => panic!("expected Unavailable, got {other:?}"),
            Ok(_) => panic!("a third slot was handed out"),
        }
        assert_eq!(capacity.load().reading().refused, 1);

        // One waiting with time to spare gets the slot the moment one frees.
        let capacity = Arc::new(capacity);
        let waiter = {
            let capacity = capacity.clone();
            tokio::spawn(async move {
                capacity
                    .slot("test", Instant::now() + Duration::from_secs(30))
                    .await
                    .map(|_| ())
            })
        };
        while capacity.load().reading().queued == 0 {
            tokio::task::yield_now().await;
        }
        drop(first);
        waiter.await.unwrap().unwrap();
        let reading = capacity.load().reading();
        assert_eq!(
            (reading.queued, reading.in_flight, reading.waits),
            (0, 1, 2)
        );
    }

    #[tokio::test]
    async fn no_capacity_set_bounds_nothing_but_still_counts() {
        let capacity = Capacity::new(0);
        let slots: Vec<_> =
            futures_util::future::join_all((0..50).map(|_| capacity.slot("test", Instant::now())))
                .await;
        assert!(slots.iter().all(Result::is_ok));
        assert_eq!(capacity.load().reading().in_flight, 50);
        drop(slots);
        assert_eq!(capacity.load().reading().in_flight, 0);
    }
}
