//! BCP `br.dev.bcp.shopping.nfe`: the NF-e reference an order answers with. The access key
//! (chave de acesso) is 44 digits whose last is a mod-11 check digit over the other 43
//! (weights 2..9 from the right, repeating; a remainder of 0 or 1 gives 0), as SEFAZ's
//! Manual de Orientação do Contribuinte defines it. A key that fails it is not an NF-e the
//! buyer could look up, so the order answers without one.

use time::format_description::well_known::Rfc3339;

use crate::model::checkout::Order;
use crate::model::fiscal::Nfe;
use crate::protocol::Ucp;
use crate::protocol::checkout::NfeOut;

/// The capability an order answer declares when it carries the NF-e.
pub const CAPABILITY: &str = "br.dev.bcp.shopping.nfe";

/// Names the extension in an order answer's envelope: `render` then carries the NF-e the
/// store issued (absent while none is).
pub fn declare(ucp: &mut Ucp) {
    ucp.capabilities.insert(
        CAPABILITY.to_owned(),
        vec![crate::protocol::envelope::CapabilityVersion {
            version: ucp.version,
        }],
    );
}

/// Whether `key` is a well-formed NF-e access key.
pub fn valid_access_key(key: &str) -> bool {
    let digits: Vec<u32> = key.chars().filter_map(|c| c.to_digit(10)).collect();
    if key.len() != 44 || digits.len() != 44 {
        return false;
    }
    let sum: u32 = digits[..43]
        .iter()
        .rev()
        .zip((2..=9).cycle())
        .map(|(digit, weight)| digit * weight)
        .sum();
    let check = match 11 - sum % 11 {
        10 | 11 => 0,
        digit => digit,
    };
    digits[43] == check
}

/// The order's NF-e as it may be shown: `None` when the store's key is not a valid one.
pub fn checked(nfe: Option<&Nfe>) -> Option<&Nfe> {
    let nfe = nfe?;
    if valid_access_key(&nfe.access_key) {
        Some(nfe)
    } else {
        tracing::warn!(
            "the store's NF-e access key fails its check digit; the order answers without it"
        );
        None
    }
}

/// `order.nfe` of an answer that declares the capability (BCP namespace, a store with an
/// invoice source); nothing otherwise.
pub fn render(order: &Order, ucp: &Ucp) -> Option<NfeOut> {
    if !ucp.capabilities.contains_key(CAPABILITY) {
        return None;
    }
    let nfe = checked(order.nfe.as_ref())?;
    Some(NfeOut {
        access_key: nfe.access_key.clone(),
        danfe_url: nfe.danfe_url.clone(),
        xml_url: nfe.xml_url.clone(),
        issued_at: nfe.issued_at.and_then(|at| at.format(&Rfc3339).ok()),
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// A key built by the rule: 43 digits, then their check digit.
    fn with_check_digit(first: &str) -> String {
        (0..=9)
            .map(|digit| format!("{first}{digit}"))
            .find(|key| valid_access_key(key))
            .unwrap_or_default()
    }

    fn order(access_key: &str) -> Order {
        Order {
            id: "wc_order_7".into(),
            checkout_id: "c".into(),
            label: None,
            permalink_url: "https://loja.example/pedido/7".into(),
            store_status: "processing".into(),
            paid: true,
            lines: Vec::new(),
            currency: iso_currency::Currency::BRL,
            totals: crate::model::checkout::CheckoutTotals::default(),
            shipping_address: None,
            fulfillment_title: None,
            codes: Vec::new(),
            placed_at: None,
            nfe: Some(Nfe {
                access_key: access_key.into(),
                danfe_url: Some("https://nfe.example/danfe.pdf".into()),
                xml_url: None,
                issued_at: time::OffsetDateTime::from_unix_timestamp(1_796_653_800).ok(),
            }),
        }
    }

    fn ucp(capabilities: &[&str]) -> Ucp {
        Ucp {
            version: "2026-07-28",
            status: None,
            capabilities: capabilities
                .iter()
                .map(|name| {
                    (
                        (*name).to_owned(),
                        vec![crate::protocol::envelope::CapabilityVersion {
                            version: "2026-07-28",
                        }],
                    )
                })
                .collect(),
            payment_handlers: None,
        }
    }

    #[test]
    fn issue_37_the_order_answers_its_nfe_only_where_the_capability_is_declared() {
        let valid = order("35170608530528000184550000000154301000771569");
        let rendered = render(&valid, &ucp(&[CAPABILITY])).unwrap();
        assert_eq!(
            rendered.access_key,
            "35170608530528000184550000000154301000771569"
        );
        assert_eq!(
            rendered.danfe_url.as_deref(),
            Some("https://nfe.example/danfe.pdf")
        );
        assert_eq!(rendered.issued_at.as_deref(), Some("2026-12-07T14:30:00Z"));
        // The UCP namespace (or a store without an invoice source) declares no NF-e.
        assert!(render(&valid, &ucp(&["br.dev.bcp.shopping.order"])).is_none());
        // A key failing its check digit is no NF-e a buyer could look up.
        let broken = order("35170608530528000184550000000154301000771561");
        assert!(render(&broken, &ucp(&[CAPABILITY])).is_none());
    }

    #[test]
    fn issue_37_access_keys_are_44_digits_with_their_mod_11_check_digit() {
        // SP (35), June 2017, CNPJ 08530528000184, model 55, series 0, number 15430, then
        // the code and its check digit 9.
        let key = "35170608530528000184550000000154301000771569";
        assert!(valid_access_key(key));
        let last = key.chars().last().unwrap_or('0').to_digit(10).unwrap_or(0);
        let wrong = format!("{}{}", &key[..43], (last + 1) % 10);
        assert!(!valid_access_key(&wrong));
        assert!(!valid_access_key(&key[..43]));
        assert!(!valid_access_key(&format!("{key}0")));
        assert!(!valid_access_key(&format!("{}A", &key[..43])));
        assert!(!valid_access_key(
            "3517 060853052800018455000000015430100077156"
        ));
        // Remainders 0 and 1 give the check digit 0.
        let generated = with_check_digit(&"1".repeat(43));
        assert_eq!(generated.len(), 44);
        assert!(valid_access_key(&generated));
    }
}
