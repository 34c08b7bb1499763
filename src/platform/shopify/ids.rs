//! Agent-supplied identifiers, parsed into typed Shopify ids before anything reaches a GraphQL
//! variable. Whatever does not parse is simply unknown.

use subtle::ConstantTimeEq;

/// A catalog identifier as an agent may spell it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CatalogId {
    Product(u64),
    Variant(u64),
    /// `123`: Shopify's numeric ids are unique per resource type only, so this may name a
    /// product or a variant; both gids are asked for in the same `nodes` call.
    Numeric(u64),
    /// A handle or a SKU (any text): both are found through search and matched exactly
    /// afterwards.
    Token(String),
}

const PRODUCT_PREFIX: &str = "gid://shopify/Product/";
const VARIANT_PREFIX: &str = "gid://shopify/ProductVariant/";
const CART_PREFIX: &str = "gid://shopify/Cart/";

pub fn product_gid(id: u64) -> String {
    format!("{PRODUCT_PREFIX}{id}")
}

pub fn variant_gid(id: u64) -> String {
    format!("{VARIANT_PREFIX}{id}")
}

fn number(text: &str) -> Option<u64> {
    if text.is_empty() || text.len() > 19 || !text.bytes().all(|byte| byte.is_ascii_digit()) {
        return None;
    }
    text.parse().ok().filter(|value| *value > 0)
}

/// Handles are lowercase words joined by dashes, but a SKU is whatever the merchant typed
/// (Shopify allows 255 characters: spaces, accents, punctuation). Any such text may be looked
/// up; the search quotes it as one literal phrase (`catalog::quoted`), so it cannot change
/// the query's meaning. Control characters and gids of other types are never SKUs.
fn is_token(text: &str) -> bool {
    !text.trim().is_empty()
        && text.chars().count() <= 255
        && !text.chars().any(char::is_control)
        && !text.starts_with("gid://")
}

pub fn parse_catalog_id(input: &str) -> Option<CatalogId> {
    if let Some(rest) = input.strip_prefix(PRODUCT_PREFIX) {
        return number(rest).map(CatalogId::Product);
    }
    if let Some(rest) = input.strip_prefix(VARIANT_PREFIX) {
        return number(rest).map(CatalogId::Variant);
    }
    if let Some(value) = number(input) {
        return Some(CatalogId::Numeric(value));
    }
    is_token(input).then(|| CatalogId::Token(input.to_owned()))
}

/// The numeric id inside a gid the upstream sent (for matching numeric agent input).
pub fn gid_number(gid: &str) -> Option<u64> {
    gid.rsplit('/').next().and_then(number)
}

/// Cart ids are `gid://shopify/Cart/<token>?key=<secret>`; the key is part of the id agents
/// hold, because Shopify refuses the cart without it.
pub fn is_cart_id(input: &str) -> bool {
    let Some(rest) = input.strip_prefix(CART_PREFIX) else {
        return false;
    };
    let (token, key) = match rest.split_once("?key=") {
        Some((token, key)) => (token, Some(key)),
        None => (rest, None),
    };
    let word = |text: &str| {
        !text.is_empty()
            && text.len() <= 128
            && text
                .bytes()
                .all(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_'))
    };
    word(token) && key.is_none_or(word)
}

/// The token of a Storefront cart id (`gid://shopify/Cart/<token>?key=<secret>`): what
/// Shopify's order webhooks call the order's `cart_token`.
pub fn cart_token(id: &str) -> Option<&str> {
    let rest = id.strip_prefix(CART_PREFIX)?;
    let token = rest.split('?').next().unwrap_or(rest);
    (!token.is_empty()).then_some(token)
}

/// The `?key=` secret of a Storefront cart id, when it carries one.
pub fn cart_key(id: &str) -> Option<&str> {
    let rest = id.strip_prefix(CART_PREFIX)?;
    rest.split_once("?key=")
        .map(|(_, key)| key)
        .filter(|key| !key.is_empty())
}

/// Whether `presented` is the cart id `held` (the one Shopify answered with), key included.
/// The token alone travels in Shopify's order webhooks and order pages; the key only with the
/// agent given the cart, and Shopify opens the cart only with it. So what the bridge keeps
/// per cart (its placed order) is opened only by the id with the same key, compared in
/// constant time.
pub fn same_cart(held: &str, presented: &str) -> bool {
    let tokens = matches!((cart_token(held), cart_token(presented)), (Some(a), Some(b)) if a == b);
    let keys = match (cart_key(held), cart_key(presented)) {
        (Some(held), Some(presented)) => bool::from(held.as_bytes().ct_eq(presented.as_bytes())),
        // A cart Shopify named without a key needs none.
        (None, None) => true,
        _ => false,
    };
    tokens & keys
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 35: a cart id without its `?key=` (or with another) is not the cart.
    #[test]
    fn a_cart_is_the_same_only_with_its_key() {
        let held = "gid://shopify/Cart/c1-abc?key=k9";
        assert!(same_cart(held, "gid://shopify/Cart/c1-abc?key=k9"));
        for presented in [
            "gid://shopify/Cart/c1-abc",
            "gid://shopify/Cart/c1-abc?key=",
            "gid://shopify/Cart/c1-abc?key=k8",
            "gid://shopify/Cart/c1-abc?key=k9x",
            "gid://shopify/Cart/c1-abd?key=k9",
            "c1-abc",
        ] {
            assert!(!same_cart(held, presented), "{presented}");
        }
        assert_eq!(cart_key(held), Some("k9"));
        assert_eq!(cart_key("gid://shopify/Cart/c1-abc"), None);
    }

    #[test]
    fn a_cart_token_is_the_id_without_its_key() {
        assert_eq!(
            cart_token("gid://shopify/Cart/c1-abc?key=k9"),
            Some("c1-abc")
        );
        assert_eq!(cart_token("gid://shopify/Cart/c1-abc"), Some("c1-abc"));
        assert_eq!(cart_token("gid://shopify/Cart/?key=k9"), None);
        assert_eq!(cart_token("gid://shopify/Order/1"), None);
    }

    #[test]
    fn parses_gids_numbers_and_tokens() {
        assert_eq!(
            parse_catalog_id("gid://shopify/Product/123"),
            Some(CatalogId::Product(123))
        );
        assert_eq!(
            parse_catalog_id("gid://shopify/ProductVariant/9"),
            Some(CatalogId::Variant(9))
        );
        assert_eq!(parse_catalog_id("42"), Some(CatalogId::Numeric(42)));
        assert_eq!(
            parse_catalog_id("blue-shirt"),
            Some(CatalogId::Token("blue-shirt".into()))
        );
        assert_eq!(
            parse_catalog_id("SKU_1.2"),
            Some(CatalogId::Token("SKU_1.2".into()))
        );
    }

    #[test]
    fn any_sku_text_is_a_token() {
        for input in [
            "CAMISETA-AÇAÍ",
            "CAMISA AZUL 42",
            "\"x\" OR title:*",
            "a)",
            "x:y",
        ] {
            assert_eq!(
                parse_catalog_id(input),
                Some(CatalogId::Token(input.to_owned())),
                "{input}"
            );
        }
    }

    #[test]
    fn anything_else_is_unknown() {
        let long = "x".repeat(256);
        for input in [
            "",
            "   ",
            "gid://shopify/Product/abc",
            "gid://shopify/Product/1/2",
            "gid://shopify/Collection/1",
            "gid://shopify/Product/0",
            "line\nbreak",
            "nul\u{0}",
            long.as_str(),
        ] {
            assert_eq!(parse_catalog_id(input), None, "{input}");
        }
    }

    #[test]
    fn numbers_too_long_for_an_id_may_still_be_skus() {
        assert_eq!(
            parse_catalog_id("99999999999999999999999"),
            Some(CatalogId::Token("99999999999999999999999".into()))
        );
    }

    #[test]
    fn cart_ids_are_strict() {
        assert!(is_cart_id("gid://shopify/Cart/Z2NwLWV1?key=73de96"));
        assert!(is_cart_id("gid://shopify/Cart/Z2NwLWV1"));
        for input in [
            "gid://shopify/Cart/",
            "gid://shopify/Cart/a?key=",
            "gid://shopify/Cart/a b",
            "gid://shopify/Cart/a?key=b&x=1",
            "cart_1",
        ] {
            assert!(!is_cart_id(input), "{input}");
        }
    }
}
