//! search_catalog, lookup_catalog and get_product.

use std::collections::HashMap;

use crate::protocol::answer::Answer;

use super::filters::{build_filters, buyer_context};
use super::selection::{SelectionRequest, featured, select};
use super::{Brain, BrainError, cursor, render};
use crate::model::predicates::{product_in_categories, product_passes, variant_passes};
use crate::model::{Filters, OptionChoice, Product, Resolution, SearchRequest, Variant};
use crate::protocol::catalog::{
    InputOut, LookupResponse, PaginationOut, ProductResponse, SearchResponse,
};
use crate::protocol::envelope::Status;
use crate::protocol::request::{GetProductIn, LookupIn, SearchIn};
use crate::protocol::{Capability, request::FiltersIn};
use crate::protocol::{Message, MessageCode};
use crate::protocol::{Release, Severity};

fn has_filters(filters: Option<&FiltersIn>) -> bool {
    filters.is_some_and(|filters| {
        filters
            .categories
            .iter()
            .any(|value| !value.trim().is_empty())
            || filters
                .price
                .as_ref()
                .is_some_and(|price| price.min.is_some() || price.max.is_some())
    })
}

fn passing<'p>(product: &'p Product, filters: &Filters) -> Vec<&'p Variant> {
    product
        .variants
        .iter()
        .filter(|variant| variant_passes(variant, filters))
        .collect()
}

impl Brain {
    pub async fn search(&self, request: SearchIn, release: Release) -> Result<Answer, BrainError> {
        let store = self.store();
        let query = request
            .query
            .as_deref()
            .map(str::trim)
            .filter(|query| !query.is_empty())
            .map(str::to_owned);
        if query.is_none() && !has_filters(request.filters.as_ref()) {
            return Err(BrainError::invalid(
                "catalog",
                "give a query, filters, or both (filters alone browse the catalog)",
            ));
        }
        let context = buyer_context(&request.context);
        let (filters, messages) = build_filters(
            request.filters.as_ref(),
            &context,
            store.currency,
            "catalog",
        )?;
        let limit = request
            .pagination
            .limit
            .unwrap_or(self.limits.default_page_size)
            .clamp(1, self.limits.max_page_size);

        let price = filters.price.clone().unwrap_or_default();
        let fingerprint = cursor::fingerprint(&[
            query.as_deref().unwrap_or(""),
            &filters.categories.join("\u{1f}"),
            &price.min.map(|min| min.to_string()).unwrap_or_default(),
            &price.max.map(|max| max.to_string()).unwrap_or_default(),
            context.country.as_deref().unwrap_or(""),
            context.language.as_deref().unwrap_or(""),
            context.currency.as_deref().unwrap_or(""),
        ]);
        let upstream_cursor = match request.cursor() {
            Some((token, path)) => Some(
                cursor::decode(token, &fingerprint)
                    .map_err(|error| BrainError::invalid(path, error.to_string()))?,
            ),
            None => None,
        };

        let page = self
            .catalog()
            .search(&SearchRequest {
                query,
                filters: filters.clone(),
                context,
                upstream_cursor,
                limit,
            })
            .await?;

        // Filters the upstream cannot express are applied here; such pages may come back
        // shorter than `limit`, never with a product that does not match.
        let pushdown = store.pushdown;
        let residual = Filters {
            categories: if pushdown.categories {
                Vec::new()
            } else {
                filters.categories.clone()
            },
            price: if pushdown.price {
                None
            } else {
                filters.price.clone()
            },
        };
        let products = page
            .products
            .iter()
            .filter(|product| product_passes(product, &residual))
            .map(|product| {
                let pool = passing(product, &filters);
                let shown = featured(product, &pool)
                    .map(|variant| vec![render::variant(product, variant, None)])
                    .unwrap_or_default();
                render::product(product, shown, &pool, store.currency)
            })
            .filter(|product| !product.variants.is_empty())
            .collect();

        Self::to_json(&SearchResponse {
            ucp: self
                .namespace
                .envelope(release, Capability::CatalogSearch, Status::Success),
            products,
            pagination: PaginationOut {
                has_next_page: page.next_cursor.is_some(),
                cursor: page
                    .next_cursor
                    .as_deref()
                    .map(|next| cursor::encode(next, &fingerprint)),
                total_count: page.total_count,
            },
            messages,
        })
    }

    pub async fn lookup(&self, request: LookupIn, release: Release) -> Result<Answer, BrainError> {
        let store = self.store();
        let max = self.limits.max_lookup_batch as usize;
        if request.ids.len() > max {
            return Err(BrainError::invalid(
                "catalog.ids",
                format!(
                    "{} ids requested; at most {max} per lookup",
                    request.ids.len()
                ),
            ));
        }
        let mut unique: Vec<String> = Vec::with_capacity(request.ids.len());
        for id in &request.ids {
            if !unique.contains(id) {
                unique.push(id.clone());
            }
        }
        let context = buyer_context(&request.context);
        let (filters, mut messages) = build_filters(
            request.filters.as_ref(),
            &context,
            store.currency,
            "catalog",
        )?;
        let resolved = self.catalog().resolve(&unique, &context).await?;

        // Group by product in the order the agent first named it; inside a product, one entry
        // per variant carrying every input that landed on it.
        struct Group<'r> {
            product: &'r Product,
            variants: Vec<(&'r str, Vec<InputOut<'r>>)>,
        }
        let mut groups: Vec<Group<'_>> = Vec::new();
        let mut found: HashMap<&str, bool> = HashMap::new();
        // One input may name several variants (a SKU the store lets two variants share).
        let mut by_input: HashMap<&str, Vec<&crate::model::Resolved>> = HashMap::new();
        for hit in &resolved {
            by_input.entry(hit.input.as_str()).or_default().push(hit);
        }
        for input in &unique {
            let Some(hits) = by_input.get(input.as_str()) else {
                continue;
            };
            found.entry(input.as_str()).or_insert(false);
            for hit in hits {
                if !filters.categories.is_empty()
                    && !product_in_categories(&hit.product, &filters.categories)
                {
                    continue;
                }
                let pool = passing(&hit.product, &filters);
                let (variant, matched) = match &hit.resolution {
                    Resolution::Variant(id) => (
                        pool.iter().find(|variant| &variant.id == id).copied(),
                        "exact",
                    ),
                    Resolution::Product => (featured(&hit.product, &pool), "featured"),
                };
                let Some(variant) = variant else {
                    continue;
                };
                found.insert(input.as_str(), true);
                let index = match groups
                    .iter()
                    .position(|group| group.product.id == hit.product.id)
                {
                    Some(index) => index,
                    None => {
                        groups.push(Group {
                            product: &hit.product,
                            variants: Vec::new(),
                        });
                        groups.len() - 1
                    }
                };
                let group = &mut groups[index];
                let correlation = InputOut { id: input, matched };
                match group.variants.iter_mut().find(|(id, _)| *id == variant.id) {
                    Some((_, inputs)) => inputs.push(correlation),
                    None => group.variants.push((&variant.id, vec![correlation])),
                }
            }
        }

        for input in &unique {
            match found.get(input.as_str()) {
                None => messages.push(Message::info(MessageCode::NotFound, input.clone())),
                Some(false) => messages.push(Message::info(
                    MessageCode::Filtered,
                    format!("{input} does not match the filters"),
                )),
                Some(true) => {}
            }
        }

        let products = groups
            .into_iter()
            .map(|group| {
                let variants = group
                    .variants
                    .into_iter()
                    .filter_map(|(id, inputs)| {
                        group
                            .product
                            .variant(id)
                            .map(|variant| render::variant(group.product, variant, Some(inputs)))
                    })
                    .collect();
                render::product(
                    group.product,
                    variants,
                    &passing(group.product, &filters),
                    store.currency,
                )
            })
            .collect();

        Self::to_json(&LookupResponse {
            ucp: self
                .namespace
                .envelope(release, Capability::CatalogLookup, Status::Success),
            products,
            messages,
        })
    }

    pub async fn get_product(
        &self,
        request: GetProductIn,
        release: Release,
    ) -> Result<Answer, BrainError> {
        let store = self.store();
        let context = buyer_context(&request.context);
        let (filters, messages) = build_filters(
            request.filters.as_ref(),
            &context,
            store.currency,
            "catalog",
        )?;
        let not_found = |reason: &str| {
            self.business_error(
                release,
                Capability::CatalogLookup,
                vec![Message::error(
                    MessageCode::NotFound,
                    format!("Product not found: {}{reason}", request.id),
                    Severity::Unrecoverable,
                )],
                None,
            )
        };
        let Some(hit) = self.catalog().product(&request.id, &context).await? else {
            return not_found("");
        };
        let product = &hit.product;
        let pool = passing(product, &filters);
        let selection_request = SelectionRequest {
            selected: request
                .selected
                .iter()
                .map(|choice| OptionChoice {
                    name: choice.name.clone(),
                    label: choice.label.clone(),
                })
                .collect(),
            preferences: request.preferences.clone(),
            variant_id: hit.variant_id.clone(),
        };
        let Some(selection) = select(product, &pool, &selection_request) else {
            return not_found(" (no variant matches the filters)");
        };
        let variants = selection
            .variants
            .iter()
            .map(|variant| render::variant(product, variant, None))
            .collect();
        let mut out = render::product(product, variants, &pool, store.currency);
        out.options = render::signal_options(&selection.options);
        out.selected = Some(render::selected(&selection.selected));
        Self::to_json(&ProductResponse {
            ucp: self
                .namespace
                .envelope(release, Capability::CatalogLookup, Status::Success),
            product: out,
            messages,
        })
    }
}
