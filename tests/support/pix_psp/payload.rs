//! The stand-in's BR Code, written from the Central Bank's manual (EMV MPM fields 00 to 63,
//! CRC16-CCITT-FALSE), apart from the bridge's parser so each checks the other.

use super::{KEY, MERCHANT_CITY, MERCHANT_NAME};

/// How the charge's BR Code names what it pays.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PayloadStyle {
    /// 26/01 the key, 54 the amount, 62/05 the txid.
    KeyAndTxid,
    /// The manual's dynamic code: 26/25 the location, 54 the amount, 62/05 `***`.
    Location,
}

/// A deliberately wrong payload, for the bridge to refuse.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tamper {
    Crc,
    Amount,
    Key,
    Txid,
}

fn tlv(id: u8, value: &str) -> String {
    format!("{id:02}{:02}{value}", value.chars().count())
}

/// CRC16-CCITT-FALSE (polynomial 0x1021, initial 0xFFFF), as the BR Code's field 63.
pub fn crc16(data: &[u8]) -> u16 {
    let mut crc: u16 = 0xFFFF;
    for byte in data {
        crc ^= u16::from(*byte) << 8;
        for _ in 0..8 {
            crc = if crc & 0x8000 == 0 {
                crc << 1
            } else {
                (crc << 1) ^ 0x1021
            };
        }
    }
    crc
}

/// The charge's BR Code, by the Central Bank's manual (EMV MPM fields 00 to 63).
pub(super) fn br_code(
    style: PayloadStyle,
    tamper: Option<Tamper>,
    txid: &str,
    amount: &str,
    location: &str,
) -> String {
    let key = if tamper == Some(Tamper::Key) {
        "someone-else@example.com"
    } else {
        KEY
    };
    let amount = if tamper == Some(Tamper::Amount) {
        "0.01"
    } else {
        amount
    };
    let txid = if tamper == Some(Tamper::Txid) {
        "bcpAnotherChargeEntirely000000000"
    } else {
        txid
    };
    let (account, reference) = match style {
        PayloadStyle::KeyAndTxid => (tlv(1, key), txid),
        PayloadStyle::Location => (tlv(25, location), "***"),
    };
    let mut payload = [
        tlv(0, "01"),
        tlv(1, "12"),
        tlv(26, &(tlv(0, "br.gov.bcb.pix") + &account)),
        tlv(52, "0000"),
        tlv(53, "986"),
        tlv(54, amount),
        tlv(58, "BR"),
        tlv(59, MERCHANT_NAME),
        tlv(60, MERCHANT_CITY),
        tlv(62, &tlv(5, reference)),
    ]
    .concat();
    payload.push_str("6304");
    let mut crc = crc16(payload.as_bytes());
    if tamper == Some(Tamper::Crc) {
        crc ^= 0x0101;
    }
    payload.push_str(&format!("{crc:04X}"));
    payload
}
