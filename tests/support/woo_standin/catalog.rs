//! The stand-in catalog: the fixtures' products plus clones, `GET /products` filters and
//! the REST v3 products route.

use super::*;

const PRODUCTS: &str = include_str!("fixtures/store-products.json");
const VARIATIONS_OF_11: &str = include_str!("fixtures/store-products-variations-of-11.json");
const V3_PRODUCT_VARIABLE: &str = include_str!("fixtures/v3-product-variable.json");
const V3_NOAUTH: &str = include_str!("fixtures/v3-products-noauth-401.json");
/// Read-only REST v3 key pair the stand-in accepts (same shape as WooCommerce's); the
/// read/write one is `rest_v3::V3_WRITE_KEY`.
pub const V3_KEY: &str = "ck_0123456789abcdef0123456789abcdef01234567";
pub const V3_SECRET: &str = "cs_76543210fedcba9876543210fedcba9876543210";

pub(super) fn amount(value: &Value) -> i64 {
    value
        .as_str()
        .and_then(|text| text.parse().ok())
        .unwrap_or(0)
}

impl Inner {
    pub(super) fn product(&self, id: u64) -> Option<&Value> {
        self.products.iter().find(|p| p["id"].as_u64() == Some(id))
    }

    pub(super) fn ancestors(&self, id: u64) -> Vec<u64> {
        let mut out = vec![id];
        let mut current = id;
        while let Some(parent) = self
            .categories
            .iter()
            .find(|c| c["id"].as_u64() == Some(current))
            .and_then(|c| c["parent"].as_u64())
            .filter(|parent| *parent != 0 && out.len() < 10)
        {
            out.push(parent);
            current = parent;
        }
        out
    }

    /// Stock flags follow the stand-in's stock table, like WooCommerce's own lookups.
    pub(super) fn with_stock(&self, product: &Value) -> Value {
        let mut product = product.clone();
        if let Some(id) = product["id"].as_u64()
            && let Some(units) = self.stock.get(&id)
            && !self.stale.contains(&id)
        {
            // As 10.9 shows them: sold out → no maximum (9999) and no remaining count;
            // managed stock → the units as maximum, and as `low_stock_remaining` at 2 or less
            // (WooCommerce's default low-stock threshold).
            product["is_in_stock"] = json!(*units > 0);
            product["add_to_cart"]["maximum"] = json!(if *units == 0 { 9999 } else { *units });
            product["low_stock_remaining"] = if (1..=2).contains(units) {
                json!(*units)
            } else {
                Value::Null
            };
        }
        product
    }

    /// `GET /products/{id}` or `/products/{slug}`: a product or a variation, or the
    /// fixtures' 404s (`product-unknown-999999`, `product-by-slug-unknown`).
    pub(super) fn product_route(&self, key: &str) -> Response {
        let numeric = !key.is_empty() && key.bytes().all(|b| b.is_ascii_digit());
        let hit = self.products.iter().find(|p| {
            if numeric {
                p["id"].as_u64().map(|id| id.to_string()).as_deref() == Some(key)
            } else {
                p["slug"].as_str() == Some(key)
            }
        });
        match hit {
            Some(product) => json_response(StatusCode::OK, &self.with_stock(product), &[]),
            None if numeric => error(
                StatusCode::NOT_FOUND,
                "woocommerce_rest_product_invalid_id",
                "Invalid product ID.",
            ),
            None => error(
                StatusCode::NOT_FOUND,
                "woocommerce_rest_product_invalid_slug",
                "Invalid product slug.",
            ),
        }
    }

    pub(super) fn price_bounds(&self, product: &Value) -> (i64, i64) {
        let prices = &product["prices"];
        match prices["price_range"].as_object() {
            Some(range) => (amount(&range["min_amount"]), amount(&range["max_amount"])),
            None => (amount(&prices["price"]), amount(&prices["price"])),
        }
    }

    pub(super) fn products_route(&self, uri: &Uri) -> Response {
        let query = query_map(uri);
        let per_page: i64 = query
            .get("per_page")
            .map(|v| v.parse().unwrap_or(-1))
            .unwrap_or(10);
        if !(1..=100).contains(&per_page) {
            return json_response(
                StatusCode::BAD_REQUEST,
                &json!({"code":"rest_invalid_param","message":"Invalid parameter(s): per_page","data":{"status":400,"params":{"per_page":"per_page must be between 1 (inclusive) and 100 (inclusive)"},"details":{"per_page":{"code":"rest_out_of_bounds","message":"per_page must be between 1 (inclusive) and 100 (inclusive)","data":null}}}}),
                &[],
            );
        }
        let page: i64 = query
            .get("page")
            .map(|v| v.parse().unwrap_or(0))
            .unwrap_or(1);
        if page < 1 {
            return json_response(
                StatusCode::BAD_REQUEST,
                &json!({"code":"rest_invalid_param","message":"Invalid parameter(s): page","data":{"status":400,"params":{"page":"page must be greater than or equal to 1"},"details":{"page":{"code":"rest_out_of_bounds","message":"page must be greater than or equal to 1","data":null}}}}),
                &[],
            );
        }
        let variations = query.get("type").map(String::as_str) == Some("variation");
        let include = list(query.get("include"));
        let skus = list(query.get("sku"));
        let slugs = list(query.get("slug"));
        // `parent=24,12` and `parent[]=24&parent[]=12` are the same filter.
        let mut parents = list(query.get("parent"));
        let bracketed: Vec<String> =
            url::form_urlencoded::parse(uri.query().unwrap_or("").as_bytes())
                .filter(|(key, _)| key == "parent[]")
                .flat_map(|(_, value)| list(Some(&value.into_owned())).unwrap_or_default())
                .collect();
        if !bracketed.is_empty() {
            parents.get_or_insert_with(Vec::new).extend(bracketed);
        }
        if parents.is_some() && !variations {
            // `parent[]` only works with `type=variation` (`products-variations-parent-no-type`).
            parents = Some(Vec::new());
        }
        let categories = list(query.get("category"));
        let search = query.get("search").map(|s| s.to_lowercase());
        let min = query.get("min_price").and_then(|v| v.parse::<i64>().ok());
        let max = query.get("max_price").and_then(|v| v.parse::<i64>().ok());
        let mut hits: Vec<Value> = self
            .products
            .iter()
            // `sku=`/`slug=` widen the query to products and variations; `include=` alone
            // silently drops variation ids (`products-include-csv`).
            .filter(|p| {
                if variations {
                    p["type"] == "variation"
                } else {
                    p["type"] != "variation" || skus.is_some() || slugs.is_some()
                }
            })
            .filter(|p| {
                include.as_ref().is_none_or(|ids| {
                    ids.iter()
                        .any(|id| p["id"].as_u64().map(|n| n.to_string()) == Some(id.clone()))
                })
            })
            .filter(|p| {
                skus.as_ref().is_none_or(|skus| {
                    // MySQL's collation: SKUs match ignoring case.
                    skus.iter().any(|sku| {
                        p["sku"]
                            .as_str()
                            .is_some_and(|own| !own.is_empty() && own.eq_ignore_ascii_case(sku))
                    })
                })
            })
            .filter(|p| {
                slugs
                    .as_ref()
                    .is_none_or(|slugs| slugs.iter().any(|slug| p["slug"].as_str() == Some(slug)))
            })
            .filter(|p| {
                parents.as_ref().is_none_or(|parents| {
                    parents
                        .iter()
                        .any(|id| p["parent"].as_u64().map(|n| n.to_string()) == Some(id.clone()))
                })
            })
            .filter(|p| {
                categories.as_ref().is_none_or(|wanted| {
                    p["categories"].as_array().unwrap().iter().any(|c| {
                        self.ancestors(c["id"].as_u64().unwrap())
                            .iter()
                            .any(|id| wanted.contains(&id.to_string()))
                    })
                })
            })
            .filter(|p| {
                search.as_ref().is_none_or(|needle| {
                    ["name", "description", "sku"].iter().any(|field| {
                        p[field]
                            .as_str()
                            .unwrap_or("")
                            .to_lowercase()
                            .contains(needle.as_str())
                    })
                })
            })
            .filter(|p| {
                let (low, high) = self.price_bounds(p);
                min.is_none_or(|min| high >= min) && max.is_none_or(|max| low <= max)
            })
            .map(|p| self.with_stock(p))
            .collect();
        hits.sort_by_key(|p| std::cmp::Reverse(p["id"].as_u64()));
        let total = hits.len() as i64;
        // A page past the end is an empty 200 with the totals (10.9).
        let pages = (total + per_page - 1) / per_page;
        let body: Vec<Value> = hits
            .into_iter()
            .skip(((page - 1) * per_page) as usize)
            .take(per_page as usize)
            .collect();
        json_response(
            StatusCode::OK,
            &Value::Array(body),
            &[
                ("x-wp-total", total.to_string()),
                ("x-wp-totalpages", pages.to_string()),
            ],
        )
    }
}

/// Catalog beyond the fixtures: a category tree, a second variable product and a few simple
/// ones, cloned from the fixtures' own shapes so every field stays real.
pub(super) fn seed_catalog() -> (Vec<Value>, Vec<Value>, HashMap<u64, u32>) {
    let mut products: Vec<Value> = serde_json::from_str(PRODUCTS).unwrap();
    let variations: Vec<Value> = serde_json::from_str(VARIATIONS_OF_11).unwrap();
    let categories = vec![
        json!({"id": 15, "name": "Clothing", "slug": "clothing", "description": "", "parent": 0, "count": 2, "image": null, "review_count": 0, "permalink": "http://127.0.0.1/product-category/clothing/"}),
        json!({"id": 16, "name": "T-Shirts", "slug": "t-shirts", "description": "", "parent": 15, "count": 1, "image": null, "review_count": 0, "permalink": "http://127.0.0.1/product-category/clothing/t-shirts/"}),
        json!({"id": 18, "name": "Hoodies", "slug": "hoodies", "description": "", "parent": 15, "count": 1, "image": null, "review_count": 0, "permalink": "http://127.0.0.1/product-category/clothing/hoodies/"}),
        json!({"id": 19, "name": "Kitchen &amp; Dining", "slug": "kitchen", "description": "", "parent": 0, "count": 4, "image": null, "review_count": 0, "permalink": "http://127.0.0.1/product-category/kitchen/"}),
    ];
    let mug = products[1].clone();
    products[1]["categories"] =
        json!([{"id": 19, "name": "Kitchen &amp; Dining", "slug": "kitchen", "link": ""}]);
    products[1]["description"] = json!("<p>A sturdy mug &amp; a classic.</p>");
    products[1]["images"] = json!([{"id": 7, "src": "http://127.0.0.1/wp-content/uploads/mug.jpg", "thumbnail": "", "srcset": "", "sizes": "", "name": "mug.jpg", "alt": "Mug"}]);
    products[1]["average_rating"] = json!("4.50");
    products[1]["review_count"] = json!(2);
    let mut stock = HashMap::from([
        (10, 7),
        (12, 5),
        (13, 5),
        (14, 5),
        (15, 0),
        (16, 5),
        (17, 5),
    ]);
    for (id, name, sku, price) in [
        (30, "Espresso Cup", "CUP-ESP", "650"),
        (31, "Tea Cup", "CUP-TEA", "700"),
        // A barcode as the SKU: digits only, as many merchants do.
        (32, "Travel Cup", "7891234567895", "1500"),
    ] {
        let mut cup = mug.clone();
        cup["id"] = json!(id);
        cup["name"] = json!(name);
        cup["slug"] = json!(name.to_lowercase().replace(' ', "-"));
        cup["sku"] = json!(sku);
        cup["on_sale"] = json!(false);
        cup["permalink"] = json!(format!(
            "http://127.0.0.1/product/{}/",
            name.to_lowercase().replace(' ', "-")
        ));
        for key in ["price", "regular_price", "sale_price"] {
            cup["prices"][key] = json!(price);
        }
        cup["categories"] =
            json!([{"id": 19, "name": "Kitchen &amp; Dining", "slug": "kitchen", "link": ""}]);
        products.push(cup);
        stock.insert(id, 50);
    }
    // A hoodie with a global (taxonomy) attribute: variations name terms by slug.
    let mut hoodie = products[0].clone();
    hoodie["id"] = json!(20);
    hoodie["name"] = json!("Zip Hoodie");
    hoodie["slug"] = json!("zip-hoodie");
    hoodie["sku"] = json!("HOOD");
    hoodie["permalink"] = json!("http://127.0.0.1/product/zip-hoodie/");
    hoodie["prices"]["price"] = json!("4500");
    hoodie["prices"]["price_range"] = json!({"min_amount": "4500", "max_amount": "4800"});
    hoodie["categories"] = json!([{"id": 18, "name": "Hoodies", "slug": "hoodies", "link": ""}]);
    hoodie["attributes"] = json!([{"id": 3, "name": "Colour", "taxonomy": "pa_colour", "has_variations": true, "terms": [{"id": 31, "name": "Forest Green", "slug": "forest-green"}, {"id": 32, "name": "Navy", "slug": "navy"}]}]);
    hoodie["variations"] = json!([{"id": 21, "attributes": [{"name": "Colour", "value": "forest-green"}]}, {"id": 22, "attributes": [{"name": "Colour", "value": "navy"}]}]);
    products.push(hoodie);
    for (id, slug, sku, price, variation) in [
        (
            21,
            "zip-hoodie-forest-green",
            "HOOD-GRN",
            "4500",
            "Colour: Forest Green",
        ),
        (22, "zip-hoodie-navy", "HOOD-NVY", "4800", "Colour: Navy"),
    ] {
        let mut v = variations[0].clone();
        v["id"] = json!(id);
        v["parent"] = json!(20);
        v["name"] = json!("Zip Hoodie");
        v["slug"] = json!(slug);
        v["sku"] = json!(sku);
        v["variation"] = json!(variation);
        v["permalink"] = json!(format!(
            "http://127.0.0.1/product/zip-hoodie/?attribute_pa_colour={}",
            &slug[11..]
        ));
        for key in ["price", "regular_price", "sale_price"] {
            v["prices"][key] = json!(price);
        }
        products.push(v);
        stock.insert(id, 3);
    }
    products.extend(variations);
    stock.entry(10).or_insert(7);
    (products, categories, stock)
}

/// `GET /wc/v3/products`: Basic auth with the stand-in's key pair, `include`, `_fields`.
/// `GET /wc/v3/orders/{id}` with the key pair: the order's `meta_data` only (`_fields`).
pub(super) fn v3_order(id: &str, headers: &HeaderMap, meta: Value) -> Response {
    if super::rest_v3::access(headers).is_none() {
        return json_response(
            StatusCode::UNAUTHORIZED,
            &serde_json::from_str(V3_NOAUTH).unwrap(),
            &[],
        );
    }
    let id: u64 = id.parse().unwrap_or_default();
    json_response(StatusCode::OK, &json!({"id": id, "meta_data": meta}), &[])
}

pub(super) fn v3_products(uri: &Uri, headers: &HeaderMap) -> Response {
    if super::rest_v3::access(headers).is_none() {
        return json_response(
            StatusCode::UNAUTHORIZED,
            &serde_json::from_str(V3_NOAUTH).unwrap(),
            &[],
        );
    }
    let tee: Value = serde_json::from_str(V3_PRODUCT_VARIABLE).unwrap();
    let mut with_default = tee.clone();
    with_default["default_attributes"] = json!([
        {"id": 0, "name": "Size", "option": "L"},
        {"id": 0, "name": "Color", "option": "Blue"}
    ]);
    let mut hoodie = tee;
    hoodie["id"] = json!(20);
    hoodie["default_attributes"] = json!([{"id": 3, "name": "Colour", "option": "Navy"}]);
    let query = query_map(uri);
    let include = list(query.get("include")).unwrap_or_default();
    let fields = list(query.get("_fields"));
    let body: Vec<Value> = [with_default, hoodie]
        .into_iter()
        .filter(|p| include.is_empty() || include.contains(&p["id"].to_string()))
        .map(|p| match &fields {
            Some(fields) => Value::Object(
                p.as_object()
                    .unwrap()
                    .iter()
                    .filter(|(k, _)| fields.contains(k))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect(),
            ),
            None => p,
        })
        .collect();
    let total = body.len().to_string();
    json_response(
        StatusCode::OK,
        &Value::Array(body),
        &[("x-wp-total", total), ("x-wp-totalpages", "1".to_owned())],
    )
}
