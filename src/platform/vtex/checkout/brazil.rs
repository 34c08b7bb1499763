//! What a Brazilian VTEX store needs beyond the cart: the buyer's CPF or CNPJ in
//! `clientProfileData`, the house number and bairro in the shipping address, and the street
//! its own `postal-code` route gives for a CEP. VTEX's checkout asks for a document and a
//! number on every Brazilian order (its `BRA` address rules also ask for the bairro), and the
//! orderForm says which country's rules apply (`storePreferencesData.countryCode`): that is
//! what `requirements` reports, for the brain to ask the agent.

use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::super::client::VtexApi;
use super::super::wire::OrderForm;
use super::address::alpha3;
use crate::model::checkout::{Address, Buyer};
use crate::model::fiscal::{Requirement, TaxpayerId, TaxpayerKind};
use crate::platform::checkout::StoreField;

const BRAZIL: &str = "BRA";

/// The document fields of `clientProfileData` for the buyer's taxpayer id, as the Checkout
/// API's own example spells a legal entity (`documentType` `cnpj`, the CNPJ as both
/// `document` and `corporateDocument`). A foreign id has no VTEX document type: nothing is
/// sent, and the store's page asks for what it accepts.
pub fn document_fields(buyer: &Buyer, profile: &mut Map<String, Value>) {
    let Some(id) = &buyer.taxpayer_id else {
        return;
    };
    match id.kind {
        TaxpayerKind::Cpf => {
            profile.insert("documentType".into(), json!("cpf"));
            profile.insert("document".into(), json!(id.value));
            profile.insert("isCorporate".into(), json!(false));
        }
        TaxpayerKind::Cnpj => {
            profile.insert("documentType".into(), json!("cnpj"));
            profile.insert("document".into(), json!(id.value));
            profile.insert("corporateDocument".into(), json!(id.value));
            profile.insert("isCorporate".into(), json!(true));
            // The company name (`corporateName`) is not part of the taxpayer id: it is
            // never made up from the buyer's name; the store's page asks for it.
        }
        TaxpayerKind::Foreign => {}
    }
}

/// The taxpayer id the orderForm holds for its owner; a masked document (`***`) is not one.
pub fn taxpayer_of(profile: Option<&Value>) -> Option<TaxpayerId> {
    let profile = profile?;
    let field = |key: &str| {
        profile
            .get(key)
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|value| !value.is_empty() && !value.contains('*'))
    };
    let corporate = profile.get("isCorporate").and_then(Value::as_bool) == Some(true);
    let (kind, value) = match field("documentType")
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        Some("cnpj") => (TaxpayerKind::Cnpj, field("document")),
        Some("cpf") if corporate => (TaxpayerKind::Cnpj, field("corporateDocument")),
        Some("cpf") => (TaxpayerKind::Cpf, field("document")),
        _ => return None,
    };
    let value: String = value?.chars().filter(char::is_ascii_alphanumeric).collect();
    (!value.is_empty()).then_some(TaxpayerId { kind, value })
}

/// What this store's checkout insists on before the order, by the rules of its country and of
/// the shipping address's.
pub fn requirements(form: &OrderForm, address: Option<&Address>) -> Vec<Requirement> {
    let store_in_brazil = form
        .store_preferences_data
        .country_code
        .eq_ignore_ascii_case(BRAZIL);
    let ships_to_brazil = match address.and_then(|address| address.address_country.as_deref()) {
        Some(country) => alpha3(country) == Some(BRAZIL),
        None => store_in_brazil,
    };
    let mut needed = Vec::new();
    if store_in_brazil {
        needed.push(Requirement::TaxpayerId {
            kinds: vec![TaxpayerKind::Cpf, TaxpayerKind::Cnpj],
        });
    }
    if ships_to_brazil {
        needed.push(Requirement::HouseNumber);
        needed.push(Requirement::Neighborhood);
    }
    needed
}

/// The fields a store's checkout requires beyond the cart's, as `doctor` lists them: those of
/// `requirements` for a store whose orderForm says Brazil (none otherwise), each with what
/// the bridge fills it from. The company name of a CNPJ buyer is the store page's to ask.
pub fn store_fields(form: &OrderForm) -> Vec<StoreField> {
    if !form
        .store_preferences_data
        .country_code
        .eq_ignore_ascii_case(BRAZIL)
    {
        return Vec::new();
    }
    let field =
        |key: &str, label: &str, required: bool, filled_from: Option<&'static str>| StoreField {
            key: key.to_owned(),
            label: label.to_owned(),
            required,
            filled_from,
        };
    vec![
        field(
            "clientProfileData.document",
            "CPF/CNPJ",
            true,
            Some("buyer.taxpayer_id (documentType from its kind)"),
        ),
        field(
            "clientProfileData.corporateDocument",
            "CNPJ of a company buyer",
            false,
            Some("buyer.taxpayer_id of kind cnpj"),
        ),
        field(
            "clientProfileData.corporateName",
            "Company name",
            false,
            None,
        ),
        field(
            "shippingData.address.number",
            "Number",
            true,
            Some("the address's house number (or s/n)"),
        ),
        field(
            "shippingData.address.neighborhood",
            "Neighborhood",
            true,
            Some("the address's bairro, else the store's postal-code route for the CEP"),
        ),
    ]
}

/// `GET /api/checkout/pub/postal-code/{country}/{postalCode}`.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct PostalAddress {
    city: Option<String>,
    state: Option<String>,
    street: Option<String>,
    neighborhood: Option<String>,
}

fn given(value: &Option<String>) -> bool {
    value.as_deref().is_some_and(|text| !text.trim().is_empty())
}

fn fill(slot: &mut Option<String>, found: Option<String>) {
    if !given(slot)
        && let Some(found) = found.map(|text| text.trim().to_owned())
        && !found.is_empty()
    {
        *slot = Some(found);
    }
}

/// A CEP given without a street, or a Brazilian one without its bairro (agents rarely know
/// it): the store's own postal-code route fills the street, bairro, city and state the agent
/// left out. Nothing the agent gave is replaced, and a CEP the store does not know leaves the
/// address as it was (the bairro is then asked for).
pub async fn completed(api: &VtexApi, address: &Address) -> Address {
    let mut out = address.clone();
    let Some(country) = alpha3(address.address_country.as_deref().unwrap_or("BR")) else {
        return out;
    };
    let wanted =
        !given(&address.street_address) || (country == BRAZIL && !given(&address.neighborhood));
    if !wanted {
        return out;
    }
    let digits: String = address
        .postal_code
        .as_deref()
        .unwrap_or_default()
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .collect();
    if digits.is_empty() || digits.len() > 16 {
        return out;
    }
    let found = match api
        .get(
            &["api", "checkout", "pub", "postal-code", country, &digits],
            &[],
            None,
        )
        .await
    {
        Ok(response) if response.status == reqwest::StatusCode::OK => {
            response.json::<PostalAddress>("postal code").ok()
        }
        Ok(response) => {
            tracing::debug!(
                status = response.status.as_u16(),
                "the store's postal-code lookup found nothing"
            );
            None
        }
        Err(error) => {
            tracing::debug!(%error, "the store's postal-code lookup failed");
            None
        }
    };
    if let Some(found) = found {
        fill(&mut out.street_address, found.street);
        fill(&mut out.neighborhood, found.neighborhood);
        fill(&mut out.address_locality, found.city);
        fill(&mut out.address_region, found.state);
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn buyer(kind: TaxpayerKind, value: &str) -> Buyer {
        Buyer {
            first_name: Some("Ana".into()),
            last_name: Some("Souza".into()),
            taxpayer_id: Some(TaxpayerId {
                kind,
                value: value.into(),
            }),
            ..Buyer::default()
        }
    }

    /// Issue 37 item 2 (VTEX): `clientProfileData` document fields from the taxpayer id.
    #[test]
    fn cpf_and_cnpj_fill_the_profile_as_vtex_spells_them() {
        let mut profile = Map::new();
        document_fields(&buyer(TaxpayerKind::Cpf, "52998224725"), &mut profile);
        assert_eq!(
            Value::Object(profile.clone()),
            json!({"documentType": "cpf", "document": "52998224725", "isCorporate": false})
        );
        assert_eq!(
            taxpayer_of(Some(&Value::Object(profile))),
            Some(TaxpayerId {
                kind: TaxpayerKind::Cpf,
                value: "52998224725".into()
            })
        );
        let mut profile = Map::new();
        document_fields(&buyer(TaxpayerKind::Cnpj, "11222333000181"), &mut profile);
        assert_eq!(profile["documentType"], "cnpj");
        assert_eq!(profile["corporateDocument"], "11222333000181");
        assert_eq!(profile["isCorporate"], true);
        assert_eq!(
            taxpayer_of(Some(&Value::Object(profile))).map(|id| id.kind),
            Some(TaxpayerKind::Cnpj)
        );
        let mut profile = Map::new();
        document_fields(&buyer(TaxpayerKind::Foreign, "X1234567"), &mut profile);
        assert!(profile.is_empty(), "VTEX has no document type for it");
        let masked = json!({"documentType": "cpf", "document": "529*****725"});
        assert_eq!(taxpayer_of(Some(&masked)), None);
    }

    #[test]
    fn a_brazilian_store_requires_a_document_a_number_and_a_bairro() {
        let mut form = OrderForm::default();
        form.store_preferences_data.country_code = "BRA".into();
        let needed = requirements(&form, None);
        assert!(needed.contains(&Requirement::HouseNumber), "{needed:?}");
        assert!(needed.contains(&Requirement::Neighborhood), "{needed:?}");
        assert!(
            matches!(&needed[0], Requirement::TaxpayerId { kinds } if kinds.contains(&TaxpayerKind::Cpf))
        );
        let abroad = Address {
            address_country: Some("AR".into()),
            ..Address::default()
        };
        assert_eq!(requirements(&form, Some(&abroad)).len(), 1);
        form.store_preferences_data.country_code = "ARG".into();
        assert!(requirements(&form, Some(&abroad)).is_empty());
    }
}
