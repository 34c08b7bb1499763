//! The tool input schemas derived from the request types accept and refuse exactly what the
//! hand-written ones did, with the same errors in the same order (the first one is the message
//! an agent reads). The hand-written schemas are kept as fixtures
//! (tests/fixtures/schemas/<tool>.json, dumped with the default limits before they were
//! deleted). Cases: the argument objects the suites send (tests/fixtures/schemas/arguments.json,
//! each naming its source), the seeds' requests, each tool description's example, variants
//! generated from the old schema at every member (wrong types, missing and extra members,
//! lengths, ranges, item counts and patterns at and past their bounds) and random objects
//! built from the schemas' member names. Every case is checked against every tool.

use std::path::Path;

use bcp_bridge::brain::LimitsConfig;
use bcp_bridge::pipeline::tool_table::ToolTable;
use bcp_bridge::platform::Capabilities;
use jsonschema::Validator;
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::TestRunner;
use serde_json::{Map, Value, json};

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");

use crate::support::values::CATALOG_AND_CART_TOOLS as TOOLS;

fn read(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap())
        .unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

/// Compiled as `ToolSpec` compiles the published schema.
fn compile(schema: &Value) -> Validator {
    jsonschema::options()
        .should_validate_formats(false)
        .build(schema)
        .unwrap()
}

/// What `ToolSpec::validate` reports: the first ten (path, message) pairs, in order.
fn errors(validator: &Validator, arguments: &Value) -> Vec<(String, String)> {
    validator
        .iter_errors(arguments)
        .take(10)
        .map(|error| {
            (
                error.instance_path().to_string(),
                error.masked().to_string(),
            )
        })
        .collect()
}

/// A valid instance of `schema`: every member when `full`, else only the required ones.
fn sample(schema: &Value, full: bool) -> Value {
    match schema["type"].as_str() {
        Some("object") => {
            let required: Vec<&str> = schema["required"]
                .as_array()
                .map(|names| names.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let mut object = Map::new();
            for (name, member) in schema["properties"].as_object().into_iter().flatten() {
                if full || required.contains(&name.as_str()) {
                    object.insert(name.clone(), sample(member, full));
                }
            }
            Value::Object(object)
        }
        Some("array") => {
            let count = schema["minItems"]
                .as_u64()
                .unwrap_or(0)
                .max(u64::from(full));
            (0..count).map(|_| sample(&schema["items"], full)).collect()
        }
        Some("string") if schema.get("pattern").is_some() => json!("USD"),
        Some("string") => json!(
            "x".repeat(usize::try_from(schema["minLength"].as_u64().unwrap_or(1).max(1)).unwrap())
        ),
        Some("integer") => json!(schema["minimum"].as_i64().unwrap_or(1)),
        Some(other) => panic!("no sample for type {other}"),
        None => json!("anything"),
    }
}

/// Every member of `sample(schema, true)`: its JSON Pointer and its schema.
fn members<'a>(schema: &'a Value, pointer: String, out: &mut Vec<(String, &'a Value)>) {
    out.push((pointer.clone(), schema));
    if let Some(properties) = schema["properties"].as_object() {
        for (name, member) in properties {
            members(member, format!("{pointer}/{name}"), out);
        }
    }
    if schema["type"] == "array" {
        members(&schema["items"], format!("{pointer}/0"), out);
    }
}

fn repeat(text: &str, count: u64) -> Value {
    json!(text.repeat(usize::try_from(count).unwrap()))
}

/// Values to put at a member of this schema: every JSON type, and its bounds on both sides.
fn replacements(schema: &Value, current: &Value) -> Vec<Value> {
    let mut values = vec![
        Value::Null,
        json!(true),
        json!(0),
        json!(-1),
        json!(1.5),
        json!(2.0),
        json!(""),
        json!("x"),
        json!([]),
        json!({}),
        json!(4_294_967_296_u64),
        json!(u64::MAX),
        json!(1e300),
        json!(["x"]),
        json!({"unexpected": 1}),
    ];
    if let Some(min) = schema["minLength"].as_u64() {
        values.push(repeat("x", min));
        if min > 0 {
            values.push(repeat("x", min - 1));
        }
    }
    if let Some(max) = schema["maxLength"].as_u64() {
        // Lengths count characters, not bytes: two- and four-byte ones around the bound.
        for text in ["x", "é", "😀"] {
            values.push(repeat(text, max));
            values.push(repeat(text, max + 1));
        }
    }
    if schema.get("pattern").is_some() {
        for text in ["USD", "usd", "US", "USDX", "12A", "ÀBC", " USD", "USD\n"] {
            values.push(json!(text));
        }
    }
    for bound in ["minimum", "maximum"] {
        if let Some(limit) = schema[bound].as_i64() {
            values.extend([json!(limit - 1), json!(limit), json!(limit + 1)]);
            values.push(json!(limit as f64));
        }
    }
    if schema["type"] == "integer" {
        values.extend([
            json!(u32::MAX),
            json!(i64::MAX),
            json!(i64::MIN),
            json!(-0.0),
        ]);
    }
    if let (Some(item), Some(_)) = (current.get(0), current.as_array()) {
        for bound in ["minItems", "maxItems"] {
            if let Some(count) = schema[bound].as_u64() {
                for count in [count.saturating_sub(1), count, count + 1] {
                    values.push(Value::Array(vec![item.clone(); count as usize]));
                }
            }
        }
    }
    values
}

/// Variants of `base` at every member of `schema`: replaced, removed, or with a stranger added.
fn variants(schema: &Value, base: &Value, out: &mut Vec<Value>) {
    let mut found = Vec::new();
    members(schema, String::new(), &mut found);
    for (pointer, member) in found {
        let Some(current) = base.pointer(&pointer).cloned() else {
            continue;
        };
        for value in replacements(member, &current) {
            let mut variant = base.clone();
            *variant.pointer_mut(&pointer).unwrap() = value;
            out.push(variant);
        }
        if current.is_object() {
            let mut variant = base.clone();
            variant.pointer_mut(&pointer).unwrap()["unexpected"] = json!("member");
            out.push(variant);
        }
        if let Some((parent, name)) = pointer.rsplit_once('/') {
            let mut variant = base.clone();
            if let Some(object) = variant.pointer_mut(parent).and_then(Value::as_object_mut) {
                object.remove(name);
                out.push(variant);
            }
        }
    }
}

/// Random argument objects spoken in the schemas' own member names.
fn random(names: Vec<String>) -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        (0_i64..2000).prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        "[A-Za-z0-9 ]{0,6}".prop_map(Value::from),
        (0_usize..3000).prop_map(|len| Value::from("é".repeat(len))),
    ];
    let key = prop_oneof![
        4 => proptest::sample::select(names),
        1 => "[a-z-]{1,8}",
    ];
    leaf.prop_recursive(5, 48, 5, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((key.clone(), inner), 0..5)
                .prop_map(|members| Value::Object(members.into_iter().collect())),
        ]
    })
}

fn names(schema: &Value, out: &mut Vec<String>) {
    match schema {
        Value::Object(map) => {
            for (key, value) in map {
                if let Some(properties) = value.as_object().filter(|_| key == "properties") {
                    out.extend(properties.keys().cloned());
                }
                names(value, out);
            }
        }
        Value::Array(items) => items.iter().for_each(|item| names(item, out)),
        _ => {}
    }
}

#[test]
fn derived_input_schemas_judge_every_argument_as_the_hand_written_ones_did() {
    let capabilities = Capabilities {
        search: true,
        lookup: true,
        cart: true,
    };
    let table = ToolTable::new(&LimitsConfig::default(), capabilities).unwrap();
    let published: Vec<_> = table.tools();
    let mut old = Vec::new();
    let mut new = Vec::new();
    let mut cases: Vec<Value> = Vec::new();
    for (tool, name) in published.iter().zip(TOOLS) {
        assert_eq!(tool.name, name);
        let hand_written = read(&Path::new(DIR).join(format!("schemas/{name}.json")));
        let derived = Value::Object((*tool.input_schema).clone());
        // The example every description ends with.
        let description = tool.description.as_deref().unwrap();
        let (_, example) = description.rsplit_once("Example arguments: ").unwrap();
        cases.push(serde_json::from_str(example).unwrap());
        cases.push(sample(&hand_written, true));
        cases.push(sample(&hand_written, false));
        variants(&hand_written, &sample(&hand_written, true), &mut cases);
        variants(&hand_written, &sample(&hand_written, false), &mut cases);
        old.push(compile(&hand_written));
        new.push((compile(&derived), hand_written));
    }
    let generated = cases.len();

    let recorded = read(&Path::new(DIR).join("schemas/arguments.json"));
    for case in recorded.as_array().unwrap() {
        assert!(TOOLS.contains(&case["tool"].as_str().unwrap()), "{case}");
        cases.push(case["arguments"].clone());
    }
    for entry in std::fs::read_dir(Path::new(DIR).join("seeds")).unwrap() {
        let path = entry.unwrap().path();
        if path.to_string_lossy().ends_with(".request.json") {
            cases.push(read(&path)["params"]["arguments"].clone());
        }
    }
    let gathered = cases.len() - generated;

    let mut vocabulary = Vec::new();
    for (_, schema) in &new {
        names(schema, &mut vocabulary);
    }
    vocabulary.sort();
    vocabulary.dedup();
    let strategy = random(vocabulary);
    let mut runner = TestRunner::deterministic();
    for _ in 0..500 {
        cases.push(strategy.new_tree(&mut runner).unwrap().current());
    }

    let (mut accepted, mut refused) = (0, 0);
    for arguments in &cases {
        for (index, name) in TOOLS.into_iter().enumerate() {
            let before = errors(&old[index], arguments);
            let after = errors(&new[index].0, arguments);
            assert_eq!(
                before, after,
                "{name} judges these arguments differently: {arguments}"
            );
            // The published schema is the one calls are checked against.
            let spec = table.get(name).unwrap();
            assert_eq!(spec.validate(arguments).is_ok(), after.is_empty(), "{name}");
            if after.is_empty() {
                accepted += 1;
            } else {
                refused += 1;
            }
        }
    }
    eprintln!(
        "{} argument objects ({generated} generated from the schemas, {gathered} gathered from the suites and seeds, 500 random) x {} tools: {accepted} accepted, {refused} refused",
        cases.len(),
        TOOLS.len()
    );
    assert!(gathered >= 50 && accepted > 100 && refused > 1000);
}
