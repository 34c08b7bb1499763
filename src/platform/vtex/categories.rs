//! The store's category tree (`catalog_system/pub/category/tree`), fetched only when a search
//! filters by category: category names become Intelligent Search slug facets or legacy
//! `C:/id/…/` filters. Kept for a while; categories change rarely.

use super::client::VtexApi;
use super::wire::CategoryNode;
use crate::platform::port::PlatformError;

/// Levels asked of the tree route (VTEX stores rarely go deeper).
const LEVELS: &str = "5";

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CategoryRef {
    /// "Alimentação > Ração Seca", as products name it.
    pub path: String,
    /// URL slugs by level: `["alimentacao", "racao-seca"]`.
    pub slugs: Vec<String>,
    /// Ids by level: `[1, 10]`.
    pub ids: Vec<u64>,
}

#[derive(Debug, Default)]
pub struct CategoryTree {
    all: Vec<CategoryRef>,
}

fn walk(nodes: &[CategoryNode], parent: Option<&CategoryRef>, out: &mut Vec<CategoryRef>) {
    for node in nodes {
        let slug = url::Url::parse(&node.url)
            .ok()
            .and_then(|url| {
                url.path_segments()
                    .and_then(|mut segments| segments.rfind(|s| !s.is_empty()).map(str::to_owned))
            })
            .unwrap_or_default();
        let mut current = CategoryRef {
            path: node.name.trim().to_owned(),
            slugs: vec![slug],
            ids: vec![node.id],
        };
        if let Some(parent) = parent {
            current.path = format!("{} > {}", parent.path, current.path);
            current.slugs = [parent.slugs.clone(), current.slugs].concat();
            current.ids = [parent.ids.clone(), current.ids].concat();
        }
        if current.ids.len() <= 16 {
            walk(&node.children, Some(&current), out);
        }
        out.push(current);
    }
}

impl CategoryTree {
    pub fn new(roots: &[CategoryNode]) -> Self {
        let mut all = Vec::new();
        walk(roots, None, &mut all);
        Self { all }
    }

    /// The category whose full path equals `value`, ignoring case and spacing around `>`.
    pub fn find(&self, value: &str) -> Option<&CategoryRef> {
        let wanted = value
            .split('>')
            .map(str::trim)
            .collect::<Vec<_>>()
            .join(" > ");
        self.all
            .iter()
            .find(|category| category.path.to_lowercase() == wanted.to_lowercase())
    }
}

/// The whole tree, as the catalog's `CategoryCache` keeps it.
pub async fn fetch(api: &VtexApi) -> Result<CategoryTree, PlatformError> {
    let response = api
        .get(
            &["api", "catalog_system", "pub", "category", "tree", LEVELS],
            &[],
            None,
        )
        .await?;
    let roots: Vec<CategoryNode> = api.decode(&response, "category tree")?;
    Ok(CategoryTree::new(&roots))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn the_example_tree_gives_slug_and_id_paths() {
        let roots: Vec<CategoryNode> = serde_json::from_str(include_str!(
            "../../../tests/support/vtex_standin/fixtures/catalog-pub-category-tree.json"
        ))
        .unwrap();
        let tree = CategoryTree::new(&roots);
        let dry = tree.find("alimentação>ração seca").unwrap();
        assert_eq!(dry.slugs, ["alimentacao", "racao-seca"]);
        assert_eq!(dry.ids, [1, 10]);
        assert!(tree.find("Ração Seca").is_none());
    }
}
