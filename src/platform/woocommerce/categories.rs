//! The store's category tree, so products carry their full merchant path ("Clothing >
//! Hoodies") and category filters can be pushed down as Woo category ids. Fetched with one
//! call and kept for a while: categories change rarely, products name them on every page.

use std::collections::HashMap;

use super::client::StoreApi;
use super::text::decode_entities;
use super::wire::StoreCategory;
use crate::platform::port::PlatformError;

/// Deeper trees than this are cut (and cycles in corrupt data end here).
const MAX_DEPTH: usize = 16;

#[derive(Debug, Default)]
pub struct CategoryTree {
    by_id: HashMap<u64, StoreCategory>,
}

impl CategoryTree {
    pub fn new(categories: Vec<StoreCategory>) -> Self {
        Self {
            by_id: categories
                .into_iter()
                .map(|category| (category.id, category))
                .collect(),
        }
    }

    /// "Root > … > Leaf"; `fallback` names a category the tree does not know.
    pub fn path(&self, id: u64, fallback: &str) -> String {
        let mut names = Vec::new();
        let mut current = self.by_id.get(&id);
        while let Some(category) = current {
            names.push(decode_entities(&category.name));
            if category.parent == 0 || names.len() >= MAX_DEPTH {
                break;
            }
            current = self.by_id.get(&category.parent);
        }
        if names.is_empty() {
            return decode_entities(fallback);
        }
        names.reverse();
        names.join(" > ")
    }

    /// Category ids whose full path (or, for a top-level value, name) equals `value`,
    /// ignoring case. WooCommerce includes sub-categories when filtering by a parent id,
    /// which is the same prefix rule the brain applies.
    pub fn ids_for(&self, value: &str) -> Vec<u64> {
        let wanted = value
            .split('>')
            .map(str::trim)
            .collect::<Vec<_>>()
            .join(" > ");
        let mut ids: Vec<u64> = self
            .by_id
            .values()
            .filter(|category| self.path(category.id, "").eq_ignore_ascii_case(&wanted))
            .map(|category| category.id)
            .collect();
        ids.sort_unstable();
        ids
    }
}

/// The whole tree, as the catalog's `CategoryCache` keeps it.
pub async fn fetch(api: &StoreApi) -> Result<CategoryTree, PlatformError> {
    Ok(CategoryTree::new(api.categories().await?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn category(id: u64, name: &str, parent: u64) -> StoreCategory {
        StoreCategory {
            id,
            name: name.to_owned(),
            parent,
        }
    }

    #[test]
    fn paths_follow_parents_and_filters_match_them() {
        let tree = CategoryTree::new(vec![
            category(1, "Clothing", 0),
            category(2, "Hoodies", 1),
            category(3, "Loop", 4),
            category(4, "Back", 3),
        ]);
        assert_eq!(tree.path(2, "x"), "Clothing > Hoodies");
        assert_eq!(tree.path(99, "Other &amp; More"), "Other & More");
        assert_eq!(tree.path(3, "").split(" > ").count(), MAX_DEPTH);
        assert_eq!(tree.ids_for("clothing>hoodies"), [2]);
        assert_eq!(tree.ids_for("Clothing"), [1]);
        assert!(tree.ids_for("Hoodies").is_empty());
    }
}
