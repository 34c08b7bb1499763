//! Shopify Standard Product Taxonomy → Google product category, from the table in `mappings/`.

use std::collections::HashMap;
use std::sync::OnceLock;

const TABLE: &str = include_str!("../../../mappings/shopify_to_google.tsv");

fn table() -> &'static HashMap<&'static str, &'static str> {
    static MAP: OnceLock<HashMap<&'static str, &'static str>> = OnceLock::new();
    MAP.get_or_init(|| {
        TABLE
            .lines()
            .filter(|line| !line.starts_with('#'))
            .filter_map(|line| line.split_once('\t'))
            .map(|(shopify, google)| (shopify.trim(), google.trim()))
            .filter(|(shopify, google)| !shopify.is_empty() && !google.is_empty())
            .collect()
    })
}

/// `aa-1-13-8` from `gid://shopify/TaxonomyCategory/aa-1-13-8`.
pub fn category_key(gid: &str) -> Option<&str> {
    let key = gid.rsplit('/').next()?;
    (!key.is_empty()
        && key
            .bytes()
            .all(|byte| byte.is_ascii_lowercase() || byte.is_ascii_digit() || byte == b'-'))
    .then_some(key)
}

/// The Google category of a Shopify category: its own rule, else its nearest ancestor's
/// (`aa-1-13-8` → `aa-1-13` → `aa-1` → `aa`).
pub fn google_category(shopify_key: &str) -> Option<&'static str> {
    let map = table();
    let mut key = shopify_key;
    loop {
        if let Some(google) = map.get(key) {
            return Some(google);
        }
        key = &key[..key.rfind('-')?];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_complete_and_walks_up() {
        assert_eq!(table().len(), 12_309);
        assert_eq!(google_category("aa"), Some("166"));
        assert_eq!(google_category("aa-1"), Some("1604"));
        assert_eq!(google_category("aa-1-999999"), Some("1604"));
        assert_eq!(google_category("zz"), None);
        assert_eq!(
            category_key("gid://shopify/TaxonomyCategory/aa-1-13-8"),
            Some("aa-1-13-8")
        );
    }
}
