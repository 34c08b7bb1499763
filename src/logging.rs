//! Logs a client cannot forge (leaf): every value written to the text log has its control
//! characters escaped and its length capped, so a tool name holding "\n2026-… INFO …" or
//! ESC sequences stays on its own line and a 1 MB method name stays short. The same
//! escaping bounds client text echoed in error messages. JSON lines cap every field the same
//! way (see [`CappedJson`]).

use std::fmt::Write as _;

use tracing_subscriber::field::{MakeExt, RecordFields};
use tracing_subscriber::filter::{LevelFilter, Targets};
use tracing_subscriber::fmt::FormatFields;
use tracing_subscriber::fmt::format::{Writer, debug_fn};
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;

mod json;

pub use json::{CappedJson, CappedJsonFields};

/// Characters of one logged value at most.
pub const MAX_FIELD_CHARS: usize = 512;
/// Characters of client text echoed in an error message at most.
pub const MAX_ECHO_CHARS: usize = 100;

/// `text` with control characters (C0, DEL, C1) and line/paragraph separators and bidi
/// overrides escaped, cut after `max` characters with a note of how many were dropped.
pub fn escape_capped(text: &str, max: usize) -> String {
    let mut out = String::with_capacity(text.len().min(max.saturating_mul(2)));
    let mut chars = text.chars();
    for (kept, c) in chars.by_ref().enumerate() {
        if kept == max {
            let dropped = 1 + chars.count();
            let _ = write!(out, "…(+{dropped} chars)");
            return out;
        }
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control()
                || matches!(c, '\u{2028}' | '\u{2029}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}') =>
            {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out
}

/// Client text fit for an error message: escaped, at most [`MAX_ECHO_CHARS`].
pub fn echo(text: &str) -> String {
    escape_capped(text, MAX_ECHO_CHARS)
}

/// The field formatter of the text log: `name=value` with every value escaped and capped.
pub fn safe_fields() -> impl for<'writer> FormatFields<'writer> + Send + Sync + 'static {
    debug_fn(
        |writer: &mut Writer<'_>, field: &tracing::field::Field, value| {
            let raw = format!("{value:?}");
            let safe = escape_capped(&raw, MAX_FIELD_CHARS);
            if field.name() == "message" {
                write!(writer, "{safe}")
            } else {
                write!(writer, "{}={safe}", field.name())
            }
        },
    )
    .delimited(" ")
}

/// Renders `fields` the way the text log would (for tests of the formatter).
pub fn render_fields<R: RecordFields>(fields: R) -> String {
    let mut out = String::new();
    let _ = safe_fields().format_fields(Writer::new(&mut out), fields);
    out
}

/// rmcp's service logs every error reply at WARN (a dump of its error struct); the handler
/// already logs each refused call once, at INFO.
const DEFAULT_LOG_FILTER: &str = "info,rmcp=warn,rmcp::service=error";

/// The most any `RUST_LOG` can turn on for dependencies that log what clients sent: rmcp's
/// service dumps every request's arguments and every answer (buyer names, addresses, emails)
/// at DEBUG and TRACE, and its WARN error dumps may echo them. Nothing below these levels
/// reaches the log whatever the operator asks for (issue 27: no personal data at any level).
pub fn ceiling() -> Targets {
    Targets::new()
        .with_default(LevelFilter::TRACE)
        .with_target("rmcp", LevelFilter::WARN)
        .with_target("rmcp::service", LevelFilter::ERROR)
}

/// Logs to stderr: text by default, JSON lines with `json` (JSON escapes control characters
/// itself; every field is capped like the text log's). `RUST_LOG` overrides the default filter
/// below the [`ceiling`].
pub fn init(json: bool) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(DEFAULT_LOG_FILTER));
    let layer = tracing_subscriber::fmt::layer().with_writer(std::io::stderr);
    let registry = tracing_subscriber::registry().with(filter).with(ceiling());
    if json {
        registry
            .with(layer.event_format(CappedJson).fmt_fields(CappedJsonFields))
            .init();
    } else {
        registry.with(layer.fmt_fields(safe_fields())).init();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A log writer the tests read back (shared with `json`'s tests).
    #[derive(Clone, Default)]
    pub(super) struct Sink(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

    impl Sink {
        pub(super) fn bytes(&self) -> Vec<u8> {
            self.0.lock().unwrap_or_else(|p| p.into_inner()).clone()
        }
    }

    impl std::io::Write for Sink {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn newlines_and_escapes_cannot_start_a_forged_line() {
        let forged = "x\n2026-12-01T00:00:00Z  INFO FORGED\r\u{1b}[31mred\u{85}\u{7f}";
        let safe = escape_capped(forged, MAX_FIELD_CHARS);
        assert!(!safe.chars().any(char::is_control), "{safe}");
        assert_eq!(
            safe,
            "x\\n2026-12-01T00:00:00Z  INFO FORGED\\r\\u{1b}[31mred\\u{85}\\u{7f}"
        );
    }

    #[test]
    fn long_values_are_cut_with_a_count() {
        let long = "a".repeat(1_000_000);
        let safe = escape_capped(&long, MAX_FIELD_CHARS);
        assert!(safe.starts_with(&"a".repeat(MAX_FIELD_CHARS)));
        assert!(safe.ends_with("…(+999488 chars)"), "{}", &safe[500..]);
        assert_eq!(
            echo(&long).chars().count(),
            MAX_ECHO_CHARS + "…(+999900 chars)".chars().count()
        );
    }

    #[test]
    fn short_plain_text_is_untouched() {
        assert_eq!(echo("tools/call"), "tools/call");
        assert_eq!(escape_capped("", 5), "");
        assert_eq!(escape_capped("abcde", 5), "abcde");
        assert_eq!(escape_capped("abcdef", 5), "abcde…(+1 chars)");
    }

    #[test]
    fn the_text_formatter_escapes_messages_and_fields() {
        let sink = Sink::default();
        let writer = sink.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(move || writer.clone())
            .with_ansi(false)
            .fmt_fields(safe_fields())
            .finish();
        let tool = "t\n2026-12-01T00:00:00Z  INFO FORGED line";
        let method = "m".repeat(1_000_000);
        tracing::subscriber::with_default(subscriber, || {
            tracing::warn!(tool = %tool, method = %method, "unknown {tool}");
        });
        let bytes = sink.bytes();
        let text = String::from_utf8(bytes).unwrap_or_default();
        assert_eq!(text.lines().count(), 1, "{text}");
        assert!(text.contains("tool=t\\n2026"), "{text}");
        assert!(text.len() < 4 * MAX_FIELD_CHARS, "{} bytes", text.len());
    }

    #[test]
    fn the_ceiling_holds_rmcp_back_whatever_rust_log_asks() {
        let sink = Sink::default();
        let writer = sink.clone();
        let subscriber = tracing_subscriber::registry()
            .with(tracing_subscriber::EnvFilter::new("trace"))
            .with(ceiling())
            .with(
                tracing_subscriber::fmt::layer()
                    .with_writer(move || writer.clone())
                    .with_ansi(false),
            );
        tracing::subscriber::with_default(subscriber, || {
            tracing::debug!(target: "rmcp::service", request = "buyer-email", "received request");
            tracing::warn!(target: "rmcp::service", error = "buyer-phone", "response error");
            tracing::info!(target: "rmcp::transport", peer = "buyer-name", "session");
            tracing::warn!(target: "rmcp::transport", "transport kept");
            tracing::trace!(target: "bcp_bridge::pipeline", "own trace kept");
        });
        let text = String::from_utf8(sink.bytes()).unwrap_or_default();
        assert!(!text.contains("buyer-"), "{text}");
        assert!(text.contains("transport kept"), "{text}");
        assert!(text.contains("own trace kept"), "{text}");
    }
}
