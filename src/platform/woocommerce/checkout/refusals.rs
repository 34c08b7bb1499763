//! A store's `400` at `POST /checkout` for a field, read as the requirements the order did not
//! meet, so the brain answers with a message at the field's path instead of a protocol error.
//! Observed on 10.9.4 with Brazilian Market: `rest_missing_callback_param` ("Missing
//! parameter(s): additional_fields") when no document was sent; `rest_invalid_param` whose
//! `data.details.<param>` carries the store's `message` and the field's `data.key`
//! (`invalid_cpf` for `csbmw/cpf`, "Number is required" for `csbmw/number`), more of them
//! under `additional_errors`.

use serde_json::Value;

use super::super::text::decode_entities;
use super::brazil::{CNPJ, COMPANY_NAME, CPF, CheckoutFields, NEIGHBORHOOD, NUMBER, PERSON_TYPE};
use crate::model::checkout::{CodeRefusal, Unmet};
use crate::model::fiscal::{Requirement, TaxpayerKind};

/// The requirements a refusal names, or `None` when it is not about fields (the caller keeps
/// its own handling of it).
pub fn unmet(body: &Value, fields: &CheckoutFields) -> Option<Vec<Unmet>> {
    let code = body.get("code").and_then(Value::as_str)?;
    let message = body
        .get("message")
        .and_then(Value::as_str)
        .map(decode_entities)
        .unwrap_or_default();
    let mut out: Vec<Unmet> = Vec::new();
    let mut push = |unmet: Unmet| {
        if !out.iter().any(|held| held.requirement == unmet.requirement) {
            out.push(unmet);
        }
    };
    match code {
        "rest_missing_callback_param" => {
            let params = body
                .pointer("/data/params")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            for param in params.iter().filter_map(Value::as_str) {
                let required: Vec<_> = if param == "additional_fields" {
                    fields
                        .contact
                        .iter()
                        .filter(|field| field.required)
                        .collect()
                } else {
                    Vec::new()
                };
                if required.is_empty() {
                    push(Unmet {
                        requirement: other(param, &message),
                        reason: message.clone(),
                        missing: true,
                    });
                }
                for field in required {
                    push(Unmet {
                        requirement: requirement(&field.key, &field.label, fields),
                        reason: format!("The store requires the {}", field.label),
                        missing: true,
                    });
                }
            }
        }
        "rest_invalid_param" => {
            let details = body.pointer("/data/details").and_then(Value::as_object)?;
            for (param, detail) in details {
                let more = detail
                    .get("additional_errors")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default();
                for error in std::iter::once(detail).chain(&more) {
                    let reason = error
                        .get("message")
                        .and_then(Value::as_str)
                        .map(decode_entities)
                        .unwrap_or_else(|| message.clone());
                    let missing = error.get("code").and_then(Value::as_str)
                        == Some("woocommerce_required_checkout_field");
                    let requirement = match error.pointer("/data/key").and_then(Value::as_str) {
                        Some(key) => {
                            let label = fields
                                .all()
                                .find(|field| field.key == key)
                                .map_or(key, |field| field.label.as_str());
                            requirement(key, label, fields)
                        }
                        None => other(param, &reason),
                    };
                    push(Unmet {
                        requirement,
                        reason,
                        missing,
                    });
                }
            }
        }
        _ => return None,
    }
    Some(out)
}

fn other(key: &str, label: &str) -> Requirement {
    Requirement::Other {
        key: key.to_owned(),
        label: label.to_owned(),
    }
}

fn requirement(key: &str, label: &str, fields: &CheckoutFields) -> Requirement {
    match key {
        CPF | CNPJ | PERSON_TYPE | COMPANY_NAME => {
            let mut kinds: Vec<TaxpayerKind> =
                [(CPF, TaxpayerKind::Cpf), (CNPJ, TaxpayerKind::Cnpj)]
                    .into_iter()
                    .filter(|(key, _)| fields.contact.iter().any(|field| field.key == *key))
                    .map(|(_, kind)| kind)
                    .collect();
            if kinds.is_empty() {
                kinds = vec![TaxpayerKind::Cpf, TaxpayerKind::Cnpj];
            }
            Requirement::TaxpayerId { kinds }
        }
        NUMBER => Requirement::HouseNumber,
        NEIGHBORHOOD => Requirement::Neighborhood,
        _ => other(key, label),
    }
}

/// Why the store did not apply a code, from its message.
pub(super) fn code_refusal(message: &str) -> CodeRefusal {
    if message.contains("expired") {
        CodeRefusal::Expired
    } else if message.contains("already applied") {
        CodeRefusal::AlreadyApplied
    } else if message.contains("individual use")
        || message.contains("cannot be used in conjunction")
    {
        CodeRefusal::CombinationDisallowed
    } else {
        CodeRefusal::Invalid
    }
}
