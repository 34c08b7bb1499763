//! The stand-in's catalog: products in the exact shape of VTEX's Intelligent Search v1 example
//! (`fixtures/is-v1-product-search.json`, its first product as the template), and the same
//! products as the legacy `catalog_system/pub` search writes them (axes flattened into
//! top-level SKU keys, absolute links, `resources` header).

use std::collections::HashMap;
use std::str::FromStr;

use axum::http::StatusCode;
use axum::response::Response;
use rust_decimal::Decimal;
use serde_json::{Value, json};

use super::{Inner, json_response};

pub const PAGE: &str = include_str!("fixtures/is-v1-product-search.json");
pub const TREE: &str = include_str!("fixtures/catalog-pub-category-tree.json");

pub const CLOCK: &str = "2000003";
pub const CLOCK_SKU: &str = "2000534";
pub const TEE: &str = "2000010";
/// (sku, Cor, Tamanho): Amarelo/M is sold out.
pub const TEE_SKUS: [(&str, &str, &str); 5] = [
    ("2000601", "Amarelo", "P"),
    ("2000602", "Amarelo", "M"),
    ("2000603", "Azul", "M"),
    ("2000604", "Vermelho", "M"),
    ("2000605", "Vermelho", "G"),
];
pub const MUG_FIRST: u32 = 2000020;
pub const MUG_SKU_FIRST: u32 = 2000701;
pub const MUGS: u32 = 5;
pub const FOUNTAIN_SKU: &str = "2000801";
pub const FOOD: &str = "2000040";
pub const FOOD_SKU: &str = "2000901";
/// Mug prices as VTEX writes them: decimal reais, some of them float traps.
pub const MUG_PRICES: [&str; 5] = ["29.9", "0.1", "1299.90", "19.99", "4.35"];

/// A product of the catalog plus what the stand-in needs to filter it.
pub struct Entry {
    pub product: Value,
    /// Category slug paths, by level, one per category the product is in.
    pub slugs: Vec<Vec<String>>,
}

fn template() -> Value {
    let page: Value = serde_json::from_str(PAGE).unwrap();
    page["products"][0].clone()
}

fn item(template: &Value, sku: &str, name: &str, price: &str, variations: Value) -> Value {
    let mut item = template["items"][0].clone();
    item["itemId"] = json!(sku);
    item["name"] = json!(name);
    item["nameComplete"] = json!(name);
    item["ean"] = json!(format!("789100{sku}"));
    item["referenceId"] = json!([{"Key": "RefId", "Value": format!("REF-{sku}")}]);
    item["variations"] = variations;
    item["images"] = json!([{
        "imageId": sku, "imageLabel": "", "imageTag": "",
        "imageUrl": format!("https://loja.vteximg.com.br/arquivos/ids/{sku}/image.jpg"),
        "imageText": name
    }]);
    let offer = &mut item["sellers"][0]["commertialOffer"];
    // Raw JSON numbers, as VTEX sends them.
    offer["Price"] = serde_json::from_str(price).unwrap();
    offer["ListPrice"] = serde_json::from_str(price).unwrap();
    offer["spotPrice"] = serde_json::from_str(price).unwrap();
    item
}

#[allow(clippy::too_many_arguments)]
fn product(
    id: &str,
    name: &str,
    slug: &str,
    categories: &[(&str, &str, &[&str])],
    items: Vec<Value>,
    specifications: Value,
) -> Entry {
    let mut product = template();
    product["cacheId"] = json!(format!("sp-{id}"));
    product["productId"] = json!(id);
    product["productName"] = json!(name);
    product["linkText"] = json!(slug);
    product["link"] = json!(format!("/{slug}/p"));
    product["productReference"] = json!(format!("PR-{id}"));
    product["categories"] = json!(categories.iter().map(|c| c.0).collect::<Vec<_>>());
    product["categoriesIds"] = json!(categories.iter().map(|c| c.1).collect::<Vec<_>>());
    product["categoryId"] = json!(
        categories[0]
            .1
            .trim_matches('/')
            .rsplit('/')
            .next()
            .unwrap()
    );
    product["skuSpecifications"] = specifications;
    let prices: Vec<Decimal> = items
        .iter()
        .map(|item| offer_price(item).unwrap())
        .collect();
    let low = prices.iter().min().unwrap().to_string();
    let high = prices.iter().max().unwrap().to_string();
    let range = json!({"highPrice": serde_json::from_str::<Value>(&high).unwrap(), "lowPrice": serde_json::from_str::<Value>(&low).unwrap()});
    product["priceRange"] = json!({"sellingPrice": range.clone(), "listPrice": range});
    product["items"] = json!(items);
    Entry {
        product,
        slugs: categories
            .iter()
            .map(|c| c.2.iter().map(|s| (*s).to_owned()).collect())
            .collect(),
    }
}

/// The default seller's price as an exact decimal (serde_json keeps the number's text).
pub fn offer_price(item: &Value) -> Option<Decimal> {
    let price = &item["sellers"][0]["commertialOffer"]["Price"];
    Decimal::from_str(&price.to_string()).ok()
}

fn axis(name: &str, original: &str, value: &str, value_original: &str) -> Value {
    json!({"name": name, "originalName": original, "values": [value], "valuesOriginal": [value_original]})
}

fn english(portuguese: &str) -> &'static str {
    match portuguese {
        "Amarelo" => "Yellow",
        "Azul" => "Blue",
        "Vermelho" => "Red",
        "P" => "S",
        "M" => "M",
        _ => "L",
    }
}

pub fn seed() -> (Vec<Entry>, HashMap<String, u32>) {
    let t = template();
    let mut entries = Vec::new();
    let mut stock = HashMap::new();
    // The example product exactly as VTEX's spec shows it.
    entries.push(Entry {
        product: t.clone(),
        slugs: vec![vec!["home-decor".to_owned()]],
    });
    stock.insert(CLOCK_SKU.to_owned(), 100);

    let tee_items: Vec<Value> = TEE_SKUS
        .iter()
        .map(|(sku, color, size)| {
            item(
                &t,
                sku,
                &format!("{color} - {size}"),
                "59.90",
                json!([
                    axis("Cor", "Color", color, english(color)),
                    axis("Tamanho", "Size", size, english(size))
                ]),
            )
        })
        .collect();
    let spec = |name: &str, original: &str, values: &[&str]| {
        json!({
            "field": {"name": name, "originalName": original, "isRange": false, "type": "SPECIFICATION"},
            "values": values.iter().map(|v| json!({"name": v, "originalName": english(v), "id": v})).collect::<Vec<_>>()
        })
    };
    entries.push(product(
        TEE,
        "Camiseta Gato",
        "camiseta-gato",
        &[("/Brinquedos/", "/2/", &["brinquedos"])],
        tee_items,
        json!([
            spec("Cor", "Color", &["Amarelo", "Azul", "Vermelho"]),
            spec("Tamanho", "Size", &["P", "M", "G"])
        ]),
    ));
    for (sku, _, _) in TEE_SKUS {
        stock.insert(sku.to_owned(), 50);
    }
    stock.insert(TEE_SKUS[1].0.to_owned(), 0);

    for n in 0..MUGS {
        let id = (MUG_FIRST + n).to_string();
        let sku = (MUG_SKU_FIRST + n).to_string();
        entries.push(product(
            &id,
            &format!("Caneca Gato {}", n + 1),
            &format!("caneca-gato-{}", n + 1),
            &[
                (
                    "/Alimentação/Comedouro/",
                    "/1/7/",
                    &["alimentacao", "comedouro"],
                ),
                ("/Alimentação/", "/1/", &["alimentacao"]),
            ],
            vec![item(&t, &sku, "Única", MUG_PRICES[n as usize], json!([]))],
            json!([]),
        ));
        stock.insert(sku, 100);
    }
    entries.push(product(
        "2000030",
        "Bebedouro Fonte",
        "bebedouro-fonte",
        &[
            (
                "/Alimentação/Bebedouro/",
                "/1/6/",
                &["alimentacao", "bebedouro"],
            ),
            ("/Alimentação/", "/1/", &["alimentacao"]),
        ],
        vec![item(&t, FOUNTAIN_SKU, "Única", "149.00", json!([]))],
        json!([]),
    ));
    stock.insert(FOUNTAIN_SKU.to_owned(), 0);
    entries.push(product(
        FOOD,
        "Ração Seca Premium",
        "racao-seca-premium",
        &[
            (
                "/Alimentação/Ração Seca/",
                "/1/10/",
                &["alimentacao", "racao-seca"],
            ),
            ("/Alimentação/", "/1/", &["alimentacao"]),
        ],
        vec![item(&t, FOOD_SKU, "500g", "89.99", json!([]))],
        json!([]),
    ));
    stock.insert(FOOD_SKU.to_owned(), 2);
    (entries, stock)
}

fn query_map(query: &str) -> Vec<(String, String)> {
    url::form_urlencoded::parse(query.as_bytes())
        .map(|(key, value)| (key.into_owned(), value.into_owned()))
        .collect()
}

fn get<'a>(pairs: &'a [(String, String)], key: &str) -> Option<&'a str> {
    pairs
        .iter()
        .find(|(name, _)| name == key)
        .map(|(_, value)| value.as_str())
}

/// Does this product hold `value` as an id of the kind `prefix` names?
fn has_id(product: &Value, prefix: &str, value: &str) -> bool {
    let items = product["items"].as_array().unwrap();
    match prefix {
        "product" => product["productId"] == value,
        "product.link" => product["linkText"] == value,
        "sku" | "sku.id" => items.iter().any(|item| item["itemId"] == value),
        "sku.ean" => items.iter().any(|item| item["ean"] == value),
        "sku.reference" => items.iter().any(|item| {
            item["referenceId"][0]["Value"]
                .as_str()
                .is_some_and(|code| code.eq_ignore_ascii_case(value))
        }),
        _ => false,
    }
}

fn in_price(product: &Value, min: Decimal, max: Decimal) -> bool {
    product["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(offer_price)
        .any(|price| price >= min && price <= max)
}

fn text_match(product: &Value, text: &str) -> bool {
    let name = product["productName"].as_str().unwrap().to_lowercase();
    text.to_lowercase()
        .split_whitespace()
        .all(|word| name.contains(word))
}

impl Inner {
    /// Each product as the catalog shows it now: `AvailableQuantity` is the capped flag
    /// (10000 while there is any stock, 0 when there is none), never the count.
    fn shown(&self, entry: &Entry) -> Value {
        let mut product = entry.product.clone();
        for item in product["items"].as_array_mut().unwrap() {
            let units = self
                .stock
                .get(item["itemId"].as_str().unwrap())
                .copied()
                .unwrap_or(0);
            item["sellers"][0]["commertialOffer"]["AvailableQuantity"] =
                json!(if units > 0 { 10000 } else { 0 });
        }
        product
    }

    /// `GET /api/intelligent-search/v1/product-search/{facets}`.
    pub fn is_search(&self, facets: &str, query: &str) -> Response {
        let pairs = query_map(query);
        let segments: Vec<&str> = facets.split('/').filter(|s| !s.is_empty()).collect();
        if segments.len() % 2 == 1 {
            return json_response(
                StatusCode::BAD_REQUEST,
                &json!({"status":400,"code":"RESOLVER_WARNING","name":"ResolverWarning","level":"warn","response":{"data":"Invalid facets"}}),
                &[],
            );
        }
        let mut categories: HashMap<usize, Vec<&str>> = HashMap::new();
        let mut price: Option<(Decimal, Decimal)> = None;
        for pair in segments.chunks(2) {
            if let Some(level) = pair[0].strip_prefix("category-") {
                let level: usize = level.parse().unwrap();
                categories.entry(level).or_default().push(pair[1]);
            } else if pair[0] == "price" {
                let (min, max) = pair[1].split_once(':').unwrap();
                price = Some((
                    Decimal::from_str(min).unwrap(),
                    Decimal::from_str(max).unwrap(),
                ));
            }
        }
        let text = get(&pairs, "query").or(get(&pairs, "q")).unwrap_or("");
        let ids = text.split_once(':').filter(|(prefix, _)| {
            matches!(
                *prefix,
                "product" | "sku" | "sku.id" | "sku.reference" | "sku.ean" | "product.link"
            )
        });
        let matching: Vec<Value> = self
            .products
            .iter()
            .filter(|entry| match ids {
                Some((prefix, values)) => values
                    .split(';')
                    .any(|value| has_id(&entry.product, prefix, value)),
                None => text.is_empty() || text_match(&entry.product, text),
            })
            // Same key = OR, different keys = AND.
            .filter(|entry| {
                categories.iter().all(|(level, slugs)| {
                    entry.slugs.iter().any(|path| {
                        path.len() >= *level && slugs.contains(&path[*level - 1].as_str())
                    })
                })
            })
            .filter(|entry| price.is_none_or(|(min, max)| in_price(&entry.product, min, max)))
            .map(|entry| self.shown(entry))
            .collect();
        let count: usize = get(&pairs, "count").map_or(24, |c| c.parse().unwrap());
        let page: usize = get(&pairs, "page").map_or(1, |p| p.parse().unwrap());
        let total = matching.len();
        let products: Vec<Value> = matching
            .into_iter()
            .skip((page - 1) * count)
            .take(count)
            .collect();
        let last = total.div_ceil(count).max(1);
        let mut body: Value = serde_json::from_str(PAGE).unwrap();
        body["products"] = json!(products);
        body["recordsFiltered"] = json!(total);
        body["pagination"] = json!({
            "count": last, "current": {"index": page}, "before": [], "after": [],
            "perPage": count, "next": {"index": if page < last { page + 1 } else { 0 }},
            "previous": {"index": page - 1}, "first": {"index": 1}, "last": {"index": last}
        });
        json_response(
            StatusCode::OK,
            &body,
            &[("cache-control", "public, max-age=600".to_owned())],
        )
    }

    /// The legacy search's shape of one product: each SKU's axes as top-level keys plus the
    /// list of their names, links absolute.
    fn legacy(&self, entry: &Entry) -> Value {
        let mut product = self.shown(entry);
        let object = product.as_object_mut().unwrap();
        for key in [
            "cacheId",
            "origin",
            "specificationGroups",
            "skuSpecifications",
            "properties",
            "priceRange",
        ] {
            object.remove(key);
        }
        let link = format!(
            "https://loja.vtexcommercestable.com.br{}",
            object["link"].as_str().unwrap()
        );
        object.insert("link".to_owned(), json!(link));
        for item in object.get_mut("items").unwrap().as_array_mut().unwrap() {
            let variations: Vec<Value> = item["variations"].as_array().unwrap().clone();
            let names: Vec<Value> = variations.iter().map(|v| v["name"].clone()).collect();
            for variation in &variations {
                item[variation["name"].as_str().unwrap()] = variation["values"].clone();
            }
            item["variations"] = json!(names);
        }
        product
    }

    /// `GET /api/catalog_system/pub/products/search[/{slug}/p]`.
    pub fn legacy_search(&self, slug: Option<&str>, query: &str) -> Response {
        let pairs = query_map(query);
        let text = get(&pairs, "ft").unwrap_or("");
        let mut id_filters: Vec<(&str, &str)> = Vec::new();
        let mut category_filters: Vec<Vec<String>> = Vec::new();
        let mut price: Option<(Decimal, Decimal)> = None;
        for (key, value) in &pairs {
            if key != "fq" {
                continue;
            }
            if let Some(path) = value.strip_prefix("C:") {
                category_filters.push(
                    path.split('/')
                        .filter(|s| !s.is_empty())
                        .map(str::to_owned)
                        .collect(),
                );
            } else if let Some(range) = value.strip_prefix("P:[").and_then(|v| v.strip_suffix(']'))
            {
                let (min, max) = range.split_once(" TO ").unwrap();
                price = Some((
                    Decimal::from_str(min).unwrap(),
                    Decimal::from_str(max).unwrap(),
                ));
            } else if let Some((field, id)) = value.split_once(':') {
                let prefix = match field {
                    "productId" => "product",
                    "skuId" => "sku",
                    "alternateIds_RefId" => "sku.reference",
                    "alternateIds_Ean" => "sku.ean",
                    _ => "unknown",
                };
                id_filters.push((prefix, id));
            }
        }
        let matching: Vec<Value> = self
            .products
            .iter()
            .filter(|entry| slug.is_none_or(|slug| entry.product["linkText"] == slug))
            .filter(|entry| text.is_empty() || text_match(&entry.product, text))
            // Repeated `fq` of ids: any of them.
            .filter(|entry| {
                id_filters.is_empty()
                    || id_filters
                        .iter()
                        .any(|(prefix, id)| has_id(&entry.product, prefix, id))
            })
            .filter(|entry| {
                category_filters.is_empty()
                    || category_filters.iter().any(|ids| {
                        entry.product["categoriesIds"]
                            .as_array()
                            .unwrap()
                            .iter()
                            .any(|path| {
                                path.as_str()
                                    .unwrap()
                                    .trim_matches('/')
                                    .split('/')
                                    .collect::<Vec<_>>()
                                    == *ids
                            })
                    })
            })
            .filter(|entry| price.is_none_or(|(min, max)| in_price(&entry.product, min, max)))
            .map(|entry| self.legacy(entry))
            .collect();
        let from: usize = get(&pairs, "_from").map_or(0, |v| v.parse().unwrap());
        let to: usize = get(&pairs, "_to").map_or(9, |v| v.parse().unwrap());
        if to < from || to - from >= 50 || from > 2500 {
            return json_response(
                StatusCode::BAD_REQUEST,
                &json!("The maximum number of items per page is 50"),
                &[],
            );
        }
        let total = matching.len();
        let page: Vec<Value> = matching
            .into_iter()
            .skip(from)
            .take(to - from + 1)
            .collect();
        // A page short of the whole result is 206 Partial Content, as the real search answers.
        let status = if page.len() < total {
            StatusCode::PARTIAL_CONTENT
        } else {
            StatusCode::OK
        };
        json_response(
            status,
            &json!(page),
            &[("resources", format!("{from}-{to}/{total}"))],
        )
    }
}
