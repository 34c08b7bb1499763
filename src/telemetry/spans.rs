//! The two spans the bridge makes and the `traceparent` they read and write.

use std::future::Future;

use http::{HeaderMap, HeaderName, HeaderValue};
use opentelemetry::context::{FutureExt as _, WithContext};
use opentelemetry::propagation::{Extractor, Injector, TextMapPropagator as _};
use opentelemetry::trace::{Span as _, SpanKind, Status, TraceContextExt as _, Tracer as _};
use opentelemetry::{Context, KeyValue};
use opentelemetry_sdk::propagation::TraceContextPropagator;

use super::{route, tracer};

/// One tool call's span (inert when telemetry is off).
pub struct ToolSpan {
    cx: Option<Context>,
}

/// Starts the span of one tool call, the child of the agent's `traceparent` (and
/// `tracestate`) in `headers` when they hold a valid one. `tool` must be a name the bridge
/// knows (the pipeline passes `unknown` for any other), never the client's raw text.
pub fn tool_call(
    tool: &'static str,
    transport: &'static str,
    headers: Option<&HeaderMap>,
) -> ToolSpan {
    let Some(tracer) = tracer() else {
        return ToolSpan { cx: None };
    };
    let parent = headers.map_or_else(Context::new, |headers| {
        TraceContextPropagator::new().extract(&Incoming(headers))
    });
    let span = tracer
        .span_builder("tools/call")
        .with_kind(SpanKind::Server)
        .with_attributes([
            KeyValue::new("bcp.tool", tool),
            KeyValue::new("bcp.transport", transport),
        ])
        .start_with_context(tracer, &parent);
    ToolSpan {
        cx: Some(parent.with_span(span)),
    }
}

impl ToolSpan {
    /// The span of a call made while telemetry is off: nothing.
    pub fn off() -> Self {
        Self { cx: None }
    }

    /// Runs `work` with this span current, so the upstream spans it starts are its children.
    pub fn within<F: Future>(&self, work: F) -> WithContext<F> {
        work.with_context(self.cx.clone().unwrap_or_else(Context::current))
    }

    /// Ends the span with the release the call was agreed at and its outcome label.
    pub fn finish(self, version: Option<&str>, outcome: &'static str, refused: bool) {
        let Some(cx) = self.cx else { return };
        let span = cx.span();
        if let Some(version) = version {
            span.set_attribute(KeyValue::new("bcp.version", version.to_owned()));
        }
        span.set_attribute(KeyValue::new("bcp.outcome", outcome));
        if refused {
            span.set_status(Status::error(outcome));
        }
        span.end();
    }
}

/// One upstream request's span (inert when telemetry is off).
pub struct UpstreamSpan {
    span: Option<opentelemetry_sdk::trace::Span>,
}

/// Starts the span of one request to the store, the child of the current tool call, and
/// writes its `traceparent` into the request's `headers`. `retry` is how many times this
/// request went out before (0 the first time).
pub fn upstream_request(
    upstream: &'static str,
    method: &str,
    path: &str,
    retry: u32,
    headers: &mut HeaderMap,
) -> UpstreamSpan {
    let Some(tracer) = tracer() else {
        return UpstreamSpan { span: None };
    };
    let route = route::template(path);
    let parent = Context::current();
    let span = tracer
        .span_builder(format!("{method} {route}"))
        .with_kind(SpanKind::Client)
        .with_attributes([
            KeyValue::new("http.request.method", method.to_owned()),
            KeyValue::new("url.template", route),
            KeyValue::new("http.request.resend_count", i64::from(retry)),
            KeyValue::new("bcp.upstream", upstream),
        ])
        .start_with_context(tracer, &parent);
    let cx = parent.with_remote_span_context(span.span_context().clone());
    TraceContextPropagator::new().inject_context(&cx, &mut Outgoing(headers));
    UpstreamSpan { span: Some(span) }
}

impl UpstreamSpan {
    /// The span of a request made while telemetry is off: nothing.
    pub fn off() -> Self {
        Self { span: None }
    }

    /// Ends the span with the store's status (`None`: no answer) and, on failure, the
    /// bridge's label for it (`throttled`, `unavailable`, …).
    pub fn finish(self, status: Option<u16>, error: Option<&'static str>) {
        let Some(mut span) = self.span else { return };
        if let Some(status) = status {
            span.set_attribute(KeyValue::new(
                "http.response.status_code",
                i64::from(status),
            ));
        }
        if let Some(error) = error {
            span.set_attribute(KeyValue::new("error.type", error));
            span.set_status(Status::error(error));
        }
        span.end();
    }
}

struct Incoming<'a>(&'a HeaderMap);

impl Extractor for Incoming<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(|value| value.to_str().ok())
    }

    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(HeaderName::as_str).collect()
    }
}

struct Outgoing<'a>(&'a mut HeaderMap);

impl Injector for Outgoing<'_> {
    fn set(&mut self, key: &str, value: String) {
        if let (Ok(name), Ok(value)) = (
            HeaderName::from_bytes(key.as_bytes()),
            HeaderValue::from_str(&value),
        ) {
            self.0.insert(name, value);
        }
    }
}
