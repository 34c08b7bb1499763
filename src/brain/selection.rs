//! get_product's interactive narrowing: effective selections (relaxation by preferences),
//! the variant subset, and `exists`/`available` per option value. Pure functions over the
//! model, so every platform gets identical answers.

use super::untrusted;
use crate::model::{OptionChoice, Product, Variant};

/// What the agent asked for.
#[derive(Debug, Clone, Default)]
pub struct SelectionRequest {
    pub selected: Vec<OptionChoice>,
    pub preferences: Vec<String>,
    /// Set when the looked-up id was a variant id: it wins over `selected`.
    pub variant_id: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValueSignal<'p> {
    pub label: &'p str,
    pub exists: bool,
    pub available: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OptionSignals<'p> {
    pub name: &'p str,
    pub values: Vec<ValueSignal<'p>>,
}

#[derive(Debug, Clone)]
pub struct Selection<'p> {
    /// The effective selections, in the product's option order.
    pub selected: Vec<OptionChoice>,
    /// Variants matching `selected`, featured first.
    pub variants: Vec<&'p Variant>,
    pub options: Vec<OptionSignals<'p>>,
}

/// One option axis of a product, borrowed from it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Axis<'p> {
    pub name: &'p str,
    /// Values in the merchant's display order.
    pub values: Vec<&'p str>,
}

/// The option axes of a product: as declared, or derived from its variants when the upstream
/// declares none.
pub fn option_axes(product: &Product) -> Vec<Axis<'_>> {
    if !product.options.is_empty() {
        return product
            .options
            .iter()
            .map(|option| Axis {
                name: &option.name,
                values: option.values.iter().map(String::as_str).collect(),
            })
            .collect();
    }
    let mut axes: Vec<Axis<'_>> = Vec::new();
    for choice in product.variants.iter().flat_map(|variant| &variant.options) {
        match axes.iter_mut().find(|axis| axis.name == choice.name) {
            Some(axis) if !axis.values.contains(&choice.label.as_str()) => {
                axis.values.push(&choice.label)
            }
            Some(_) => {}
            None => axes.push(Axis {
                name: &choice.name,
                values: vec![&choice.label],
            }),
        }
    }
    axes
}

fn matches_all<'c>(
    variant: &Variant,
    constraints: impl IntoIterator<Item = &'c OptionChoice>,
) -> bool {
    constraints
        .into_iter()
        .all(|want| variant.label_of(&want.name) == Some(want.label.as_str()))
}

/// The variant a listing shows first: the merchant's featured one if it is in `pool` and
/// purchasable, else the first purchasable, else the first.
pub fn featured<'p>(product: &Product, pool: &[&'p Variant]) -> Option<&'p Variant> {
    let merchant_pick = product
        .featured_variant
        .as_deref()
        .and_then(|id| pool.iter().find(|variant| variant.id == id))
        .filter(|variant| variant.available);
    merchant_pick
        .or_else(|| pool.iter().find(|variant| variant.available))
        .or_else(|| pool.first())
        .copied()
}

/// Whether the agent's spelling names the merchant's: case-insensitively, and as the agent
/// saw it (rendered through `untrusted`, which may have dropped hidden characters).
fn same_text(merchant: &str, agent: &str) -> bool {
    let agent = agent.trim();
    merchant.eq_ignore_ascii_case(agent)
        || untrusted::title(merchant).eq_ignore_ascii_case(&untrusted::title(agent))
}

/// Canonicalises the agent's selections against the product's axes: names and labels are
/// matched case-insensitively and reported in the merchant's spelling; the first selection
/// of an axis wins; selections of axes the product does not have are kept so relaxation
/// drops them (they can never match).
fn canonical_selections(axes: &[Axis<'_>], selected: &[OptionChoice]) -> Vec<OptionChoice> {
    let mut out: Vec<OptionChoice> = Vec::new();
    for choice in selected {
        let axis = axes.iter().find(|axis| same_text(axis.name, &choice.name));
        let canonical = match axis {
            Some(axis) => OptionChoice {
                name: axis.name.to_owned(),
                label: axis
                    .values
                    .iter()
                    .find(|value| same_text(value, &choice.label))
                    .map_or_else(|| choice.label.clone(), |value| (*value).to_owned()),
            },
            None => choice.clone(),
        };
        if !out.iter().any(|seen| seen.name == canonical.name) {
            out.push(canonical);
        }
    }
    out
}

/// The order in which selections are given up: those not named in `preferences` first (last
/// selected first), then the named ones from the end of `preferences`.
fn drop_order(selected: &[OptionChoice], preferences: &[String]) -> Vec<String> {
    let rank = |name: &str| {
        preferences
            .iter()
            .position(|preferred| preferred.trim().eq_ignore_ascii_case(name))
    };
    let mut unnamed: Vec<String> = selected
        .iter()
        .filter(|choice| rank(&choice.name).is_none())
        .map(|choice| choice.name.clone())
        .collect();
    unnamed.reverse();
    let mut named: Vec<(usize, String)> = selected
        .iter()
        .filter_map(|choice| rank(&choice.name).map(|index| (index, choice.name.clone())))
        .collect();
    named.sort_by_key(|(rank, _)| std::cmp::Reverse(*rank));
    unnamed
        .into_iter()
        .chain(named.into_iter().map(|(_, name)| name))
        .collect()
}

/// Relaxes `selected` until some variant in `pool` has all of them.
fn relax(
    pool: &[&Variant],
    mut selected: Vec<OptionChoice>,
    preferences: &[String],
) -> Vec<OptionChoice> {
    let order = drop_order(&selected, preferences);
    let mut order = order.into_iter();
    while !pool.iter().any(|variant| matches_all(variant, &selected)) {
        match order.next() {
            Some(name) => selected.retain(|choice| choice.name != name),
            None => {
                selected.clear();
                break;
            }
        }
    }
    selected
}

fn signals<'p>(
    axes: &[Axis<'p>],
    pool: &[&Variant],
    selected: &[OptionChoice],
) -> Vec<OptionSignals<'p>> {
    axes.iter()
        .map(|axis| {
            let others: Vec<&OptionChoice> = selected
                .iter()
                .filter(|choice| choice.name != axis.name)
                .collect();
            let values = axis
                .values
                .iter()
                .map(|&label| {
                    let mut exists = false;
                    let mut available = false;
                    for variant in pool {
                        if variant.label_of(axis.name) == Some(label)
                            && matches_all(variant, others.iter().copied())
                        {
                            exists = true;
                            available |= variant.available;
                            if available {
                                break;
                            }
                        }
                    }
                    ValueSignal {
                        label,
                        exists,
                        available,
                    }
                })
                .collect();
            OptionSignals {
                name: axis.name,
                values,
            }
        })
        .collect()
}

/// Computes the whole get_product state over `pool` (the product's variants that pass the
/// request filters). Returns `None` when `pool` is empty.
pub fn select<'p>(
    product: &'p Product,
    pool: &[&'p Variant],
    request: &SelectionRequest,
) -> Option<Selection<'p>> {
    if pool.is_empty() {
        return None;
    }
    let axes = option_axes(product);
    let pinned = request
        .variant_id
        .as_deref()
        .and_then(|id| pool.iter().find(|variant| variant.id == id).copied());
    let selected = match pinned {
        Some(variant) => variant.options.clone(),
        // CAT-033: without selections, the featured variant's are the default ones, so a
        // product with options always says which combination its answer describes.
        None if request.selected.is_empty() => featured(product, pool)
            .map(|variant| variant.options.clone())
            .unwrap_or_default(),
        None => relax(
            pool,
            canonical_selections(&axes, &request.selected),
            &request.preferences,
        ),
    };
    let selected: Vec<OptionChoice> = axes
        .iter()
        .filter_map(|axis| selected.iter().find(|choice| choice.name == axis.name))
        .cloned()
        .collect();
    let matching: Vec<&'p Variant> = pool
        .iter()
        .filter(|variant| matches_all(variant, &selected))
        .copied()
        .collect();
    let lead = pinned.or_else(|| featured(product, &matching));
    let mut variants: Vec<&'p Variant> = Vec::with_capacity(matching.len());
    if let Some(lead) = lead {
        variants.push(lead);
    }
    variants.extend(
        matching
            .iter()
            .filter(|variant| lead.is_none_or(|lead| lead.id != variant.id))
            .copied(),
    );
    Some(Selection {
        options: signals(&axes, pool, &selected),
        selected,
        variants,
    })
}
