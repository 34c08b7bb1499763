//! BCP's fiscal identity (`br.dev.bcp.shopping.fiscal_identity`, fiscal-identity.md) on the
//! BCP door: the buyer's CPF or CNPJ checked by its check digits before any store sees it, and
//! the seller's identity from `[seller]`, frozen into every checkout and order answer while it
//! is configured. The UCP door knows neither (its namespace has no fiscal identity): there the
//! buyer's document stays unread and unshown, and a store's demand for one is the store's page
//! to satisfy.
//!
//! Documents are personal data: no function here logs, and no refusal repeats the value.

use schemars::JsonSchema;
use serde::Deserialize;

use super::Brain;
use super::checkout::{Judged, Status};
use crate::model::fiscal::{TaxpayerId, TaxpayerKind};
use crate::protocol::envelope::CapabilityVersion;
use crate::protocol::fiscal::{SellerIdentityOut, TaxpayerKindIn};
use crate::protocol::message::MessageType;
use crate::protocol::request::CheckoutIn;
use crate::protocol::{Message, MessageCode, Namespace, Severity, Ucp};
use crate::settings::ConfigProblem;

/// The capability's name; BCP's own, so it is never spelt in the UCP namespace.
pub const CAPABILITY: &str = "br.dev.bcp.shopping.fiscal_identity";
/// Where the buyer's document goes in a checkout payload.
pub use super::checkout::requirements::TAXPAYER_PATH;
/// Longest `id_estrangeiro` kept (NF-e's `idEstrangeiro` holds 20; passports fit).
const FOREIGN_MAX: usize = 64;

/// Whether `namespace` is the one with BCP's Brazilian extensions.
pub fn is_bcp(namespace: &Namespace) -> bool {
    namespace.service == Namespace::BCP.service
}

/// `value` without the punctuation people write documents with (`390.533.447-05`,
/// `19.131.243/0001-97`), letters upper-cased; `None` when anything else is left.
fn strip(value: &str) -> Option<String> {
    let mut out = String::with_capacity(14);
    for char in value.chars() {
        match char {
            '.' | '-' | '/' | ' ' | '\t' => {}
            '0'..='9' | 'A'..='Z' => out.push(char),
            'a'..='z' => out.push(char.to_ascii_uppercase()),
            _ => return None,
        }
    }
    Some(out)
}

/// One character's value in the mod-11 sums: its ASCII code minus 48, so digits are
/// themselves and, in the alphanumeric CNPJ (Receita Federal, from July 2026), `A` is 17.
fn value(byte: u8) -> u32 {
    u32::from(byte).saturating_sub(48)
}

/// A document of one repeated character passes mod 11 but is never issued.
fn repeated(text: &str) -> bool {
    let bytes = text.as_bytes();
    bytes.iter().all(|byte| Some(byte) == bytes.first())
}

/// CPF: 11 digits, the last two mod-11 check digits over weights 10..2 and 11..2.
pub fn cpf_valid(digits: &str) -> bool {
    let bytes = digits.as_bytes();
    if bytes.len() != 11 || !bytes.iter().all(u8::is_ascii_digit) || repeated(digits) {
        return false;
    }
    let check = |len: usize| {
        let sum: u32 = bytes[..len]
            .iter()
            .enumerate()
            .map(|(at, byte)| value(*byte) * (len as u32 + 1 - at as u32))
            .sum();
        (sum * 10 % 11) % 10
    };
    check(9) == value(bytes[9]) && check(10) == value(bytes[10])
}

/// CNPJ: 12 characters (digits, or from 2026 upper-case letters) and two check digits, each
/// mod 11 over weights cycling 2..9 from the right.
pub fn cnpj_valid(text: &str) -> bool {
    let bytes = text.as_bytes();
    if bytes.len() != 14
        || !bytes[..12]
            .iter()
            .all(|byte| byte.is_ascii_digit() || byte.is_ascii_uppercase())
        || !bytes[12..].iter().all(u8::is_ascii_digit)
        || repeated(text)
    {
        return false;
    }
    let check = |len: usize| {
        let sum: u32 = bytes[..len]
            .iter()
            .rev()
            .enumerate()
            .map(|(at, byte)| value(*byte) * (at as u32 % 8 + 2))
            .sum();
        match sum % 11 {
            0 | 1 => 0,
            rest => 11 - rest,
        }
    };
    check(12) == value(bytes[12]) && check(13) == value(bytes[13])
}

/// The document as the wire carries it (punctuation-free), or why it cannot be taken, in
/// words an agent can relay to the buyer (never repeating the value).
pub fn taxpayer(kind: TaxpayerKind, raw: &str) -> Result<TaxpayerId, String> {
    let value = match kind {
        TaxpayerKind::Foreign => {
            let value = raw.trim();
            if value.is_empty() || value.chars().count() > FOREIGN_MAX {
                return Err(format!(
                    "An id_estrangeiro is the foreign buyer's document number (1 to {FOREIGN_MAX} characters)"
                ));
            }
            if value.chars().any(char::is_control) {
                return Err("An id_estrangeiro holds printable characters only".to_owned());
            }
            value.to_owned()
        }
        TaxpayerKind::Cpf => match strip(raw) {
            Some(digits) if cpf_valid(&digits) => digits,
            Some(digits) if digits.len() == 11 && digits.bytes().all(|b| b.is_ascii_digit()) => {
                return Err(
                    "This CPF is not valid: its check digits do not match. Ask the buyer to check the number"
                        .to_owned(),
                );
            }
            _ => {
                return Err(
                    "A CPF has 11 digits (punctuation such as 390.533.447-05 is accepted)"
                        .to_owned(),
                );
            }
        },
        TaxpayerKind::Cnpj => match strip(raw) {
            Some(text) if cnpj_valid(&text) => text,
            Some(text) if text.len() == 14 => {
                return Err(
                    "This CNPJ is not valid: its check digits do not match. Ask the buyer to check it"
                        .to_owned(),
                );
            }
            _ => {
                return Err(
                    "A CNPJ has 14 characters: 12 digits or capital letters, then 2 check digits (punctuation such as 19.131.243/0001-97 is accepted)"
                        .to_owned(),
                );
            }
        },
    };
    Ok(TaxpayerId { kind, value })
}

fn kind(kind: TaxpayerKindIn) -> TaxpayerKind {
    match kind {
        TaxpayerKindIn::Cpf => TaxpayerKind::Cpf,
        TaxpayerKindIn::Cnpj => TaxpayerKind::Cnpj,
        TaxpayerKindIn::IdEstrangeiro => TaxpayerKind::Foreign,
    }
}

/// What the agent sent as the buyer's document: taken, refused (a recoverable message at
/// `$.buyer.taxpayer_id`: the rest of the payload still applies), or not sent.
pub enum Document {
    Absent,
    Taken(TaxpayerId),
    Refused(Message),
}

/// A document the agent sent is refused: the checkout cannot be `ready_for_complete` with
/// it (it may be ready without one, but the agent meant to give it).
pub fn held_back(mut judged: Judged, document: &Document) -> Judged {
    if let Document::Refused(message) = document {
        if matches!(
            judged.status,
            Status::ReadyForComplete | Status::RequiresEscalation
        ) {
            judged.status = Status::Incomplete;
        }
        if !judged.messages.contains(message) {
            judged.messages.insert(0, message.clone());
        }
    }
    judged
}

// ---- [seller] ------------------------------------------------------------------------------

/// `[seller]`: the business behind the store, as BCP's fiscal identity shows it to buyers
/// (fiscal-identity.md: CNPJ and legal name in every checkout and order answer; agents show
/// them before completion and on the receipt). When set, the BCP profile declares
/// `br.dev.bcp.shopping.fiscal_identity`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SellerConfig {
    /// The seller's CNPJ (14 characters; punctuation such as 19.131.243/0001-97 is accepted,
    /// letters from the 2026 alphanumeric CNPJ too). Its check digits are verified.
    pub cnpj: String,
    /// The registered legal name (razão social).
    pub legal_name: String,
    /// The business's physical address, shown to consumers (a UCP postal address).
    pub address: Option<SellerAddress>,
}

/// A postal address (UCP `postal_address`) of the business.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SellerAddress {
    /// Street and number, e.g. "Rua Doutor Quirino, 1481".
    pub street_address: Option<String>,
    /// Complement and bairro, e.g. "Sala 42 - Bairro Centro".
    pub extended_address: Option<String>,
    /// City, e.g. "Campinas".
    pub address_locality: Option<String>,
    /// State, e.g. "SP".
    pub address_region: Option<String>,
    /// CEP, e.g. "13015-081".
    pub postal_code: Option<String>,
    /// ISO 3166-1 alpha-2, e.g. "BR".
    pub address_country: Option<String>,
}

impl SellerConfig {
    pub fn problems(&self) -> Vec<ConfigProblem> {
        let mut problems = Vec::new();
        if !strip(&self.cnpj).is_some_and(|cnpj| cnpj_valid(&cnpj)) {
            problems.push(ConfigProblem::new(
                "seller.cnpj",
                "not a valid CNPJ: 14 characters (12 digits or capital letters, then 2 check digits) whose check digits match",
            ));
        }
        if self.legal_name.trim().is_empty() {
            problems.push(ConfigProblem::new(
                "seller.legal_name",
                "must name the business (its razão social)",
            ));
        }
        if let Some(country) = self
            .address
            .as_ref()
            .and_then(|address| address.address_country.as_deref())
            && !(country.len() == 2 && country.bytes().all(|byte| byte.is_ascii_alphabetic()))
        {
            problems.push(ConfigProblem::new(
                "seller.address.address_country",
                "must be an ISO 3166-1 alpha-2 code, e.g. \"BR\"",
            ));
        }
        problems
    }

    /// The wire object, the CNPJ punctuation-free as the schema asks.
    pub fn identity(&self) -> SellerIdentityOut {
        let text = |value: &Option<String>| {
            value
                .as_deref()
                .map(str::trim)
                .filter(|value| !value.is_empty())
                .map(str::to_owned)
        };
        SellerIdentityOut {
            cnpj: strip(&self.cnpj).unwrap_or_else(|| self.cnpj.clone()),
            legal_name: self.legal_name.trim().to_owned(),
            address: self
                .address
                .as_ref()
                .map(|address| crate::protocol::checkout::AddressOut {
                    street_address: text(&address.street_address),
                    extended_address: text(&address.extended_address),
                    address_locality: text(&address.address_locality),
                    address_region: text(&address.address_region),
                    postal_code: text(&address.postal_code),
                    address_country: text(&address.address_country)
                        .map(|code| code.to_ascii_uppercase()),
                    ..Default::default()
                }),
        }
    }
}

/// The BCP door's fiscal identity: present on the BCP brain only.
#[derive(Clone)]
pub struct Fiscal {
    /// `[seller]`, when configured: then every checkout and order answer carries it.
    seller: Option<SellerIdentityOut>,
}

impl Fiscal {
    pub fn new(seller: Option<&SellerConfig>) -> Self {
        Self {
            seller: seller.map(SellerConfig::identity),
        }
    }
}

/// Names the extension in an answer's envelope while `seller` is configured: the answer then
/// carries `seller_identity`.
pub fn declare(ucp: &mut Ucp, seller: Option<&SellerIdentityOut>) {
    if seller.is_some() {
        ucp.capabilities.insert(
            CAPABILITY.to_owned(),
            vec![CapabilityVersion {
                version: ucp.version,
            }],
        );
    }
}

/// `update` also gives the buyer's document, when the agent sent one that was taken.
pub fn with_document(update: &mut super::checkout::CheckoutUpdate, document: &Document) {
    if let Document::Taken(taken) = document {
        let mut buyer = update.buyer.take().unwrap_or_default();
        buyer.taxpayer_id = Some(taken.clone());
        update.buyer = Some(buyer);
    }
}

impl Brain {
    /// The BCP door's fiscal identity (`[seller]` when configured).
    pub fn with_fiscal(mut self, fiscal: Fiscal) -> Self {
        self.fiscal = Some(fiscal);
        self
    }

    /// The buyer's document in a checkout payload. The UCP door reads none: UCP's buyer has
    /// no `taxpayer_id`.
    pub(super) fn document(&self, input: &CheckoutIn) -> Document {
        let Some(sent) = input
            .buyer
            .as_ref()
            .and_then(|buyer| buyer.taxpayer_id.as_ref())
            .filter(|_| self.fiscal.is_some())
        else {
            return Document::Absent;
        };
        match taxpayer(kind(sent.kind), &sent.value) {
            Ok(document) => Document::Taken(document),
            Err(reason) => Document::Refused(
                Message::error(MessageCode::Invalid, reason, Severity::Recoverable)
                    .at(TAXPAYER_PATH.to_owned()),
            ),
        }
    }

    /// `seller_identity`, while `[seller]` is configured on the BCP door.
    pub(super) fn seller_identity(&self) -> Option<SellerIdentityOut> {
        self.fiscal
            .as_ref()
            .and_then(|fiscal| fiscal.seller.clone())
    }

    /// Whether this door's order answers declare `br.dev.bcp.shopping.nfe`: the BCP door
    /// (UCP has no NF-e) of a store whose adapter reads invoices, as the profile says.
    pub(super) fn invoices_declared(&self, checkouts: &super::checkout::CheckoutBrain) -> bool {
        self.fiscal.is_some() && checkouts.port().reads_invoices()
    }

    /// A checkout or order answer's envelope names the extension while it is active.
    pub(super) fn declare_fiscal(&self, ucp: &mut Ucp) {
        declare(ucp, self.seller_identity().as_ref());
    }

    /// The UCP door neither shows a document nor asks for one at a path its buyer does not
    /// have: a store's demand for a CPF/CNPJ becomes a hand-off to the store's page, where
    /// the buyer gives it.
    pub(super) fn fiscal_view(&self, judged: &mut Judged) {
        if self.fiscal.is_some() {
            return;
        }
        judged.state.buyer.taxpayer_id = None;
        let mut asked = false;
        for message in &mut judged.messages {
            if message.path.as_deref() == Some(TAXPAYER_PATH) {
                *message = Message::error(
                    MessageCode::Missing,
                    "The store needs the buyer's CPF or CNPJ, which it collects on its own page: hand the buyer off with continue_url",
                    Severity::RequiresBuyerInput,
                );
                asked = true;
            }
        }
        let recoverable = judged.messages.iter().any(|message| {
            message.kind == MessageType::Error && message.severity == Some(Severity::Recoverable)
        });
        if asked
            && judged.status == Status::Incomplete
            && !recoverable
            && judged.state.continue_url.is_some()
        {
            judged.status = Status::RequiresEscalation;
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn cpf_check_digits() {
        // fiscal-identity.md's own example, and other issued-format numbers.
        for valid in ["39053344705", "52998224725", "11144477735"] {
            assert!(cpf_valid(valid), "{valid}");
        }
        for invalid in [
            "39053344706",
            "39053344715",
            "11111111111",
            "00000000000",
            "3905334470",
            "390533447050",
            "3905334470A",
        ] {
            assert!(!cpf_valid(invalid), "{invalid}");
        }
    }

    #[test]
    fn cnpj_check_digits_numeric_and_alphanumeric() {
        // The spec's example seller, a numeric CNPJ, and the Receita Federal's published
        // alphanumeric example 12.ABC.345/01DE-35 (letters valued ASCII − 48).
        for valid in ["19131243000197", "11222333000181", "12ABC34501DE35"] {
            assert!(cnpj_valid(valid), "{valid}");
        }
        for invalid in [
            "19131243000198",
            "12ABC34501DE36",
            "12ABC34501DE3A",
            "00000000000000",
            "1913124300019",
            "12abc34501DE35",
        ] {
            assert!(!cnpj_valid(invalid), "{invalid}");
        }
    }

    #[test]
    fn punctuation_is_stripped_to_the_wire_form() {
        let cpf = taxpayer(TaxpayerKind::Cpf, " 390.533.447-05 ").unwrap();
        assert_eq!(cpf.value, "39053344705");
        let cnpj = taxpayer(TaxpayerKind::Cnpj, "19.131.243/0001-97").unwrap();
        assert_eq!(cnpj.value, "19131243000197");
        let alnum = taxpayer(TaxpayerKind::Cnpj, "12.abc.345/01de-35").unwrap();
        assert_eq!(alnum.value, "12ABC34501DE35");
        let foreign = taxpayer(TaxpayerKind::Foreign, "  P 1234-567 ").unwrap();
        assert_eq!(foreign.value, "P 1234-567");
    }

    #[test]
    fn refusals_say_why_without_the_value() {
        let wrong = taxpayer(TaxpayerKind::Cpf, "390.533.447-06").unwrap_err();
        assert!(wrong.contains("check digits"), "{wrong}");
        assert!(!wrong.contains("39053344706") && !wrong.contains("447-06"));
        let short = taxpayer(TaxpayerKind::Cpf, "1234").unwrap_err();
        assert!(short.contains("11 digits"), "{short}");
        let wrong = taxpayer(TaxpayerKind::Cnpj, "19131243000198").unwrap_err();
        assert!(wrong.contains("check digits"), "{wrong}");
        assert!(taxpayer(TaxpayerKind::Cpf, "390;533;447;05").is_err());
        assert!(taxpayer(TaxpayerKind::Foreign, "   ").is_err());
        assert!(taxpayer(TaxpayerKind::Foreign, &"X".repeat(65)).is_err());
    }

    #[test]
    fn seller_check_names_the_key() {
        let seller = SellerConfig {
            cnpj: "19.131.243/0001-98".into(),
            legal_name: " ".into(),
            address: None,
        };
        let keys: Vec<String> = seller
            .problems()
            .iter()
            .map(|problem| problem.key.clone())
            .collect();
        assert_eq!(keys, ["seller.cnpj", "seller.legal_name"]);
        let seller = SellerConfig {
            cnpj: "19.131.243/0001-97".into(),
            legal_name: "Loja Exemplo Ltda".into(),
            address: None,
        };
        assert!(seller.problems().is_empty());
        assert_eq!(seller.identity().cnpj, "19131243000197");
    }
}
