//! The embedded sample store: a real in-process upstream (catalog search with its own offset
//! cursors, lookups, carts with stock and expiry) so `demo` and the protocol tests exercise
//! the same brain as Shopify and WooCommerce.

mod cart;
mod catalog;
pub mod checkout;
mod data;
mod search;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde::Deserialize;

use self::cart::{CartBook, LineSpec};
use self::data::LoadedStore;
use self::search::Index;
use crate::model::{CartDraft, LineProblem, LineProblemKind, Product};
use crate::platform::factory::{BuildContext, PlatformFactory};
use crate::platform::port::Health;
use crate::platform::port::{
    Capabilities, LineJudge, Platform, PlatformError, Pushdown, SharedPlatform, StoreInfo,
};
use crate::settings::{ConfigProblem, store_settings};

pub const FACTORY: PlatformFactory = PlatformFactory {
    name: "sample",
    check,
    // Reads no store over the network: built as soon as asked.
    build: |store, context| Box::pin(std::future::ready(build(store, context))),
    reserved_checkout_params: &[],
    address_keys: &[],
    schema: <SampleSettings as schemars::JsonSchema>::json_schema,
};

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
struct SampleSettings {
    /// A store file of the same format as the embedded `store.json`; embedded when absent.
    data: Option<PathBuf>,
    /// How long an untouched cart lives.
    cart_ttl_secs: u64,
    /// Live carts at most; past it `create_cart` is refused until the soonest one expires.
    max_carts: usize,
    /// Check out as a Brazilian store does: BRL orders need the buyer's CPF or CNPJ
    /// (`buyer.taxpayer_id`) and Brazilian addresses their house number (`demo` turns it on).
    brazilian_checkout: bool,
}

impl Default for SampleSettings {
    fn default() -> Self {
        Self {
            data: None,
            cart_ttl_secs: 24 * 60 * 60,
            max_carts: cart::MAX_CARTS,
            brazilian_checkout: false,
        }
    }
}

fn settings(store: &toml::Table) -> Result<(SampleSettings, LoadedStore), Vec<ConfigProblem>> {
    let mut problems = Vec::new();
    let Some(settings) = store_settings::<SampleSettings>(store, &mut problems) else {
        return Err(problems);
    };
    if settings.cart_ttl_secs == 0 {
        problems.push(ConfigProblem::new(
            "store.cart_ttl_secs",
            "must be at least 1",
        ));
    }
    if !(1..=10_000_000).contains(&settings.max_carts) {
        problems.push(ConfigProblem::new(
            "store.max_carts",
            "must be between 1 and 10000000",
        ));
    }
    let text = match &settings.data {
        Some(path) => match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(error) => {
                problems.push(ConfigProblem::new(
                    "store.data",
                    format!("cannot read {}: {error}", path.display()),
                ));
                return Err(problems);
            }
        },
        None => data::EMBEDDED.to_owned(),
    };
    match data::load(&text) {
        Ok(loaded) if problems.is_empty() => Ok((settings, loaded)),
        Ok(_) => Err(problems),
        Err(error) => {
            problems.push(ConfigProblem::new("store.data", error));
            Err(problems)
        }
    }
}

fn check(store: &toml::Table) -> Vec<ConfigProblem> {
    settings(store).err().unwrap_or_default()
}

fn build(
    store: &toml::Table,
    _context: &BuildContext<'_>,
) -> Result<SharedPlatform, Vec<ConfigProblem>> {
    let (settings, loaded) = settings(store)?;
    let store = Arc::new(SampleStore::new(
        loaded,
        Duration::from_secs(settings.cart_ttl_secs),
        settings.max_carts,
    ));
    let checkout = Arc::new(
        checkout::SampleCheckout::new(store.clone()).brazilian(settings.brazilian_checkout),
    );
    Ok(Arc::new(
        Platform::new(store.info.clone(), store.clone(), store.clone(), store)
            .with_checkout(checkout),
    ))
}

/// The sample store itself, for the checkout port to stand on the same carts and catalog
/// (`checkout::SampleCheckout::new`).
pub fn open(store: &toml::Table) -> Result<Arc<SampleStore>, Vec<ConfigProblem>> {
    let (settings, loaded) = settings(store)?;
    Ok(Arc::new(SampleStore::new(
        loaded,
        Duration::from_secs(settings.cart_ttl_secs),
        settings.max_carts,
    )))
}

/// Ids of this store are short ASCII tokens; anything else is unknown without a look-up.
fn plausible_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 128
        && id
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'_' | b'-' | b'.'))
}

fn parse_offset(cursor: &str) -> Result<usize, PlatformError> {
    if cursor.is_empty() || cursor.len() > 9 || !cursor.bytes().all(|b| b.is_ascii_digit()) {
        return Err(PlatformError::InvalidInput(
            "the cursor is not valid for this store".to_owned(),
        ));
    }
    cursor
        .parse()
        .map_err(|_| PlatformError::InvalidInput("the cursor is not valid for this store".into()))
}

enum Target {
    Product(usize),
    Variant(usize, String),
}

pub struct SampleStore {
    info: StoreInfo,
    products: Vec<Arc<Product>>,
    indexes: Vec<Index>,
    /// Product ids, variant ids, SKUs and handles → what they name.
    targets: HashMap<String, (usize, Option<String>)>,
    stock: HashMap<String, Option<u32>>,
    carts: CartBook,
}

impl SampleStore {
    fn new(loaded: LoadedStore, cart_ttl: Duration, max_carts: usize) -> Self {
        let mut targets = HashMap::new();
        for (index, product) in loaded.products.iter().enumerate() {
            targets.insert(product.id.clone(), (index, None));
            if let Some(handle) = &product.handle {
                targets.entry(handle.clone()).or_insert((index, None));
            }
            for variant in &product.variants {
                targets.insert(variant.id.clone(), (index, Some(variant.id.clone())));
                if let Some(sku) = &variant.sku {
                    targets
                        .entry(sku.clone())
                        .or_insert((index, Some(variant.id.clone())));
                }
            }
        }
        Self {
            info: StoreInfo {
                platform: "sample",
                name: loaded.name,
                currency: loaded.currency,
                storefront_url: loaded.storefront_url,
                capabilities: Capabilities {
                    search: true,
                    lookup: true,
                    cart: true,
                },
                pushdown: Pushdown {
                    categories: true,
                    price: true,
                },
                cart_lines: LineJudge::Brain,
            },
            indexes: loaded.products.iter().map(Index::new).collect(),
            products: loaded.products.into_iter().map(Arc::new).collect(),
            targets,
            stock: loaded.stock.into_iter().collect(),
            carts: CartBook::new(cart_ttl, max_carts),
        }
    }

    fn target(&self, id: &str) -> Option<Target> {
        if !plausible_id(id) {
            return None;
        }
        let (index, variant) = self.targets.get(id)?;
        Some(match variant {
            Some(variant) => Target::Variant(*index, variant.clone()),
            None => Target::Product(*index),
        })
    }

    /// Prices each requested line from the catalog and applies stock: sold-out lines are
    /// refused, larger quantities than the stock are cut down (as Shopify does).
    fn price_lines(&self, draft: &CartDraft) -> (Vec<LineSpec>, Vec<LineProblem>) {
        let mut specs = Vec::new();
        let mut problems = Vec::new();
        for line in &draft.lines {
            let found = match self.target(&line.item_id) {
                Some(Target::Variant(index, variant_id)) => self.products[index]
                    .variant(&variant_id)
                    .map(|variant| (&self.products[index], variant)),
                _ => None,
            };
            let Some((product, variant)) = found else {
                problems.push(LineProblem {
                    item_id: line.item_id.clone(),
                    kind: LineProblemKind::NotFound,
                    message: format!("Item not found: {}", line.item_id),
                });
                continue;
            };
            let stock = self.stock.get(&variant.id).copied().flatten();
            let quantity = match stock {
                Some(0) => {
                    problems.push(LineProblem {
                        item_id: line.item_id.clone(),
                        kind: LineProblemKind::OutOfStock,
                        message: format!("{} — {} is out of stock", product.title, variant.title),
                    });
                    continue;
                }
                Some(available) if available < line.quantity => {
                    problems.push(LineProblem {
                        item_id: line.item_id.clone(),
                        kind: LineProblemKind::InsufficientStock { available },
                        message: format!(
                            "Only {available} of {} — {} in stock; quantity set to {available}",
                            product.title, variant.title
                        ),
                    });
                    available
                }
                _ => line.quantity,
            };
            let title = if variant.options.is_empty() {
                product.title.clone()
            } else {
                format!("{} — {}", product.title, variant.title)
            };
            specs.push(LineSpec {
                variant_id: variant.id.clone(),
                title,
                unit_price: variant.price.amount,
                quantity,
                image_url: variant
                    .media
                    .first()
                    .or_else(|| product.media.first())
                    .map(|media| media.url.clone()),
            });
        }
        (specs, problems)
    }
}

/// Ready while a new cart would fit.
#[async_trait]
impl Health for SampleStore {
    async fn ready(&self) -> Result<(), PlatformError> {
        self.carts.room().map_err(|full| PlatformError::Full {
            what: "cart store",
            retry_after: full.retry_after,
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn embedded_store_loads_and_is_big_enough() {
        let loaded = data::load(data::EMBEDDED).unwrap();
        assert!(loaded.products.len() >= 30);
        let top_levels: std::collections::HashSet<_> = loaded
            .products
            .iter()
            .map(|product| {
                product.categories[0]
                    .value
                    .split('>')
                    .next()
                    .unwrap()
                    .trim()
                    .to_owned()
            })
            .collect();
        assert!(top_levels.len() >= 5);
    }

    #[test]
    fn ids_with_path_or_query_characters_are_never_looked_up() {
        for id in ["../etc", "a/b", "x?y=1", "a#b", "%2F", "", "a b"] {
            assert!(!plausible_id(id), "{id}");
        }
        assert!(plausible_id("prod_abc123"));
    }
}
