//! search, resolve and product over the Storefront API.
//!
//! Round trips:
//! - search: one `search` (with words, or "*" for a browse by one Shopify category) or
//!   `products` (other browses) call per page.
//! - resolve (lookup and cart lines): ONE `nodes(ids:)` call for every product gid, variant
//!   gid and numeric id of the batch (a numeric id is asked as both gids), plus, in parallel,
//!   ONE `search` call for all handles and SKUs together (`"a" OR "b"`, 250 variants per hit),
//!   whose hits are then matched exactly on `handle` / `variant.sku`. Two requests in one round
//!   for a batch of 50 (a SKU beyond the first 250 variants of a hit no found id explains
//!   costs extra `product.variants` pages for that hit).
//! - product: one `nodes` call with 250 variants (a handle or SKU first costs the `search`
//!   call), then `product.variants` pages of 250 until every variant is loaded.
//!
//! The buyer's country and language are checked against Shopify's enums before any call
//! (`market`).

use std::sync::Arc;

use std::collections::HashSet;

use iso_currency::Currency;

use super::client::Storefront;
use super::ids::{CatalogId, gid_number, parse_catalog_id, product_gid, variant_gid};
use super::mapping::{self, RawProduct, RawVariant, RawVariantPage, enum_name};
use super::market::{self, Market};
use super::wire::{self, BrowseProducts, Nodes, ProductVariants, SearchProducts};
use crate::model::{
    BuyerContext, PriceBounds, Product, ProductHit, Resolution, Resolved, SearchPage, SearchRequest,
};
use crate::money::Money;
use crate::platform::catalog::CatalogPort;
use crate::platform::port::Health;
use crate::platform::port::PlatformError;
use crate::platform::upstream::CallKind;
use async_trait::async_trait;

/// Shopify caps a product at 2,048 variants; this bounds the pagination loop with room to spare.
const MAX_VARIANT_PAGES: usize = 16;
/// Variants per product in a listing page (the featured one is what a listing shows).
const LISTING_VARIANTS: i64 = 50;
/// Variants per product when a handle or SKU is looked up: the schema's maximum page, so a SKU
/// is found in the one search round unless its product has more variants than that.
const LOOKUP_VARIANTS: i64 = 250;
/// Search hits whose remaining variants are loaded to find a SKU missing from their first page.
const MAX_SKU_EXPANSIONS: usize = 3;

/// `aa-1-13`: a Shopify Standard Product Taxonomy key.
fn is_taxonomy_key(value: &str) -> bool {
    let mut parts = value.split('-');
    parts
        .next()
        .is_some_and(|head| head.len() == 2 && head.bytes().all(|byte| byte.is_ascii_lowercase()))
        && parts.all(|part| {
            !part.is_empty() && part.len() <= 6 && part.bytes().all(|byte| byte.is_ascii_digit())
        })
}

/// Awaits `future` when there is one (a fixed `try_join!` over a variable number of requests).
async fn optional<T, E>(
    future: Option<impl std::future::Future<Output = Result<T, E>>>,
) -> Result<Option<T>, E> {
    match future {
        Some(future) => future.await.map(Some),
        None => Ok(None),
    }
}

/// A phrase term of Shopify's search syntax: inside double quotes only `"` and `\\` are special,
/// so a SKU with spaces, colons, parentheses or non-ASCII letters stays one literal term and
/// can never become an operator.
fn quoted(value: &str) -> String {
    let mut out = String::with_capacity(value.len() + 2);
    out.push('"');
    for character in value.chars() {
        if matches!(character, '"' | '\\') {
            out.push('\\');
        }
        out.push(character);
    }
    out.push('"');
    out
}

pub struct Catalog {
    pub client: Arc<Storefront>,
    pub currency: Currency,
    pub default_country: Option<String>,
    pub default_language: Option<String>,
}

/// What a raw node answered for: the product and, when a variant was named, its gid.
#[derive(Clone)]
struct Found {
    product: RawProduct,
    variant: Option<String>,
}

impl Catalog {
    /// Checked before any request: Shopify refuses a whole operation over a bad enum value.
    pub fn market(&self, context: &BuyerContext) -> Result<Market, PlatformError> {
        market::market(
            "$.catalog",
            context.country.as_deref(),
            context.language.as_deref(),
            self.default_country.as_deref(),
            self.default_language.as_deref(),
        )
    }

    fn map(&self, raw: &RawProduct) -> Result<Product, PlatformError> {
        mapping::product(raw, self.currency)
    }

    /// Store-currency minor units as the decimal `Float` Shopify's price filter takes. The
    /// decimal text is exact and the shortest float that prints as that text is what is sent.
    fn major(&self, minor: i64) -> Option<f64> {
        Money::new(minor, self.currency)
            .to_major_string()
            .parse()
            .ok()
    }

    /// `products(query:)` has no productFilters; its search syntax filters on variant prices.
    /// The bounds are integers formatted here, never agent text.
    fn price_query(&self, bounds: &PriceBounds) -> Option<String> {
        let format = |minor: i64| Money::new(minor, self.currency).to_major_string();
        let mut terms = Vec::new();
        if let Some(min) = bounds.min {
            terms.push(format!("variants.price:>={}", format(min)));
        }
        if let Some(max) = bounds.max {
            terms.push(format!("variants.price:<={}", format(max)));
        }
        (!terms.is_empty()).then(|| terms.join(" AND "))
    }

    async fn nodes(&self, gids: Vec<String>, market: &Market) -> Result<Vec<Found>, PlatformError> {
        if gids.is_empty() {
            return Ok(Vec::new());
        }
        let data = self
            .client
            .run::<Nodes>(
                wire::nodes::Variables {
                    ids: gids,
                    country: market.country.clone().map(wire::nodes::CountryCode::Other),
                    language: market
                        .language
                        .clone()
                        .map(wire::nodes::LanguageCode::Other),
                },
                CallKind::Read,
            )
            .await?;
        Ok(data
            .nodes
            .into_iter()
            .flatten()
            .map(|node| match node {
                wire::nodes::NodesNodes::Product(product) => Found {
                    product: RawProduct::nodes(product.product_fields, product.variants),
                    variant: None,
                },
                wire::nodes::NodesNodes::ProductVariant(node) => {
                    let variant: RawVariant = node.variant_fields.into();
                    let mut product =
                        RawProduct::nodes(node.product.product_fields, node.product.variants);
                    // The named variant may lie beyond the first page of the product's variants.
                    if !product
                        .variants
                        .variants
                        .iter()
                        .any(|known| known.id == variant.id)
                    {
                        product.variants.variants.push(variant.clone());
                    }
                    Found {
                        product,
                        variant: Some(variant.id),
                    }
                }
            })
            .collect())
    }

    /// Handles and SKUs: one `search` whose hits are matched exactly (search is fuzzy).
    async fn tokens(
        &self,
        tokens: &[String],
        market: &Market,
    ) -> Result<Vec<RawProduct>, PlatformError> {
        if tokens.is_empty() {
            return Ok(Vec::new());
        }
        let query = tokens
            .iter()
            .map(|token| quoted(token))
            .collect::<Vec<_>>()
            .join(" OR ");
        let first = i64::try_from(tokens.len().saturating_mul(5).clamp(10, 250)).unwrap_or(250);
        let data = self
            .client
            .run::<SearchProducts>(
                wire::search_products::Variables {
                    query,
                    first,
                    after: None,
                    filters: None,
                    variants: LOOKUP_VARIANTS,
                    country: market
                        .country
                        .clone()
                        .map(wire::search_products::CountryCode::Other),
                    language: market
                        .language
                        .clone()
                        .map(wire::search_products::LanguageCode::Other),
                },
                CallKind::Read,
            )
            .await?;
        let mut products: Vec<RawProduct> = data
            .search
            .nodes
            .into_iter()
            .map(|node| match node {
                wire::search_products::SearchProductsSearchNodes::Product(product) => {
                    RawProduct::search_products(product.product_fields, product.variants)
                }
            })
            .collect();
        // A SKU may name a variant beyond the first page (250) of a large product. Only then,
        // and only for hits that no found token explains (a hit whose handle or a loaded SKU
        // matched was found for that token), are the rest loaded, all at once: an ordinary
        // batch, unknown ids included, stays at one request.
        let names = |product: &RawProduct, token: &String| {
            &product.handle == token
                || product
                    .variants
                    .variants
                    .iter()
                    .any(|variant| variant.sku.as_deref() == Some(token.as_str()))
        };
        let missing = tokens
            .iter()
            .any(|token| !products.iter().any(|product| names(product, token)));
        if missing {
            let unexplained: Vec<usize> = products
                .iter()
                .enumerate()
                .filter(|(_, product)| {
                    product.variants.next.is_some()
                        && !tokens.iter().any(|token| names(product, token))
                })
                .map(|(index, _)| index)
                .take(MAX_SKU_EXPANSIONS)
                .collect();
            let mut pages = unexplained.iter().map(|index| {
                let product = &products[*index];
                self.all_variants(&product.id, product.variants.clone(), market)
            });
            // MAX_SKU_EXPANSIONS (3) at once.
            let (first, second, third) = tokio::try_join!(
                optional(pages.next()),
                optional(pages.next()),
                optional(pages.next())
            )?;
            let loaded = [first, second, third].into_iter().flatten();
            for (index, variants) in unexplained.into_iter().zip(loaded) {
                products[index].variants = RawVariantPage {
                    variants,
                    next: None,
                };
            }
        }
        Ok(products)
    }

    /// Every input this store knows, with the raw product it names.
    async fn find(
        &self,
        ids: &[String],
        market: &Market,
    ) -> Result<Vec<(String, Found)>, PlatformError> {
        let mut gids: Vec<String> = Vec::new();
        let mut tokens: Vec<String> = Vec::new();
        let mut parsed: Vec<(String, CatalogId)> = Vec::new();
        let mut push = |gid: String| {
            if !gids.contains(&gid) {
                gids.push(gid);
            }
        };
        for input in ids {
            let Some(id) = parse_catalog_id(input) else {
                continue;
            };
            match &id {
                CatalogId::Product(number) => push(product_gid(*number)),
                CatalogId::Variant(number) => push(variant_gid(*number)),
                CatalogId::Numeric(number) => {
                    push(product_gid(*number));
                    push(variant_gid(*number));
                }
                CatalogId::Token(token) => {
                    if !tokens.contains(token) {
                        tokens.push(token.clone());
                    }
                }
            }
            parsed.push((input.clone(), id));
        }
        // Shopify takes at most 250 ids per `nodes` call; the brain's batch limit keeps us far below.
        gids.truncate(250);
        let (nodes, searched) =
            tokio::try_join!(self.nodes(gids, market), self.tokens(&tokens, market))?;

        // The node fetched as product `number` (not as one of its variants), or as variant.
        let as_product = |number: u64| {
            nodes.iter().find(|found| {
                found.variant.is_none() && gid_number(&found.product.id) == Some(number)
            })
        };
        let as_variant = |number: u64| {
            nodes.iter().find(|found| {
                found
                    .variant
                    .as_deref()
                    .is_some_and(|variant| gid_number(variant) == Some(number))
            })
        };
        let mut out = Vec::new();
        for (input, id) in parsed {
            let hit = match &id {
                CatalogId::Product(number) => as_product(*number).map(|found| Found {
                    product: found.product.clone(),
                    variant: None,
                }),
                CatalogId::Variant(number) => as_variant(*number).cloned(),
                // A product wins over a variant with the same number.
                CatalogId::Numeric(number) => {
                    as_product(*number).or_else(|| as_variant(*number)).cloned()
                }
                CatalogId::Token(token) => {
                    // A handle names one product; a SKU may be shared by several variants,
                    // and every one of them is an answer.
                    let by_handle = searched
                        .iter()
                        .find(|product| &product.handle == token)
                        .map(|product| Found {
                            product: product.clone(),
                            variant: None,
                        });
                    let found: Vec<Found> = match by_handle {
                        Some(found) => vec![found],
                        None => searched
                            .iter()
                            .flat_map(|product| {
                                product
                                    .variants
                                    .variants
                                    .iter()
                                    .filter(|variant| {
                                        variant.sku.as_deref() == Some(token.as_str())
                                    })
                                    .map(|variant| Found {
                                        product: product.clone(),
                                        variant: Some(variant.id.clone()),
                                    })
                            })
                            .collect(),
                    };
                    out.extend(found.into_iter().map(|found| (input.clone(), found)));
                    continue;
                }
            };
            if let Some(found) = hit {
                out.push((input, found));
            }
        }
        Ok(out)
    }

    /// Loads the variants after `page` until there are no more.
    async fn all_variants(
        &self,
        product_id: &str,
        mut page: RawVariantPage,
        market: &Market,
    ) -> Result<Vec<RawVariant>, PlatformError> {
        let mut variants = std::mem::take(&mut page.variants);
        let mut next = page.next;
        let mut pages = 0;
        while let Some(after) = next.take() {
            pages += 1;
            if pages > MAX_VARIANT_PAGES {
                return Err(PlatformError::BadResponse(
                    "product variants never stop paginating".to_owned(),
                ));
            }
            let data = self
                .client
                .run::<ProductVariants>(
                    wire::product_variants::Variables {
                        id: product_id.to_owned(),
                        after: Some(after),
                        country: market
                            .country
                            .clone()
                            .map(wire::product_variants::CountryCode::Other),
                        language: market
                            .language
                            .clone()
                            .map(wire::product_variants::LanguageCode::Other),
                    },
                    CallKind::Read,
                )
                .await?;
            let Some(product) = data.product else {
                // Deleted while we paginated: what we have is all there is.
                break;
            };
            let page: RawVariantPage = product.variants.into();
            variants.extend(page.variants);
            next = page.next;
        }
        Ok(variants)
    }
}

#[async_trait]
impl CatalogPort for Catalog {
    async fn search(&self, request: &SearchRequest) -> Result<SearchPage, PlatformError> {
        let market = self.market(&request.context)?;
        let first = i64::from(request.limit.clamp(1, 250));
        let price = request.filters.price.as_ref();
        // One Shopify taxonomy category is narrowed by Shopify itself (its filter also admits
        // subcategories; the brain's post-filter still decides). Several values stay with the
        // brain: how Shopify combines same-type filters is not documented, and a wrong AND
        // would hide products. `products` has no category filter, so a browse by category goes
        // through `search` with "*" (Shopify's match-everything query): otherwise it would walk
        // every product of the shop page by page, most pages empty after the post-filter.
        let category = match request.filters.categories.as_slice() {
            [value] if is_taxonomy_key(value) => Some(value),
            _ => None,
        };
        let words = match (&request.query, category) {
            (Some(query), _) => Some(query.clone()),
            (None, Some(_)) => Some("*".to_owned()),
            (None, None) => None,
        };
        let (raws, next, total) = match words {
            Some(query) => {
                let mut filters = Vec::new();
                if let Some(bounds) = price {
                    filters.push(wire::search_products::ProductFilter {
                        available: None,
                        category: None,
                        price: Some(wire::search_products::PriceRangeFilter {
                            min: bounds.min.and_then(|min| self.major(min)),
                            max: bounds.max.and_then(|max| self.major(max)),
                        }),
                    });
                }
                if let Some(value) = category {
                    filters.push(wire::search_products::ProductFilter {
                        available: None,
                        price: None,
                        category: Some(wire::search_products::CategoryFilter {
                            id: format!("gid://shopify/TaxonomyCategory/{value}"),
                        }),
                    });
                }
                let filters = (!filters.is_empty()).then_some(filters);
                let data = self
                    .client
                    .run::<SearchProducts>(
                        wire::search_products::Variables {
                            query,
                            first,
                            after: request.upstream_cursor.clone(),
                            filters,
                            variants: LISTING_VARIANTS,
                            country: market
                                .country
                                .map(wire::search_products::CountryCode::Other),
                            language: market
                                .language
                                .map(wire::search_products::LanguageCode::Other),
                        },
                        CallKind::Read,
                    )
                    .await?;
                let page = data.search;
                let raws: Vec<RawProduct> = page
                    .nodes
                    .into_iter()
                    .map(|node| match node {
                        wire::search_products::SearchProductsSearchNodes::Product(product) => {
                            RawProduct::search_products(product.product_fields, product.variants)
                        }
                    })
                    .collect();
                let next = page
                    .page_info
                    .end_cursor
                    .filter(|_| page.page_info.has_next_page);
                (raws, next, u64::try_from(page.total_count).ok())
            }
            None => {
                let data = self
                    .client
                    .run::<BrowseProducts>(
                        wire::browse_products::Variables {
                            first,
                            after: request.upstream_cursor.clone(),
                            query: price.and_then(|bounds| self.price_query(bounds)),
                            country: market
                                .country
                                .map(wire::browse_products::CountryCode::Other),
                            language: market
                                .language
                                .map(wire::browse_products::LanguageCode::Other),
                        },
                        CallKind::Read,
                    )
                    .await?;
                let page = data.products;
                let raws = page
                    .nodes
                    .into_iter()
                    .map(|node| RawProduct::browse_products(node.product_fields, node.variants))
                    .collect();
                let next = page
                    .page_info
                    .end_cursor
                    .filter(|_| page.page_info.has_next_page);
                (raws, next, None)
            }
        };
        let products = raws
            .iter()
            .map(|raw| self.map(raw).map(Arc::new))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(SearchPage {
            products,
            next_cursor: next,
            total_count: total,
        })
    }

    async fn resolve(
        &self,
        ids: &[String],
        context: &BuyerContext,
    ) -> Result<Vec<Resolved>, PlatformError> {
        let market = self.market(context)?;
        self.find(ids, &market)
            .await?
            .into_iter()
            .map(|(input, found)| {
                Ok(Resolved {
                    input,
                    resolution: match found.variant {
                        Some(variant) => Resolution::Variant(variant),
                        None => Resolution::Product,
                    },
                    product: Arc::new(self.map(&found.product)?),
                })
            })
            .collect()
    }

    async fn product(
        &self,
        id: &str,
        context: &BuyerContext,
    ) -> Result<Option<ProductHit>, PlatformError> {
        let market = self.market(context)?;
        let Some((_, found)) = self
            .find(&[id.to_owned()], &market)
            .await?
            .into_iter()
            .next()
        else {
            return Ok(None);
        };
        let mut raw = found.product;
        let first = std::mem::take(&mut raw.variants);
        // The variant a variant-node answer appended may also come in a later page.
        let variants = self.all_variants(&raw.id, first, &market).await?;
        let mut seen = HashSet::new();
        raw.variants.variants = variants
            .into_iter()
            .filter(|variant| seen.insert(variant.id.clone()))
            .collect();
        Ok(Some(ProductHit {
            product: Arc::new(self.map(&raw)?),
            variant_id: found.variant,
        }))
    }
}

/// The shop's name, home page and currency, read once at start-up when not configured.
pub async fn shop_info(client: &Storefront) -> Result<(String, String, Currency), PlatformError> {
    let data = client
        .run::<wire::ShopInfo>(wire::shop_info::Variables, CallKind::Read)
        .await?;
    let code = enum_name(&data.shop.payment_settings.currency_code);
    let currency = crate::money::parse_currency(&code)
        .map_err(|error| PlatformError::BadResponse(error.to_string()))?;
    Ok((data.shop.name, data.shop.primary_domain.url, currency))
}

/// Ready when the shop's own record reads.
#[async_trait]
impl Health for Catalog {
    async fn ready(&self) -> Result<(), PlatformError> {
        shop_info(&self.client).await.map(|_| ())
    }
}
