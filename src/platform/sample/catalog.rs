//! The sample store's catalog: scored search over its own index, with offset cursors.

use async_trait::async_trait;

use super::{SampleStore, Target, parse_offset, search};
use crate::model::predicates::product_passes;
use crate::model::{BuyerContext, ProductHit, Resolution, Resolved, SearchPage, SearchRequest};
use crate::platform::catalog::CatalogPort;
use crate::platform::port::PlatformError;

#[async_trait]
impl CatalogPort for SampleStore {
    async fn search(&self, request: &SearchRequest) -> Result<SearchPage, PlatformError> {
        let offset = request
            .upstream_cursor
            .as_deref()
            .map(parse_offset)
            .transpose()?
            .unwrap_or(0);
        let words = request
            .query
            .as_deref()
            .map(search::query_words)
            .unwrap_or_default();
        let mut hits: Vec<(u32, usize)> = self
            .products
            .iter()
            .zip(&self.indexes)
            .enumerate()
            .filter(|(_, (product, _))| product_passes(product, &request.filters))
            .filter_map(|(position, (_, index))| index.score(&words).map(|score| (score, position)))
            .collect();
        // Best score first; the catalog's own order breaks ties, so pages are stable.
        hits.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        let total = hits.len();
        let limit = request.limit as usize;
        let products = hits
            .iter()
            .skip(offset)
            .take(limit)
            .map(|(_, position)| self.products[*position].clone())
            .collect();
        let next = offset.saturating_add(limit);
        Ok(SearchPage {
            products,
            next_cursor: (next < total).then(|| next.to_string()),
            total_count: Some(total as u64),
        })
    }

    async fn resolve(
        &self,
        ids: &[String],
        _context: &BuyerContext,
    ) -> Result<Vec<Resolved>, PlatformError> {
        Ok(ids
            .iter()
            .filter_map(|id| {
                let (index, resolution) = match self.target(id)? {
                    Target::Product(index) => (index, Resolution::Product),
                    Target::Variant(index, variant) => (index, Resolution::Variant(variant)),
                };
                Some(Resolved {
                    input: id.clone(),
                    resolution,
                    product: self.products[index].clone(),
                })
            })
            .collect())
    }

    async fn product(
        &self,
        id: &str,
        _context: &BuyerContext,
    ) -> Result<Option<ProductHit>, PlatformError> {
        Ok(self.target(id).map(|target| match target {
            Target::Product(index) => ProductHit {
                product: self.products[index].clone(),
                variant_id: None,
            },
            Target::Variant(index, variant) => ProductHit {
                product: self.products[index].clone(),
                variant_id: Some(variant),
            },
        }))
    }
}
