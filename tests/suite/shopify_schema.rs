//! Every operation in `graphql/` is valid against the FULL real Storefront schema, so a field
//! Shopify does not have can never ship; and the trimmed subset the derives compile against
//! declares nothing the real schema lacks. The real schema is in `../shared` (not in this
//! repository): these tests are ignored by a plain `cargo test` and run by `.ci/run`.

use std::path::{Path, PathBuf};

use apollo_compiler::schema::ExtendedType;
use apollo_compiler::{ExecutableDocument, Schema};

use crate::support::outside::shared_file;

const FULL: &str = "upstream/shopify/storefront.schema.graphql";

/// The full Storefront schema from `../shared`; the test fails without it.
fn full_schema() -> apollo_compiler::validation::Valid<Schema> {
    let (path, text) = shared_file(FULL);
    Schema::parse_and_validate(text, path).unwrap()
}

fn graphql_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("graphql")
}

fn operation_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(graphql_dir())
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| {
            path.extension().is_some_and(|ext| ext == "graphql")
                && !path
                    .file_name()
                    .unwrap()
                    .to_string_lossy()
                    .starts_with("storefront")
        })
        .collect();
    files.sort();
    files
}

#[test]
#[ignore = "needs ../shared (the upstream Shopify schema): cargo test -- --include-ignored with ../shared beside the clone"]
fn operations_validate_against_the_full_schema() {
    let schema = full_schema();
    let files = operation_files();
    assert!(files.len() >= 2, "{files:?}");
    for file in files {
        let source = std::fs::read_to_string(&file).unwrap();
        if let Err(invalid) = ExecutableDocument::parse_and_validate(&schema, source, &file) {
            panic!(
                "{} is not valid against the real schema:\n{}",
                file.display(),
                invalid.errors
            );
        }
    }
}

#[test]
#[ignore = "needs ../shared (the upstream Shopify schema): cargo test -- --include-ignored with ../shared beside the clone"]
fn a_field_shopify_lacks_is_rejected() {
    let schema = full_schema();
    let bad = "query Q { product(id: \"1\") { id inventoryLevel } }";
    assert!(ExecutableDocument::parse_and_validate(&schema, bad, "bad.graphql").is_err());
}

#[test]
#[ignore = "needs ../shared (the upstream Shopify schema): cargo test -- --include-ignored with ../shared beside the clone"]
fn the_subset_is_a_faithful_part_of_the_real_schema() {
    let full = full_schema();
    let subset_path = graphql_dir().join("storefront.subset.graphql");
    let subset =
        Schema::parse_and_validate(std::fs::read_to_string(&subset_path).unwrap(), &subset_path)
            .unwrap();
    for (name, ty) in &subset.types {
        if ty.is_built_in() {
            continue;
        }
        let real = full
            .types
            .get(name)
            .unwrap_or_else(|| panic!("{name} is not in the real schema"));
        match (ty, real) {
            (ExtendedType::Object(sub), ExtendedType::Object(real)) => {
                for (field, definition) in &sub.fields {
                    let real_field = real
                        .fields
                        .get(field)
                        .unwrap_or_else(|| panic!("{name}.{field} is not in the real schema"));
                    assert_eq!(definition.ty, real_field.ty, "{name}.{field}");
                    assert_eq!(
                        definition.arguments.len(),
                        real_field.arguments.len(),
                        "{name}.{field} arguments"
                    );
                }
            }
            (ExtendedType::Interface(sub), ExtendedType::Interface(real)) => {
                for field in sub.fields.keys() {
                    assert!(real.fields.contains_key(field), "{name}.{field}");
                }
            }
            (ExtendedType::InputObject(sub), ExtendedType::InputObject(real)) => {
                for (field, definition) in &sub.fields {
                    let real_field = real
                        .fields
                        .get(field)
                        .unwrap_or_else(|| panic!("{name}.{field} is not in the real schema"));
                    assert_eq!(definition.ty, real_field.ty, "{name}.{field}");
                }
                // Left-out input fields must be optional, or Shopify would reject our input.
                for (field, definition) in &real.fields {
                    if !sub.fields.contains_key(field) {
                        assert!(!definition.ty.is_non_null(), "{name}.{field} is required");
                    }
                }
            }
            (ExtendedType::Enum(sub), ExtendedType::Enum(real)) => {
                assert_eq!(sub.values.len(), real.values.len(), "{name}");
            }
            (ExtendedType::Union(_), ExtendedType::Union(_))
            | (ExtendedType::Scalar(_), ExtendedType::Scalar(_)) => {}
            _ => panic!("{name} has another kind in the real schema"),
        }
    }
}
