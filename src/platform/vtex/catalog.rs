//! Search and lookup over whichever search stack the store has (see `stack`): one request per
//! search page, one `;`-joined query per kind of id for a lookup.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use super::categories::{self, CategoryRef, CategoryTree};
use super::client::VtexApi;
use super::ids::{self, IdKind};
use super::mapping::{self, Context};
use super::stack::{Stack, StackProbe};
use super::wire::{self, LegacyAxes};
use crate::model::{
    BuyerContext, Product, ProductHit, Resolution, Resolved, SearchPage, SearchRequest,
};
use crate::money::Money;
use crate::platform::catalog::CatalogPort;
use crate::platform::categories::CategoryCache;
use crate::platform::port::Health;
use crate::platform::port::PlatformError;
use async_trait::async_trait;

/// Intelligent Search and the legacy search both serve at most 50 products a page.
pub const MAX_PER_PAGE: u32 = 50;
/// The legacy search refuses `_from` beyond 2500.
const LEGACY_MAX_FROM: u32 = 2500;
/// Remembered SKU → seller pairs before the memory starts over.
const MAX_SELLERS: usize = 50_000;

pub struct Where {
    pub sales_channel: u32,
    pub region_id: Option<String>,
    pub postal_code: Option<String>,
    pub country: Option<String>,
    pub locale: Option<String>,
}

pub struct Catalog {
    api: Arc<VtexApi>,
    stack: Arc<StackProbe>,
    categories: CategoryCache<CategoryTree>,
    place: Where,
    currency: iso_currency::Currency,
    storefront: url::Url,
    /// The seller each SKU was last listed with, for cart lines (marketplace stores).
    sellers: Mutex<HashMap<String, String>>,
}

/// One product as fetched: its wire form (for correlation) and its model form.
struct Fetched {
    raw: wire::Product,
    product: Arc<Product>,
}

fn invalid_cursor() -> PlatformError {
    PlatformError::InvalidInput("the cursor is not valid for this store".into())
}

/// The upstream cursor: `<page or offset>.<per page>`.
fn parse_cursor(cursor: &str) -> Result<(u32, u32), PlatformError> {
    let (first, size) = cursor.split_once('.').ok_or_else(invalid_cursor)?;
    let number = |text: &str| -> Result<u32, PlatformError> {
        if text.is_empty() || text.len() > 6 || !text.bytes().all(|b| b.is_ascii_digit()) {
            return Err(invalid_cursor());
        }
        text.parse().map_err(|_| invalid_cursor())
    };
    let (first, size) = (number(first)?, number(size)?);
    if !(1..=MAX_PER_PAGE).contains(&size) {
        return Err(invalid_cursor());
    }
    Ok((first, size))
}

/// `resources: 0-49/1234` → 1234.
fn legacy_total(header: Option<&str>) -> Option<u64> {
    header?.rsplit_once('/')?.1.trim().parse().ok()
}

impl Catalog {
    pub fn new(
        api: Arc<VtexApi>,
        stack: Arc<StackProbe>,
        categories: CategoryCache<CategoryTree>,
        place: Where,
        currency: iso_currency::Currency,
        storefront: url::Url,
    ) -> Self {
        Self {
            api,
            stack,
            categories,
            place,
            currency,
            storefront,
            sellers: Mutex::new(HashMap::new()),
        }
    }

    pub fn seller_of(&self, sku: &str) -> Option<String> {
        self.sellers.lock().ok()?.get(sku).cloned()
    }

    fn remember_sellers(&self, raw: &wire::Product) {
        let Ok(mut sellers) = self.sellers.lock() else {
            return;
        };
        if sellers.len() > MAX_SELLERS {
            sellers.clear();
        }
        for item in &raw.items {
            if let Some(seller) = mapping::seller(item) {
                sellers.insert(item.item_id.clone(), seller.seller_id.clone());
            }
        }
    }

    fn context(&self) -> Context<'_> {
        Context {
            currency: self.currency,
            storefront: &self.storefront,
        }
    }

    /// The region and sales-channel parameters every Intelligent Search call carries.
    fn is_params(&self, context: &BuyerContext) -> Vec<(&'static str, String)> {
        let mut query = vec![("sc", self.place.sales_channel.to_string())];
        if let Some(region) = &self.place.region_id {
            query.push(("regionId", region.clone()));
        }
        let postal = context
            .postal_code
            .clone()
            .or_else(|| self.place.postal_code.clone());
        if let Some(postal) = postal {
            query.push(("zip-code", postal));
            let country = match context.country.as_deref() {
                Some("BR") | None => self.place.country.clone().or(Some("BRA".to_owned())),
                Some(_) => self.place.country.clone(),
            };
            if let Some(country) = country {
                query.push(("country", country));
            }
        }
        if let Some(locale) = context
            .language
            .clone()
            .or_else(|| self.place.locale.clone())
        {
            query.push(("locale", locale));
        }
        query.push(("hideUnavailableItems", "false".to_owned()));
        query
    }

    fn decode_products(
        &self,
        raws: &[Box<serde_json::value::RawValue>],
        legacy: bool,
    ) -> Result<Vec<Fetched>, PlatformError> {
        raws.iter()
            .map(|raw| {
                let typed: wire::Product = serde_json::from_str(raw.get()).map_err(|_| {
                    PlatformError::BadResponse("product: unexpected shape".to_owned())
                })?;
                let axes: Option<LegacyAxes> = if legacy {
                    serde_json::from_str(raw.get()).ok()
                } else {
                    None
                };
                self.remember_sellers(&typed);
                let product = mapping::product(&typed, axes.as_ref(), &self.context());
                Ok(Fetched {
                    raw: typed,
                    product: Arc::new(product),
                })
            })
            .collect()
    }

    async fn categories_for(&self, values: &[String]) -> Result<Vec<CategoryRef>, PlatformError> {
        let tree = self.categories.get(categories::fetch(&self.api)).await?;
        Ok(values
            .iter()
            .filter_map(|value| tree.find(value).cloned())
            .collect())
    }

    fn price_bounds(&self, request: &SearchRequest) -> Option<(String, String)> {
        let price = request.filters.price.as_ref()?;
        let text = |minor: i64| Money::new(minor.max(0), self.currency).to_major_string();
        Some((
            text(price.min.unwrap_or(0)),
            // Both stacks need both ends; this is above any real price.
            price.max.map_or_else(|| "999999999".to_owned(), text),
        ))
    }

    async fn search_is(
        &self,
        request: &SearchRequest,
        categories: &[CategoryRef],
    ) -> Result<SearchPage, PlatformError> {
        let (page, count) = match request.upstream_cursor.as_deref() {
            Some(cursor) => parse_cursor(cursor)?,
            None => (1, request.limit.clamp(1, MAX_PER_PAGE)),
        };
        if page == 0 {
            return Err(invalid_cursor());
        }
        let mut facets: Vec<String> = Vec::new();
        if let Some(facet) = is_category_facets(categories)? {
            facets.extend(facet);
        }
        if let Some((min, max)) = self.price_bounds(request) {
            facets.push("price".to_owned());
            facets.push(format!("{min}:{max}"));
        }
        let mut query = vec![("count", count.to_string()), ("page", page.to_string())];
        if let Some(text) = request
            .query
            .as_deref()
            .filter(|text| !text.trim().is_empty())
        {
            query.push(("query", text.to_owned()));
        }
        query.extend(self.is_params(&request.context));
        let (products, total) = self.is_page(&facets, &query).await?;
        let next_cursor = total
            .filter(|total| u64::from(page) * u64::from(count) < *total)
            .map(|_| format!("{}.{count}", page + 1));
        Ok(SearchPage {
            products: products.into_iter().map(|hit| hit.product).collect(),
            next_cursor,
            total_count: total,
        })
    }

    async fn is_page(
        &self,
        facets: &[String],
        query: &[(&str, String)],
    ) -> Result<(Vec<Fetched>, Option<u64>), PlatformError> {
        let mut segments = vec!["api", "intelligent-search", "v1", "product-search"];
        if facets.is_empty() {
            segments.push("");
        } else {
            segments.extend(facets.iter().map(String::as_str));
        }
        let response = self.api.get(&segments, query, None).await?;
        let page: wire::Page = self.api.decode(&response, "product search")?;
        Ok((
            self.decode_products(&page.products, false)?,
            page.records_filtered,
        ))
    }

    async fn search_legacy(
        &self,
        request: &SearchRequest,
        categories: &[CategoryRef],
    ) -> Result<SearchPage, PlatformError> {
        let (from, count) = match request.upstream_cursor.as_deref() {
            Some(cursor) => parse_cursor(cursor)?,
            None => (0, request.limit.clamp(1, MAX_PER_PAGE)),
        };
        if from > LEGACY_MAX_FROM {
            return Err(invalid_cursor());
        }
        let mut query = vec![
            ("_from", from.to_string()),
            ("_to", (from + count - 1).to_string()),
            ("sc", self.place.sales_channel.to_string()),
        ];
        if let Some(text) = request
            .query
            .as_deref()
            .filter(|text| !text.trim().is_empty())
        {
            query.push(("ft", text.to_owned()));
        }
        for category in categories {
            let ids: Vec<String> = category.ids.iter().map(u64::to_string).collect();
            query.push(("fq", format!("C:/{}/", ids.join("/"))));
        }
        if let Some((min, max)) = self.price_bounds(request) {
            query.push(("fq", format!("P:[{min} TO {max}]")));
        }
        let (products, total) = self.legacy_page(&["products", "search"], &query).await?;
        let next = u64::from(from) + u64::from(count);
        let next_cursor = total
            .filter(|total| next < *total && next <= u64::from(LEGACY_MAX_FROM))
            .map(|_| format!("{next}.{count}"));
        Ok(SearchPage {
            products: products.into_iter().map(|hit| hit.product).collect(),
            next_cursor,
            total_count: total,
        })
    }

    async fn legacy_page(
        &self,
        tail: &[&str],
        query: &[(&str, String)],
    ) -> Result<(Vec<Fetched>, Option<u64>), PlatformError> {
        let mut segments = vec!["api", "catalog_system", "pub"];
        segments.extend(tail);
        let response = self.api.get(&segments, query, None).await?;
        if response.status == reqwest::StatusCode::NOT_FOUND {
            return Ok((Vec::new(), Some(0)));
        }
        // A page short of the whole result comes as 206 Partial Content.
        let raws: Vec<Box<serde_json::value::RawValue>> =
            if response.status == reqwest::StatusCode::PARTIAL_CONTENT {
                response.json("legacy search")?
            } else {
                self.api.decode(&response, "legacy search")?
            };
        let total = legacy_total(response.header("resources"));
        Ok((self.decode_products(&raws, true)?, total))
    }

    /// Every product that holds one of `values` as a `kind` id, in as few requests as the
    /// stack allows: one `;`-joined query (or repeated `fq`) per 50 ids; slugs on the legacy
    /// stack cost one request each.
    async fn fetch(
        &self,
        stack: Stack,
        kind: IdKind,
        values: &[String],
        context: &BuyerContext,
    ) -> Result<Vec<Fetched>, PlatformError> {
        let mut out = Vec::new();
        if values.is_empty() {
            return Ok(out);
        }
        for chunk in values.chunks(MAX_PER_PAGE as usize) {
            match (stack, kind.legacy_field()) {
                (Stack::IntelligentSearch, _) => {
                    let mut query = vec![
                        (
                            "query",
                            format!("{}:{}", kind.search_prefix(), chunk.join(";")),
                        ),
                        ("count", MAX_PER_PAGE.to_string()),
                        ("page", "1".to_owned()),
                    ];
                    query.extend(self.is_params(context));
                    out.extend(self.is_page(&[], &query).await?.0);
                }
                (Stack::Legacy, Some(field)) => {
                    let mut query = vec![
                        ("_from", "0".to_owned()),
                        ("_to", (MAX_PER_PAGE - 1).to_string()),
                        ("sc", self.place.sales_channel.to_string()),
                    ];
                    for value in chunk {
                        query.push(("fq", format!("{field}:{value}")));
                    }
                    out.extend(self.legacy_page(&["products", "search"], &query).await?.0);
                }
                (Stack::Legacy, None) => {
                    let sc = [("sc", self.place.sales_channel.to_string())];
                    let pages = join_all(chunk.iter().map(|slug| {
                        self.legacy_page_owned(vec!["products", "search", slug.as_str(), "p"], &sc)
                    }))
                    .await;
                    for page in pages {
                        out.extend(page?.0);
                    }
                }
            }
        }
        Ok(out)
    }

    async fn legacy_page_owned(
        &self,
        tail: Vec<&str>,
        query: &[(&str, String)],
    ) -> Result<(Vec<Fetched>, Option<u64>), PlatformError> {
        self.legacy_page(&tail, query).await
    }

    /// One round: every kind asked at once, for the inputs that may be of that kind.
    async fn round(
        &self,
        stack: Stack,
        wanted: &[(IdKind, Vec<String>)],
        context: &BuyerContext,
    ) -> Result<Vec<(IdKind, Vec<Fetched>)>, PlatformError> {
        let answers = join_all(wanted.iter().map(|(kind, values)| async move {
            self.fetch(stack, *kind, values, context)
                .await
                .map(|found| (*kind, found))
        }))
        .await;
        answers.into_iter().collect()
    }
}

#[async_trait]
impl CatalogPort for Catalog {
    async fn search(&self, request: &SearchRequest) -> Result<SearchPage, PlatformError> {
        let categories = if request.filters.categories.is_empty() {
            Vec::new()
        } else {
            let found = self.categories_for(&request.filters.categories).await?;
            if found.is_empty() {
                // No such category: nothing can match, and no listing call is needed.
                return Ok(SearchPage {
                    products: Vec::new(),
                    next_cursor: None,
                    total_count: Some(0),
                });
            }
            found
        };
        match self.stack.get(&self.api).await? {
            Stack::IntelligentSearch => self.search_is(request, &categories).await,
            Stack::Legacy => self.search_legacy(request, &categories).await,
        }
    }

    /// Resolves inputs in at most two rounds: SKU ids, reference codes and slugs first (a
    /// cart's lines are SKU ids: one request), then product ids, EANs and numeric reference
    /// codes for the numbers round one did not find.
    async fn resolve(
        &self,
        inputs: &[String],
        context: &BuyerContext,
    ) -> Result<Vec<Resolved>, PlatformError> {
        let stack = self.stack.get(&self.api).await?;
        let mut found: HashMap<String, Resolved> = HashMap::new();
        for round in [
            ids::first_round as fn(&str) -> Vec<IdKind>,
            ids::second_round,
        ] {
            let mut wanted: Vec<(IdKind, Vec<String>)> = Vec::new();
            for input in inputs.iter().filter(|input| !found.contains_key(*input)) {
                for kind in round(input) {
                    match wanted.iter_mut().find(|(known, _)| *known == kind) {
                        Some((_, values)) if !values.contains(input) => values.push(input.clone()),
                        Some(_) => {}
                        None => wanted.push((kind, vec![input.clone()])),
                    }
                }
            }
            if wanted.is_empty() {
                continue;
            }
            let answers = self.round(stack, &wanted, context).await?;
            for input in inputs {
                if !found.contains_key(input)
                    && let Some(hit) = correlate(input, &answers)
                {
                    found.insert(input.clone(), hit);
                }
            }
        }
        Ok(inputs
            .iter()
            .filter_map(|input| found.remove(input))
            .collect())
    }

    /// The product a product id or SKU id names (both asked at once), else whatever
    /// `resolve` makes of a reference code, EAN or slug.
    async fn product(
        &self,
        input: &str,
        context: &BuyerContext,
    ) -> Result<Option<ProductHit>, PlatformError> {
        let hit = if ids::is_number(input) {
            let stack = self.stack.get(&self.api).await?;
            let values = vec![input.to_owned()];
            let answers = self
                .round(
                    stack,
                    &[(IdKind::Product, values.clone()), (IdKind::Sku, values)],
                    context,
                )
                .await?;
            correlate(input, &answers)
        } else {
            self.resolve(&[input.to_owned()], context)
                .await?
                .into_iter()
                .next()
        };
        Ok(hit.map(ProductHit::from))
    }
}

/// What `input` names among one round's answers, most specific kind first as listed.
fn correlate(input: &str, answers: &[(IdKind, Vec<Fetched>)]) -> Option<Resolved> {
    let order = [
        IdKind::Product,
        IdKind::Sku,
        IdKind::RefId,
        IdKind::Ean,
        IdKind::Slug,
    ];
    for kind in order {
        let Some((_, fetched)) = answers.iter().find(|(known, _)| *known == kind) else {
            continue;
        };
        for hit in fetched {
            let item = |matches: &dyn Fn(&wire::Item) -> bool| {
                hit.raw
                    .items
                    .iter()
                    .find(|item| matches(item))
                    .map(|item| item.item_id.clone())
            };
            let resolution = match kind {
                IdKind::Product => (hit.raw.product_id == input).then_some(Resolution::Product),
                IdKind::Slug => (hit.raw.link_text == input).then_some(Resolution::Product),
                IdKind::Sku => item(&|item| item.item_id == input).map(Resolution::Variant),
                IdKind::RefId => item(&|item| {
                    item.ref_id()
                        .is_some_and(|code| code.eq_ignore_ascii_case(input))
                })
                .map(Resolution::Variant),
                IdKind::Ean => {
                    item(&|item| item.ean.as_deref() == Some(input)).map(Resolution::Variant)
                }
            };
            let Some(resolution) = resolution else {
                continue;
            };
            // The brain relies on the named variant being in the product.
            if let Resolution::Variant(id) = &resolution
                && hit.product.variant(id).is_none()
            {
                continue;
            }
            return Some(Resolved {
                input: input.to_owned(),
                resolution,
                product: hit.product.clone(),
            });
        }
    }
    None
}

/// Intelligent Search category facets: one category as its full slug path; several as
/// repeated keys of one level, which the API ORs. Categories of different levels cannot be
/// ORed in one query.
fn is_category_facets(categories: &[CategoryRef]) -> Result<Option<Vec<String>>, PlatformError> {
    match categories {
        [] => Ok(None),
        [one] => Ok(Some(
            one.slugs
                .iter()
                .enumerate()
                .flat_map(|(level, slug)| [format!("category-{}", level + 1), slug.clone()])
                .collect(),
        )),
        several => {
            let depth = several[0].slugs.len();
            if several.iter().any(|category| category.slugs.len() != depth) {
                return Err(PlatformError::InvalidAt {
                    path: "$.catalog.filters.categories".to_owned(),
                    message:
                        "this store filters several categories only when they are at the same level"
                            .to_owned(),
                });
            }
            Ok(Some(
                several
                    .iter()
                    .filter_map(|category| category.slugs.last())
                    .flat_map(|slug| [format!("category-{depth}"), slug.clone()])
                    .collect(),
            ))
        }
    }
}

/// Runs the futures concurrently (each waits on the network, not on the others) and returns
/// their outputs in order.
async fn join_all<F: std::future::Future>(futures: impl IntoIterator<Item = F>) -> Vec<F::Output> {
    let mut pending: Vec<std::pin::Pin<Box<F>>> = futures.into_iter().map(Box::pin).collect();
    let mut outputs: Vec<Option<F::Output>> = pending.iter().map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut waiting = false;
        for (future, output) in pending.iter_mut().zip(outputs.iter_mut()) {
            if output.is_some() {
                continue;
            }
            match future.as_mut().poll(cx) {
                std::task::Poll::Ready(done) => *output = Some(done),
                std::task::Poll::Pending => waiting = true,
            }
        }
        if waiting {
            std::task::Poll::Pending
        } else {
            std::task::Poll::Ready(())
        }
    })
    .await;
    outputs.into_iter().flatten().collect()
}

/// Ready when the search API answers (and, the first time, says which one the store has).
#[async_trait]
impl Health for Catalog {
    async fn ready(&self) -> Result<(), PlatformError> {
        if self.stack.known().is_some() {
            self.search(&SearchRequest {
                query: None,
                filters: Default::default(),
                context: Default::default(),
                upstream_cursor: None,
                limit: 1,
            })
            .await
            .map(|_| ())
        } else {
            self.stack.get(&self.api).await.map(|_| ())
        }
    }

    fn describe(&self) -> Option<String> {
        self.stack.known().map(|stack| stack.describe().to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_are_strict_and_totals_come_from_resources() {
        assert!(matches!(parse_cursor("2.10"), Ok((2, 10))));
        for bad in ["", "2", "2.0", "2.51", "x.10", "-2.10"] {
            assert!(parse_cursor(bad).is_err(), "{bad}");
        }
        assert_eq!(legacy_total(Some("0-49/1234")), Some(1234));
        assert_eq!(legacy_total(None), None);
    }
}
