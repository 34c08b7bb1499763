//! UCP `postal_address` as answers spell it, shared by checkout and the fiscal extension
//! (the seller's address).

use schemars::JsonSchema;
use serde::Serialize;

#[derive(Clone, Serialize, Default, JsonSchema)]
pub struct AddressOut {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub street_address: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extended_address: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub address_locality: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub address_region: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub postal_code: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub address_country: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub phone_number: Option<String>,
}
