//! What Shopify said about a write, in the checkout's terms: the cart it answered, or the
//! refusal named by the agent's field path (never Shopify's message, which may echo the
//! buyer's data), and why a code was not applied.

use super::raw::{Payload, RawCheckout, RawUserError, RawWarning};
use crate::model::checkout::{CodeRefusal, RefusedCode};
use crate::platform::port::PlatformError;

pub(super) const DESTINATION_PATH: &str = "$.fulfillment.methods[0].destinations[0]";

pub(super) fn bad(message: impl Into<String>) -> PlatformError {
    PlatformError::BadResponse(message.into())
}

/// Shopify refused a whole write: the cart is unknown (`cartId`), or the input is wrong.
/// Field paths and codes only: a message may echo the buyer's data.
pub(super) fn refused(
    errors: &[RawUserError],
    path: impl Fn(&RawUserError) -> String,
) -> PlatformError {
    match errors.first() {
        Some(error) => PlatformError::InvalidAt {
            path: path(error),
            message: format!("the store refused it ({})", error.code),
        },
        None => bad("the store answered a write without its cart"),
    }
}

pub(super) fn unknown_cart(errors: &[RawUserError]) -> bool {
    errors
        .iter()
        .any(|error| error.field.last().is_some_and(|field| field == "cartId"))
}

/// A write's answer: the cart (`None` for an unknown or cancelled one), or the refusal.
pub(super) fn settle(
    payload: Option<Payload>,
    what: &str,
    path: impl Fn(&RawUserError) -> String,
) -> Result<Option<RawCheckout>, PlatformError> {
    let payload = payload.ok_or_else(|| bad(format!("{what} answered without a payload")))?;
    if unknown_cart(&payload.errors) {
        return Ok(None);
    }
    match payload.cart {
        Some(cart) if payload.errors.is_empty() => Ok(Some(cart).filter(|cart| !cart.cancelled())),
        _ => Err(refused(&payload.errors, path)),
    }
}

/// A buyer field Shopify refused, by where the agent sent it.
pub(super) fn buyer_path(error: &RawUserError) -> String {
    match error.field.last().map(String::as_str) {
        Some("email") => "$.buyer.email".to_owned(),
        Some("phone") => "$.buyer.phone_number".to_owned(),
        _ => "$.buyer".to_owned(),
    }
}

/// An address field Shopify refused, named as the agent spelled it (postal_address).
pub(super) fn address_path(error: &RawUserError) -> String {
    let field = match error.field.last().map(String::as_str) {
        Some("address1") => "street_address",
        Some("address2") => "extended_address",
        Some("city") => "address_locality",
        Some("provinceCode") => "address_region",
        Some("zip") => "postal_code",
        Some("countryCode") => "address_country",
        Some("firstName") => "first_name",
        Some("lastName") => "last_name",
        Some("phone") => "phone_number",
        _ => return DESTINATION_PATH.to_owned(),
    };
    format!("{DESTINATION_PATH}.{field}")
}

/// Shopify's reason for not applying a code, in the spec's words.
pub(super) fn refusal(code: &str) -> CodeRefusal {
    match code {
        "DISCOUNT_CURRENTLY_INACTIVE" => CodeRefusal::Expired,
        "DISCOUNT_ELIGIBLE_CUSTOMER_MISSING" => CodeRefusal::NotLoggedIn,
        "DISCOUNT_CUSTOMER_NOT_ELIGIBLE" | "DISCOUNT_CUSTOMER_USAGE_LIMIT_REACHED" => {
            CodeRefusal::Ineligible
        }
        "DISCOUNT_CODE_NOT_HONOURED" => CodeRefusal::CombinationDisallowed,
        _ => CodeRefusal::Invalid,
    }
}

/// The code Shopify holds but does not apply, with the reason its warnings give.
pub(super) fn not_applied(code: &str, warnings: &[RawWarning]) -> RefusedCode {
    let warning = warnings
        .iter()
        .find(|warning| warning.code.starts_with("DISCOUNT_"));
    RefusedCode {
        code: code.to_owned(),
        refusal: warning.map_or(CodeRefusal::Invalid, |warning| refusal(&warning.code)),
        reason: warning.map_or_else(
            || "The store does not apply this code to this checkout".to_owned(),
            |warning| warning.message.clone(),
        ),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::panic)]
    use super::*;

    fn error(field: &[&str], code: &str) -> RawUserError {
        RawUserError {
            code: code.to_owned(),
            field: field.iter().map(|part| (*part).to_owned()).collect(),
        }
    }

    #[test]
    fn refused_fields_are_named_as_the_agent_sent_them_without_shopifys_words() {
        let zip = error(
            &["addresses", "0", "address", "deliveryAddress", "zip"],
            "INVALID_ZIP_CODE_FOR_COUNTRY",
        );
        assert_eq!(
            address_path(&zip),
            "$.fulfillment.methods[0].destinations[0].postal_code"
        );
        assert_eq!(
            buyer_path(&error(&["buyerIdentity", "email"], "INVALID")),
            "$.buyer.email"
        );
        match refused(&[zip], address_path) {
            PlatformError::InvalidAt { message, .. } => {
                assert_eq!(
                    message,
                    "the store refused it (INVALID_ZIP_CODE_FOR_COUNTRY)"
                )
            }
            other => panic!("{other:?}"),
        }
        assert!(unknown_cart(&[error(&["cartId"], "INVALID")]));
    }

    #[test]
    fn a_code_shopify_holds_but_does_not_apply_says_why() {
        let warnings = [RawWarning {
            code: "DISCOUNT_CURRENTLY_INACTIVE".into(),
            message: "Code is not active".into(),
        }];
        let refused = not_applied("OLD", &warnings);
        assert_eq!(refused.refusal, CodeRefusal::Expired);
        assert_eq!(refused.reason, "Code is not active");
        assert_eq!(not_applied("X", &[]).refusal, CodeRefusal::Invalid);
    }
}
