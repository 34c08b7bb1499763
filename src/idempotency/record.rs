//! A record as the stores keep it, and what it weighs.

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

/// What the store holds under one scoped key.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(into = "Stored", try_from = "Stored")]
pub enum Record {
    /// Claimed by a request still running.
    Pending { fingerprint: String },
    /// The answer's bytes as the agent first got them, so a replay is the same bytes.
    Done {
        fingerprint: String,
        answer: Box<RawValue>,
    },
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
enum State {
    Pending,
    Done,
}

/// A record as stored text: flat, because serde cannot carry raw JSON through an
/// internally tagged enum.
#[derive(Serialize, Deserialize)]
struct Stored {
    state: State,
    fingerprint: String,
    /// `result`: records written before answers were kept as bytes.
    #[serde(default, alias = "result", skip_serializing_if = "Option::is_none")]
    answer: Option<Box<RawValue>>,
}

impl From<Record> for Stored {
    fn from(record: Record) -> Self {
        match record {
            Record::Pending { fingerprint } => Self {
                state: State::Pending,
                fingerprint,
                answer: None,
            },
            Record::Done {
                fingerprint,
                answer,
            } => Self {
                state: State::Done,
                fingerprint,
                answer: Some(answer),
            },
        }
    }
}

impl TryFrom<Stored> for Record {
    type Error = &'static str;

    fn try_from(stored: Stored) -> Result<Self, Self::Error> {
        match (stored.state, stored.answer) {
            (State::Pending, _) => Ok(Self::Pending {
                fingerprint: stored.fingerprint,
            }),
            (State::Done, Some(answer)) => Ok(Self::Done {
                fingerprint: stored.fingerprint,
                answer,
            }),
            (State::Done, None) => Err("a done record without its answer"),
        }
    }
}

impl PartialEq for Record {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Self::Pending { fingerprint: a }, Self::Pending { fingerprint: b }) => a == b,
            (
                Self::Done {
                    fingerprint: a,
                    answer: x,
                },
                Self::Done {
                    fingerprint: b,
                    answer: y,
                },
            ) => a == b && x.get() == y.get(),
            _ => false,
        }
    }
}

/// What one record costs the in-memory store beyond its strings, estimated from the layout: a
/// map slot (~100 bytes at the load factor's average), an index entry in a part-full B-tree
/// node (~80), and the headers of its four allocations.
const RECORD_OVERHEAD: usize = 256;

/// The bytes a record under `key` holds: the key twice (map and index) and the record's text.
/// Quotas charge the same weight, whichever store keeps the record.
pub fn weight(key: &str, record: &Record) -> usize {
    let text = match record {
        Record::Pending { fingerprint } => fingerprint.len(),
        Record::Done {
            fingerprint,
            answer,
        } => fingerprint.len() + answer.get().len(),
    };
    2 * key.len() + text + RECORD_OVERHEAD
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]
    use super::*;
    use crate::protocol::answer::Answer;

    #[test]
    fn a_recorded_answer_comes_back_as_the_same_bytes_through_the_stored_text() {
        let bytes = r#"{"ucp":{"version":"2026-07-28","status":"error"},"messages":[{"type":"error","code":"not_found","content":"x"}],"z":1,"a":2}"#;
        let record = Record::Done {
            fingerprint: "fp".into(),
            answer: RawValue::from_string(bytes.to_owned()).unwrap(),
        };
        let text = serde_json::to_string(&record).unwrap();
        let back: Record = serde_json::from_str(&text).unwrap();
        assert_eq!(back, record);
        let Record::Done { answer, .. } = back else {
            panic!("a done record");
        };
        let replayed = Answer::replayed(answer.get().to_owned()).unwrap();
        assert_eq!(replayed.json(), bytes);
        assert_eq!(replayed.reason(), Some("not_found"));
        // Records written before answers were kept as bytes still replay.
        let older = r#"{"state":"done","fingerprint":"fp","result":{"ucp":{"status":"success"}}}"#;
        let Record::Done { answer, .. } = serde_json::from_str(older).unwrap() else {
            panic!("a done record");
        };
        assert_eq!(answer.get(), r#"{"ucp":{"status":"success"}}"#);
    }
}
