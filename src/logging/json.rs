//! JSON log lines with every field capped: the shape of tracing-subscriber's own JSON
//! (`timestamp`, `level`, `fields`, `target`, `span`, `spans`), but each string value, the
//! message included, is cut after [`MAX_FIELD_CHARS`] characters with a note of how many were
//! dropped. JSON escapes C0 control characters itself; the ones it leaves raw (DEL, C1, line
//! and paragraph separators, bidi overrides) are escaped as the text log escapes them, so a
//! line read raw in a terminal is as safe as a parsed one.

use std::fmt::{self, Write as _};

use serde_json::{Map, Value};
use tracing::field::{Field, Visit};
use tracing::{Event, Subscriber};
use tracing_subscriber::field::RecordFields;
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::time::{FormatTime, SystemTime};
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields, FormattedFields};
use tracing_subscriber::registry::LookupSpan;

use super::MAX_FIELD_CHARS;

/// A string being built from a value, keeping at most `max` characters and counting the rest,
/// so a 1 MB value is never held in full.
struct Capped {
    out: String,
    kept: usize,
    dropped: usize,
    max: usize,
}

impl Capped {
    fn new(max: usize) -> Self {
        Self {
            out: String::new(),
            kept: 0,
            dropped: 0,
            max,
        }
    }

    fn finish(mut self) -> String {
        if self.dropped > 0 {
            let _ = write!(self.out, "…(+{} chars)", self.dropped);
        }
        self.out
    }
}

impl fmt::Write for Capped {
    fn write_str(&mut self, text: &str) -> fmt::Result {
        for c in text.chars() {
            if self.kept == self.max {
                self.dropped += 1;
                continue;
            }
            self.kept += 1;
            if c == '\u{7f}'
                || ('\u{80}'..='\u{9f}').contains(&c)
                || matches!(c, '\u{2028}' | '\u{2029}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
            {
                let _ = write!(self.out, "\\u{{{:x}}}", u32::from(c));
            } else {
                self.out.push(c);
            }
        }
        Ok(())
    }
}

/// `text` as a JSON log value: capped at `max` characters, the characters JSON leaves raw escaped.
fn json_capped(text: &str, max: usize) -> String {
    let mut capped = Capped::new(max);
    let _ = capped.write_str(text);
    capped.finish()
}

/// Collects fields into a JSON object, strings capped; numbers and booleans stay typed.
#[derive(Default)]
struct Fields(Map<String, Value>);

impl Fields {
    fn put(&mut self, field: &Field, value: Value) {
        self.0.insert(field.name().to_owned(), value);
    }
}

impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        let mut capped = Capped::new(MAX_FIELD_CHARS);
        let _ = write!(capped, "{value:?}");
        self.put(field, Value::String(capped.finish()));
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        self.put(field, Value::String(json_capped(value, MAX_FIELD_CHARS)));
    }

    fn record_error(&mut self, field: &Field, value: &(dyn std::error::Error + 'static)) {
        let mut capped = Capped::new(MAX_FIELD_CHARS);
        let _ = write!(capped, "{value}");
        self.put(field, Value::String(capped.finish()));
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.put(field, Value::from(value));
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.put(field, Value::from(value));
    }

    fn record_f64(&mut self, field: &Field, value: f64) {
        self.put(field, Value::from(value));
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.put(field, Value::from(value));
    }
}

/// The span field formatter of the JSON log: a capped JSON object per span.
#[derive(Debug, Clone, Copy, Default)]
pub struct CappedJsonFields;

impl<'writer> FormatFields<'writer> for CappedJsonFields {
    fn format_fields<R: RecordFields>(
        &self,
        mut writer: Writer<'writer>,
        fields: R,
    ) -> fmt::Result {
        let mut visitor = Fields::default();
        fields.record(&mut visitor);
        write!(writer, "{}", Value::Object(visitor.0))
    }

    fn add_fields(
        &self,
        current: &'writer mut FormattedFields<Self>,
        fields: &tracing::span::Record<'_>,
    ) -> fmt::Result {
        // Fields recorded later on a span are merged into its object, not appended as text.
        let mut visitor = match serde_json::from_str::<Value>(&current.fields) {
            Ok(Value::Object(map)) => Fields(map),
            _ => Fields::default(),
        };
        fields.record(&mut visitor);
        current.fields = Value::Object(visitor.0).to_string();
        Ok(())
    }
}

/// The event formatter of the JSON log; span fields come from [`CappedJsonFields`].
#[derive(Debug, Clone, Copy, Default)]
pub struct CappedJson;

impl<S, N> FormatEvent<S, N> for CappedJson
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        let mut timestamp = String::new();
        SystemTime.format_time(&mut Writer::new(&mut timestamp))?;
        let meta = event.metadata();
        let mut fields = Fields::default();
        event.record(&mut fields);
        let mut line = Map::new();
        line.insert("timestamp".into(), Value::String(timestamp));
        line.insert(
            "level".into(),
            Value::String(meta.level().as_str().to_owned()),
        );
        line.insert("fields".into(), Value::Object(fields.0));
        line.insert("target".into(), Value::String(meta.target().to_owned()));
        if let Some(scope) = ctx.event_scope() {
            let mut spans = Vec::new();
            for span in scope.from_root() {
                let mut object = Map::new();
                object.insert("name".into(), Value::String(span.name().to_owned()));
                if let Some(recorded) = span.extensions().get::<FormattedFields<N>>()
                    && let Ok(Value::Object(recorded)) = serde_json::from_str(recorded)
                {
                    object.extend(recorded);
                }
                spans.push(Value::Object(object));
            }
            if let Some(current) = spans.last() {
                line.insert("span".into(), current.clone());
            }
            line.insert("spans".into(), Value::Array(spans));
        }
        writeln!(writer, "{}", Value::Object(line))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn long_values_are_cut_and_raw_json_controls_escaped() {
        let long = "a".repeat(10_000);
        let capped = json_capped(&long, MAX_FIELD_CHARS);
        assert!(capped.starts_with(&"a".repeat(MAX_FIELD_CHARS)));
        assert!(capped.ends_with("…(+9488 chars)"), "{capped}");
        // C0 is left to the JSON encoder; what JSON passes through raw is escaped here.
        assert_eq!(
            json_capped("a\nb\u{85}\u{2028}\u{202e}", 10),
            "a\nb\\u{85}\\u{2028}\\u{202e}"
        );
    }

    #[test]
    fn every_field_and_span_field_of_a_json_line_is_capped() {
        use crate::logging::tests::Sink;
        let sink = Sink::default();
        let writer = sink.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(move || writer.clone())
            .event_format(CappedJson)
            .fmt_fields(CappedJsonFields)
            .finish();
        let huge = "m\n".repeat(500_000);
        tracing::subscriber::with_default(subscriber, || {
            let span = tracing::info_span!("call", agent = %huge);
            let _entered = span.enter();
            tracing::warn!(method = %huge, debug = ?huge, count = 3u64, "unknown {huge}");
        });
        let bytes = sink.bytes();
        let text = String::from_utf8(bytes).unwrap();
        assert_eq!(text.lines().count(), 1, "{}", &text[..200]);
        assert!(text.len() < 16 * MAX_FIELD_CHARS, "{} bytes", text.len());
        let line: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(line["level"], "WARN");
        assert_eq!(line["fields"]["count"], 3);
        for value in [
            &line["fields"]["message"],
            &line["fields"]["method"],
            &line["fields"]["debug"],
            &line["span"]["agent"],
            &line["spans"][0]["agent"],
        ] {
            let value = value.as_str().unwrap();
            assert!(value.contains("…(+"), "{value}");
            assert!(value.chars().count() < MAX_FIELD_CHARS + 20, "{value}");
        }
    }
}
