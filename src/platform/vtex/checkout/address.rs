//! Postal addresses between UCP and the orderForm: VTEX keys countries on ISO 3166-1 alpha-3
//! and keeps the house number apart from the street, UCP has alpha-2 and one street line.

use serde_json::{Value, json};

use super::super::wire::VtexAddress;
use crate::model::checkout::{Address, Buyer};
use crate::platform::port::PlatformError;

/// Alpha-2 → alpha-3 for the countries VTEX stores sell to; an address elsewhere is refused
/// by name rather than sent in a form VTEX cannot price.
const COUNTRIES: &[(&str, &str)] = &[
    ("AR", "ARG"),
    ("BO", "BOL"),
    ("BR", "BRA"),
    ("CA", "CAN"),
    ("CL", "CHL"),
    ("CO", "COL"),
    ("CR", "CRI"),
    ("DE", "DEU"),
    ("DO", "DOM"),
    ("EC", "ECU"),
    ("ES", "ESP"),
    ("FR", "FRA"),
    ("GB", "GBR"),
    ("GT", "GTM"),
    ("HN", "HND"),
    ("IT", "ITA"),
    ("MX", "MEX"),
    ("NI", "NIC"),
    ("PA", "PAN"),
    ("PE", "PER"),
    ("PT", "PRT"),
    ("PY", "PRY"),
    ("RO", "ROU"),
    ("SV", "SLV"),
    ("US", "USA"),
    ("UY", "URY"),
    ("VE", "VEN"),
];

pub fn alpha3(alpha2: &str) -> Option<&'static str> {
    COUNTRIES
        .iter()
        .find(|(two, _)| two.eq_ignore_ascii_case(alpha2))
        .map(|(_, three)| *three)
}

pub fn alpha2(alpha3: &str) -> Option<&'static str> {
    COUNTRIES
        .iter()
        .find(|(_, three)| three.eq_ignore_ascii_case(alpha3))
        .map(|(two, _)| *two)
}

/// `Rua Augusta, 100` / `Rua Augusta 100` → (`Rua Augusta`, `100`): VTEX's Brazilian
/// checkout asks for the number on its own. A line without a trailing number stays whole.
fn street_and_number(line: &str) -> (String, Option<String>) {
    let line = line.trim();
    if let Some((street, number)) = line.rsplit_once([' ', ',']) {
        let number = number.trim();
        let street = street.trim().trim_end_matches(',').trim();
        if !street.is_empty()
            && !number.is_empty()
            && number.bytes().all(|byte| byte.is_ascii_digit())
        {
            return (street.to_owned(), Some(number.to_owned()));
        }
    }
    (line.to_owned(), None)
}

fn joined(parts: &[&Option<String>]) -> Option<String> {
    let text = parts
        .iter()
        .filter_map(|part| part.as_deref())
        .collect::<Vec<_>>()
        .join(" ");
    (!text.is_empty()).then_some(text)
}

/// The `selectedAddresses[0]` of a shipping attachment: a residential address the orderForm
/// prices its SLAs for. The receiver is the address's name, else the buyer's.
pub fn to_vtex(address: &Address, buyer: &Buyer) -> Result<Value, PlatformError> {
    let country = address.address_country.as_deref().unwrap_or("BR");
    let country = alpha3(country).ok_or_else(|| PlatformError::InvalidAt {
        path: "$.checkout.fulfillment.methods[0].destinations[0].address_country".into(),
        message: format!("the store does not ship to country {country}"),
    })?;
    // The brain hands the number apart when the agent gave it so; a whole line is split here.
    let (street, number) = match text(&address.number) {
        Some(number) => (text(&address.street_address), Some(number)),
        None => address
            .street_address
            .as_deref()
            .map(street_and_number)
            .map_or((None, None), |(street, number)| (Some(street), number)),
    };
    let receiver = joined(&[&address.first_name, &address.last_name])
        .or_else(|| joined(&[&buyer.first_name, &buyer.last_name]));
    Ok(json!({
        "addressType": "residential",
        "receiverName": receiver,
        "postalCode": address.postal_code,
        "city": address.address_locality,
        "state": address.address_region,
        "country": country,
        "street": street,
        "number": number,
        "neighborhood": text(&address.neighborhood),
        "complement": address.extended_address,
    }))
}

fn text(value: &Option<String>) -> Option<String> {
    value
        .as_deref()
        .map(str::trim)
        .filter(|text| !text.is_empty())
        .map(str::to_owned)
}

/// The street line with its number, for text meant to be read (a pickup point's place).
pub fn street_line(address: &Address) -> Option<String> {
    match (&address.street_address, &address.number) {
        (Some(street), Some(number)) => Some(format!("{street}, {number}")),
        (street, number) => street.clone().or_else(|| number.clone()),
    }
}

/// An orderForm address in the model: the number and bairro in their own fields, the street
/// without the number (the brain joins them where UCP has one line).
pub fn from_vtex(address: &VtexAddress) -> Address {
    let street = text(&address.street);
    let number = text(&address.number);
    let (street, number) = match (street, number) {
        (None, number) => (number, None),
        (street, number) => (street, number),
    };
    Address {
        street_address: street,
        number,
        neighborhood: text(&address.neighborhood),
        extended_address: text(&address.complement),
        address_locality: text(&address.city),
        address_region: text(&address.state),
        postal_code: text(&address.postal_code),
        address_country: text(&address.country)
            .map(|country| alpha2(&country).map_or(country, str::to_owned)),
        ..Address::default()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn the_house_number_is_split_off_only_when_it_is_one() {
        assert_eq!(
            street_and_number("Rua Augusta, 100"),
            ("Rua Augusta".to_owned(), Some("100".to_owned()))
        );
        assert_eq!(
            street_and_number("Rua Augusta 100"),
            ("Rua Augusta".to_owned(), Some("100".to_owned()))
        );
        assert_eq!(
            street_and_number("Rua 25 de Março"),
            ("Rua 25 de Março".to_owned(), None)
        );
        assert_eq!(street_and_number("100"), ("100".to_owned(), None));
    }

    /// Issue 37 item 2: the number, complement and bairro reach the orderForm's own fields,
    /// whether the brain split the number off or the agent wrote one line.
    #[test]
    fn brazilian_parts_reach_their_own_fields() {
        let split = Address {
            street_address: Some("Rua Doutor Quirino".into()),
            number: Some("s/n".into()),
            extended_address: Some("Sala 42".into()),
            neighborhood: Some("Centro".into()),
            postal_code: Some("13015-081".into()),
            address_country: Some("BR".into()),
            ..Address::default()
        };
        let sent = to_vtex(&split, &Buyer::default()).unwrap();
        assert_eq!(sent["street"], "Rua Doutor Quirino");
        assert_eq!(sent["number"], "s/n");
        assert_eq!(sent["complement"], "Sala 42");
        assert_eq!(sent["neighborhood"], "Centro");
        let whole = Address {
            street_address: Some("Rua Doutor Quirino, 1481".into()),
            ..split
        };
        let whole = Address {
            number: None,
            ..whole
        };
        let sent = to_vtex(&whole, &Buyer::default()).unwrap();
        assert_eq!(sent["street"], "Rua Doutor Quirino");
        assert_eq!(sent["number"], "1481");
    }

    #[test]
    fn countries_go_to_alpha3_and_back() {
        let address = Address {
            street_address: Some("Rua Augusta 100".into()),
            address_country: Some("BR".into()),
            postal_code: Some("01305-000".into()),
            ..Address::default()
        };
        let sent = to_vtex(&address, &Buyer::default()).unwrap();
        assert_eq!(sent["country"], "BRA");
        assert_eq!(sent["number"], "100");
        let back: VtexAddress = serde_json::from_value(sent).unwrap();
        let back = from_vtex(&back);
        assert_eq!(back.address_country.as_deref(), Some("BR"));
        assert_eq!(back.street_address.as_deref(), Some("Rua Augusta"));
        assert_eq!(back.number.as_deref(), Some("100"));
        assert_eq!(street_line(&back).as_deref(), Some("Rua Augusta, 100"));
        let elsewhere = Address {
            address_country: Some("JP".into()),
            ..Address::default()
        };
        assert!(to_vtex(&elsewhere, &Buyer::default()).is_err());
    }
}
