//! The NF-e of an order, from the order meta keys the merchant named (`[store.nfe_meta]`:
//! NF-e plugins keep the access key, the DANFE and XML links and the issue time there), read
//! through REST v3. Only carried: whether the key is a valid one is the brain's to judge.

use std::collections::HashMap;

use time::format_description::well_known::Rfc3339;
use time::{OffsetDateTime, PrimitiveDateTime};

use super::super::rest_v3::RestV3;
use super::super::settings::NfeMeta;
use crate::model::fiscal::Nfe;

pub struct Invoices {
    rest: RestV3,
    keys: NfeMeta,
}

impl Invoices {
    pub fn new(rest: RestV3, keys: NfeMeta) -> Self {
        Self { rest, keys }
    }

    /// The order's NF-e, `None` when it has none yet (or the store could not be read).
    pub async fn nfe(&self, order_id: u64) -> Option<Nfe> {
        nfe_of(&self.keys, &self.rest.order_meta(order_id).await?)
    }
}

fn link(meta: &HashMap<String, String>, key: Option<&String>) -> Option<String> {
    let value = meta.get(key?)?.trim();
    (value.starts_with("https://") || value.starts_with("http://")).then(|| value.to_owned())
}

/// RFC 3339, or WordPress's `YYYY-MM-DD HH:MM:SS` taken as UTC.
fn time_of(text: &str) -> Option<OffsetDateTime> {
    let text = text.trim();
    OffsetDateTime::parse(text, &Rfc3339).ok().or_else(|| {
        let format = time::format_description::parse_borrowed::<2>(
            "[year]-[month]-[day] [hour]:[minute]:[second]",
        )
        .ok()?;
        PrimitiveDateTime::parse(text, &format)
            .ok()
            .map(PrimitiveDateTime::assume_utc)
    })
}

pub fn nfe_of(keys: &NfeMeta, meta: &HashMap<String, String>) -> Option<Nfe> {
    // Plugins print the key in groups of four; the wire carries the digits.
    let access_key: String = meta
        .get(&keys.access_key)?
        .chars()
        .filter(|c| !c.is_whitespace() && *c != '.' && *c != '-')
        .collect();
    if access_key.is_empty() {
        return None;
    }
    Some(Nfe {
        access_key,
        danfe_url: link(meta, keys.danfe_url.as_ref()),
        xml_url: link(meta, keys.xml_url.as_ref()),
        issued_at: keys
            .issued_at
            .as_ref()
            .and_then(|key| meta.get(key))
            .and_then(|text| time_of(text)),
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn issue_37_the_nfe_comes_from_the_named_meta_keys() {
        let keys = NfeMeta {
            access_key: "_nfe_chave".into(),
            danfe_url: Some("_nfe_danfe".into()),
            xml_url: Some("_nfe_xml".into()),
            issued_at: Some("_nfe_emissao".into()),
        };
        let meta: HashMap<String, String> = [
            (
                "_nfe_chave",
                "3517 0608 5305 2800 0184 5500 0000 0154 3010 0077 1569",
            ),
            ("_nfe_danfe", "https://nfe.example/danfe/1.pdf"),
            ("_nfe_xml", "javascript:alert(1)"),
            ("_nfe_emissao", "2026-12-07 14:30:00"),
            ("_other", "x"),
        ]
        .into_iter()
        .map(|(key, value)| (key.to_owned(), value.to_owned()))
        .collect();
        let nfe = nfe_of(&keys, &meta).unwrap();
        assert_eq!(
            nfe.access_key,
            "35170608530528000184550000000154301000771569"
        );
        assert_eq!(
            nfe.danfe_url.as_deref(),
            Some("https://nfe.example/danfe/1.pdf")
        );
        // Only web links are links.
        assert_eq!(nfe.xml_url, None);
        assert_eq!(nfe.issued_at.unwrap().unix_timestamp(), 1_796_653_800);
        let mut rfc = meta.clone();
        rfc.insert("_nfe_emissao".into(), "2026-12-07T11:30:00-03:00".into());
        assert_eq!(nfe_of(&keys, &rfc).unwrap().issued_at, nfe.issued_at);
        // An order not invoiced yet has no NF-e.
        let mut none = meta.clone();
        none.remove("_nfe_chave");
        assert!(nfe_of(&keys, &none).is_none());
        none.insert("_nfe_chave".into(), " ".into());
        assert!(nfe_of(&keys, &none).is_none());
    }
}
