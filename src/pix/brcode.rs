//! The BR Code (the Central Bank's profile of EMV QRCPS-MPM) a PSP answers as `pixCopiaECola`,
//! parsed and held against the charge the bridge asked for, so a payload that would pay
//! someone else, another amount or another charge never reaches the buyer.
//!
//! A payload is a sequence of TLV fields (two-digit id, two-digit length in characters, the
//! value); templates (26–51 merchant account, 62 additional data) nest the same way. It ends
//! with field 63, the CRC16-CCITT-FALSE (polynomial 0x1021, initial 0xFFFF) of everything
//! before the CRC's value, "6304" included, in four upper-case hex digits.
//!
//! Two forms reach the bridge: the dynamic one the manual describes for `cob` (the Pix
//! account template holds 25, the charge's `location` without scheme, and 62/05 is `***`),
//! and one that carries the key (26/01) and the txid (62/05) in the payload itself. API Pix
//! txids are up to 35 characters, so 62/05 is read up to 35 (the manual's 25 is the static
//! code's reference label).

use crate::money::Money;

const PIX_GUI: &str = "br.gov.bcb.pix";
const MAX_PAYLOAD: usize = 512;

/// What a payload says, field by field (only what the bridge holds it against).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BrCode {
    /// 01: "12" for a code paid once (dynamic), "11" reusable; absent means reusable.
    pub point_of_initiation: Option<String>,
    /// 26–51 whose 00 is `br.gov.bcb.pix`: 01, the receiver's key.
    pub key: Option<String>,
    /// The same template's 25: the charge's location URL without scheme.
    pub location: Option<String>,
    /// 54: the amount as written ("123.45").
    pub amount: Option<String>,
    /// 59 and 60.
    pub merchant_name: String,
    pub merchant_city: String,
    /// 62/05: the txid, or `***` in a dynamic code.
    pub txid: Option<String>,
}

/// CRC16-CCITT-FALSE, as field 63 carries it.
pub fn crc16(data: &[u8]) -> u16 {
    let mut crc: u16 = 0xFFFF;
    for byte in data {
        crc ^= u16::from(*byte) << 8;
        for _ in 0..8 {
            crc = if crc & 0x8000 != 0 {
                (crc << 1) ^ 0x1021
            } else {
                crc << 1
            };
        }
    }
    crc
}

/// One level of TLV fields, in order.
fn fields(text: &[char]) -> Result<Vec<(u8, String)>, String> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < text.len() {
        let header: String = text
            .get(at..at + 4)
            .ok_or("a field is cut short")?
            .iter()
            .collect();
        if !header.bytes().all(|byte| byte.is_ascii_digit()) {
            return Err(format!("field header {header:?} is not four digits"));
        }
        let id: u8 = header[..2].parse().map_err(|_| "bad field id")?;
        let len: usize = header[2..].parse().map_err(|_| "bad field length")?;
        let value: String = text
            .get(at + 4..at + 4 + len)
            .ok_or_else(|| format!("field {id:02} is longer than the payload"))?
            .iter()
            .collect();
        out.push((id, value));
        at += 4 + len;
    }
    Ok(out)
}

fn find(fields: &[(u8, String)], id: u8) -> Option<&str> {
    fields
        .iter()
        .find(|(found, _)| *found == id)
        .map(|(_, value)| value.as_str())
}

fn required<'a>(fields: &'a [(u8, String)], id: u8, what: &str) -> Result<&'a str, String> {
    find(fields, id).ok_or_else(|| format!("field {id:02} ({what}) is missing"))
}

/// Parses `payload` by the BR Code rules: CRC, field order of 00 and 63, the Pix account,
/// currency 986 and country BR. A wrong payload is told by the field at fault.
pub fn parse(payload: &str) -> Result<BrCode, String> {
    if payload.is_empty() || payload.chars().count() > MAX_PAYLOAD {
        return Err(format!("a BR Code is 1 to {MAX_PAYLOAD} characters"));
    }
    if payload.chars().any(char::is_control) {
        return Err("the payload holds control characters".to_owned());
    }
    let Some(crc_at) = payload.len().checked_sub(4) else {
        return Err("the payload has no CRC".to_owned());
    };
    let (covered, written) = (payload.get(..crc_at), payload.get(crc_at..));
    let (Some(covered), Some(written)) = (covered, written) else {
        return Err("the payload has no CRC".to_owned());
    };
    if !covered.ends_with("6304") {
        return Err("the payload does not end with field 63 (CRC)".to_owned());
    }
    let expected = format!("{:04X}", crc16(covered.as_bytes()));
    if !written.eq_ignore_ascii_case(&expected) {
        return Err("the CRC (field 63) does not match the payload".to_owned());
    }
    let chars: Vec<char> = payload.chars().collect();
    let top = fields(&chars)?;
    if top.first().map(|(id, value)| (*id, value.as_str())) != Some((0, "01")) {
        return Err("field 00 (payload format) must come first and be \"01\"".to_owned());
    }
    if top.last().map(|(id, _)| *id) != Some(63) {
        return Err("field 63 (CRC) must come last".to_owned());
    }
    let point_of_initiation = find(&top, 1).map(str::to_owned);
    if let Some(point) = &point_of_initiation
        && point != "11"
        && point != "12"
    {
        return Err("field 01 (point of initiation) must be \"11\" or \"12\"".to_owned());
    }
    let account = top
        .iter()
        .filter(|(id, _)| (26..=51).contains(id))
        .map(|(_, value)| fields(&value.chars().collect::<Vec<_>>()))
        .collect::<Result<Vec<_>, _>>()?
        .into_iter()
        .find(|template| find(template, 0).is_some_and(|gui| gui.eq_ignore_ascii_case(PIX_GUI)))
        .ok_or("no merchant account (26–51) with GUI br.gov.bcb.pix")?;
    let key = find(&account, 1).map(str::to_owned);
    let location = find(&account, 25).map(str::to_owned);
    if key.is_none() && location.is_none() {
        return Err("the Pix account holds neither a key (01) nor a location (25)".to_owned());
    }
    let category = required(&top, 52, "merchant category")?;
    if category.len() != 4 || !category.bytes().all(|byte| byte.is_ascii_digit()) {
        return Err("field 52 (merchant category) must be four digits".to_owned());
    }
    if required(&top, 53, "currency")? != "986" {
        return Err("field 53 (currency) must be 986 (BRL)".to_owned());
    }
    let amount = find(&top, 54).map(str::to_owned);
    if let Some(amount) = &amount
        && amount_minor(amount).is_none()
    {
        return Err("field 54 (amount) is not a decimal with at most two places".to_owned());
    }
    if required(&top, 58, "country")? != "BR" {
        return Err("field 58 (country) must be BR".to_owned());
    }
    let merchant_name = required(&top, 59, "merchant name")?.to_owned();
    let merchant_city = required(&top, 60, "merchant city")?.to_owned();
    if merchant_name.chars().count() > 25 || merchant_city.chars().count() > 15 {
        return Err("field 59 (name) is at most 25 characters, 60 (city) at most 15".to_owned());
    }
    let txid = match find(&top, 62) {
        Some(template) => {
            find(&fields(&template.chars().collect::<Vec<_>>())?, 5).map(str::to_owned)
        }
        None => None,
    };
    if let Some(txid) = &txid
        && txid != "***"
        && !(txid.len() <= 35 && txid.bytes().all(|byte| byte.is_ascii_alphanumeric()))
    {
        return Err("field 62/05 (txid) is not up to 35 letters and digits".to_owned());
    }
    Ok(BrCode {
        point_of_initiation,
        key,
        location,
        amount,
        merchant_name,
        merchant_city,
        txid,
    })
}

/// "123.45" → 12345; at most two decimal places, no sign, no exponent.
pub fn amount_minor(text: &str) -> Option<i64> {
    let (units, cents) = match text.split_once('.') {
        Some((units, cents)) => (units, cents),
        None => (text, ""),
    };
    let digits = |part: &str| part.bytes().all(|byte| byte.is_ascii_digit());
    if units.is_empty() || cents.len() > 2 || !digits(units) || !digits(cents) || text.len() > 13 {
        return None;
    }
    let units: i64 = units.parse().ok()?;
    let cents: i64 = if cents.is_empty() {
        0
    } else {
        format!("{cents:0<2}").parse().ok()?
    };
    units.checked_mul(100)?.checked_add(cents)
}

/// What the bridge asked the PSP for.
#[derive(Debug, Clone, Copy)]
pub struct Expected<'a> {
    pub key: &'a str,
    pub amount: Money,
    pub txid: &'a str,
    /// The charge's `location` as the PSP answered it (with or without scheme).
    pub location: Option<&'a str>,
}

/// `payload` parsed, and refused unless it pays `expected`'s key, amount and charge: the key
/// or the location must be the charge's, a written amount must be the charge's, and a written
/// txid must be the charge's. A code without a location must carry the amount and the txid
/// (nothing else ties it to this charge).
pub fn verify(payload: &str, expected: &Expected<'_>) -> Result<BrCode, String> {
    let code = parse(payload)?;
    if let Some(key) = &code.key
        && key != expected.key
    {
        return Err("the payload pays another Pix key than the merchant's".to_owned());
    }
    if let Some(location) = &code.location {
        let Some(charge_location) = expected.location else {
            return Err("the payload names a location the PSP did not answer".to_owned());
        };
        if without_scheme(location) != without_scheme(charge_location) {
            return Err("the payload's location is not the charge's".to_owned());
        }
    }
    match code.amount.as_deref().map(amount_minor) {
        Some(Some(amount)) if amount == expected.amount.amount => {}
        Some(_) => return Err("the payload's amount is not the charge's".to_owned()),
        None if code.location.is_some() => {}
        None => return Err("the payload has no amount".to_owned()),
    }
    match code.txid.as_deref() {
        Some(txid) if txid == expected.txid => {}
        Some("***") | None if code.location.is_some() => {}
        Some("***") | None => return Err("the payload carries no txid".to_owned()),
        Some(_) => return Err("the payload's txid is not the charge's".to_owned()),
    }
    Ok(code)
}

fn without_scheme(url: &str) -> &str {
    url.strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"))
        .unwrap_or(url)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// The Central Bank's manual's example (as /work/shared/upstream/pix/README.md quotes it).
    const MANUAL: &str = "00020126580014br.gov.bcb.pix0136123e4567-e12b-12d1-a456-4266554400005204000053039865802BR5913Fulano de Tal6008BRASILIA62070503***6304";

    #[test]
    fn crc_known_answers() {
        // CRC-16/CCITT-FALSE's check value, and the manual's example.
        assert_eq!(crc16(b"123456789"), 0x29B1);
        assert_eq!(crc16(MANUAL.as_bytes()), 0x1D3D);
    }

    #[test]
    fn the_manual_example_parses() {
        let code = parse(&format!("{MANUAL}1D3D")).unwrap();
        assert_eq!(
            code.key.as_deref(),
            Some("123e4567-e12b-12d1-a456-426655440000")
        );
        assert_eq!(code.merchant_name, "Fulano de Tal");
        assert_eq!(code.merchant_city, "BRASILIA");
        assert_eq!(code.txid.as_deref(), Some("***"));
        assert_eq!(code.amount, None);
        assert!(parse(&format!("{MANUAL}1D3E")).unwrap_err().contains("CRC"));
    }

    #[test]
    fn amounts_are_exact_decimals() {
        assert_eq!(amount_minor("123.45"), Some(12345));
        assert_eq!(amount_minor("0.5"), Some(50));
        assert_eq!(amount_minor("10"), Some(1000));
        for bad in ["", ".5", "1.234", "-1.00", "1e3", "1,00", " 1.00"] {
            assert_eq!(amount_minor(bad), None, "{bad}");
        }
    }
}
