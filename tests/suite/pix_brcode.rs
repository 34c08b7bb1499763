//! Issue 38 item 5: the stand-in's BR Code read back by a decoder written here from the
//! Central Bank's BR Code rules (EMV MPM TLV fields, CRC16-CCITT-FALSE over everything up to
//! and including "6304"), independent of the bridge's own parser, gives the same key, amount
//! and txid the bridge asked for; the bridge's parser agrees, and refuses a damaged one.

use std::collections::BTreeMap;
use std::time::Duration;

use bcp_bridge::money::Money;
use bcp_bridge::pix::port::{ChargeRequest, PixProvider};
use bcp_bridge::pix::{ApiPix, brcode, qr};

use crate::pix_api::pix_config;
use crate::support::pix_psp::{KEY, MERCHANT_CITY, MERCHANT_NAME, PayloadStyle, PixPsp, crc16};

/// One level of `id(2) length(2) value` fields.
pub(crate) fn decode(text: &str) -> BTreeMap<String, String> {
    let mut fields = BTreeMap::new();
    let mut rest = text;
    while !rest.is_empty() {
        let id = &rest[..2];
        let len: usize = rest[2..4].parse().unwrap();
        fields.insert(id.to_owned(), rest[4..4 + len].to_owned());
        rest = &rest[4 + len..];
    }
    fields
}

pub(crate) fn crc_holds(payload: &str) -> bool {
    let (covered, crc) = payload.split_at(payload.len() - 4);
    covered.ends_with("6304") && format!("{:04X}", crc16(covered.as_bytes())) == crc
}

#[test]
fn crc_known_answers_from_the_manual() {
    let manual = "00020126580014br.gov.bcb.pix0136123e4567-e12b-12d1-a456-4266554400005204000053039865802BR5913Fulano de Tal6008BRASILIA62070503***6304";
    assert_eq!(crc16(manual.as_bytes()), 0x1D3D);
    assert_eq!(brcode::crc16(manual.as_bytes()), 0x1D3D);
    assert_eq!(crc16(b"123456789"), 0x29B1);
}

fn request(order: &str, minor: i64) -> ChargeRequest {
    ChargeRequest {
        txid: bcp_bridge::pix::txid::derive(b"brcode test secret", "sample", order),
        amount: Money::new(minor, iso_currency::Currency::BRL),
        expires_secs: 600,
        debtor: None,
        note: None,
    }
}

#[tokio::test]
async fn issue_38_item_5_the_payload_reads_back_to_the_same_key_amount_and_txid() {
    let psp = PixPsp::start().await;
    let client = ApiPix::new(&pix_config(&psp.pix_toml()), Duration::from_secs(10)).unwrap();
    let asked = request("5001", 123456);
    let charge = client.create_charge(&asked).await.unwrap();
    let payload = &charge.copia_e_cola;
    assert!(crc_holds(payload), "{payload}");
    let top = decode(payload);
    assert_eq!(top["00"], "01");
    assert_eq!(top["53"], "986");
    assert_eq!(top["58"], "BR");
    assert_eq!(top["59"], MERCHANT_NAME);
    assert_eq!(top["60"], MERCHANT_CITY);
    let account = decode(&top["26"]);
    assert_eq!(account["00"], "br.gov.bcb.pix");
    assert_eq!(account["01"], KEY);
    assert_eq!(top["54"], "1234.56");
    assert_eq!(decode(&top["62"])["05"], asked.txid);
    // The bridge's parser reads the same.
    let parsed = brcode::parse(payload).unwrap();
    assert_eq!(parsed.key.as_deref(), Some(KEY));
    assert_eq!(parsed.amount.as_deref(), Some("1234.56"));
    assert_eq!(parsed.txid.as_deref(), Some(asked.txid.as_str()));
    // And the QR image is a PNG.
    let png = qr::png_base64(payload).unwrap();
    assert!(png.starts_with("iVBORw0KGgo"), "{}", &png[..16]);
}

#[tokio::test]
async fn the_dynamic_form_is_bound_by_its_location() {
    let psp = PixPsp::start_with(PayloadStyle::Location).await;
    let client = ApiPix::new(&pix_config(&psp.pix_toml()), Duration::from_secs(10)).unwrap();
    let charge = client.create_charge(&request("5002", 990)).await.unwrap();
    let top = decode(&charge.copia_e_cola);
    assert!(crc_holds(&charge.copia_e_cola));
    assert_eq!(Some(decode(&top["26"])["25"].clone()), charge.location);
    assert_eq!(top["54"], "9.90");
    assert_eq!(decode(&top["62"])["05"], "***");
}

#[test]
fn the_bridge_refuses_a_damaged_or_foreign_payload() {
    let good = "00020101021226580014br.gov.bcb.pix0136123e4567-e12b-12d1-a456-4266554400005204000053039865406100.005802BR5913Fulano de Tal6008BRASILIA62290525bcpabcdefABCDEF0123456789";
    let with_crc =
        |body: &str| format!("{body}6304{:04X}", crc16(format!("{body}6304").as_bytes()));
    let payload = with_crc(good);
    let expected = brcode::Expected {
        key: "123e4567-e12b-12d1-a456-426655440000",
        amount: Money::new(10000, iso_currency::Currency::BRL),
        txid: "bcpabcdefABCDEF0123456789",
        location: None,
    };
    brcode::verify(&payload, &expected).unwrap();
    let refused = |payload: &str, expected: &brcode::Expected<'_>| {
        brcode::verify(payload, expected).unwrap_err()
    };
    // One digit of the CRC off.
    let mut damaged = payload.clone();
    let last = damaged.pop().unwrap();
    damaged.push(if last == '0' { '1' } else { '0' });
    assert!(refused(&damaged, &expected).contains("CRC"));
    let other_amount = brcode::Expected {
        amount: Money::new(9999, iso_currency::Currency::BRL),
        ..expected
    };
    assert!(refused(&payload, &other_amount).contains("amount"));
    let other_key = brcode::Expected {
        key: "merchant@example.com",
        ..expected
    };
    assert!(refused(&payload, &other_key).contains("key"));
    let other_txid = brcode::Expected {
        txid: "bcpanotherone0000000000000",
        ..expected
    };
    assert!(refused(&payload, &other_txid).contains("txid"));
    // Another currency, with a correct CRC.
    let dollars = with_crc(&good.replace("5303986", "5303840"));
    assert!(refused(&dollars, &expected).contains("986"));
}
