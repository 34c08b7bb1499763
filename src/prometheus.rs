//! Prometheus metrics (`GET /metrics`). The recorder is process-wide (the `metrics` facade
//! has one global recorder), installed on first use; recording before that is a no-op.
//! The per-bridge record the merchant page reads is the pipeline's `activity`; OTLP traces
//! are `telemetry`.

use std::sync::OnceLock;
use std::time::Duration;

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};

static HANDLE: OnceLock<Option<PrometheusHandle>> = OnceLock::new();

const LATENCY_BUCKETS: &[f64] = &[
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
];

/// Installs the Prometheus recorder once per process; later calls reuse it.
pub fn install() -> Option<&'static PrometheusHandle> {
    HANDLE
        .get_or_init(|| {
            let recorder = PrometheusBuilder::new()
                .set_buckets_for_metric(
                    metrics_exporter_prometheus::Matcher::Full(
                        "bcp_tool_duration_seconds".to_owned(),
                    ),
                    LATENCY_BUCKETS,
                )
                .map_err(|error| tracing::warn!(%error, "metrics buckets rejected"))
                .ok()?
                .build_recorder();
            let handle = recorder.handle();
            match metrics::set_global_recorder(recorder) {
                Ok(()) => {
                    keep_up(handle.clone());
                    Some(handle)
                }
                Err(error) => {
                    tracing::warn!(%error, "another metrics recorder is installed");
                    None
                }
            }
        })
        .as_ref()
}

/// How often histogram samples are folded into their buckets.
const UPKEEP: Duration = Duration::from_secs(5);

/// The recorder keeps every histogram sample until it is folded into the buckets, which
/// only a render or an upkeep does: unscraped, that is 8 bytes a call, forever. A thread of
/// its own, since the recorder outlives any one runtime.
fn keep_up(handle: PrometheusHandle) {
    let spawned = std::thread::Builder::new()
        .name("metrics-upkeep".to_owned())
        .spawn(move || {
            loop {
                std::thread::sleep(UPKEEP);
                handle.run_upkeep();
            }
        });
    if let Err(error) = spawned {
        tracing::warn!(%error, "metrics upkeep not started: histograms grow until scraped");
    }
}

/// `GET /metrics` in the Prometheus text format.
pub async fn render() -> Response {
    match install() {
        Some(handle) => (
            StatusCode::OK,
            [(
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/plain; version=0.0.4"),
            )],
            handle.render(),
        )
            .into_response(),
        None => (StatusCode::SERVICE_UNAVAILABLE, "metrics unavailable").into_response(),
    }
}

/// `tool` is a declared tool's name or `unknown`: never the client's text, so agents cannot
/// blow up the series count.
pub fn tool_call(tool: &'static str, outcome: &'static str, elapsed: Duration) {
    metrics::counter!("bcp_tool_calls_total", "tool" => tool, "outcome" => outcome).increment(1);
    metrics::histogram!("bcp_tool_duration_seconds", "tool" => tool).record(elapsed.as_secs_f64());
}

pub fn upstream_call(store: &'static str, outcome: &'static str) {
    metrics::counter!("bcp_upstream_calls_total", "store" => store, "outcome" => outcome)
        .increment(1);
    if outcome != "ok" {
        metrics::counter!("bcp_upstream_errors_total", "store" => store, "kind" => outcome)
            .increment(1);
    }
}

pub fn cache(kind: &'static str, hit: bool) {
    let name = if hit {
        "bcp_cache_hits_total"
    } else {
        "bcp_cache_misses_total"
    };
    metrics::counter!(name, "kind" => kind).increment(1);
}

/// A catalog read that joined an identical one already on its way to the store.
pub fn read_shared(read: &'static str) {
    metrics::counter!("bcp_store_reads_shared_total", "read" => read).increment(1);
}

/// A catalog read answered from the answer cache (hit) or by the brain (miss).
pub fn answer_cache(tool: &'static str, hit: bool) {
    let name = if hit {
        "bcp_answer_cache_hits_total"
    } else {
        "bcp_answer_cache_misses_total"
    };
    metrics::counter!(name, "tool" => tool).increment(1);
}

pub fn rate_limited(scope: &'static str, store: &str) {
    metrics::counter!("bcp_rate_limited_total", "scope" => scope, "store" => store.to_owned())
        .increment(1);
}

/// Whether a call's upstream budget came from the replicas' shared one (1) or, Redis being
/// away, from this replica's local share (0); every fallback is also counted.
pub fn shared_budget(store: &'static str, shared: bool) {
    metrics::gauge!("bcp_upstream_budget_shared", "store" => store).set(if shared {
        1.0
    } else {
        0.0
    });
    if !shared {
        metrics::counter!("bcp_upstream_budget_local_share_total", "store" => store).increment(1);
    }
}

/// Whether this replica reaches the shared Redis (`[redis]`), as last seen by `/readyz`.
pub fn redis_up(up: bool) {
    metrics::gauge!("bcp_redis_up").set(if up { 1.0 } else { 0.0 });
}

/// The notAfter (Unix seconds) of the certificate `[server.tls]` serves, set at load and on
/// every reload, so an alert can compare it with `time()`; an unreadable date leaves it unset.
pub fn tls_cert_expiry(not_after: Option<i64>) {
    if let Some(seconds) = not_after {
        // Exact in an f64 for any date before the year 285 million.
        #[allow(clippy::cast_precision_loss)]
        metrics::gauge!("bcp_tls_cert_expiry_timestamp_seconds").set(seconds as f64);
    }
}
