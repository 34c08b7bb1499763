//! Brazilian addresses between UCP's `postal_address` and the stores' own fields. UCP has no
//! house number and no bairro; Brazilian stores keep both apart (WooCommerce's Brazilian
//! Market, VTEX). Agents write the address as a Brazilian writes it, and the bridge splits it
//! on the way in and joins it on the way out, so the wire shape never changes:
//!
//! - the house number after the street in `street_address`: "Rua Doutor Quirino, 1481",
//!   "Rua X 1481", "Av. Y, s/n", "Rua Z, nº 12";
//! - the complement in `extended_address` ("Sala 42"), as UCP has it;
//! - the bairro in `extended_address` too, marked by the word "Bairro" as an envelope would
//!   carry it: "Sala 42 - Bairro Centro", or "Bairro Centro" alone.
//!
//! The bairro is a convention in a field every agent already fills, rather than an extension
//! member: this project controls no domain to name one under (overview.md: an entity is
//! published only under a namespace its publisher owns, and `br.dev.bcp.*` is BCP's), and a
//! convention passes every UCP and BCP validator and still reads right on a store without a
//! bairro field, where it stays in the complement. Only addresses in Brazil are read this
//! way; any other is kept as written.

use crate::model::checkout::Address;

/// What the bairro is marked with in `extended_address`.
const BAIRRO: &str = crate::model::fiscal::BAIRRO_MARK;
/// How the parts of `extended_address` are separated when written back.
const SEPARATOR: &str = " - ";
/// What a house without a number is given.
pub const NO_NUMBER: &str = "s/n";

fn in_brazil(address: &Address) -> bool {
    address
        .address_country
        .as_deref()
        .is_some_and(|country| country.eq_ignore_ascii_case("BR"))
}

/// `tail` read as a house number ("1481", "12A", "nº 12", "s/n"), normalised.
fn house_number(tail: &str) -> Option<String> {
    let lower = tail.trim().to_lowercase();
    if matches!(
        lower.as_str(),
        "s/n" | "sn" | "s/nº" | "s/n°" | "s.n." | "s/n." | "sem número" | "sem numero"
    ) {
        return Some(NO_NUMBER.to_owned());
    }
    let mut rest = lower.as_str();
    for marker in ["número", "numero", "num.", "nº", "n°", "no.", "n.", "n "] {
        if let Some(after) = rest.strip_prefix(marker) {
            rest = after.trim_start();
            break;
        }
    }
    let bytes = rest.as_bytes();
    let plausible = !bytes.is_empty()
        && bytes.len() <= 10
        && bytes[0].is_ascii_digit()
        && bytes
            .iter()
            .all(|byte| byte.is_ascii_alphanumeric() || *byte == b'-')
        && bytes
            .iter()
            .filter(|byte| byte.is_ascii_alphabetic())
            .count()
            <= 2;
    plausible.then(|| rest.to_ascii_uppercase())
}

/// "Rua Doutor Quirino, 1481" → ("Rua Doutor Quirino", "1481"); `None` when the line does not
/// end in a house number (a street whose name holds a number, "Rua 25 de Março", is kept).
pub fn split_number(line: &str) -> Option<(String, String)> {
    let line = line.trim();
    let (street, tail, comma) = match line.rfind(',') {
        Some(at) => (&line[..at], &line[at + 1..], true),
        None => {
            let at = line.rfind(char::is_whitespace)?;
            (&line[..at], &line[at..], false)
        }
    };
    let number = house_number(tail)?;
    let street = street.trim().trim_end_matches(',').trim_end();
    let words: Vec<&str> = street.split_whitespace().collect();
    // Without a comma "Rua 7" is a street's name, and "km 20" a place on a highway.
    if words.is_empty()
        || (!comma
            && (words.len() < 2
                || words
                    .last()
                    .is_some_and(|word| word.eq_ignore_ascii_case("km"))))
    {
        return None;
    }
    Some((street.to_owned(), number))
}

/// The bairro marked in `extended_address`, and what is left of it (the complement).
fn split_bairro(extended: &str) -> (Option<String>, Option<String>) {
    let mut bairro = None;
    let mut rest = Vec::new();
    for part in extended.split(SEPARATOR).map(str::trim) {
        let marked = part
            .get(..BAIRRO.len())
            .filter(|head| head.eq_ignore_ascii_case(BAIRRO))
            .and_then(|_| {
                let after = &part[BAIRRO.len()..];
                after
                    .starts_with([' ', ':'])
                    .then(|| after.trim_start_matches([':', ' ']).trim())
            })
            .filter(|name| !name.is_empty());
        match marked {
            Some(name) if bairro.is_none() => bairro = Some(name.to_owned()),
            _ if !part.is_empty() => rest.push(part),
            _ => {}
        }
    }
    let rest = (!rest.is_empty()).then(|| rest.join(SEPARATOR));
    (bairro, rest)
}

/// An address as the agent wrote it, with the number and bairro of a Brazilian one apart.
pub fn read(mut address: Address) -> Address {
    if !in_brazil(&address) {
        return address;
    }
    if address.number.is_none()
        && let Some((street, number)) = address.street_address.as_deref().and_then(split_number)
    {
        address.street_address = Some(street);
        address.number = Some(number);
    }
    if address.neighborhood.is_none()
        && let Some(extended) = address.extended_address.clone()
    {
        let (bairro, rest) = split_bairro(&extended);
        if bairro.is_some() {
            address.neighborhood = bairro;
            address.extended_address = rest;
        }
    }
    address
}

/// `street_address` as the agent reads it: the street and its number joined back.
pub fn street_line(address: &Address) -> Option<String> {
    address.street_line()
}

/// `extended_address` as the agent reads it: the complement, then the marked bairro.
pub fn extended_line(address: &Address) -> Option<String> {
    address.complement_line()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(line: &str) -> Option<(String, String)> {
        split_number(line)
    }

    fn pair(street: &str, number: &str) -> Option<(String, String)> {
        Some((street.to_owned(), number.to_owned()))
    }

    /// Issue 37 item 2: the forms Brazilians write the number in.
    #[test]
    fn the_house_number_is_split_from_the_street() {
        assert_eq!(
            split("Rua Doutor Quirino, 1481"),
            pair("Rua Doutor Quirino", "1481")
        );
        assert_eq!(split("Rua X 1481"), pair("Rua X", "1481"));
        assert_eq!(split("Av. Y, s/n"), pair("Av. Y", "s/n"));
        assert_eq!(split("Av. Y, S/N"), pair("Av. Y", "s/n"));
        assert_eq!(split("Rua Z, nº 12"), pair("Rua Z", "12"));
        assert_eq!(split("Rua Z, n° 12a"), pair("Rua Z", "12A"));
        assert_eq!(
            split("Rua 25 de Março, 100"),
            pair("Rua 25 de Março", "100")
        );
    }

    #[test]
    fn lines_without_a_house_number_are_kept_whole() {
        for line in [
            "Rua 25 de Março",
            "Rua 7",
            "Rodovia BR-116 km 20",
            "Rua X, Bloco B",
            "Rua X, 1481 apto 12",
            "1481",
            "",
        ] {
            assert_eq!(split(line), None, "{line}");
        }
    }

    fn brazilian(street: &str, extended: Option<&str>) -> Address {
        Address {
            street_address: Some(street.to_owned()),
            extended_address: extended.map(str::to_owned),
            address_country: Some("BR".into()),
            ..Address::default()
        }
    }

    #[test]
    fn the_bairro_is_read_from_extended_address_and_written_back() {
        let read = read(brazilian(
            "Rua Doutor Quirino, 1481",
            Some("Sala 42 - Bairro Centro"),
        ));
        assert_eq!(read.street_address.as_deref(), Some("Rua Doutor Quirino"));
        assert_eq!(read.number.as_deref(), Some("1481"));
        assert_eq!(read.extended_address.as_deref(), Some("Sala 42"));
        assert_eq!(read.neighborhood.as_deref(), Some("Centro"));
        assert_eq!(
            street_line(&read).as_deref(),
            Some("Rua Doutor Quirino, 1481")
        );
        assert_eq!(
            extended_line(&read).as_deref(),
            Some("Sala 42 - Bairro Centro")
        );
        let alone = super::read(brazilian("Rua X 10", Some("bairro: Vila Madalena")));
        assert_eq!(alone.neighborhood.as_deref(), Some("Vila Madalena"));
        assert_eq!(alone.extended_address, None);
        // A complement that only starts with the letters is not a bairro.
        let kept = super::read(brazilian("Rua X 10", Some("Bairrozinho 3")));
        assert_eq!(kept.neighborhood, None);
        assert_eq!(kept.extended_address.as_deref(), Some("Bairrozinho 3"));
    }

    #[test]
    fn addresses_outside_brazil_are_kept_as_written() {
        let mut address = brazilian("Hauptstraße 5", Some("Bairro Mitte"));
        address.address_country = Some("DE".into());
        assert_eq!(read(address.clone()), address);
    }
}
