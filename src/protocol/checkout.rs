//! Checkout and order on the wire (`schemas/shopping/checkout.json`, `order.json`, with the
//! `fulfillment.json` and `discount.json` extensions), at 2026-04-08 and 2026-08-25. The few
//! places the releases differ are spelled by the brain (destination `type`, pickup location
//! shape); these structs carry both. Buyer fields appear here and nowhere else: these
//! structs are serialised into the answer, never logged (no `Debug`).

pub use super::address::AddressOut;
use schemars::JsonSchema;
use serde::Serialize;

use super::cart::{LineItemOut, TotalOut};
use super::{Message, Ucp};

#[derive(Clone, Serialize, Default, JsonSchema)]
pub struct BuyerOut {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub phone_number: Option<String>,
    /// BCP fiscal identity: the buyer's CPF, CNPJ or foreign id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub taxpayer_id: Option<super::fiscal::TaxpayerIdOut>,
}

/// A shipping destination (postal address + id; `type` from 2026-08-25) or a pickup location
/// (04-08 `retail_location` {id, name, address}; 08-25 `type: business_location`).
#[derive(Clone, Serialize, JsonSchema)]
pub struct DestinationOut {
    pub id: String,
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub kind: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// A pickup location's address.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub address: Option<AddressOut>,
    /// A shipping destination is itself a postal address.
    #[serde(flatten)]
    pub postal: Option<AddressOut>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct OptionOut {
    pub id: String,
    pub title: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub carrier: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub earliest_fulfillment_time: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latest_fulfillment_time: Option<String>,
    pub totals: Vec<TotalOut>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct GroupOut {
    pub id: String,
    pub line_item_ids: Vec<String>,
    pub options: Vec<OptionOut>,
    pub selected_option_id: Option<String>,
}

#[derive(Clone, Serialize, JsonSchema)]
pub struct MethodOut {
    pub id: String,
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub line_item_ids: Vec<String>,
    pub destinations: Vec<DestinationOut>,
    pub selected_destination_id: Option<String>,
    pub groups: Vec<GroupOut>,
}

#[derive(Clone, Serialize, JsonSchema)]
pub struct FulfillmentOut {
    pub methods: Vec<MethodOut>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct AllocationOut {
    pub path: String,
    pub amount: i64,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct AppliedDiscountOut {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    pub title: String,
    pub amount: i64,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub automatic: bool,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub allocations: Vec<AllocationOut>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct DiscountsOut {
    pub codes: Vec<String>,
    pub applied: Vec<AppliedDiscountOut>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct LinkOut {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub url: String,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct HandlerOut {
    pub id: String,
    pub name: String,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct PaymentOut {
    pub handlers: Vec<HandlerOut>,
    /// The charge a completion is waiting on (`br.dev.bcp.pix`'s `pix_payment_instrument`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub instruments: Vec<PixInstrumentOut>,
}

/// `pix_payment_instrument` (schemas/handlers/pix/pix.json).
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct PixInstrumentOut {
    pub id: String,
    pub handler_id: String,
    /// Always `pix`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub selected: bool,
    pub credential: PixChargeOut,
    pub display: PixDisplayOut,
}

/// `pix_charge_credential`: meant to be displayed to the payer, unlike a card's.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct PixChargeOut {
    /// Always `pix_charge`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub provider_payment_id: String,
    pub copia_e_cola: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub qr_code_base64: Option<String>,
    pub expires_at: String,
    pub binding: BindingOut,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct BindingOut {
    pub checkout_id: String,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct PixDisplayOut {
    pub description: String,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct OrderConfirmationOut {
    pub id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    pub permalink_url: String,
}

#[derive(Clone, Serialize, JsonSchema)]
pub struct CheckoutResponse {
    pub ucp: Ucp,
    pub id: String,
    pub line_items: Vec<LineItemOut>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub buyer: Option<BuyerOut>,
    #[schemars(extend("enum" = ["incomplete", "requires_escalation", "ready_for_complete", "complete_in_progress", "completed", "canceled"]))]
    pub status: &'static str,
    pub currency: &'static str,
    pub totals: Vec<TotalOut>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub messages: Vec<Message>,
    pub links: Vec<LinkOut>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub continue_url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fulfillment: Option<FulfillmentOut>,
    /// Absent when the agent's profile leaves the discount extension out (OVR-005).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub discounts: Option<DiscountsOut>,
    pub payment: PaymentOut,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub order: Option<OrderConfirmationOut>,
    /// BCP fiscal identity, while `[seller]` is configured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seller_identity: Option<super::fiscal::SellerIdentityOut>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct OrderQuantityOut {
    pub original: u32,
    pub total: u32,
    pub fulfilled: u32,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct OrderItemOut {
    pub id: String,
    pub title: String,
    pub price: i64,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct OrderLineOut {
    pub id: String,
    pub item: OrderItemOut,
    pub quantity: OrderQuantityOut,
    pub totals: Vec<TotalOut>,
    pub status: &'static str,
}

#[derive(Clone, Serialize, JsonSchema)]
pub struct ExpectationOut {
    pub id: String,
    pub line_items: Vec<ExpectationLineOut>,
    pub method_type: &'static str,
    pub destination: AddressOut,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ExpectationLineOut {
    pub id: String,
    pub quantity: u32,
}

#[derive(Clone, Serialize, JsonSchema)]
pub struct OrderFulfillmentOut {
    pub expectations: Vec<ExpectationOut>,
    pub events: Vec<serde_json::Value>,
}

#[derive(Clone, Serialize, JsonSchema)]
pub struct OrderResponse {
    pub ucp: Ucp,
    pub id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    pub checkout_id: String,
    pub permalink_url: String,
    pub line_items: Vec<OrderLineOut>,
    pub fulfillment: OrderFulfillmentOut,
    pub currency: &'static str,
    pub totals: Vec<TotalOut>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub messages: Vec<Message>,
    /// BCP fiscal identity, while `[seller]` is configured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seller_identity: Option<super::fiscal::SellerIdentityOut>,
    /// BCP `br.dev.bcp.shopping.nfe`: the order's invoice, when the answer declares it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nfe: Option<NfeOut>,
}

/// nfe.json's `nfe`: the reference to the issued NF-e.
#[derive(Clone, Serialize, JsonSchema)]
pub struct NfeOut {
    pub access_key: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub danfe_url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub xml_url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub issued_at: Option<String>,
}
