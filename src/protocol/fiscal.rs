//! BCP's fiscal identity on the wire (`schemas/shopping/fiscal_identity.json`): the buyer's
//! `taxpayer_id` as agents send and receive it, and the seller's `seller_identity`. Personal
//! data: no `Debug`, so a stray `{:?}` cannot print a document.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::address::AddressOut;

/// `taxpayer_id.kind`: the closed set of the NF-e recipient's identification.
#[derive(Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TaxpayerKindIn {
    Cpf,
    Cnpj,
    IdEstrangeiro,
}

#[derive(Clone, Deserialize, JsonSchema)]
#[schemars(
    description = "BCP fiscal identity: the buyer's CPF (kind cpf, 11 digits), CNPJ (kind cnpj, 14 characters, alphanumeric from 2026) or foreign document (kind id_estrangeiro, free-form). Punctuation is accepted and removed; check digits are verified."
)]
pub struct TaxpayerIdIn {
    pub kind: TaxpayerKindIn,
    #[schemars(length(min = 1, max = 64))]
    pub value: String,
}

#[derive(Clone, Serialize, JsonSchema)]
pub struct TaxpayerIdOut {
    pub kind: &'static str,
    pub value: String,
}

/// `seller_identity` on checkout and order: required in every answer while the capability
/// is active (fiscal-identity.md, normative rule 1).
#[derive(Clone, Serialize, JsonSchema)]
pub struct SellerIdentityOut {
    pub cnpj: String,
    pub legal_name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub address: Option<AddressOut>,
}
