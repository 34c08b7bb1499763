//! Waiting on an event instead of sleeping a fixed time: poll what the test can observe
//! (a count, a request at a stand-in, a metric) until it holds, within a bounded deadline
//! that only a broken feature reaches.

use std::time::Duration;

/// Long enough for a busy 2-core CI machine; reached only when the event never happens.
pub const DEADLINE: Duration = Duration::from_secs(10);

/// Returns once `holds()` is true; panics naming `event` when it is still false at `DEADLINE`.
pub async fn until(event: &str, mut holds: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + DEADLINE;
    while !holds() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "waited {DEADLINE:?} for {event}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// `until` for an event the test reads with an async call (a tool call, a Redis query).
pub async fn until_answered(event: &str, mut holds: impl AsyncFnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + DEADLINE;
    while !holds().await {
        assert!(
            tokio::time::Instant::now() < deadline,
            "waited {DEADLINE:?} for {event}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}
