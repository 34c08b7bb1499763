//! Prometheus metrics (`GET /metrics`). The recorder is process-wide (the `metrics` facade
//! has one global recorder), installed on first use; recording before that is a no-op.
//! `activity` is the per-bridge record the merchant page reads.

pub mod activity;

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
                Ok(()) => Some(handle),
                Err(error) => {
                    tracing::warn!(%error, "another metrics recorder is installed");
                    None
                }
            }
        })
        .as_ref()
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

pub fn tool_call(tool: &str, outcome: &'static str, elapsed: Duration) {
    // Tool names are checked against the tool table before they get here, except unknown
    // ones, which share one label so agents cannot blow up the series count.
    let tool = crate::protocol::ToolName::ALL
        .iter()
        .map(|name| name.as_str())
        .find(|name| *name == tool)
        .unwrap_or("unknown");
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

pub fn rate_limited(scope: &'static str, store: &str) {
    metrics::counter!("bcp_rate_limited_total", "scope" => scope, "store" => store.to_owned())
        .increment(1);
}
