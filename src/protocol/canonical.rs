//! One spelling per argument payload: JSON with object keys sorted at every level and the
//! top-level `meta` left out, so neither key order nor transport metadata makes two requests
//! differ. What idempotency fingerprints and the answer cache keys on.

use std::io::Write;

use serde_json::Value;

/// The arguments' canonical bytes, `meta` left out.
pub fn payload(arguments: &Value) -> Vec<u8> {
    let mut out = Vec::with_capacity(128);
    match arguments {
        Value::Object(map) => write_members(
            map.iter().filter(|(key, _)| key.as_str() != "meta"),
            &mut out,
        ),
        other => write(other, &mut out),
    }
    out
}

fn write_members<'v>(members: impl Iterator<Item = (&'v String, &'v Value)>, out: &mut Vec<u8>) {
    let mut members: Vec<_> = members.collect();
    members.sort_unstable_by_key(|(key, _)| *key);
    out.push(b'{');
    for (index, (key, value)) in members.into_iter().enumerate() {
        if index > 0 {
            out.push(b',');
        }
        leaf(&mut *out, key);
        out.push(b':');
        write(value, out);
    }
    out.push(b'}');
}

fn write(value: &Value, out: &mut Vec<u8>) {
    match value {
        Value::Object(map) => write_members(map.iter(), out),
        Value::Array(items) => {
            out.push(b'[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.push(b',');
                }
                write(item, out);
            }
            out.push(b']');
        }
        other => leaf(out, other),
    }
}

/// A string or scalar as serde_json writes it (escaped); writing to memory cannot fail.
fn leaf(out: &mut (impl Write + ?Sized), value: &(impl serde::Serialize + ?Sized)) {
    let _ = serde_json::to_writer(out, value);
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use serde_json::json;

    use super::*;

    #[test]
    fn key_order_and_meta_do_not_matter_and_everything_else_does() {
        let a = json!({"meta": {"idempotency-key": "a"}, "cart": {"x": 1, "y": [1, {"b": "\"", "a": 1}]}});
        let b = json!({"cart": {"y": [1, {"a": 1, "b": "\""}], "x": 1}, "meta": {"k": "b"}});
        assert_eq!(payload(&a), payload(&b));
        assert_eq!(
            String::from_utf8(payload(&a)).unwrap(),
            r#"{"cart":{"x":1,"y":[1,{"a":1,"b":"\""}]}}"#
        );
        // Only the top-level meta is transport metadata.
        let nested = json!({"cart": {"meta": 1}});
        assert_ne!(payload(&nested), payload(&json!({"cart": {}})));
        assert_ne!(
            payload(&json!({"a": [1, 2]})),
            payload(&json!({"a": [2, 1]}))
        );
        assert_ne!(payload(&json!({"a": "1"})), payload(&json!({"a": 1})));
    }
}
