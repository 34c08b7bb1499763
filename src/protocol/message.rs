use schemars::JsonSchema;
use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    Recoverable,
    RequiresBuyerInput,
    RequiresBuyerReview,
    Unrecoverable,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MessageType {
    Error,
    Warning,
    Info,
}

/// The codes of `messages[]` this bridge writes. The serde names are the wire strings, spelled
/// out rather than derived from the variant names so a rename in Rust cannot change an answer;
/// a test holds them equal to `as_str`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum MessageCode {
    /// A product, variant or cart the agent named does not exist (or no longer does).
    #[serde(rename = "not_found")]
    NotFound,
    /// A looked-up id exists but falls outside the request's filters.
    #[serde(rename = "filtered")]
    Filtered,
    /// A filter that cannot apply here (a price in another currency) was left out rather
    /// than applied wrongly.
    #[serde(rename = "filter_ignored")]
    FilterIgnored,
    /// NEG-002: the agent's profile lacks this operation's capability at the agreed version.
    #[serde(rename = "capabilities_incompatible")]
    CapabilitiesIncompatible,
    /// A line's `quantity_unit` is not how the item is sold.
    #[serde(rename = "quantity_unit_mismatch")]
    QuantityUnitMismatch,
    #[serde(rename = "out_of_stock")]
    OutOfStock,
    /// Less stock than asked for: the line was cut to what is available.
    #[serde(rename = "quantity_adjusted")]
    QuantityAdjusted,
    /// The line names a product with several variants rather than one item to buy.
    #[serde(rename = "item_unavailable")]
    ItemUnavailable,
    /// The store refused a line for a reason with no code of its own.
    #[serde(rename = "invalid")]
    Invalid,
    /// The call carried no agent profile and was served as the store's default one.
    #[serde(rename = "default_profile")]
    DefaultProfile,
    /// A Complete Checkout was accepted and is running: the checkout cannot change now.
    #[serde(rename = "checkout_complete_in_progress")]
    CheckoutCompleteInProgress,
    /// A completed or canceled checkout (CHK-017, CHK-027).
    #[serde(rename = "checkout_immutable")]
    CheckoutImmutable,
    /// Something the store needs to place the order; the path names it.
    #[serde(rename = "missing")]
    Missing,
    /// The payment handler declined; the checkout stays open.
    #[serde(rename = "payment_failed")]
    PaymentFailed,
    /// A Pix charge expired unpaid (`br.dev.bcp.pix`).
    #[serde(rename = "payment_expired")]
    PaymentExpired,
    /// The payment processor (the merchant's PSP) could not be reached.
    #[serde(rename = "processor_unavailable")]
    ProcessorUnavailable,
    /// The store offers no delivery option for the destination.
    #[serde(rename = "fulfillment_unavailable")]
    FulfillmentUnavailable,
    /// The buyer pays on the store's page (escalation).
    #[serde(rename = "payment_required")]
    PaymentRequired,
    /// The store needs the buyer to review the checkout on its page.
    #[serde(rename = "buyer_review_required")]
    BuyerReviewRequired,
    /// The store needs the buyer to sign in on its page.
    #[serde(rename = "identity_required")]
    IdentityRequired,
    #[serde(rename = "discount_code_expired")]
    DiscountCodeExpired,
    #[serde(rename = "discount_code_invalid")]
    DiscountCodeInvalid,
    #[serde(rename = "discount_code_already_applied")]
    DiscountCodeAlreadyApplied,
    #[serde(rename = "discount_code_combination_disallowed")]
    DiscountCodeCombinationDisallowed,
    #[serde(rename = "discount_code_user_not_logged_in")]
    DiscountCodeUserNotLoggedIn,
    #[serde(rename = "discount_code_user_ineligible")]
    DiscountCodeUserIneligible,
}

impl MessageCode {
    /// For the test that holds the serde names to `as_str`.
    #[cfg(test)]
    const ALL: [Self; 26] = [
        Self::NotFound,
        Self::Filtered,
        Self::FilterIgnored,
        Self::CapabilitiesIncompatible,
        Self::QuantityUnitMismatch,
        Self::OutOfStock,
        Self::QuantityAdjusted,
        Self::ItemUnavailable,
        Self::Invalid,
        Self::DefaultProfile,
        Self::CheckoutCompleteInProgress,
        Self::CheckoutImmutable,
        Self::Missing,
        Self::PaymentFailed,
        Self::PaymentExpired,
        Self::ProcessorUnavailable,
        Self::FulfillmentUnavailable,
        Self::PaymentRequired,
        Self::BuyerReviewRequired,
        Self::IdentityRequired,
        Self::DiscountCodeExpired,
        Self::DiscountCodeInvalid,
        Self::DiscountCodeAlreadyApplied,
        Self::DiscountCodeCombinationDisallowed,
        Self::DiscountCodeUserNotLoggedIn,
        Self::DiscountCodeUserIneligible,
    ];

    /// The code as written on the wire and on the merchant page.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::NotFound => "not_found",
            Self::Filtered => "filtered",
            Self::FilterIgnored => "filter_ignored",
            Self::CapabilitiesIncompatible => "capabilities_incompatible",
            Self::QuantityUnitMismatch => "quantity_unit_mismatch",
            Self::OutOfStock => "out_of_stock",
            Self::QuantityAdjusted => "quantity_adjusted",
            Self::ItemUnavailable => "item_unavailable",
            Self::Invalid => "invalid",
            Self::DefaultProfile => "default_profile",
            Self::CheckoutCompleteInProgress => "checkout_complete_in_progress",
            Self::CheckoutImmutable => "checkout_immutable",
            Self::Missing => "missing",
            Self::PaymentFailed => "payment_failed",
            Self::PaymentExpired => "payment_expired",
            Self::ProcessorUnavailable => "processor_unavailable",
            Self::FulfillmentUnavailable => "fulfillment_unavailable",
            Self::PaymentRequired => "payment_required",
            Self::BuyerReviewRequired => "buyer_review_required",
            Self::IdentityRequired => "identity_required",
            Self::DiscountCodeExpired => "discount_code_expired",
            Self::DiscountCodeInvalid => "discount_code_invalid",
            Self::DiscountCodeAlreadyApplied => "discount_code_already_applied",
            Self::DiscountCodeCombinationDisallowed => "discount_code_combination_disallowed",
            Self::DiscountCodeUserNotLoggedIn => "discount_code_user_not_logged_in",
            Self::DiscountCodeUserIneligible => "discount_code_user_ineligible",
        }
    }
}

/// One entry of `messages[]`. Errors carry a severity; warnings and info do not.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Message {
    #[serde(rename = "type")]
    pub kind: MessageType,
    // An open vocabulary: agents meet codes of later releases and other businesses.
    #[schemars(with = "String")]
    pub code: MessageCode,
    pub content: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub severity: Option<Severity>,
    /// RFC 9535 JSONPath into the response (`$.line_items[1]`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
}

impl Message {
    pub fn error(code: MessageCode, content: impl Into<String>, severity: Severity) -> Self {
        Self {
            kind: MessageType::Error,
            code,
            content: content.into(),
            severity: Some(severity),
            path: None,
        }
    }

    pub fn warning(code: MessageCode, content: impl Into<String>) -> Self {
        Self {
            kind: MessageType::Warning,
            code,
            content: content.into(),
            severity: None,
            path: None,
        }
    }

    pub fn info(code: MessageCode, content: impl Into<String>) -> Self {
        Self {
            kind: MessageType::Info,
            code,
            content: content.into(),
            severity: None,
            path: None,
        }
    }

    pub fn at(mut self, path: impl Into<String>) -> Self {
        self.path = Some(path.into());
        self
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn every_message_code_serialises_as_its_wire_string() {
        for code in MessageCode::ALL {
            assert_eq!(
                serde_json::to_value(code).unwrap(),
                serde_json::Value::from(code.as_str())
            );
        }
    }
}
