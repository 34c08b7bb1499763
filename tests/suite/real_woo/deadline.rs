//! A hung store: the web server's processes are stopped (`kill -STOP`), so connections are
//! accepted by the kernel and never answered. A read must end with an error, and within
//! `upstream.read_deadline_ms` (retries included).

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::store::{RealStore, alone, real_store};
use crate::support::meta;

const ATTEMPT_MS: u64 = 1_000;
const DEADLINE_MS: u64 = 1_500;
/// Scheduling and the answer's own way back.
const SLACK_MS: u64 = 400;

/// Resumes the web server even when the test fails half-way.
struct Hung {
    pids: Vec<String>,
}

fn signal(signal: &str, pids: &[String]) {
    let status = std::process::Command::new("kill")
        .arg(signal)
        .args(pids)
        .status()
        .unwrap();
    assert!(status.success(), "kill {signal} {pids:?}");
}

impl Hung {
    fn stop(store: &RealStore) -> Self {
        let pids = store.web_pids();
        signal("-STOP", &pids);
        Self { pids }
    }
}

impl Drop for Hung {
    fn drop(&mut self) {
        signal("-CONT", &self.pids);
    }
}

/// One `search_catalog` against the hung store: (HTTP status, reply, time to answer).
async fn hung_read(store: &RealStore) -> (Value, Duration) {
    let bridge = store
        .bridge(&format!(
            "timeout_ms = {ATTEMPT_MS}\n[cache]\nenabled = false\n[upstream]\ntimeout_ms = {ATTEMPT_MS}\nread_deadline_ms = {DEADLINE_MS}\nmax_retries = 2\n"
        ))
        .await;
    let hung = Hung::stop(store);
    let started = Instant::now();
    let (_, reply) = bridge
        .call_raw(
            "search_catalog",
            json!({"meta": meta(), "catalog": {"query": "bermuda"}}),
        )
        .await;
    let elapsed = started.elapsed();
    drop(hung);
    // Let the resumed server drain what queued up before other tests go on.
    for _ in 0..50 {
        let ok = store
            .http
            .get(format!(
                "{}wp-json/wc/store/v1/products?per_page=1",
                store.url
            ))
            .send()
            .await
            .is_ok_and(|r| r.status() == 200);
        if ok {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    eprintln!(
        "hung store: answered in {} ms (attempt timeout {ATTEMPT_MS} ms, read deadline {DEADLINE_MS} ms): {reply}",
        elapsed.as_millis()
    );
    (reply, elapsed)
}

fn assert_unavailable(reply: &Value) {
    assert_eq!(reply["error"]["code"], -32000, "{reply}");
}

/// Before issue 10's fix the second attempt got a fresh full timeout: 2 × 1000 ms + backoff
/// (≈2090 ms measured here).
#[tokio::test]
#[ignore = "needs the real WooCommerce: bash .ci/real-woo.sh test"]
async fn a_hung_store_answers_within_the_read_deadline() {
    let store = real_store();
    let _alone = alone().await;
    let (reply, elapsed) = hung_read(store).await;
    assert_unavailable(&reply);
    assert!(
        elapsed <= Duration::from_millis(DEADLINE_MS + SLACK_MS),
        "answered after {elapsed:?}, read deadline {DEADLINE_MS} ms"
    );
}
