//! Traces over OTLP (`[telemetry]`, off by default): a span per tool call, parented by the
//! agent's W3C `traceparent`, and a child span per upstream request, whose own `traceparent`
//! goes to the store. A low layer (it imports only `settings`): the pipeline and the upstream
//! client call it; start-up installs the exporter once the configuration is read.
//!
//! Spans are made with the OpenTelemetry API directly, not through `tracing`: the log's level
//! filter and formatter then stay as they are, and with telemetry off nothing here runs but
//! one check of [`enabled`]. What spans carry is chosen here alone: tool names the bridge
//! knows, transports, releases, outcomes, methods, route templates, statuses, retry counts;
//! never arguments, ids, tokens or buyer data.

mod config;
mod route;
mod spans;

use std::sync::OnceLock;
use std::time::Duration;

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::WithExportConfig as _;
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::{SdkTracer, SdkTracerProvider};

pub use config::TelemetryConfig;
pub use route::template;
pub use spans::{ToolSpan, UpstreamSpan, tool_call, upstream_request};

use crate::settings::ConfigProblem;

/// The tracer once [`install`] ran with an endpoint; unset, every span call returns at once.
static TRACER: OnceLock<SdkTracer> = OnceLock::new();

/// Whether spans are being exported (an `otlp_endpoint` was configured and installed).
pub fn enabled() -> bool {
    TRACER.get().is_some()
}

fn tracer() -> Option<&'static SdkTracer> {
    TRACER.get()
}

/// The exporter, kept to flush what is still batched at shutdown.
pub struct Telemetry {
    provider: SdkTracerProvider,
}

impl Telemetry {
    /// Exports what is still batched and stops the exporter; blocking (the exporter sends
    /// from its own thread), so called from a blocking context. Failures are dropped: traces
    /// never hold a shutdown up beyond the exporter's own timeout.
    pub fn shutdown(self) {
        let _ = self.provider.force_flush();
        let _ = self.provider.shutdown();
    }
}

/// Starts exporting when `config` names an endpoint (`None` when telemetry is off). A second
/// install in one process (tests running several bridges) keeps the first tracer.
pub fn install(config: &TelemetryConfig) -> Result<Option<Telemetry>, ConfigProblem> {
    let Some(endpoint) = config.traces_url() else {
        return Ok(None);
    };
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_protocol(opentelemetry_otlp::Protocol::HttpBinary)
        .with_endpoint(endpoint.as_str())
        .with_timeout(Duration::from_millis(config.export_timeout_ms))
        .build()
        .map_err(|error| {
            ConfigProblem::new("telemetry.otlp_endpoint", format!("cannot export: {error}"))
        })?;
    let provider = SdkTracerProvider::builder()
        .with_batch_exporter(exporter)
        .with_resource(
            Resource::builder()
                .with_service_name(config.service_name.clone())
                .build(),
        )
        .build();
    let _ = TRACER.set(provider.tracer("bcp-bridge"));
    Ok(Some(Telemetry { provider }))
}
