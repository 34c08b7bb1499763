#![allow(clippy::unwrap_used)]
use serde_json::{Value, json};

use super::*;
use crate::model::fiscal::TaxpayerId;

/// `OPTIONS /checkout` of the real 10.9.4 with Brazilian Market (person type 2, bairro
/// required), cut to the properties the adapter reads.
fn bairro_required() -> Value {
    serde_json::from_str(include_str!(
        "../../../../tests/fixtures/woo-brazil/options-checkout-bairro-required.json"
    ))
    .unwrap()
}

/// Person type 1 as the plugin registers it: the select, then CPF, company name and CNPJ.
fn person_type_both() -> Value {
    let mut body = bairro_required();
    let required = |label: &str| json!({"description": label, "type": "string", "required": true});
    body["schema"]["properties"]["additional_fields"]["properties"] = json!({
        "csbmw/persontype": {"description": "Person type", "type": "string", "required": true, "enum": ["1", "2"]},
        "csbmw/cpf": required("CPF"),
        "csbmw/company-name": required("Company name"),
        "csbmw/cnpj": required("CNPJ"),
    });
    body
}

fn buyer(kind: TaxpayerKind, value: &str) -> Buyer {
    Buyer {
        first_name: Some("Acme".into()),
        last_name: Some("Ltda".into()),
        taxpayer_id: Some(TaxpayerId {
            kind,
            value: value.into(),
        }),
        ..Buyer::default()
    }
}

#[test]
fn issue_37_requirements_are_read_from_the_stores_own_schema() {
    let fields = CheckoutFields::from_schema(&bairro_required());
    assert_eq!(
        fields.requirements(),
        [
            Requirement::TaxpayerId {
                kinds: vec![TaxpayerKind::Cpf]
            },
            Requirement::HouseNumber,
            Requirement::Neighborhood,
        ]
    );
    // Core address properties are WooCommerce's own, not requirements of a plugin.
    let keys: Vec<&str> = fields.all().map(|field| field.key.as_str()).collect();
    assert_eq!(keys, [CPF, NUMBER, NEIGHBORHOOD]);
    // Without the plugin the store requires nothing of the bridge.
    assert!(
        CheckoutFields::from_schema(&json!({}))
            .requirements()
            .is_empty()
    );
}

#[test]
fn issue_37_a_required_field_the_bridge_cannot_fill_is_an_escalation() {
    let mut body = bairro_required();
    body["schema"]["properties"]["additional_fields"]["properties"]["acme/gift-note"] =
        json!({"description": "Gift note", "type": "string", "required": true});
    body["schema"]["properties"]["additional_fields"]["properties"]["acme/optional"] =
        json!({"description": "Optional", "type": "string", "required": false});
    let requirements = CheckoutFields::from_schema(&body).requirements();
    assert!(requirements.contains(&Requirement::Other {
        key: "acme/gift-note".into(),
        label: "Gift note".into()
    }));
    assert!(
        !requirements
            .iter()
            .any(|r| matches!(r, Requirement::Other { key, .. } if key == "acme/optional"))
    );
}

#[test]
fn issue_37_the_document_goes_to_the_field_of_its_kind_with_its_person_type() {
    let only_cpf = CheckoutFields::from_schema(&bairro_required());
    let cpf = buyer(TaxpayerKind::Cpf, "39053344705");
    assert_eq!(
        Value::Object(only_cpf.additional(&cpf)),
        json!({"csbmw/cpf": "39053344705"})
    );
    // A store without a CNPJ field is not sent one (its schema would refuse the key).
    assert!(
        only_cpf
            .additional(&buyer(TaxpayerKind::Cnpj, "11222333000181"))
            .is_empty()
    );
    let both = CheckoutFields::from_schema(&person_type_both());
    assert_eq!(
        both.requirements()[0],
        Requirement::TaxpayerId {
            kinds: vec![TaxpayerKind::Cpf, TaxpayerKind::Cnpj]
        }
    );
    assert_eq!(
        Value::Object(both.additional(&cpf)),
        json!({"csbmw/cpf": "39053344705", "csbmw/persontype": "1"})
    );
    assert_eq!(
        Value::Object(both.additional(&buyer(TaxpayerKind::Cnpj, "11222333000181"))),
        json!({"csbmw/cnpj": "11222333000181", "csbmw/persontype": "2", "csbmw/company-name": "Acme Ltda"})
    );
    assert!(both.additional(&Buyer::default()).is_empty());
    assert!(
        both.additional(&buyer(TaxpayerKind::Foreign, "P1234567"))
            .is_empty()
    );
}

#[test]
fn issue_37_number_and_bairro_reach_the_stores_fields_or_the_address_lines() {
    let address = Address {
        street_address: Some("Rua Doutor Quirino".into()),
        extended_address: Some("Sala 42".into()),
        number: Some("1481".into()),
        neighborhood: Some("Centro".into()),
        ..Address::default()
    };
    let base = || json!({"address_1": "Rua Doutor Quirino", "address_2": "Sala 42"});
    let plugin = CheckoutFields::from_schema(&bairro_required());
    let mut value = base();
    plugin.fill_address(&address, &mut value);
    assert_eq!(
        value,
        json!({"address_1": "Rua Doutor Quirino", "address_2": "Sala 42", NUMBER: "1481", NEIGHBORHOOD: "Centro"})
    );
    let mut value = base();
    plugin.fill_address(
        &Address {
            number: None,
            ..address.clone()
        },
        &mut value,
    );
    assert_eq!(value[NUMBER], "s/n");
    // A store without the fields keeps them in its own lines.
    let mut value = base();
    CheckoutFields::default().fill_address(&address, &mut value);
    assert_eq!(
        value,
        json!({"address_1": "Rua Doutor Quirino, 1481", "address_2": "Sala 42 - Centro"})
    );
}

/// The store's 400s at `POST /checkout`, as the real 10.9.4 answered them.
#[test]
fn issue_37_a_refused_order_names_what_it_lacked() {
    use super::super::refusals::unmet;
    let fields = CheckoutFields::from_schema(&bairro_required());
    let cpf = Requirement::TaxpayerId {
        kinds: vec![TaxpayerKind::Cpf],
    };
    let missing = json!({"code": "rest_missing_callback_param", "message": "Missing parameter(s): additional_fields", "data": {"status": 400, "params": ["additional_fields"]}});
    let refused = unmet(&missing, &fields).unwrap();
    assert_eq!(refused.len(), 1);
    assert_eq!(refused[0].requirement, cpf);
    assert!(refused[0].missing);
    assert_eq!(refused[0].reason, "The store requires the CPF");

    let invalid = json!({"code": "rest_invalid_param", "message": "Invalid parameter(s): additional_fields", "data": {"status": 400, "params": {"additional_fields": "Invalid CPF. Please provide a valid CPF."}, "details": {"additional_fields": {"code": "invalid_cpf", "message": "Invalid CPF. Please provide a valid CPF.", "data": {"location": "contact", "key": "csbmw/cpf"}}}}});
    let refused = unmet(&invalid, &fields).unwrap();
    assert_eq!(refused.len(), 1);
    assert_eq!(refused[0].requirement, cpf);
    assert!(!refused[0].missing);
    assert_eq!(
        refused[0].reason,
        "Invalid CPF. Please provide a valid CPF."
    );

    let number = json!({"code": "rest_invalid_param", "message": "Invalid parameter(s): shipping_address, billing_address", "data": {"status": 400, "details": {
        "shipping_address": {"code": "woocommerce_required_checkout_field", "message": "There was a problem with the provided shipping address: Number is required", "data": {"key": "csbmw/number"}},
        "billing_address": {"code": "woocommerce_required_checkout_field", "message": "There was a problem with the provided billing address: Number is required", "data": {"key": "csbmw/number"}}}}});
    let refused = unmet(&number, &fields).unwrap();
    assert_eq!(
        refused.len(),
        1,
        "one message for both addresses: {refused:?}"
    );
    assert_eq!(refused[0].requirement, Requirement::HouseNumber);

    // Person type 1: CPF, company name and CNPJ all required, the second error nested.
    let both = json!({"code": "rest_invalid_param", "data": {"details": {"additional_fields": {"code": "woocommerce_required_checkout_field", "message": "Company name is required", "data": {"key": "csbmw/cnpj"}, "additional_errors": [{"code": "woocommerce_required_checkout_field", "message": "CNPJ is required", "data": {"key": "csbmw/cnpj"}}]}}}});
    assert_eq!(unmet(&both, &fields).unwrap().len(), 1);

    let unknown = json!({"code": "rest_invalid_param", "data": {"details": {"additional_fields": {"code": "woocommerce_required_checkout_field", "message": "Gift note is required", "data": {"key": "acme/gift-note"}}}}});
    assert_eq!(
        unmet(&unknown, &fields).unwrap()[0].requirement,
        Requirement::Other {
            key: "acme/gift-note".into(),
            label: "acme/gift-note".into()
        }
    );
    // Not about fields: the caller's own handling.
    assert!(unmet(&json!({"code": "woocommerce_rest_cart_empty"}), &fields).is_none());
    assert!(unmet(&json!("<html>"), &fields).is_none());
}

/// Issue 37 item 2 (WooCommerce): the number and bairro are read back from the store's own
/// address fields its schema lists (the Store API echoes them in the addresses), and not
/// from fields the schema does not list.
#[test]
fn issue_37_number_and_bairro_are_read_from_the_stores_own_address_fields() {
    let held = json!({"address_1": "Rua Doutor Quirino", "address_2": "Sala 42",
        NUMBER: "1481", NEIGHBORHOOD: "Centro &amp; Vila"});
    let mut address = Address::default();
    CheckoutFields::from_schema(&bairro_required()).read_address(&held, &mut address);
    assert_eq!(address.number.as_deref(), Some("1481"));
    assert_eq!(address.neighborhood.as_deref(), Some("Centro & Vila"));
    let mut blank = Address::default();
    CheckoutFields::from_schema(&bairro_required())
        .read_address(&json!({NUMBER: " ", NEIGHBORHOOD: ""}), &mut blank);
    assert_eq!((blank.number, blank.neighborhood), (None, None));
    // A store whose schema has no such fields keeps both in its lines.
    let mut plain = Address::default();
    CheckoutFields::default().read_address(&held, &mut plain);
    assert_eq!((plain.number, plain.neighborhood), (None, None));
}
