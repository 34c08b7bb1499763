//! Brazil's fiscal vocabulary as the store and the brain share it: the buyer's taxpayer id
//! (BCP `br.dev.bcp.shopping.fiscal_identity`), what a store requires before it takes an
//! order, and the NF-e an order was invoiced with (`br.dev.bcp.shopping.nfe`). Validation of
//! the documents is the brain's; adapters only carry the values to and from the store.

use std::fmt;

use time::OffsetDateTime;

/// The kind of a buyer's taxpayer id, as NF-e identifies its recipient.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaxpayerKind {
    /// A natural person: 11 digits.
    Cpf,
    /// A legal entity: 14 characters (alphanumeric from 2026).
    Cnpj,
    /// A foreign buyer without CPF/CNPJ (NF-e `idEstrangeiro`): free-form.
    Foreign,
}

impl TaxpayerKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Cpf => "cpf",
            Self::Cnpj => "cnpj",
            Self::Foreign => "id_estrangeiro",
        }
    }
}

/// A buyer's CPF, CNPJ or foreign id, punctuation-free. Personal data: prints redacted.
#[derive(Clone, PartialEq, Eq)]
pub struct TaxpayerId {
    pub kind: TaxpayerKind,
    pub value: String,
}

impl fmt::Debug for TaxpayerId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TaxpayerId {{ kind: {:?}, [redacted] }}", self.kind)
    }
}

/// Something the store insists on before it takes an order, read from the store itself (its
/// checkout schema, its settings). The brain turns each one the checkout does not satisfy
/// into a recoverable message at the field's path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Requirement {
    /// A CPF or CNPJ (`buyer.taxpayer_id`); `kinds` lists the ones the store accepts.
    TaxpayerId { kinds: Vec<TaxpayerKind> },
    /// The house number (or "s/n") of the shipping address.
    HouseNumber,
    /// The bairro of the shipping address.
    Neighborhood,
    /// A field the bridge cannot fill: only the store's own page can collect it.
    Other { key: String, label: String },
}

/// The NF-e an order was invoiced with, where the store exposes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Nfe {
    /// The 44-digit access key (chave de acesso).
    pub access_key: String,
    pub danfe_url: Option<String>,
    pub xml_url: Option<String>,
    pub issued_at: Option<OffsetDateTime>,
}

/// How the bairro is marked in `extended_address` (the bridge's convention: docs/merchants/brazil.md).
pub const BAIRRO_MARK: &str = "Bairro";
