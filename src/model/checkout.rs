//! What a store holds for a checkout and an order: lines, buyer, fulfillment, discounts,
//! totals and the payment it can take. Amounts are integer minor units of `currency`, exactly
//! as the store computed them; the bridge never adds them up itself.
//!
//! Buyer data is personal data: `Buyer` and `Address` print as `[redacted]` in `Debug`, have
//! no `Display` and no `Serialize`, so neither a `?field` in a log line nor a stray `{:?}` can
//! leak them; the brain copies them field by field into the wire only.

use std::fmt;

use iso_currency::Currency;
use time::OffsetDateTime;

use super::fiscal::{BAIRRO_MARK, Nfe, Requirement, TaxpayerId};
use super::{BuyerContext, CartLine, CartLineInput};

/// Writes `Name { .. [redacted] }` for types holding personal data.
fn redacted(f: &mut fmt::Formatter<'_>, name: &str) -> fmt::Result {
    write!(f, "{name} {{ [redacted] }}")
}

/// Who is buying. Every field is optional: an agent builds it up over several updates.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Buyer {
    pub first_name: Option<String>,
    pub last_name: Option<String>,
    pub email: Option<String>,
    pub phone_number: Option<String>,
    /// CPF, CNPJ or foreign id (BCP fiscal identity), validated by the brain.
    pub taxpayer_id: Option<TaxpayerId>,
}

impl fmt::Debug for Buyer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        redacted(f, "Buyer")
    }
}

impl Buyer {
    pub fn is_empty(&self) -> bool {
        self.first_name.is_none()
            && self.last_name.is_none()
            && self.email.is_none()
            && self.phone_number.is_none()
            && self.taxpayer_id.is_none()
    }
}

/// A postal address (UCP `postal_address`).
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Address {
    pub first_name: Option<String>,
    pub last_name: Option<String>,
    pub street_address: Option<String>,
    pub extended_address: Option<String>,
    pub address_locality: Option<String>,
    pub address_region: Option<String>,
    pub postal_code: Option<String>,
    /// ISO 3166-1 alpha-2.
    pub address_country: Option<String>,
    pub phone_number: Option<String>,
    /// The house number (or "s/n"), for stores with a field of its own. When set,
    /// `street_address` holds the street without it; the brain splits and joins the two.
    pub number: Option<String>,
    /// The bairro, for stores with a field of its own.
    pub neighborhood: Option<String>,
}

impl fmt::Debug for Address {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        redacted(f, "Address")
    }
}

impl Address {
    /// `street_address` with the house number joined back ("Rua Doutor Quirino, 1481"): what
    /// the agent wrote, and what a store with no number field of its own is given.
    pub fn street_line(&self) -> Option<String> {
        match (&self.street_address, &self.number) {
            (Some(street), Some(number)) => Some(format!("{street}, {number}")),
            (None, Some(number)) => Some(number.clone()),
            (street, None) => street.clone(),
        }
    }

    /// `extended_address` with the bairro joined back ("Sala 42 - Bairro Centro"): what the
    /// agent wrote, and what a store with no bairro field of its own is given.
    pub fn complement_line(&self) -> Option<String> {
        let bairro = self
            .neighborhood
            .as_ref()
            .map(|name| format!("{BAIRRO_MARK} {name}"));
        match (&self.extended_address, bairro) {
            (Some(complement), Some(bairro)) => Some(format!("{complement} - {bairro}")),
            (complement, bairro) => bairro.or_else(|| complement.clone()),
        }
    }
}

/// A place the goods go to (a buyer's address) or are collected at (the store's location).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Destination {
    pub id: String,
    pub address: Address,
    /// A pickup location's name; `None` for a buyer's address.
    pub name: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MethodKind {
    Shipping,
    Pickup,
}

impl MethodKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Shipping => "shipping",
            Self::Pickup => "pickup",
        }
    }
}

/// One way a group can be fulfilled, priced by the store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FulfillmentOption {
    pub id: String,
    pub title: String,
    pub description: Option<String>,
    pub carrier: Option<String>,
    /// The store's price for it, minor units.
    pub cost: i64,
    /// The store's delivery estimate, when it gives one.
    pub earliest: Option<OffsetDateTime>,
    pub latest: Option<OffsetDateTime>,
}

/// Lines that ship together (a WooCommerce package, a Shopify delivery group).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FulfillmentGroup {
    pub id: String,
    pub line_ids: Vec<String>,
    pub options: Vec<FulfillmentOption>,
    pub selected_option: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FulfillmentMethod {
    pub id: String,
    pub kind: MethodKind,
    pub line_ids: Vec<String>,
    pub destinations: Vec<Destination>,
    pub selected_destination: Option<String>,
    pub groups: Vec<FulfillmentGroup>,
}

/// Where part of a discount went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AllocationTarget {
    /// A line, by its id.
    Line(String),
    Shipping,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Allocation {
    pub target: AllocationTarget,
    pub amount: i64,
}

/// A discount the store applied: a code's, or one of its automatic rules (`code: None`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppliedDiscount {
    pub code: Option<String>,
    pub title: String,
    /// Positive minor units taken off.
    pub amount: i64,
    pub allocations: Vec<Allocation>,
}

/// Why the store would not take a code, in the spec's vocabulary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CodeRefusal {
    Expired,
    Invalid,
    AlreadyApplied,
    CombinationDisallowed,
    NotLoggedIn,
    Ineligible,
}

impl CodeRefusal {
    pub fn code(self) -> &'static str {
        match self {
            Self::Expired => "discount_code_expired",
            Self::Invalid => "discount_code_invalid",
            Self::AlreadyApplied => "discount_code_already_applied",
            Self::CombinationDisallowed => "discount_code_combination_disallowed",
            Self::NotLoggedIn => "discount_code_user_not_logged_in",
            Self::Ineligible => "discount_code_user_ineligible",
        }
    }
}

/// A code the store refused, with the store's own words (merchant text: data).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefusedCode {
    pub code: String,
    pub refusal: CodeRefusal,
    pub reason: String,
}

/// The store's totals, minor units. `discount` is positive (what was taken off).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CheckoutTotals {
    pub subtotal: i64,
    pub discount: i64,
    /// `None` until the store priced shipping (no destination yet).
    pub fulfillment: Option<i64>,
    pub tax: Option<i64>,
    pub total: i64,
}

/// A way to pay the bridge can hand to the store itself (an offline gateway, a test handler).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PaymentHandler {
    pub id: String,
    pub name: String,
}

/// Why the buyer has to go to the store's own page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EscalationReason {
    /// The store takes payment the bridge cannot (cards, Pix, wallets).
    Payment,
    /// The store wants the buyer to review something first.
    Review,
    /// The store needs the buyer signed in.
    Login,
}

/// The order a placed checkout became, as the checkout names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrderRef {
    pub id: String,
    pub label: Option<String>,
    pub permalink_url: String,
}

/// Where the checkout is in its life, as far as the store is concerned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stage {
    Open,
    /// The store holds an order for it (it may still await payment: see `Order::paid`).
    Placed(OrderRef),
    Canceled,
}

#[derive(Debug, Clone, PartialEq)]
pub struct CheckoutState {
    pub id: String,
    pub lines: Vec<CartLine>,
    pub currency: Currency,
    pub buyer: Buyer,
    /// Whether the store needs the buyer's email before it takes the order (every real store
    /// does; the sample store's test orders do not).
    pub needs_email: bool,
    /// The buyer's address the store prices shipping for.
    pub address: Option<Address>,
    /// Whether anything has to be shipped or collected (false for virtual goods).
    pub needs_fulfillment: bool,
    pub fulfillment: Vec<FulfillmentMethod>,
    /// The codes the agent submitted, echoed as the store holds them.
    pub codes: Vec<String>,
    pub discounts: Vec<AppliedDiscount>,
    pub refused_codes: Vec<RefusedCode>,
    pub totals: CheckoutTotals,
    /// What the agent may complete with; empty means the buyer pays on the store's page.
    pub handlers: Vec<PaymentHandler>,
    /// The store's own page for this checkout, and why the buyer must go there (if they must).
    pub continue_url: Option<String>,
    pub escalation: Option<EscalationReason>,
    pub stage: Stage,
    pub expires_at: Option<OffsetDateTime>,
    /// What the store requires before it takes the order, as it says itself.
    pub requirements: Vec<Requirement>,
}

/// Where a new checkout's lines come from.
#[derive(Debug, Clone)]
pub enum CheckoutSource {
    Lines(Vec<CartLineInput>),
    /// An existing cart, by its BCP id: converted as cart.md says (its lines, its codes).
    Cart(String),
}

#[derive(Debug, Clone)]
pub struct CheckoutDraft {
    pub source: CheckoutSource,
    pub context: BuyerContext,
    pub buyer: Buyer,
}

/// What `apply_code` did.
#[derive(Debug, Clone)]
pub struct CodeOutcome {
    pub checkout: CheckoutState,
    pub refused: Option<RefusedCode>,
}

/// What placing the order did.
#[derive(Debug, Clone)]
pub enum Placement {
    /// The store holds the order (status as the gateway set it).
    Placed(Order),
    /// The store holds the order but the buyer must pay (or review) on `url` first.
    Escalated {
        order: Order,
        url: String,
        reason: EscalationReason,
    },
    /// The handler refused the payment; the checkout is still open. Store's words.
    Declined { reason: String },
    /// Nothing was placed: the store takes orders on its own page only (the checkout's
    /// `continue_url`, as Shopify's Storefront and VTEX's orderForm do), so the checkout
    /// stays open and escalated, and a later completion hands off the same way.
    HandedOff,
    /// The store refused the order for fields the buyer can still give or fix (a missing or
    /// invalid CPF, a house number); nothing was placed and the checkout stays open.
    Refused { unmet: Vec<Unmet> },
}

/// One requirement the store said an order did not meet, in the store's words (merchant or
/// plugin text: data).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unmet {
    pub requirement: Requirement,
    pub reason: String,
    /// The store found the field empty (rather than refusing the value given).
    pub missing: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrderLine {
    pub id: String,
    /// The product's id where the store names it (WooCommerce order items carry only sku/name).
    pub variant_id: Option<String>,
    pub sku: Option<String>,
    pub title: String,
    /// As ordered (the order's `quantity.original`).
    pub quantity: u32,
    /// Still ordered after cancellations and refunds (`quantity.total`).
    pub active: u32,
    /// Shipped or handed over so far (`quantity.fulfilled`).
    pub fulfilled: u32,
    pub unit_price: i64,
    pub total: i64,
}

impl CheckoutState {
    /// A checkout the store turned into `order`, as only the order shows it (the store no
    /// longer holds the checkout): what was ordered, at the order's prices and totals.
    pub fn of_order(id: &str, order: &Order, buyer: Buyer) -> Self {
        Self {
            id: id.to_owned(),
            lines: order.lines.iter().map(OrderLine::as_cart_line).collect(),
            currency: order.currency,
            buyer,
            needs_email: true,
            address: order.shipping_address.clone(),
            needs_fulfillment: false,
            fulfillment: Vec::new(),
            codes: order.codes.clone(),
            discounts: Vec::new(),
            refused_codes: Vec::new(),
            totals: order.totals,
            handlers: Vec::new(),
            continue_url: None,
            escalation: None,
            stage: Stage::Placed(order.reference()),
            expires_at: None,
            requirements: Vec::new(),
        }
    }
}

impl OrderLine {
    /// The line as a completed checkout shows it: what was ordered, at the order's prices.
    pub fn as_cart_line(&self) -> CartLine {
        CartLine {
            id: self.id.clone(),
            variant_id: self.variant_id.clone().unwrap_or_default(),
            title: self.title.clone(),
            unit_price: self.unit_price,
            quantity: self.quantity,
            subtotal: self.unit_price.saturating_mul(i64::from(self.quantity)),
            total: self.total,
            image_url: None,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Order {
    pub id: String,
    pub checkout_id: String,
    pub label: Option<String>,
    pub permalink_url: String,
    /// The store's own status word (`on-hold`, `processing`, `pending`…).
    pub store_status: String,
    /// Whether the store counts it as paid (or to be paid offline, as `cod`).
    pub paid: bool,
    pub lines: Vec<OrderLine>,
    pub currency: Currency,
    pub totals: CheckoutTotals,
    pub shipping_address: Option<Address>,
    /// The option the order ships with, as the store names it.
    pub fulfillment_title: Option<String>,
    pub codes: Vec<String>,
    pub placed_at: Option<OffsetDateTime>,
    /// The invoice, where the store exposes it.
    pub nfe: Option<Nfe>,
}

impl Order {
    pub fn reference(&self) -> OrderRef {
        OrderRef {
            id: self.id.clone(),
            label: self.label.clone(),
            permalink_url: self.permalink_url.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn personal_data_never_prints_in_debug() {
        let buyer = Buyer {
            first_name: Some("Ana".into()),
            last_name: Some("Souza".into()),
            email: Some("ana@example.com".into()),
            phone_number: Some("+5511999990000".into()),
            taxpayer_id: None,
        };
        let address = Address {
            street_address: Some("Rua Augusta 100".into()),
            postal_code: Some("01305-000".into()),
            ..Address::default()
        };
        let printed = format!(
            "{buyer:?} {address:?} {:?}",
            Destination {
                id: "d1".into(),
                address: address.clone(),
                name: None
            }
        );
        for secret in ["Ana", "Souza", "ana@", "99999", "Augusta", "01305"] {
            assert!(!printed.contains(secret), "{secret} leaked: {printed}");
        }
        assert!(printed.contains("[redacted]"));
    }
}
