//! Search, lookup and product fetches over `GET /products`, batching every lookup into at
//! most two sequential rounds of concurrent requests (plus variation pages beyond 100).

use std::sync::Arc;

use std::collections::{BTreeSet, HashMap};

use iso_currency::Currency;

use super::categories::{self, CategoryTree};
use super::client::{MAX_PER_PAGE, StoreApi};
use super::ids::{WooId, is_sku, is_slug};
use super::mapping;
use super::rest_v3::{DefaultAttribute, RestV3};
use super::wire::StoreProduct;
use crate::model::{BuyerContext, ProductHit};
use crate::model::{Product, Resolution, Resolved, SearchPage, SearchRequest};
use crate::platform::catalog::CatalogPort;
use crate::platform::categories::CategoryCache;
use crate::platform::port::PlatformError;
use async_trait::async_trait;

/// A variable product with more variations than this many pages of 100 is cut short.
const MAX_VARIATION_PAGES: u32 = 10;

fn join(ids: impl IntoIterator<Item = u64>) -> String {
    ids.into_iter()
        .map(|id| id.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

/// The upstream cursor: `<page>.<per_page>`, so later pages keep the first page's size.
fn parse_cursor(cursor: &str) -> Result<(u32, u32), PlatformError> {
    let invalid = || PlatformError::InvalidInput("the cursor is not valid for this store".into());
    let (page, per_page) = cursor.split_once('.').ok_or_else(invalid)?;
    let number = |text: &str| -> Result<u32, PlatformError> {
        if text.is_empty() || text.len() > 6 || !text.bytes().all(|b| b.is_ascii_digit()) {
            return Err(invalid());
        }
        text.parse().map_err(|_| invalid())
    };
    let (page, per_page) = (number(page)?, number(per_page)?);
    if page < 2 || !(1..=MAX_PER_PAGE).contains(&per_page) {
        return Err(invalid());
    }
    Ok((page, per_page))
}

pub struct Catalog {
    api: std::sync::Arc<StoreApi>,
    categories: CategoryCache<CategoryTree>,
    currency: Currency,
    rest_v3: Option<RestV3>,
}

/// Which product (and variant) each kind of input names.
#[derive(Default)]
struct Targets {
    /// Ids, exactly as the store echoes them.
    exact: HashMap<String, (u64, Option<u64>)>,
    /// Lowercased SKUs.
    sku: HashMap<String, (u64, Option<u64>)>,
    slug: HashMap<String, (u64, Option<u64>)>,
}

impl Targets {
    /// An id first, then a SKU, then a slug: the order in which an input is most specific.
    fn get(&self, input: &str) -> Option<&(u64, Option<u64>)> {
        self.exact
            .get(input)
            .or_else(|| self.sku.get(&input.to_lowercase()))
            .or_else(|| self.slug.get(input))
    }
}

/// What one lookup round found, by id.
#[derive(Default)]
struct Found {
    products: HashMap<u64, StoreProduct>,
    variations: HashMap<u64, StoreProduct>,
}

impl Found {
    fn add(&mut self, items: Vec<StoreProduct>) {
        for item in items {
            if item.kind == "variation" || item.parent != 0 {
                self.variations.insert(item.id, item);
            } else {
                self.products.insert(item.id, item);
            }
        }
    }
}

impl Catalog {
    pub fn new(
        api: std::sync::Arc<StoreApi>,
        categories: CategoryCache<CategoryTree>,
        currency: Currency,
        rest_v3: Option<RestV3>,
    ) -> Self {
        Self {
            api,
            categories,
            currency,
            rest_v3,
        }
    }

    async fn defaults(&self, variable: &[u64]) -> HashMap<u64, Vec<DefaultAttribute>> {
        match &self.rest_v3 {
            Some(rest) if !variable.is_empty() => rest.defaults(variable).await,
            _ => HashMap::new(),
        }
    }

    fn build(
        &self,
        parent: &StoreProduct,
        found: &Found,
        tree: &CategoryTree,
        defaults: &HashMap<u64, Vec<DefaultAttribute>>,
    ) -> Product {
        let mut product = mapping::product(parent, &found.variations, tree, self.currency);
        if let Some(wanted) = defaults.get(&parent.id) {
            product.featured_variant = mapping::featured_variant(&product, wanted);
        }
        product
    }

    /// The product a SKU or slug names, through `resolve`.
    async fn product_by_word(&self, input: &str) -> Result<Option<ProductHit>, PlatformError> {
        let hit = self.resolve_as(&[input.to_owned()], true).await?;
        Ok(hit.into_iter().next().map(ProductHit::from))
    }

    /// Every variation of the given parents, following pages.
    async fn all_variations(&self, parents: &[u64]) -> Result<Vec<StoreProduct>, PlatformError> {
        let mut out = Vec::new();
        if parents.is_empty() {
            return Ok(out);
        }
        let mut page = 1;
        loop {
            let listing = self.api.products(&variations_query(parents, page)).await?;
            let count = listing.items.len();
            out.extend(listing.items);
            let more = match listing.total_pages {
                Some(total) => page < total,
                None => count == MAX_PER_PAGE as usize,
            };
            if !more || count == 0 {
                break;
            }
            if page >= MAX_VARIATION_PAGES {
                tracing::warn!(pages = page, "variation list cut short");
                break;
            }
            page += 1;
        }
        Ok(out)
    }

    /// Products (or variations) whose `key` is one of `values`, in chunks the Store API's
    /// page size can hold, so a large batch is never silently cut at 100.
    async fn list_by(
        &self,
        variations: bool,
        key: &'static str,
        values: &[String],
    ) -> Result<Vec<StoreProduct>, PlatformError> {
        let mut out = Vec::new();
        for chunk in values.chunks(MAX_PER_PAGE as usize) {
            let mut query = vec![
                (key, chunk.join(",")),
                ("per_page", MAX_PER_PAGE.to_string()),
            ];
            if variations {
                query.push(("type", "variation".to_owned()));
            }
            out.extend(self.api.products(&query).await?.items);
        }
        Ok(out)
    }

    /// `resolve`; without `as_ids`, numeric inputs are asked as SKUs only (their ids are
    /// known not to exist).
    async fn resolve_as(
        &self,
        inputs: &[String],
        as_ids: bool,
    ) -> Result<Vec<Resolved>, PlatformError> {
        let ids: BTreeSet<WooId> = inputs
            .iter()
            .filter(|_| as_ids)
            .filter_map(|id| WooId::parse(id))
            .collect();
        let words = || {
            inputs
                .iter()
                .map(String::as_str)
                .filter(|input| WooId::parse(input).is_none())
        };
        // A SKU may be digits only: numeric inputs are asked as SKUs too, in the same
        // request, and an id wins over a SKU spelt the same (`Targets::get`).
        let skus: BTreeSet<&str> = inputs
            .iter()
            .map(String::as_str)
            .filter(|input| is_sku(input))
            .collect();
        let slugs: BTreeSet<&str> = words().filter(|input| is_slug(input)).collect();
        if ids.is_empty() && skus.is_empty() && slugs.is_empty() {
            return Ok(Vec::new());
        }
        let ids: Vec<String> = ids.iter().map(WooId::to_string).collect();
        let skus: Vec<String> = skus.into_iter().map(str::to_owned).collect();
        let slugs: Vec<String> = slugs.into_iter().map(str::to_owned).collect();
        let (tree, by_id, variations_by_id, by_sku, by_slug) = tokio::join!(
            self.categories.get(categories::fetch(&self.api)),
            self.list_by(false, "include", &ids),
            self.list_by(true, "include", &ids),
            self.list_by(false, "sku", &skus),
            self.list_by(false, "slug", &slugs),
        );
        let tree = tree?;
        let mut found = Found::default();
        let by_id = by_id?;
        let variations_by_id = variations_by_id?;
        let by_sku = by_sku?;
        let by_slug = by_slug?;
        // Which input names what, before the lists are merged.
        let mut targets = Targets::default();
        for item in by_id.iter().chain(&variations_by_id) {
            let target = if item.parent != 0 {
                (item.parent, Some(item.id))
            } else {
                (item.id, None)
            };
            targets.exact.insert(item.id.to_string(), target);
        }
        for item in &by_sku {
            if item.sku.is_empty() {
                continue;
            }
            let target = if item.parent != 0 {
                (item.parent, Some(item.id))
            } else if mapping::is_variable(item) {
                (item.id, None)
            } else {
                // A simple product's SKU names its only variant exactly.
                (item.id, Some(item.id))
            };
            // The store matches SKUs ignoring case; so does the correlation.
            targets.sku.entry(item.sku.to_lowercase()).or_insert(target);
        }
        for item in &by_slug {
            let target = if item.parent != 0 {
                (item.parent, Some(item.id))
            } else {
                (item.id, None)
            };
            targets.slug.entry(item.slug.clone()).or_insert(target);
        }
        for list in [by_id, variations_by_id, by_sku, by_slug] {
            found.add(list);
        }

        let missing_parents: BTreeSet<u64> = found
            .variations
            .values()
            .map(|variation| variation.parent)
            .filter(|parent| !found.products.contains_key(parent))
            .collect();
        let variable: Vec<u64> = found
            .products
            .values()
            .filter(|product| mapping::is_variable(product))
            .map(|product| product.id)
            .chain(missing_parents.iter().copied())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let parent_ids: Vec<String> = missing_parents.iter().map(u64::to_string).collect();
        let (parents, variations, defaults) = tokio::join!(
            self.list_by(false, "include", &parent_ids),
            self.all_variations(&variable),
            self.defaults(&variable),
        );
        found.add(parents?);
        found.add(variations?);

        Ok(self.correlate(inputs, &targets, &found, &tree, &defaults))
    }

    fn correlate(
        &self,
        inputs: &[String],
        targets: &Targets,
        found: &Found,
        tree: &CategoryTree,
        defaults: &HashMap<u64, Vec<DefaultAttribute>>,
    ) -> Vec<Resolved> {
        let mut built: HashMap<u64, Arc<Product>> = HashMap::new();
        let mut out = Vec::new();
        for input in inputs {
            let Some((product_id, variant_id)) = targets.get(input) else {
                continue;
            };
            let Some(parent) = found.products.get(product_id) else {
                continue;
            };
            let product = built
                .entry(*product_id)
                .or_insert_with(|| Arc::new(self.build(parent, found, tree, defaults)))
                .clone();
            let resolution = match variant_id {
                Some(id) => {
                    let id = id.to_string();
                    // The brain relies on the named variant being in the product.
                    if product.variant(&id).is_none() {
                        continue;
                    }
                    Resolution::Variant(id)
                }
                None => Resolution::Product,
            };
            out.push(Resolved {
                input: input.clone(),
                resolution,
                product,
            });
        }
        out
    }
}

#[async_trait]
impl CatalogPort for Catalog {
    async fn search(&self, request: &SearchRequest) -> Result<SearchPage, PlatformError> {
        let (page, per_page) = match request.upstream_cursor.as_deref() {
            Some(cursor) => parse_cursor(cursor)?,
            None => (1, request.limit.clamp(1, MAX_PER_PAGE)),
        };
        let mut query: Vec<(&str, String)> = vec![
            ("page", page.to_string()),
            ("per_page", per_page.to_string()),
        ];
        if let Some(text) = request.query.as_deref() {
            query.push(("search", text.to_owned()));
        }
        if let Some(price) = &request.filters.price {
            if let Some(min) = price.min {
                query.push(("min_price", min.max(0).to_string()));
            }
            if let Some(max) = price.max {
                query.push(("max_price", max.max(0).to_string()));
            }
        }
        // A category filter needs the tree before the listing (names become ids); without
        // one the two go out together.
        let (tree, listing) = if request.filters.categories.is_empty() {
            let (tree, listing) = tokio::join!(
                self.categories.get(categories::fetch(&self.api)),
                self.api.products(&query)
            );
            (tree?, listing?)
        } else {
            let tree = self.categories.get(categories::fetch(&self.api)).await?;
            let ids: BTreeSet<u64> = request
                .filters
                .categories
                .iter()
                .flat_map(|value| tree.ids_for(value))
                .collect();
            if ids.is_empty() {
                // No such category: nothing can match, and no upstream call is needed.
                return Ok(SearchPage {
                    products: Vec::new(),
                    next_cursor: None,
                    total_count: Some(0),
                });
            }
            query.push(("category", join(ids)));
            let listing = self.api.products(&query).await?;
            (tree, listing)
        };
        let mut found = Found::default();
        found.add(listing.items.clone());
        // All variations, so the featured variant honours stock and price filters (and the
        // brain's price range covers the variants a price filter kept).
        let variable: Vec<u64> = listing
            .items
            .iter()
            .filter(|item| mapping::is_variable(item))
            .map(|item| item.id)
            .collect();
        let (variations, defaults) =
            tokio::join!(self.all_variations(&variable), self.defaults(&variable));
        found.add(variations?);
        let products = listing
            .items
            .iter()
            .map(|item| Arc::new(self.build(item, &found, &tree, &defaults)))
            .collect();
        let next_cursor = listing
            .total_pages
            .filter(|total| page < *total)
            .map(|_| format!("{}.{per_page}", page + 1));
        Ok(SearchPage {
            products,
            next_cursor,
            total_count: listing.total,
        })
    }

    /// Resolves inputs with complete variation data in two rounds, as measured on a real
    /// store: round one sends numeric inputs to `include=` (products) and `type=variation&
    /// include=` (variations), every input that can be a SKU (numeric ones too) to `sku=`, and
    /// every other slug-shaped one to `slug=` (each matches products and variations); round two fetches all variations of the variable products
    /// found, and the parents of found variations that round one did not bring.
    /// The Store API answers the same whoever asks: the buyer context changes nothing.
    async fn resolve(
        &self,
        inputs: &[String],
        _context: &BuyerContext,
    ) -> Result<Vec<Resolved>, PlatformError> {
        self.resolve_as(inputs, true).await
    }

    /// The product behind one id with all its variations. A numeric id costs one round of
    /// two requests (the id itself and the variations of that id, together), plus a round
    /// for the parent when the id names a variation; a SKU or slug goes through `resolve`.
    async fn product(
        &self,
        input: &str,
        _context: &BuyerContext,
    ) -> Result<Option<ProductHit>, PlatformError> {
        let Some(id) = WooId::parse(input) else {
            return self.product_by_word(input).await;
        };
        let key = id.to_string();
        let (tree, fetched) = tokio::join!(
            self.categories.get(categories::fetch(&self.api)),
            self.fetch_whole(id.0, &key),
        );
        let tree = tree?;
        let Whole {
            product,
            variations,
            defaults,
            variant,
        } = match fetched? {
            Fetched::Whole(whole) => *whole,
            Fetched::Orphan => return Ok(None),
            Fetched::NoSuchId => {
                // A SKU may be digits only: one `sku=` request more, only then.
                let hit = self.resolve_as(&[input.to_owned()], false).await?;
                return Ok(hit.into_iter().next().map(ProductHit::from));
            }
        };
        let mut found = Found::default();
        found.add(variations);
        let product = self.build(&product, &found, &tree, &defaults);
        if let Some(key) = &variant {
            // The brain relies on the named variant being in the product.
            if product.variant(key).is_none() {
                return Ok(None);
            }
        }
        Ok(Some(ProductHit {
            product: Arc::new(product),
            variant_id: variant,
        }))
    }
}

/// What `get_product`'s id turned out to name.
enum Fetched {
    Whole(Box<Whole>),
    /// Neither a product nor a variation id (it may still be a SKU spelt in digits).
    NoSuchId,
    /// A variation whose parent is gone.
    Orphan,
}

/// A product with every variation, as fetched for `get_product`.
struct Whole {
    product: StoreProduct,
    variations: Vec<StoreProduct>,
    defaults: HashMap<u64, Vec<DefaultAttribute>>,
    /// The variation the id named, when it named one.
    variant: Option<String>,
}

impl Catalog {
    /// `GET /products/{id}` beside the id's own variation list: a variable product (the usual
    /// id) is then whole in one round. When the id turns out to be a variation, the parent's
    /// round starts the moment the id answers, without waiting for that now useless list: on
    /// a slow store the speculation costs a request, never a round.
    async fn fetch_whole(&self, id: u64, key: &str) -> Result<Fetched, PlatformError> {
        let own = [id];
        let mut own_list =
            std::pin::pin!(async { tokio::join!(self.all_variations(&own), self.defaults(&own)) });
        let mut item = std::pin::pin!(self.api.product(key));
        let (item, listed) = tokio::select! {
            item = &mut item => (item?, None),
            listed = &mut own_list => ((&mut item).await?, Some(listed)),
        };
        let Some(item) = item else {
            return Ok(Fetched::NoSuchId);
        };
        if item.parent == 0 {
            let (variations, defaults) = match listed {
                Some(listed) => listed,
                None => own_list.await,
            };
            return Ok(Fetched::Whole(Box::new(Whole {
                product: item,
                variations: variations?,
                defaults,
                variant: None,
            })));
        }
        // A variation: its own variation list was empty; the parent's is what counts.
        let parent_key = item.parent.to_string();
        let parents = [item.parent];
        let (parent, variations, defaults) = tokio::join!(
            self.api.product(&parent_key),
            self.all_variations(&parents),
            self.defaults(&parents),
        );
        let Some(parent) = parent? else {
            return Ok(Fetched::Orphan);
        };
        Ok(Fetched::Whole(Box::new(Whole {
            product: parent,
            variations: variations?,
            defaults,
            variant: Some(key.to_owned()),
        })))
    }
}

fn variations_query(parents: &[u64], page: u32) -> Vec<(&'static str, String)> {
    // `parent[]=` for one parent (the measured get_product shape), a list otherwise; the
    // store reads both.
    let key = if parents.len() == 1 {
        "parent[]"
    } else {
        "parent"
    };
    vec![
        ("type", "variation".to_owned()),
        (key, join(parents.iter().copied())),
        ("per_page", MAX_PER_PAGE.to_string()),
        ("page", page.to_string()),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_are_strict() {
        assert!(matches!(parse_cursor("2.10"), Ok((2, 10))));
        for bad in ["", "1.10", "2", "2.0", "2.101", "x.10", "2.10?", "-2.10"] {
            assert!(parse_cursor(bad).is_err(), "{bad}");
        }
    }
}
