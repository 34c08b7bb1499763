//! Brazilian addresses in Shopify's two street lines, as Shopify's own Brazilian checkout
//! writes them: `address1` is the street and house number ("Rua Doutor Quirino, 1481"),
//! `address2` the complement and the bairro ("Sala 42, Centro"). The Storefront API's
//! `MailingAddressInput` has no field for either part, nor for a CPF/CNPJ: the document is
//! collected by Shopify's checkout page, where every Shopify checkout ends.

use crate::model::checkout::Address;

const SEPARATOR: &str = ", ";

fn text(value: &Option<String>) -> Option<&str> {
    value
        .as_deref()
        .map(str::trim)
        .filter(|text| !text.is_empty())
}

fn is_brazilian(address: &Address) -> bool {
    text(&address.address_country).is_some_and(|country| country.eq_ignore_ascii_case("BR"))
}

/// `(address1, address2)` for an address; the parts the brain split off are joined back the
/// Brazilian way, anything else goes as it is.
pub fn lines(address: &Address) -> (Option<String>, Option<String>) {
    let street = text(&address.street_address);
    let complement = text(&address.extended_address);
    let first = match (street, text(&address.number)) {
        (Some(street), Some(number)) => Some(format!("{street}{SEPARATOR}{number}")),
        (street, number) => street.or(number).map(str::to_owned),
    };
    let second = match (complement, text(&address.neighborhood)) {
        (Some(complement), Some(bairro)) => Some(format!("{complement}{SEPARATOR}{bairro}")),
        (complement, bairro) => complement.or(bairro).map(str::to_owned),
    };
    (first, second)
}

/// A house number as Brazilians write it: digits (maybe a letter, "120A") or "s/n".
fn is_number(token: &str) -> bool {
    token.eq_ignore_ascii_case("s/n")
        || (token.len() <= 10
            && token.starts_with(|c: char| c.is_ascii_digit())
            && token.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'))
}

/// A Brazilian address read back from Shopify's lines: the number after the street's last
/// comma, the bairro after the complement's. A line without that shape stays as it is.
pub fn split(mut address: Address) -> Address {
    if !is_brazilian(&address) || address.number.is_some() {
        return address;
    }
    if let Some(line) = address.street_address.clone()
        && let Some((street, number)) = line.rsplit_once(SEPARATOR)
        && !street.trim().is_empty()
        && is_number(number.trim())
    {
        address.street_address = Some(street.trim().to_owned());
        address.number = Some(number.trim().to_owned());
    }
    if let Some(line) = address.extended_address.clone()
        && let Some((complement, bairro)) = line.rsplit_once(SEPARATOR)
        && !complement.trim().is_empty()
        && !bairro.trim().is_empty()
    {
        address.extended_address = Some(complement.trim().to_owned());
        address.neighborhood = Some(bairro.trim().to_owned());
    }
    address
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quirino() -> Address {
        Address {
            street_address: Some("Rua Doutor Quirino".into()),
            number: Some("1481".into()),
            extended_address: Some("Sala 42".into()),
            neighborhood: Some("Centro".into()),
            address_country: Some("BR".into()),
            ..Address::default()
        }
    }

    /// Issue 37 item 2 (Shopify): the lines Shopify's Brazilian checkout writes, and back.
    #[test]
    fn street_and_number_then_complement_and_bairro() {
        let (first, second) = lines(&quirino());
        assert_eq!(first.as_deref(), Some("Rua Doutor Quirino, 1481"));
        assert_eq!(second.as_deref(), Some("Sala 42, Centro"));
        let read = split(Address {
            street_address: first,
            extended_address: second,
            number: None,
            neighborhood: None,
            ..quirino()
        });
        assert_eq!(read, quirino());
        let no_number = Address {
            number: Some("s/n".into()),
            ..quirino()
        };
        assert_eq!(
            lines(&no_number).0.as_deref(),
            Some("Rua Doutor Quirino, s/n")
        );
    }

    #[test]
    fn other_shapes_and_countries_stay_as_they_are() {
        let whole = Address {
            street_address: Some("Rua 25 de Março".into()),
            extended_address: Some("Loja 3".into()),
            address_country: Some("BR".into()),
            ..Address::default()
        };
        assert_eq!(split(whole.clone()), whole);
        let abroad = Address {
            street_address: Some("Main Street, 5".into()),
            address_country: Some("US".into()),
            ..Address::default()
        };
        assert_eq!(split(abroad.clone()), abroad);
        let (first, second) = lines(&abroad);
        assert_eq!(first.as_deref(), Some("Main Street, 5"));
        assert_eq!(second, None);
    }
}
