//! `[telemetry]`: where traces go (none by default: off) and the name they are filed under.

use serde::Deserialize;
use url::Url;

use crate::settings::ConfigProblem;

#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct TelemetryConfig {
    /// The OTLP/HTTP (protobuf) collector, e.g. `http://127.0.0.1:4318`; spans are posted to
    /// its `/v1/traces`. Unset (the default): no spans are made or sent.
    pub otlp_endpoint: Option<Url>,
    /// `service.name` of every span.
    pub service_name: String,
    /// One export request's deadline; a collector slower than this loses that batch, never a
    /// call.
    pub export_timeout_ms: u64,
}

impl Default for TelemetryConfig {
    fn default() -> Self {
        Self {
            otlp_endpoint: None,
            service_name: "bcp-bridge".to_owned(),
            export_timeout_ms: 5_000,
        }
    }
}

impl TelemetryConfig {
    /// The collector's traces URL: the endpoint with `/v1/traces` appended (as for
    /// `OTEL_EXPORTER_OTLP_ENDPOINT`).
    pub fn traces_url(&self) -> Option<String> {
        let endpoint = self.otlp_endpoint.as_ref()?;
        Some(format!(
            "{}/v1/traces",
            endpoint.as_str().trim_end_matches('/')
        ))
    }

    pub fn problems(&self) -> Vec<ConfigProblem> {
        let mut problems = Vec::new();
        if let Some(endpoint) = &self.otlp_endpoint {
            if !matches!(endpoint.scheme(), "http" | "https") {
                problems.push(ConfigProblem::new(
                    "telemetry.otlp_endpoint",
                    "must be an http:// or https:// URL (OTLP over HTTP)",
                ));
            }
            if endpoint.query().is_some() || !endpoint.username().is_empty() {
                problems.push(ConfigProblem::new(
                    "telemetry.otlp_endpoint",
                    "must have no query or credentials (set OTEL_EXPORTER_OTLP_HEADERS instead)",
                ));
            }
        }
        if self.service_name.trim().is_empty() {
            problems.push(ConfigProblem::new(
                "telemetry.service_name",
                "must not be empty",
            ));
        }
        if self.export_timeout_ms == 0 {
            problems.push(ConfigProblem::new(
                "telemetry.export_timeout_ms",
                "must be at least 1",
            ));
        }
        problems
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn off_by_default_and_the_traces_path_is_appended() {
        let config = TelemetryConfig::default();
        assert!(config.traces_url().is_none());
        assert!(config.problems().is_empty());
        let config = TelemetryConfig {
            otlp_endpoint: Some(Url::parse("http://127.0.0.1:4318/").unwrap()),
            ..TelemetryConfig::default()
        };
        assert_eq!(
            config.traces_url().as_deref(),
            Some("http://127.0.0.1:4318/v1/traces")
        );
    }

    #[test]
    fn only_plain_http_endpoints_are_accepted() {
        let config = TelemetryConfig {
            otlp_endpoint: Some(Url::parse("grpc://collector:4317").unwrap()),
            service_name: " ".to_owned(),
            export_timeout_ms: 0,
        };
        let keys: Vec<String> = config.problems().into_iter().map(|p| p.key).collect();
        assert_eq!(
            keys,
            [
                "telemetry.otlp_endpoint",
                "telemetry.service_name",
                "telemetry.export_timeout_ms"
            ]
        );
    }
}
