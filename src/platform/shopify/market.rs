//! The buyer's market as Shopify spells it: `CountryCode` and `LanguageCode` are enums of the
//! Storefront schema, and a value outside them makes Shopify refuse the whole operation
//! (INVALID_VARIABLE). Checking here turns that into a -32602 naming the agent's field before
//! any request leaves, instead of a "store unavailable" the agent would retry forever.

use crate::platform::port::PlatformError;

/// `enum CountryCode` of the 2026-04 schema (ISO 3166-1 alpha-2 plus Shopify's AC, TA, XK, ZZ).
const COUNTRY_CODES: &[&str] = &[
    "AC", "AD", "AE", "AF", "AG", "AI", "AL", "AM", "AN", "AO", "AR", "AT", "AU", "AW", "AX", "AZ",
    "BA", "BB", "BD", "BE", "BF", "BG", "BH", "BI", "BJ", "BL", "BM", "BN", "BO", "BQ", "BR", "BS",
    "BT", "BV", "BW", "BY", "BZ", "CA", "CC", "CD", "CF", "CG", "CH", "CI", "CK", "CL", "CM", "CN",
    "CO", "CR", "CU", "CV", "CW", "CX", "CY", "CZ", "DE", "DJ", "DK", "DM", "DO", "DZ", "EC", "EE",
    "EG", "EH", "ER", "ES", "ET", "FI", "FJ", "FK", "FO", "FR", "GA", "GB", "GD", "GE", "GF", "GG",
    "GH", "GI", "GL", "GM", "GN", "GP", "GQ", "GR", "GS", "GT", "GW", "GY", "HK", "HM", "HN", "HR",
    "HT", "HU", "ID", "IE", "IL", "IM", "IN", "IO", "IQ", "IR", "IS", "IT", "JE", "JM", "JO", "JP",
    "KE", "KG", "KH", "KI", "KM", "KN", "KP", "KR", "KW", "KY", "KZ", "LA", "LB", "LC", "LI", "LK",
    "LR", "LS", "LT", "LU", "LV", "LY", "MA", "MC", "MD", "ME", "MF", "MG", "MK", "ML", "MM", "MN",
    "MO", "MQ", "MR", "MS", "MT", "MU", "MV", "MW", "MX", "MY", "MZ", "NA", "NC", "NE", "NF", "NG",
    "NI", "NL", "NO", "NP", "NR", "NU", "NZ", "OM", "PA", "PE", "PF", "PG", "PH", "PK", "PL", "PM",
    "PN", "PS", "PT", "PY", "QA", "RE", "RO", "RS", "RU", "RW", "SA", "SB", "SC", "SD", "SE", "SG",
    "SH", "SI", "SJ", "SK", "SL", "SM", "SN", "SO", "SR", "SS", "ST", "SV", "SX", "SY", "SZ", "TA",
    "TC", "TD", "TF", "TG", "TH", "TJ", "TK", "TL", "TM", "TN", "TO", "TR", "TT", "TV", "TW", "TZ",
    "UA", "UG", "UM", "US", "UY", "UZ", "VA", "VC", "VE", "VG", "VN", "VU", "WF", "WS", "XK", "YE",
    "YT", "ZA", "ZM", "ZW", "ZZ",
];

/// `enum LanguageCode` of the 2026-04 schema.
const LANGUAGE_CODES: &[&str] = &[
    "AF", "AK", "AM", "AR", "AS", "AZ", "BE", "BG", "BM", "BN", "BO", "BR", "BS", "CA", "CE",
    "CKB", "CS", "CU", "CY", "DA", "DE", "DZ", "EE", "EL", "EN", "EO", "ES", "ET", "EU", "FA",
    "FF", "FI", "FIL", "FO", "FR", "FY", "GA", "GD", "GL", "GU", "GV", "HA", "HE", "HI", "HR",
    "HU", "HY", "IA", "ID", "IG", "II", "IS", "IT", "JA", "JV", "KA", "KI", "KK", "KL", "KM", "KN",
    "KO", "KS", "KU", "KW", "KY", "LA", "LB", "LG", "LN", "LO", "LT", "LU", "LV", "MG", "MI", "MK",
    "ML", "MN", "MO", "MR", "MS", "MT", "MY", "NB", "ND", "NE", "NL", "NN", "NO", "OM", "OR", "OS",
    "PA", "PL", "PS", "PT", "PT_BR", "PT_PT", "QU", "RM", "RN", "RO", "RU", "RW", "SA", "SC", "SD",
    "SE", "SG", "SH", "SI", "SK", "SL", "SN", "SO", "SQ", "SR", "SU", "SV", "SW", "TA", "TE", "TG",
    "TH", "TI", "TK", "TO", "TR", "TT", "UG", "UK", "UR", "UZ", "VI", "VO", "WO", "XH", "YI", "YO",
    "ZH", "ZH_CN", "ZH_TW", "ZU",
];

/// The country as Shopify's enum spells it, if it is one.
pub fn country_code(code: &str) -> Option<&'static str> {
    let upper = code.trim().to_ascii_uppercase();
    COUNTRY_CODES
        .binary_search(&upper.as_str())
        .ok()
        .map(|index| COUNTRY_CODES[index])
}

/// Shopify's `LanguageCode` (`EN`, `PT_BR`, `ZH_TW`) of a BCP 47 tag (`pt-BR`, `en-US`). A
/// regional variant Shopify does not list falls back to its language (`en-US` → `EN`).
pub fn language_code(tag: &str) -> Option<&'static str> {
    let code = tag.trim().replace('-', "_").to_ascii_uppercase();
    let known = |wanted: &str| {
        LANGUAGE_CODES
            .binary_search(&wanted)
            .ok()
            .map(|index| LANGUAGE_CODES[index])
    };
    known(&code).or_else(|| {
        let (primary, region) = code.split_once('_')?;
        let region_ok = (2..=4).contains(&region.len())
            && region.bytes().all(|byte| byte.is_ascii_alphanumeric());
        region_ok.then(|| known(primary)).flatten()
    })
}

/// Country and language for `@inContext`, checked against Shopify's enums.
#[derive(Debug, Clone, Default)]
pub struct Market {
    pub country: Option<String>,
    pub language: Option<String>,
}

/// The agent's country and language (or the configured defaults). `root` is the JSON path of
/// the tool's argument object that holds `context` (`$.catalog`, `$.cart`).
pub fn market(
    root: &str,
    country: Option<&str>,
    language: Option<&str>,
    default_country: Option<&str>,
    default_language: Option<&str>,
) -> Result<Market, PlatformError> {
    let country = match country {
        Some(given) => Some(country_code(given).ok_or_else(|| PlatformError::InvalidAt {
            path: format!("{root}.context.address_country"),
            message: "not a country this store knows (ISO 3166-1 alpha-2, e.g. \"BR\")".to_owned(),
        })?),
        None => default_country,
    };
    let language = match language {
        Some(given) => Some(
            language_code(given).ok_or_else(|| PlatformError::InvalidAt {
                path: format!("{root}.context.language"),
                message: "not a language this store knows (e.g. \"pt-BR\", \"en\")".to_owned(),
            })?,
        ),
        None => default_language,
    };
    Ok(Market {
        country: country.map(str::to_owned),
        language: language.map(str::to_owned),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lists_are_sorted_for_binary_search() {
        assert!(COUNTRY_CODES.windows(2).all(|pair| pair[0] < pair[1]));
        assert!(LANGUAGE_CODES.windows(2).all(|pair| pair[0] < pair[1]));
    }

    #[test]
    fn countries_and_languages_follow_the_schema_enums() {
        assert_eq!(country_code("br"), Some("BR"));
        assert_eq!(country_code("XX"), None);
        assert_eq!(country_code("BRA"), None);
        assert_eq!(language_code("pt-BR"), Some("PT_BR"));
        assert_eq!(language_code("en-US"), Some("EN"));
        assert_eq!(language_code("fil"), Some("FIL"));
        assert_eq!(language_code("xx"), None);
        assert_eq!(language_code("en-"), None);
        assert_eq!(language_code(""), None);
    }
}
