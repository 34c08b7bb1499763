//! Which kinds of catalog id an input may be, judged from its spelling alone, so nothing that
//! cannot be an id of that kind is ever spliced into an upstream query.

/// A kind of id and how each search stack asks for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IdKind {
    Sku,
    Product,
    RefId,
    Ean,
    Slug,
}

impl IdKind {
    /// The Intelligent Search `query` prefix; several ids of one kind are `;`-joined.
    pub fn search_prefix(self) -> &'static str {
        match self {
            Self::Sku => "sku",
            Self::Product => "product",
            Self::RefId => "sku.reference",
            Self::Ean => "sku.ean",
            Self::Slug => "product.link",
        }
    }

    /// The legacy search's `fq` field (slugs have their own route).
    pub fn legacy_field(self) -> Option<&'static str> {
        match self {
            Self::Sku => Some("skuId"),
            Self::Product => Some("productId"),
            Self::RefId => Some("alternateIds_RefId"),
            Self::Ean => Some("alternateIds_Ean"),
            Self::Slug => None,
        }
    }
}

pub fn is_number(input: &str) -> bool {
    (1..=19).contains(&input.len()) && input.bytes().all(|byte| byte.is_ascii_digit())
}

pub fn is_ean(input: &str) -> bool {
    (8..=14).contains(&input.len()) && is_number(input)
}

/// Reference codes are merchant text; only the characters they commonly use pass, never
/// the query syntax's own (`;`, `:`, spaces, slashes).
pub fn is_ref_id(input: &str) -> bool {
    (1..=64).contains(&input.len())
        && input
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.'))
}

pub fn is_slug(input: &str) -> bool {
    (1..=200).contains(&input.len())
        && input
            .bytes()
            .all(|byte| byte.is_ascii_lowercase() || byte.is_ascii_digit() || byte == b'-')
        && !is_number(input)
}

/// The kinds asked first (they answer carts and most lookups in one round), and those asked
/// only for inputs the first round did not find.
pub fn first_round(input: &str) -> Vec<IdKind> {
    if is_number(input) {
        vec![IdKind::Sku]
    } else {
        let mut kinds = Vec::new();
        if is_ref_id(input) {
            kinds.push(IdKind::RefId);
        }
        if is_slug(input) {
            kinds.push(IdKind::Slug);
        }
        kinds
    }
}

pub fn second_round(input: &str) -> Vec<IdKind> {
    if !is_number(input) {
        return Vec::new();
    }
    let mut kinds = vec![IdKind::Product, IdKind::RefId];
    if is_ean(input) {
        kinds.push(IdKind::Ean);
    }
    kinds
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spelling_decides_the_kinds() {
        assert_eq!(first_round("2000534"), [IdKind::Sku]);
        assert_eq!(
            second_round("7891234567890"),
            [IdKind::Product, IdKind::RefId, IdKind::Ean]
        );
        assert_eq!(first_round("wood-clock"), [IdKind::RefId, IdKind::Slug]);
        assert_eq!(first_round("TEE-S-BLUE"), [IdKind::RefId]);
        for hostile in ["a;b", "sku:1", "x y", "../p", ""] {
            assert!(first_round(hostile).is_empty(), "{hostile}");
            assert!(second_round(hostile).is_empty(), "{hostile}");
        }
    }
}
