//! One JSON-RPC frame judged to the letter before rmcp sees it: a JSON object with
//! `"jsonrpc": "2.0"`, a string `method`, and an `id` that is a string or an integer (a
//! frame without `id` is a notification and is never answered with a body). Duplicate keys
//! anywhere are refused (-32600) rather than resolved silently. The messages the front
//! answers itself (see [`judge`]) echo the id byte for byte; rmcp echoes an id's value, so a
//! message for rmcp may not carry an integer id rmcp cannot hold (beyond 64 bits).

use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt;

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
    /// Hand the body to rmcp as it came.
    Pass(Bytes),
    /// A notification rmcp cannot read: 202, no body.
    Accepted,
    /// A plain `tools/call` the front answers itself (`judge(.., true)` only).
    Direct(DirectCall),
    /// A plain `tools/list` or `ping` the front answers itself (`judge(.., true)` only).
    Listing { id: RawId, method: Listing },
    /// Answer with this JSON-RPC error.
    Refuse(FrameError),
}

/// The two requests besides `tools/call` whose answer is the same for every plain client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Listing {
    Tools,
    Ping,
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

/// Per-request protocol metadata changes how rmcp answers; such a message stays rmcp's.
fn protocol_keys(meta: Option<&JsonObject>) -> bool {
    meta.is_some_and(|meta| {
        meta.keys()
            .any(|key| key.starts_with("io.modelcontextprotocol/"))
    })
}

/// An optional object member: absent or `null` is `Ok(None)`, any other type `Err`.
fn member_object<'a>(params: &'a JsonObject, name: &str) -> Result<Option<&'a JsonObject>, ()> {
    match params.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Object(object)) => Ok(Some(object)),
        Some(_) => Err(()),
    }
}

/// The params of a `tools/call` the front answers itself, taken out of the frame's tree:
/// a string `name`, and `arguments` and `_meta` objects when present. Anything else rmcp
/// knows how to treat (input responses, request state, per-request protocol metadata)
/// leaves the params where they are, for rmcp.
fn direct_call(id: &str, params: &mut Option<Value>) -> Option<DirectCall> {
    let Some(Value::Object(object)) = params.as_ref() else {
        return None;
    };
    let plain = matches!(object.get("name"), Some(Value::String(_)))
        && member_object(object, "arguments").is_ok()
        && member_object(object, "_meta").is_ok_and(|meta| !protocol_keys(meta))
        && ["inputResponses", "requestState"]
            .iter()
            .all(|key| matches!(object.get(*key), None | Some(Value::Null)));
    if !plain {
        return None;
    }
    let Some(Value::Object(mut object)) = params.take() else {
        return None;
    };
    let take = |object: &mut JsonObject, key: &str| match object.swap_remove(key) {
        Some(Value::Object(taken)) => Some(taken),
        _ => None,
    };
    let Some(Value::String(name)) = object.swap_remove("name") else {
        return None;
    };
    Some(DirectCall {
        id: id.to_owned(),
        name,
        arguments: take(&mut object, "arguments").unwrap_or_default(),
        meta: take(&mut object, "_meta"),
    })
}

/// The JSON-RPC error the front writes for a frame it will not hand on (a protocol error
/// found before the pipeline; the pipeline's own are `ProtocolError`s).
pub struct FrameError {
    pub http_400: bool,
    pub id: RawId,
    pub code: i32,
    pub message: String,
}

impl FrameError {
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

/// A JSON value read into a tree in the same pass that refuses a key written twice in one
/// object: the tool arguments are parsed once, checked as they are built.
struct Tree(Value);

impl<'de> Deserialize<'de> for Tree {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(TreeVisitor)
    }
}

struct TreeVisitor;

impl<'de> Visitor<'de> for TreeVisitor {
    type Value = Tree;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("JSON")
    }
    fn visit_bool<E>(self, value: bool) -> Result<Tree, E> {
        Ok(Tree(Value::Bool(value)))
    }
    fn visit_i64<E>(self, value: i64) -> Result<Tree, E> {
        Ok(Tree(Value::Number(value.into())))
    }
    fn visit_u64<E>(self, value: u64) -> Result<Tree, E> {
        Ok(Tree(Value::Number(value.into())))
    }
    /// As serde_json's own tree: a float JSON cannot hold is null.
    fn visit_f64<E>(self, value: f64) -> Result<Tree, E> {
        Ok(Tree(
            serde_json::Number::from_f64(value).map_or(Value::Null, Value::Number),
        ))
    }
    fn visit_str<E>(self, value: &str) -> Result<Tree, E> {
        Ok(Tree(Value::String(value.to_owned())))
    }
    fn visit_string<E>(self, value: String) -> Result<Tree, E> {
        Ok(Tree(Value::String(value)))
    }
    fn visit_unit<E>(self) -> Result<Tree, E> {
        Ok(Tree(Value::Null))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Tree, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(64));
        while let Some(Tree(item)) = seq.next_element::<Tree>()? {
            items.push(item);
        }
        Ok(Tree(Value::Array(items)))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Tree, A::Error> {
        let mut object = JsonObject::new();
        while let Some(key) = map.next_key::<String>()? {
            let Tree(value) = map.next_value::<Tree>()?;
            // The object is the set of keys seen: no second structure, no second walk.
            match object.entry(key) {
                serde_json::map::Entry::Occupied(seen) => {
                    return Err(repeated(seen.key()));
                }
                serde_json::map::Entry::Vacant(slot) => {
                    slot.insert(value);
                }
            }
        }
        Ok(Tree(Value::Object(object)))
    }
}

fn repeated<E: de::Error>(key: &str) -> E {
    E::custom(format_args!("duplicate key \"{}\"", echo(key)))
}

/// A member read as written, refused if it holds a key twice.
struct Checked<'de>(&'de RawValue);

impl<'de> Deserialize<'de> for Checked<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = <&RawValue>::deserialize(deserializer)?;
        serde_json::from_str::<Unique>(raw.get()).map_err(de::Error::custom)?;
        Ok(Checked(raw))
    }
}

/// The frame read in one pass: the members the front reads (`params` as a tree), every other
/// member walked for repeated keys only. `None`: the document is not an object.
struct Read<'de>(Option<Members<'de>>);

/// The members the front reads; a member present as `null` is `Some("null")`.
#[derive(Default)]
struct Members<'a> {
    jsonrpc: Option<&'a RawValue>,
    id: Option<&'a RawValue>,
    method: Option<&'a RawValue>,
    params: Option<Value>,
}

impl<'de> Deserialize<'de> for Read<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ReadVisitor)
    }
}

struct ReadVisitor;

impl<'de> Visitor<'de> for ReadVisitor {
    type Value = Read<'de>;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("JSON")
    }
    fn visit_bool<E>(self, _: bool) -> Result<Read<'de>, E> {
        Ok(Read(None))
    }
    fn visit_i64<E>(self, _: i64) -> Result<Read<'de>, E> {
        Ok(Read(None))
    }
    fn visit_u64<E>(self, _: u64) -> Result<Read<'de>, E> {
        Ok(Read(None))
    }
    fn visit_f64<E>(self, _: f64) -> Result<Read<'de>, E> {
        Ok(Read(None))
    }
    fn visit_str<E>(self, _: &str) -> Result<Read<'de>, E> {
        Ok(Read(None))
    }
    fn visit_unit<E>(self) -> Result<Read<'de>, E> {
        Ok(Read(None))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Read<'de>, A::Error> {
        UniqueVisitor.visit_seq(seq)?;
        Ok(Read(None))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Read<'de>, A::Error> {
        let mut members = Members::default();
        let mut seen: Vec<Cow<'de, str>> = Vec::new();
        while let Some(Key(key)) = map.next_key::<Key<'de>>()? {
            match key.as_ref() {
                "jsonrpc" => members.jsonrpc = Some(map.next_value::<Checked<'de>>()?.0),
                "id" => members.id = Some(map.next_value::<Checked<'de>>()?.0),
                "method" => members.method = Some(map.next_value::<Checked<'de>>()?.0),
                "params" => members.params = Some(map.next_value::<Tree>()?.0),
                _ => {
                    map.next_value::<Unique>()?;
                }
            }
            if seen.contains(&key) {
                return Err(repeated(&key));
            }
            // A frame has a handful of members; one with thousands is refused by the body
            // limit long before this scan matters.
            seen.push(key);
        }
        Ok(Read(Some(members)))
    }
}

fn present<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(deserializer).map(Some)
}

/// The id and method of a frame already judged (read again only for a refused replay).
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow, default, deserialize_with = "present")]
    id: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    method: Option<&'a RawValue>,
}

/// The params of a `tools/list` or `ping` the front answers itself: none, or an object
/// without per-request protocol metadata (a `cursor` changes nothing: every tool is listed).
fn plain_listing(params: Option<&Value>) -> bool {
    match params {
        None => true,
        Some(Value::Object(params)) => {
            member_object(params, "_meta").is_ok_and(|meta| !protocol_keys(meta))
        }
        Some(_) => false,
    }
}

enum IdKind {
    /// A string, or an integer within 64 bits: rmcp keeps its value.
    Held,
    /// An integer beyond 64 bits: only the front, which echoes it as written, can answer it.
    Wide,
    Invalid,
}

fn id_kind(raw: &str) -> IdKind {
    match raw.as_bytes().first() {
        Some(b'"') => IdKind::Held,
        Some(b'-' | b'0'..=b'9') if raw.contains(['.', 'e', 'E']) => IdKind::Invalid,
        Some(b'-' | b'0'..=b'9') => match raw.parse::<i64>() {
            Ok(_) => IdKind::Held,
            Err(_) => IdKind::Wide,
        },
        _ => IdKind::Invalid,
    }
}

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

/// `plain`: the request's protocol version answers in the plain result shape (no
/// per-request metadata rules), so the front answers `tools/call`, `tools/list` and `ping`
/// itself: read here once, never handed to rmcp.
pub fn judge(bytes: Bytes, plain: bool) -> Verdict {
    let null = || "null".to_owned();
    let read = match serde_json::from_slice::<Read<'_>>(&bytes) {
        Ok(Read(read)) => read,
        Err(error) => {
            return Verdict::Refuse(if error.classify() == serde_json::error::Category::Data {
                FrameError::invalid(null(), error.to_string())
            } else {
                FrameError {
                    http_400: true,
                    id: null(),
                    code: -32700,
                    message: format!("Parse error: {error}"),
                }
            });
        }
    };
    let Some(mut envelope) = read else {
        return Verdict::Refuse(
            if bytes.iter().find(|byte| !byte.is_ascii_whitespace()) == Some(&b'[') {
                FrameError::invalid(null(), "JSON-RPC batches are not supported")
            } else {
                FrameError::invalid(null(), "a request must be an object")
            },
        );
    };
    let (id, wide) = match envelope.id.map(|id| (id, id_kind(id.get()))) {
        None => (None, false),
        Some((_, IdKind::Invalid)) => {
            return Verdict::Refuse(FrameError::invalid(
                null(),
                "id must be a string or an integer",
            ));
        }
        Some((id, IdKind::Held)) => (Some(id.get()), false),
        Some((id, IdKind::Wide)) => (Some(id.get()), true),
    };
    let echoed = || id.map_or_else(null, str::to_owned);
    if envelope.jsonrpc.map(RawValue::get) != Some("\"2.0\"") {
        return Verdict::Refuse(FrameError::invalid(echoed(), "jsonrpc must be \"2.0\""));
    }
    let method = match envelope
        .method
        .map(|method| serde_json::from_str::<String>(method.get()))
    {
        Some(Ok(method)) => method,
        _ if id.is_none() && envelope.method.is_some() => return Verdict::Accepted,
        None => return Verdict::Refuse(FrameError::invalid(echoed(), "missing method")),
        Some(Err(_)) => {
            return Verdict::Refuse(FrameError::invalid(echoed(), "method must be a string"));
        }
    };
    if plain && let Some(raw) = id {
        let listing = match method.as_str() {
            "tools/call" => {
                if let Some(call) = direct_call(raw, &mut envelope.params) {
                    return Verdict::Direct(call);
                }
                None
            }
            "tools/list" => Some(Listing::Tools),
            "ping" => Some(Listing::Ping),
            _ => None,
        };
        if let Some(method) = listing.filter(|_| plain_listing(envelope.params.as_ref())) {
            return Verdict::Listing {
                id: raw.to_owned(),
                method,
            };
        }
    }
    if wide {
        return Verdict::Refuse(FrameError::invalid(
            echoed(),
            "an integer id beyond 64 bits is only answered for tools/call, tools/list and ping; use a string id",
        ));
    }
    let readable = match serde_json::from_slice::<ClientJsonRpcMessage>(&bytes) {
        Ok(message) => match custom_method(&message) {
            None => return Verdict::Pass(bytes),
            Some(custom) => custom == "tools/call",
        },
        Err(_) => false,
    };
    if id.is_none() {
        return Verdict::Accepted;
    }
    if method == "tools/call" {
        let params = envelope.params;
        let named = params
            .as_ref()
            .and_then(|params| params.get("name"))
            .is_some_and(Value::is_string);
        let arguments_ok = params
            .as_ref()
            .and_then(|params| params.get("arguments"))
            .is_none_or(|arguments| arguments.is_object() || arguments.is_null());
        if !named || !arguments_ok {
            return Verdict::Refuse(FrameError {
                http_400: false,
                id: echoed(),
                code: -32602,
                message: "Invalid params: tools/call needs params.name (string) and params.arguments (object)".to_owned(),
            });
        }
    }
    if readable {
        return Verdict::Pass(bytes);
    }
    let (code, message) = if MCP_METHODS.contains(&method.as_str()) {
        (-32602, format!("Invalid params for {}", echo(&method)))
    } else {
        (-32601, format!("Method not found: {}", echo(&method)))
    };
    Verdict::Refuse(FrameError {
        http_400: false,
        id: echoed(),
        code,
        message,
    })
}

/// The frame's id as the client wrote it (`null` when absent or invalid), for answers the
/// front gives itself.
/// Whether the frame is a `tools/call` (as written, no escapes: anything else is not one
/// rmcp would run either).
pub fn is_tool_call(bytes: &[u8]) -> bool {
    serde_json::from_slice::<Envelope<'_>>(bytes)
        .ok()
        .and_then(|envelope| envelope.method)
        .is_some_and(|method| method.get() == "\"tools/call\"")
}

pub fn raw_id(bytes: &[u8]) -> RawId {
    serde_json::from_slice::<Envelope<'_>>(bytes)
        .ok()
        .and_then(|envelope| envelope.id)
        .filter(|id| !matches!(id_kind(id.get()), IdKind::Invalid))
        .map_or_else(|| "null".to_owned(), |id| id.get().to_owned())
}

#[cfg(test)]
#[allow(clippy::panic, clippy::unwrap_used)]
mod tests {
    use super::*;

    fn refusal(text: &str) -> (i32, String) {
        match judge(Bytes::from(text.to_owned()), false) {
            Verdict::Refuse(refusal) => (refusal.code, refusal.id),
            Verdict::Pass(_) => (0, "pass".into()),
            Verdict::Listing { .. } => (0, "listing".into()),
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
    fn duplicate_keys_are_refused_wherever_they_sit() {
        for frame in [
            r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","arguments":{"q":{"x":1,"x":2}}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","arguments":{"list":[{"k":1,"k":1}]}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"ping","extra":{"a":{"b":1,"b":2}}}"#,
            r#"{"jsonrpc":"2.0","id":{"a":1,"a":1},"method":"ping"}"#,
            r#"[{"a":1,"a":2}]"#,
        ] {
            let Verdict::Refuse(refusal) = judge(Bytes::from(frame.to_owned()), true) else {
                panic!("accepted: {frame}");
            };
            assert_eq!(refusal.code, -32600, "{frame}");
            assert!(
                refusal.message.contains("duplicate key"),
                "{}",
                refusal.message
            );
        }
    }

    #[test]
    fn a_plain_tool_call_is_read_once_into_its_name_arguments_and_meta() {
        let frame = r#"{"jsonrpc":"2.0","id":"a\"b","method":"tools/call","params":{"name":"get_product","arguments":{"catalog":{"id":"p1","n":1.5}},"_meta":{"k":"v"}}}"#;
        let Verdict::Direct(call) = judge(Bytes::from(frame.to_owned()), true) else {
            panic!("expected a direct call");
        };
        assert_eq!(call.id, r#""a\"b""#);
        assert_eq!(call.name, "get_product");
        assert_eq!(
            Value::Object(call.arguments),
            serde_json::json!({"catalog": {"id": "p1", "n": 1.5}})
        );
        assert_eq!(
            call.meta.map(Value::Object),
            Some(serde_json::json!({"k": "v"}))
        );
        // What the front cannot answer plainly goes to rmcp untouched.
        for params in [
            r#"{"name":"x","_meta":{"io.modelcontextprotocol/related-task":{}}}"#,
            r#"{"name":"x","requestState":"s"}"#,
            r#"{"name":"x","arguments":[1]}"#,
            r#"["x"]"#,
        ] {
            let frame =
                format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{params}}}"#);
            assert!(
                !matches!(judge(Bytes::from(frame), true), Verdict::Direct(_)),
                "{params}"
            );
        }
    }

    #[test]
    fn wide_integer_ids_are_answered_by_the_front_or_refused_never_rewritten() {
        let id = "123456789012345678901234567890";
        let ping = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#);
        let Verdict::Listing { id: echoed, method } = judge(Bytes::from(ping.clone()), true) else {
            panic!("expected the front to answer a plain ping");
        };
        assert_eq!((echoed.as_str(), method), (id, Listing::Ping));
        let Verdict::Refuse(refusal) = judge(Bytes::from(ping), false) else {
            panic!("rmcp cannot hold the id: the front must refuse");
        };
        assert_eq!((refusal.code, refusal.id.as_str()), (-32600, id));
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
