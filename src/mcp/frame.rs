//! One JSON-RPC frame judged to the letter before rmcp sees it: a JSON object with
//! `"jsonrpc": "2.0"`, a string `method`, and an `id` that is a string or an integer (a
//! frame without `id` is a notification and is never answered with a body). Duplicate keys
//! anywhere are refused (-32600) rather than resolved silently. Ids rmcp would not echo
//! byte for byte (integers beyond i64, strings with escapes) are swapped for a placeholder
//! on the way in and put back, as written, on the way out.

use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};

use bytes::Bytes;
use rmcp::model::JsonObject;
use rmcp::model::{ClientJsonRpcMessage, ClientRequest, JsonRpcMessage};
use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::logging::echo;

/// An id as the client wrote it: `null` when it could not be determined (JSON-RPC 2.0 §5).
pub type RawId = String;

/// What the front does with a frame.
pub enum Verdict {
    /// Hand the body to rmcp.
    Pass {
        body: Bytes,
        restore: Option<Restore>,
    },
    /// A notification rmcp cannot read: 202, no body.
    Accepted,
    /// A plain `tools/call` the front answers itself (`judge(.., true)` only).
    Direct(DirectCall),
    /// Answer with this JSON-RPC error.
    Refuse(Refusal),
}

/// A `tools/call` read once into what the tool handler needs.
pub struct DirectCall {
    /// The id as the client wrote it, echoed byte for byte.
    pub id: RawId,
    pub name: String,
    pub arguments: JsonObject,
    /// `params._meta`, where MCP clients may carry the agent profile.
    pub meta: Option<JsonObject>,
}

/// The params of a `tools/call` the front answers itself. Anything else rmcp knows how to
/// treat (input responses, request state, per-request protocol metadata) goes to rmcp.
#[derive(Deserialize)]
struct DirectParams {
    name: String,
    #[serde(default)]
    arguments: Option<JsonObject>,
    #[serde(rename = "_meta", default)]
    meta: Option<JsonObject>,
    #[serde(rename = "inputResponses", default)]
    input_responses: Option<de::IgnoredAny>,
    #[serde(rename = "requestState", default)]
    request_state: Option<de::IgnoredAny>,
}

fn direct_call(id: &str, params: Option<&RawValue>) -> Option<DirectCall> {
    let params = serde_json::from_str::<DirectParams>(params?.get()).ok()?;
    let protocol_keys = params.meta.as_ref().is_some_and(|meta| {
        meta.keys()
            .any(|key| key.starts_with("io.modelcontextprotocol/"))
    });
    if params.input_responses.is_some() || params.request_state.is_some() || protocol_keys {
        return None;
    }
    Some(DirectCall {
        id: id.to_owned(),
        name: params.name,
        arguments: params.arguments.unwrap_or_default(),
        meta: params.meta,
    })
}

/// Put `raw` back where rmcp echoed `placeholder`.
pub struct Restore {
    pub placeholder: String,
    pub raw: RawId,
}

pub struct Refusal {
    pub http_400: bool,
    pub id: RawId,
    pub code: i32,
    pub message: String,
}

impl Refusal {
    fn invalid(id: RawId, message: impl Into<String>) -> Self {
        Self {
            http_400: true,
            id,
            code: -32600,
            message: format!("Invalid Request: {}", message.into()),
        }
    }
}

const MCP_METHODS: &[&str] = &[
    "initialize",
    "ping",
    "tools/list",
    "tools/call",
    "notifications/initialized",
    "notifications/cancelled",
    "resources/list",
    "prompts/list",
    "logging/setLevel",
    "completion/complete",
    "server/discover",
];

/// Walks a JSON document failing on the first object holding a key twice.
struct Unique;

impl<'de> Deserialize<'de> for Unique {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(UniqueVisitor)
    }
}

struct UniqueVisitor;

impl<'de> Visitor<'de> for UniqueVisitor {
    type Value = Unique;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("JSON")
    }
    fn visit_bool<E>(self, _: bool) -> Result<Unique, E> {
        Ok(Unique)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Unique, E> {
        Ok(Unique)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Unique, E> {
        Ok(Unique)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Unique, E> {
        Ok(Unique)
    }
    fn visit_str<E>(self, _: &str) -> Result<Unique, E> {
        Ok(Unique)
    }
    fn visit_unit<E>(self) -> Result<Unique, E> {
        Ok(Unique)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Unique, A::Error> {
        while seq.next_element::<Unique>()?.is_some() {}
        Ok(Unique)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Unique, A::Error> {
        // Keys borrow from the body unless they hold escapes. Most objects are small, where
        // a linear scan beats hashing; a hostile one with thousands of keys gets a set.
        let mut few: Vec<Cow<'de, str>> = Vec::new();
        let mut many: HashSet<Cow<'de, str>> = HashSet::new();
        while let Some(Key(key)) = map.next_key::<Key<'de>>()? {
            map.next_value::<Unique>()?;
            let repeated = if many.is_empty() && few.len() < LINEAR_KEYS {
                let seen = few.contains(&key);
                few.push(key.clone());
                seen
            } else {
                many.extend(few.drain(..));
                !many.insert(key.clone())
            };
            if repeated {
                return Err(de::Error::custom(format_args!(
                    "duplicate key \"{}\"",
                    echo(&key)
                )));
            }
        }
        Ok(Unique)
    }
}

/// Keys of one object checked by linear scan before switching to a set.
const LINEAR_KEYS: usize = 16;

struct Key<'de>(Cow<'de, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_str(KeyVisitor)
    }
}

struct KeyVisitor;

impl<'de> Visitor<'de> for KeyVisitor {
    type Value = Key<'de>;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("an object key")
    }
    fn visit_borrowed_str<E>(self, key: &'de str) -> Result<Key<'de>, E> {
        Ok(Key(Cow::Borrowed(key)))
    }
    fn visit_str<E>(self, key: &str) -> Result<Key<'de>, E> {
        Ok(Key(Cow::Owned(key.to_owned())))
    }
}

fn present<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(deserializer).map(Some)
}

/// The members the front reads; a member present as `null` is `Some("null")`.
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow, default, deserialize_with = "present")]
    jsonrpc: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    id: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    method: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    params: Option<&'a RawValue>,
}

/// Where `inner` (a slice of `outer`) sits in it.
fn span(outer: &[u8], inner: &str) -> Option<(usize, usize)> {
    let start = (inner.as_ptr() as usize).checked_sub(outer.as_ptr() as usize)?;
    let end = start.checked_add(inner.len())?;
    (end <= outer.len()).then_some((start, end))
}

enum IdKind {
    /// rmcp echoes it exactly.
    Plain,
    /// Valid, but rmcp would rewrite it.
    Foreign,
    Invalid,
}

fn id_kind(raw: &str) -> IdKind {
    match raw.as_bytes().first() {
        Some(b'"') if raw.contains('\\') => IdKind::Foreign,
        Some(b'"') => IdKind::Plain,
        Some(b'-' | b'0'..=b'9') if raw.contains(['.', 'e', 'E']) => IdKind::Invalid,
        Some(b'-' | b'0'..=b'9') => match raw.parse::<i64>() {
            Ok(number) if number.to_string() == raw => IdKind::Plain,
            _ => IdKind::Foreign,
        },
        _ => IdKind::Invalid,
    }
}

static PLACEHOLDERS: AtomicU64 = AtomicU64::new(0);

/// rmcp files every method it does not know (and a tools/call whose params it cannot read)
/// under "custom request", and would echo the method name whole.
fn custom_method(message: &ClientJsonRpcMessage) -> Option<&str> {
    match message {
        JsonRpcMessage::Request(request) => match &request.request {
            ClientRequest::CustomRequest(custom) => Some(custom.method.as_str()),
            _ => None,
        },
        _ => None,
    }
}

/// `direct`: the transport lets the front answer a plain `tools/call` itself (sessionless,
/// no protocol headers rmcp must judge), so it is read here once and never handed to rmcp.
pub fn judge(bytes: Bytes, direct: bool) -> Verdict {
    let null = || "null".to_owned();
    if let Err(error) = serde_json::from_slice::<Unique>(&bytes) {
        return Verdict::Refuse(if error.classify() == serde_json::error::Category::Data {
            Refusal::invalid(null(), error.to_string())
        } else {
            Refusal {
                http_400: true,
                id: null(),
                code: -32700,
                message: format!("Parse error: {error}"),
            }
        });
    }
    match bytes.iter().find(|byte| !byte.is_ascii_whitespace()) {
        Some(b'{') => {}
        Some(b'[') => {
            return Verdict::Refuse(Refusal::invalid(
                null(),
                "JSON-RPC batches are not supported",
            ));
        }
        _ => return Verdict::Refuse(Refusal::invalid(null(), "a request must be an object")),
    }
    let Ok(envelope) = serde_json::from_slice::<Envelope<'_>>(&bytes) else {
        return Verdict::Refuse(Refusal::invalid(null(), "unreadable request object"));
    };
    let (id, restore) = match envelope.id.map(|id| (id, id_kind(id.get()))) {
        None => (None, false),
        Some((_, IdKind::Invalid)) => {
            return Verdict::Refuse(Refusal::invalid(
                null(),
                "id must be a string or an integer",
            ));
        }
        Some((id, IdKind::Plain)) => (Some(id.get()), false),
        Some((id, IdKind::Foreign)) => (Some(id.get()), true),
    };
    let echoed = || id.map_or_else(null, str::to_owned);
    if envelope.jsonrpc.map(RawValue::get) != Some("\"2.0\"") {
        return Verdict::Refuse(Refusal::invalid(echoed(), "jsonrpc must be \"2.0\""));
    }
    let method = match envelope
        .method
        .map(|method| serde_json::from_str::<String>(method.get()))
    {
        Some(Ok(method)) => method,
        _ if id.is_none() && envelope.method.is_some() => return Verdict::Accepted,
        None => return Verdict::Refuse(Refusal::invalid(echoed(), "missing method")),
        Some(Err(_)) => {
            return Verdict::Refuse(Refusal::invalid(echoed(), "method must be a string"));
        }
    };
    if direct
        && method == "tools/call"
        && let Some(raw) = id
        && let Some(call) = direct_call(raw, envelope.params)
    {
        return Verdict::Direct(call);
    }
    let (body, restore) = match (id, restore) {
        (Some(raw), true) => {
            let Some((start, end)) = span(&bytes, raw) else {
                return Verdict::Refuse(Refusal::invalid(null(), "unreadable id"));
            };
            let placeholder = format!(
                "\"bcp-front-{}\"",
                PLACEHOLDERS.fetch_add(1, Ordering::Relaxed)
            );
            let mut body = Vec::with_capacity(bytes.len() + placeholder.len());
            body.extend_from_slice(&bytes[..start]);
            body.extend_from_slice(placeholder.as_bytes());
            body.extend_from_slice(&bytes[end..]);
            (
                Bytes::from(body),
                Some(Restore {
                    placeholder,
                    raw: raw.to_owned(),
                }),
            )
        }
        _ => (bytes.clone(), None),
    };
    let readable = match serde_json::from_slice::<ClientJsonRpcMessage>(&body) {
        Ok(message) => match custom_method(&message) {
            None => return Verdict::Pass { body, restore },
            Some(custom) => custom == "tools/call",
        },
        Err(_) => false,
    };
    if id.is_none() {
        return Verdict::Accepted;
    }
    if method == "tools/call" {
        let params = envelope
            .params
            .and_then(|params| serde_json::from_str::<Value>(params.get()).ok());
        let named = params
            .as_ref()
            .and_then(|params| params.get("name"))
            .is_some_and(Value::is_string);
        let arguments_ok = params
            .as_ref()
            .and_then(|params| params.get("arguments"))
            .is_none_or(|arguments| arguments.is_object() || arguments.is_null());
        if !named || !arguments_ok {
            return Verdict::Refuse(Refusal {
                http_400: false,
                id: echoed(),
                code: -32602,
                message: "Invalid params: tools/call needs params.name (string) and params.arguments (object)".to_owned(),
            });
        }
    }
    if readable {
        return Verdict::Pass { body, restore };
    }
    let (code, message) = if MCP_METHODS.contains(&method.as_str()) {
        (-32602, format!("Invalid params for {}", echo(&method)))
    } else {
        (-32601, format!("Method not found: {}", echo(&method)))
    };
    Verdict::Refuse(Refusal {
        http_400: false,
        id: echoed(),
        code,
        message,
    })
}

/// The frame's id as the client wrote it (`null` when absent or invalid), for answers the
/// front gives itself.
pub fn raw_id(bytes: &[u8]) -> RawId {
    serde_json::from_slice::<Envelope<'_>>(bytes)
        .ok()
        .and_then(|envelope| envelope.id)
        .filter(|id| !matches!(id_kind(id.get()), IdKind::Invalid))
        .map_or_else(|| "null".to_owned(), |id| id.get().to_owned())
}

/// The answer `body` with the client's id where rmcp wrote `restore.placeholder`.
pub fn restore_id(body: &[u8], restore: &Restore) -> Option<Vec<u8>> {
    #[derive(Deserialize)]
    struct Answer<'a> {
        #[serde(borrow, default, deserialize_with = "present")]
        id: Option<&'a RawValue>,
    }
    let answer = serde_json::from_slice::<Answer<'_>>(body).ok()?;
    let id = answer.id?;
    if id.get() != restore.placeholder {
        return None;
    }
    let (start, end) = span(body, id.get())?;
    let mut out = Vec::with_capacity(body.len() + restore.raw.len());
    out.extend_from_slice(&body[..start]);
    out.extend_from_slice(restore.raw.as_bytes());
    out.extend_from_slice(&body[end..]);
    Some(out)
}

#[cfg(test)]
#[allow(clippy::panic, clippy::unwrap_used)]
mod tests {
    use super::*;

    fn refusal(text: &str) -> (i32, String) {
        match judge(Bytes::from(text.to_owned()), false) {
            Verdict::Refuse(refusal) => (refusal.code, refusal.id),
            Verdict::Pass { .. } => (0, "pass".into()),
            Verdict::Accepted => (0, "accepted".into()),
            Verdict::Direct(_) => (0, "direct".into()),
        }
    }

    #[test]
    fn ids_of_the_wrong_type_are_invalid_requests_with_a_null_id() {
        for id in ["true", "[]", "{}", "1.5", "1e3", "null"] {
            let frame = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#);
            assert_eq!(refusal(&frame), (-32600, "null".to_owned()), "{id}");
        }
    }

    #[test]
    fn duplicate_keys_are_refused() {
        let frame =
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","name":"b"}}"#;
        assert_eq!(refusal(frame), (-32600, "null".to_owned()));
    }

    #[test]
    fn big_integer_ids_are_swapped_and_restored_exactly() {
        let frame = r#"{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"ping"}"#;
        let Verdict::Pass {
            body,
            restore: Some(restore),
        } = judge(Bytes::from_static(frame.as_bytes()), false)
        else {
            panic!("expected a rewritten pass");
        };
        assert!(!String::from_utf8_lossy(&body).contains("1234567890123"));
        let answer = format!(
            r#"{{"jsonrpc":"2.0","id":{},"result":{{}}}}"#,
            restore.placeholder
        );
        let restored = restore_id(answer.as_bytes(), &restore).unwrap_or_default();
        assert_eq!(
            String::from_utf8_lossy(&restored),
            r#"{"jsonrpc":"2.0","id":123456789012345678901234567890,"result":{}}"#
        );
    }

    #[test]
    fn notifications_rmcp_cannot_read_are_accepted_silently() {
        let frame = r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":[1]}"#;
        assert_eq!(refusal(frame), (0, "accepted".to_owned()));
    }

    #[test]
    fn long_method_names_are_not_echoed_whole() {
        let frame = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"{}"}}"#,
            "x".repeat(1_000_000)
        );
        let Verdict::Refuse(refusal) = judge(Bytes::from(frame), false) else {
            panic!("expected a refusal");
        };
        assert_eq!(refusal.code, -32601);
        assert!(refusal.message.len() < 200, "{}", refusal.message.len());
    }
}
