//! What a piece of work read from the product cache, for a layer that keeps the result of that
//! work (the answer cache): the earliest moment one of the entries it used expires, and
//! whether it read anything the cache does not keep. The record is task-local, so the catalog
//! port keeps its signature and concurrent calls never see each other's reads.

use std::cell::Cell;
use std::time::Instant;

tokio::task_local! {
    static READS: Cell<Reads>;
}

/// The reads of one tracked piece of work.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Reads {
    /// When the first of the cached entries read stops being served by the product cache.
    pub expires: Option<Instant>,
    /// Something was read past the cache (e.g. a search page while pages are not cached):
    /// nothing retires a result built from it when the store changes.
    pub uncached: bool,
}

impl Reads {
    /// The instant a result built from these reads must be dropped by, if it may be kept at
    /// all: some cached entry was read and nothing came from past the cache.
    pub fn keep_until(self) -> Option<Instant> {
        if self.uncached { None } else { self.expires }
    }
}

/// Runs `work`, recording what it reads from the product cache.
pub async fn tracked<T>(work: impl Future<Output = T>) -> (T, Reads) {
    READS
        .scope(Cell::new(Reads::default()), async {
            let output = work.await;
            (output, READS.with(Cell::get))
        })
        .await
}

/// The product cache served an entry that expires at `expires`.
pub fn read_cached(expires: Instant) {
    let _ = READS.try_with(|reads| {
        let mut current = reads.get();
        current.expires = Some(current.expires.map_or(expires, |seen| seen.min(expires)));
        reads.set(current);
    });
}

/// The product cache passed a read straight to the store.
pub fn read_uncached() {
    let _ = READS.try_with(|reads| {
        let mut current = reads.get();
        current.uncached = true;
        reads.set(current);
    });
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[tokio::test]
    async fn the_earliest_expiry_wins_and_an_uncached_read_keeps_nothing() {
        let now = Instant::now();
        let ((), reads) = tracked(async {
            read_cached(now + Duration::from_secs(60));
            read_cached(now + Duration::from_secs(5));
            read_cached(now + Duration::from_secs(30));
        })
        .await;
        assert_eq!(reads.keep_until(), Some(now + Duration::from_secs(5)));
        let ((), reads) = tracked(async {
            read_cached(now);
            read_uncached();
        })
        .await;
        assert_eq!(reads.keep_until(), None);
        // Work that read nothing from the cache has nothing to bound it.
        let ((), reads) = tracked(async {}).await;
        assert_eq!(reads.keep_until(), None);
        // Outside tracked work, reads are not recorded anywhere (and do not panic).
        read_cached(now);
    }
}
