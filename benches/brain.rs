//! Criterion benches of the brain's pure parts: get_product relaxation on a 3-axis product
//! with 1,000 variants, rendering catalog answers to JSON, money conversion, cursor
//! encode/decode. `cargo bench --bench brain`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::hint::black_box;

use bcp_bridge::brain::selection::{SelectionRequest, featured, select};
use bcp_bridge::brain::{cursor, render};
use bcp_bridge::model::{
    Category, Description, Media, OptionChoice, Product, ProductOption, Seller, SellerLink,
    Taxonomy, Variant,
};
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
                    metadata: None,
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

/// A product shaped like a Shopify one: plain and HTML description, images with alt texts,
/// categories, tags, a seller, 2 axes and 20 variants with skus and URLs.
fn storefront_product(index: usize) -> Product {
    let url = format!("https://shop.example/products/runner-{index}");
    let image = |n: usize| Media {
        kind: "image".to_owned(),
        url: format!("https://cdn.shop.example/files/runner-{index}-{n}.jpg?v=1712345678"),
        alt_text: Some(format!("Runner {index}, view {n}")),
    };
    let colors = ["Azul", "Preto", "Branco", "Vermelho", "Cinza"];
    let sizes = ["38", "39", "40", "41"];
    let mut variants = Vec::new();
    for color in colors {
        for size in sizes {
            variants.push(Variant {
                id: format!("gid://shopify/ProductVariant/{index}{}", variants.len()),
                sku: Some(format!("RUN-{index}-{color}-{size}")),
                title: format!("{color} / {size}"),
                description: Some(Description::plain(format!(
                    "Tênis Runner {index} — {color} / {size}"
                ))),
                price: Money::new(29_990, Currency::BRL),
                list_price: Some(Money::new(34_990, Currency::BRL)),
                available: variants.len() % 5 != 0,
                backorder: false,
                options: vec![
                    choice("Cor", color.to_owned()),
                    choice("Tamanho", size.to_owned()),
                ],
                media: vec![image(9)],
                tags: Vec::new(),
                url: Some(format!("{url}?variant={}", variants.len())),
                metadata: None,
            });
        }
    }
    Product {
        id: format!("gid://shopify/Product/{index}"),
        handle: Some(format!("runner-{index}")),
        title: format!("Tênis de Corrida Runner {index} Masculino"),
        description: Description {
            plain: Some(
                "Cabedal em mesh respirável, entressola de EVA e solado de borracha. \
                 Ideal para treinos diários."
                    .to_owned(),
            ),
            html: Some(
                "<p>Cabedal em <strong>mesh respirável</strong>, entressola de EVA e solado de \
                 borracha.</p><ul><li>Peso: 280 g</li><li>Drop: 8 mm</li></ul>"
                    .to_owned(),
            ),
            markdown: None,
        },
        url: Some(url),
        categories: vec![
            Category {
                value: "Calçados > Tênis > Corrida".to_owned(),
                taxonomy: Taxonomy::Merchant,
            },
            Category {
                value: "aa-8-8".to_owned(),
                taxonomy: Taxonomy::Shopify,
            },
        ],
        media: (0..4).map(image).collect(),
        options: vec![
            ProductOption {
                name: "Cor".to_owned(),
                values: colors.map(str::to_owned).to_vec(),
            },
            ProductOption {
                name: "Tamanho".to_owned(),
                values: sizes.map(str::to_owned).to_vec(),
            },
        ],
        variants,
        featured_variant: None,
        price_range: None,
        rating: None,
        tags: vec!["corrida".to_owned(), "lançamento".to_owned()],
        metadata: None,
        seller: Some(Seller {
            name: "Loja Exemplo".to_owned(),
            links: vec![SellerLink {
                kind: "refund_policy".to_owned(),
                url: "https://shop.example/policies/refund-policy".to_owned(),
            }],
        }),
    }
}

/// What search_catalog and get_product do after the upstream answered: model → wire
/// structs → JSON (the envelope aside).
fn rendering(c: &mut Criterion) {
    let page: Vec<Product> = (0..20).map(storefront_product).collect();
    c.bench_function("render search page, 20 products, to JSON", |b| {
        b.iter(|| {
            let products: Vec<_> = black_box(&page)
                .iter()
                .map(|product| {
                    let pool: Vec<&Variant> = product.variants.iter().collect();
                    let shown = featured(product, &pool)
                        .map(|variant| vec![render::variant(product, variant, None)])
                        .unwrap_or_default();
                    render::product(product, shown, &pool, Currency::BRL)
                })
                .collect();
            serde_json::to_vec(&products).unwrap()
        })
    });
    let product = &page[0];
    c.bench_function("render get_product, 20 variants, to JSON", |b| {
        b.iter(|| {
            let product = black_box(product);
            let pool: Vec<&Variant> = product.variants.iter().collect();
            let variants = pool
                .iter()
                .map(|variant| render::variant(product, variant, None))
                .collect();
            let out = render::product(product, variants, &pool, Currency::BRL);
            serde_json::to_vec(&out).unwrap()
        })
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

criterion_group!(benches, relaxation, rendering, money, cursors);
criterion_main!(benches);
