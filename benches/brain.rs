//! Criterion benches of the brain's pure parts: get_product relaxation on a 3-axis product
//! with 1,000 variants, money conversion, cursor encode/decode. `cargo bench --bench brain`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::hint::black_box;

use bcp_bridge::brain::cursor;
use bcp_bridge::brain::selection::{SelectionRequest, select};
use bcp_bridge::model::{Description, OptionChoice, Product, ProductOption, Variant};
use bcp_bridge::money::Money;
use criterion::{Criterion, criterion_group, criterion_main};
use iso_currency::Currency;

const COLORS: usize = 10;
const SIZES: usize = 10;
const MATERIALS: usize = 11;

/// The material missing for (color, size): one per pair, so 10 × 10 × 11 − 100 = 1,000
/// variants, and asking for exactly that triple forces relaxation.
fn hole(color: usize, size: usize) -> usize {
    (color * size) % MATERIALS
}

fn choice(name: &str, label: String) -> OptionChoice {
    OptionChoice {
        name: name.to_owned(),
        label,
    }
}

fn product() -> Product {
    let mut variants = Vec::new();
    for color in 0..COLORS {
        for size in 0..SIZES {
            for material in (0..MATERIALS).filter(|m| *m != hole(color, size)) {
                variants.push(Variant {
                    id: format!("v-{color}-{size}-{material}"),
                    sku: None,
                    title: format!("Color {color} / Size {size} / Material {material}"),
                    description: None,
                    price: Money::new(1000 + material as i64, Currency::BRL),
                    list_price: None,
                    // Every seventh variant is sold out, so `available` has work to do.
                    available: variants.len() % 7 != 0,
                    backorder: false,
                    options: vec![
                        choice("Color", format!("c{color}")),
                        choice("Size", format!("s{size}")),
                        choice("Material", format!("m{material}")),
                    ],
                    media: Vec::new(),
                    tags: Vec::new(),
                    url: None,
                });
            }
        }
    }
    assert_eq!(variants.len(), 1000);
    let axis = |name: &str, prefix: &str, count: usize| ProductOption {
        name: name.to_owned(),
        values: (0..count).map(|i| format!("{prefix}{i}")).collect(),
    };
    Product {
        id: "p".to_owned(),
        handle: None,
        title: "Big product".to_owned(),
        description: Description::plain("1,000 variants"),
        url: None,
        categories: Vec::new(),
        media: Vec::new(),
        options: vec![
            axis("Color", "c", COLORS),
            axis("Size", "s", SIZES),
            axis("Material", "m", MATERIALS),
        ],
        variants,
        featured_variant: None,
        price_range: None,
        rating: None,
        tags: Vec::new(),
        metadata: None,
        seller: None,
    }
}

fn relaxation(c: &mut Criterion) {
    let product = product();
    let pool: Vec<&Variant> = product.variants.iter().collect();
    let (color, size) = (3, 7);
    let relaxed = SelectionRequest {
        selected: vec![
            choice("Color", format!("c{color}")),
            choice("Size", format!("s{size}")),
            choice("Material", format!("m{}", hole(color, size))),
        ],
        preferences: vec!["Color".to_owned(), "Size".to_owned()],
        variant_id: None,
    };
    let selection = select(&product, &pool, &relaxed).unwrap();
    assert_eq!(selection.selected.len(), 2, "the material is dropped");
    c.bench_function("get_product relaxation, 3 axes, 1000 variants", |b| {
        b.iter(|| select(black_box(&product), black_box(&pool), black_box(&relaxed)))
    });
    let exact = SelectionRequest {
        selected: vec![
            choice("Color", "c1".to_owned()),
            choice("Size", "s2".to_owned()),
        ],
        preferences: Vec::new(),
        variant_id: None,
    };
    c.bench_function("get_product selection, no relaxation, 1000 variants", |b| {
        b.iter(|| select(black_box(&product), black_box(&pool), black_box(&exact)))
    });
}

fn money(c: &mut Criterion) {
    c.bench_function(
        "money: decimal string to minor units (BRL, JPY, BHD)",
        |b| {
            b.iter(|| {
                (
                    Money::from_major_str(black_box("1234.50"), Currency::BRL).unwrap(),
                    Money::from_major_str(black_box("1500"), Currency::JPY).unwrap(),
                    Money::from_major_str(black_box("10.3"), Currency::BHD).unwrap(),
                )
            })
        },
    );
    c.bench_function("money: minor units to decimal string", |b| {
        let amount = Money::new(123_450, Currency::BRL);
        b.iter(|| black_box(&amount).to_major_string())
    });
}

fn cursors(c: &mut Criterion) {
    let fingerprint = cursor::fingerprint(&["blue running shoes", "Footwear", "0-10000", "US"]);
    let upstream = "eyJsYXN0X2lkIjo4MTk2NzA1MDM5MjM2LCJsYXN0X3ZhbHVlIjoiODE5NjcwNTAzOTIzNiJ9";
    let encoded = cursor::encode(upstream, &fingerprint);
    assert_eq!(cursor::decode(&encoded, &fingerprint).unwrap(), upstream);
    c.bench_function("cursor encode", |b| {
        b.iter(|| cursor::encode(black_box(upstream), black_box(&fingerprint)))
    });
    c.bench_function("cursor decode", |b| {
        b.iter(|| cursor::decode(black_box(&encoded), black_box(&fingerprint)))
    });
}

criterion_group!(benches, relaxation, money, cursors);
criterion_main!(benches);
