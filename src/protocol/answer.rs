//! A tool answer encoded once. The brain serialises its typed answer straight to JSON text
//! (no `serde_json::Value` tree in between); the transport copies those bytes into
//! `structuredContent` and escapes them once into the text copy. Generic over the typed
//! answer, so answer shapes (per protocol version) change without touching the encoding.

use std::io;
use std::sync::{Arc, OnceLock};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::ser::{CompactFormatter, Formatter, Serializer};

/// The largest integer every JSON reader holds exactly (2^53 − 1). UCP 2026-08-25 bounds
/// amounts and quantities by it and asks for an error rather than a wrapped or approximate
/// value (OVR-028); older readers lose the same digits, so every release gets the check.
pub const MAX_EXACT_INTEGER: u64 = 9_007_199_254_740_991;

#[derive(Debug, thiserror::Error)]
pub enum EncodeError {
    #[error("{path} is outside the exact integer range of JSON")]
    Inexact { path: String },
    #[error("{0}")]
    Json(#[from] serde_json::Error),
}

/// Compact JSON that stops at the first integer past `MAX_EXACT_INTEGER`, so the check
/// costs nothing beyond the one encoding.
struct ExactIntegers;

fn exact(magnitude: u128) -> io::Result<()> {
    if magnitude > u128::from(MAX_EXACT_INTEGER) {
        return Err(io::Error::other("inexact integer"));
    }
    Ok(())
}

impl Formatter for ExactIntegers {
    fn write_i64<W: ?Sized + io::Write>(&mut self, writer: &mut W, value: i64) -> io::Result<()> {
        exact(u128::from(value.unsigned_abs()))?;
        CompactFormatter.write_i64(writer, value)
    }

    fn write_u64<W: ?Sized + io::Write>(&mut self, writer: &mut W, value: u64) -> io::Result<()> {
        exact(u128::from(value))?;
        CompactFormatter.write_u64(writer, value)
    }

    fn write_i128<W: ?Sized + io::Write>(&mut self, writer: &mut W, value: i128) -> io::Result<()> {
        exact(value.unsigned_abs())?;
        CompactFormatter.write_i128(writer, value)
    }

    fn write_u128<W: ?Sized + io::Write>(&mut self, writer: &mut W, value: u128) -> io::Result<()> {
        exact(value)?;
        CompactFormatter.write_u128(writer, value)
    }
}

/// The path of the first integer beyond `MAX_EXACT_INTEGER`. Merchant `metadata` is passed
/// through as written and is not the bridge's arithmetic, so it is not searched.
fn inexact(value: &Value, path: &str) -> Option<String> {
    match value {
        Value::Number(number) => {
            let out = match (number.as_u64(), number.as_i64()) {
                (Some(unsigned), _) => unsigned > MAX_EXACT_INTEGER,
                (None, Some(signed)) => signed.unsigned_abs() > MAX_EXACT_INTEGER,
                (None, None) => false,
            };
            out.then(|| path.to_owned())
        }
        Value::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(index, item)| inexact(item, &format!("{path}[{index}]"))),
        Value::Object(members) => members
            .iter()
            .filter(|(key, _)| key.as_str() != "metadata")
            .find_map(|(key, member)| inexact(member, &format!("{path}.{key}"))),
        _ => None,
    }
}

/// Whether the answer is a business outcome without a resource (`ucp.status: "error"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Success,
    BusinessError,
}

impl Outcome {
    /// The `ucp.status` the answer carries.
    pub fn status(self) -> &'static str {
        match self {
            Self::Success => "success",
            Self::BusinessError => "error",
        }
    }

    /// The metrics and merchant-page label of a call answered this way.
    pub fn label(self) -> Label {
        match self {
            Self::Success => Label::Success,
            Self::BusinessError => Label::BusinessError,
        }
    }
}

/// How a call ended, as metrics and the merchant page count it: an answer's outcome, or the
/// kind of refusal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Label {
    Success,
    BusinessError,
    Invalid,
    RateLimited,
    Unavailable,
    Error,
}

impl Label {
    /// Every label, in the order the merchant page lists them.
    pub const ALL: [Label; 6] = [
        Label::Success,
        Label::BusinessError,
        Label::Invalid,
        Label::RateLimited,
        Label::Unavailable,
        Label::Error,
    ];

    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Success => "success",
            Self::BusinessError => "business_error",
            Self::Invalid => "invalid",
            Self::RateLimited => "rate_limited",
            Self::Unavailable => "unavailable",
            Self::Error => "error",
        }
    }
}

#[derive(Debug, Clone)]
pub struct Answer {
    /// Compact JSON written by serde_json from a typed value, so always valid JSON. Shared:
    /// a kept answer (answer cache, idempotency) is handed out without copying it.
    json: Arc<str>,
    /// The same JSON as one JSON string literal (MCP's text copy), escaped at most once per
    /// answer and shared by its clones, so a kept answer is escaped once, not per call.
    literal: Arc<OnceLock<Box<str>>>,
    outcome: Outcome,
    /// A business error's first message code, for the merchant page (protocol vocabulary,
    /// never the buyer's words).
    reason: Option<String>,
    /// A create call answered with a resource that already existed (a cart converted again,
    /// CART-002): REST answers it 200, not 201 Created.
    resumed: bool,
}

impl Answer {
    /// Encodes `value` once. An integer past `MAX_EXACT_INTEGER` is an error naming its
    /// path, unless it sits in merchant `metadata` (then the rare second pass writes it as is).
    pub fn encode<T: Serialize + ?Sized>(value: &T, outcome: Outcome) -> Result<Self, EncodeError> {
        let mut json = Vec::with_capacity(1024);
        let checked = value.serialize(&mut Serializer::with_formatter(&mut json, ExactIntegers));
        if let Err(error) = checked {
            if !error.is_io() {
                return Err(error.into());
            }
            let tree = serde_json::to_value(value)?;
            if let Some(path) = inexact(&tree, "$") {
                return Err(EncodeError::Inexact { path });
            }
            json.clear();
            serde_json::to_writer(&mut json, &tree)?;
        }
        Ok(Self {
            // serde_json writes UTF-8 only.
            json: String::from_utf8(json)
                .map_err(|_| {
                    EncodeError::Json(serde::ser::Error::custom("encoded answer is not UTF-8"))
                })?
                .into(),
            literal: Arc::default(),
            outcome,
            reason: None,
            resumed: false,
        })
    }

    pub fn with_reason(mut self, reason: Option<String>) -> Self {
        self.reason = reason;
        self
    }

    pub fn resuming(mut self, resumed: bool) -> Self {
        self.resumed = resumed;
        self
    }

    pub fn resumed(&self) -> bool {
        self.resumed
    }

    pub fn reason(&self) -> Option<&str> {
        self.reason.as_deref()
    }

    pub fn json(&self) -> &str {
        &self.json
    }

    /// [`Answer::json`] written as a JSON string literal, quotes included.
    pub fn literal(&self) -> &str {
        self.literal.get_or_init(|| {
            // Writing a `&str` as JSON cannot fail.
            serde_json::to_string(&*self.json)
                .unwrap_or_default()
                .into_boxed_str()
        })
    }

    pub fn outcome(&self) -> Outcome {
        self.outcome
    }

    /// The answer as a tree, for the paths that edit or store it (rmcp's result type,
    /// idempotency records, an added notice); not the hot path.
    pub fn to_value(&self) -> Result<Value, serde_json::Error> {
        serde_json::from_str(&self.json)
    }

    /// An answer recorded earlier (an idempotent replay), its bytes kept as they were; the
    /// outcome and reason are read back from its envelope.
    pub fn replayed(json: String) -> Result<Self, serde_json::Error> {
        #[derive(Deserialize)]
        struct Status {
            status: Option<String>,
        }
        #[derive(Deserialize)]
        struct Code {
            code: Option<String>,
        }
        #[derive(Deserialize)]
        struct Envelope {
            ucp: Option<Status>,
            #[serde(default)]
            messages: Vec<Code>,
        }
        let envelope: Envelope = serde_json::from_str(&json)?;
        let outcome = match envelope.ucp.and_then(|ucp| ucp.status).as_deref() {
            Some("error") => Outcome::BusinessError,
            _ => Outcome::Success,
        };
        let reason = envelope
            .messages
            .into_iter()
            .next()
            .and_then(|message| message.code);
        Ok(Self {
            json: json.into(),
            literal: Arc::default(),
            outcome,
            reason,
            resumed: false,
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use serde_json::json;

    use super::*;

    #[test]
    fn integers_beyond_two_to_the_53_are_an_error_not_a_rounded_value() {
        // OVR-028
        let at_bound =
            json!({"ucp": {}, "totals": [{"type": "total", "amount": MAX_EXACT_INTEGER}]});
        assert!(Answer::encode(&at_bound, Outcome::Success).is_ok());
        let beyond =
            json!({"ucp": {}, "totals": [{"type": "total", "amount": MAX_EXACT_INTEGER + 1}]});
        let error = Answer::encode(&beyond, Outcome::Success)
            .unwrap_err()
            .to_string();
        assert!(error.contains("$.totals[0].amount"), "{error}");
        let negative = json!({"ucp": {}, "totals": [{"type": "discount", "amount": -(MAX_EXACT_INTEGER as i64) - 1}]});
        assert!(Answer::encode(&negative, Outcome::Success).is_err());
        let merchant = json!({"ucp": {}, "product": {"metadata": {"big": u64::MAX}}});
        let kept = Answer::encode(&merchant, Outcome::Success).unwrap();
        assert!(
            kept.json().contains(&u64::MAX.to_string()),
            "{}",
            kept.json()
        );
    }
}
