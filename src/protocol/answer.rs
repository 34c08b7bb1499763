//! A tool answer encoded once. The brain serialises its typed answer straight to JSON text
//! (no `serde_json::Value` tree in between); the transport copies those bytes into
//! `structuredContent` and escapes them once into the text copy. Generic over the typed
//! answer, so answer shapes (per protocol version) change without touching the encoding.

use serde::Serialize;
use serde_json::Value;

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
}

#[derive(Debug, Clone)]
pub struct Answer {
    /// Compact JSON written by serde_json from a typed value, so always valid JSON.
    json: String,
    outcome: Outcome,
}

impl Answer {
    pub fn encode<T: Serialize + ?Sized>(
        value: &T,
        outcome: Outcome,
    ) -> Result<Self, serde_json::Error> {
        Ok(Self {
            json: serde_json::to_string(value)?,
            outcome,
        })
    }

    pub fn json(&self) -> &str {
        &self.json
    }

    pub fn outcome(&self) -> Outcome {
        self.outcome
    }

    /// The answer as a tree, for the paths that edit or store it (rmcp's result type,
    /// idempotency records, an added notice); not the hot path.
    pub fn to_value(&self) -> Result<Value, serde_json::Error> {
        serde_json::from_str(&self.json)
    }

    /// Back from a tree (a replayed idempotency record): the outcome is read from its
    /// envelope.
    pub fn from_value(value: &Value) -> Result<Self, serde_json::Error> {
        let outcome = match value
            .get("ucp")
            .and_then(|ucp| ucp.get("status"))
            .and_then(Value::as_str)
        {
            Some("error") => Outcome::BusinessError,
            _ => Outcome::Success,
        };
        Self::encode(value, outcome)
    }
}
