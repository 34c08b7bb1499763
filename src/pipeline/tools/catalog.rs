//! The catalog reads: search_catalog, lookup_catalog, get_product.

use schemars::Schema;
use serde_json::json;

use super::schema::at;
use super::{BodyRole, Declaration, Effect, Rest, RestMethod, ToolName, Typed, answer, refused};
use crate::brain::LimitsConfig;
use crate::pipeline::protocol_error::ProtocolError;
use crate::protocol::Capability;
use crate::protocol::catalog::{LookupResponse, ProductResponse, SearchResponse};
use crate::protocol::request::{CatalogArgs, GetProductIn, LookupIn, SearchIn};

const CATALOG: BodyRole = BodyRole::Catalog;

pub static SEARCH_CATALOG: Declaration = Declaration {
    name: ToolName::new("search_catalog", Capability::CatalogSearch, Effect::Reads),
    title: "Search the catalog",
    what: "Search the store's products by free text and/or filters (categories, price in minor units). Returns products with their featured variant and an opaque pagination cursor.",
    example: r#"{"meta": {"ucp-agent": {"profile": "https://your-agent.example/.well-known/ucp"}}, "catalog": {"query": "running shoes", "filters": {"price": {"max": 20000}}, "pagination": {"limit": 5}}}"#,
    destructive: false,
    idempotent: true,
    requires_key: false,
    refuses_payload_id: None,
    rest: Rest::new(RestMethod::Post, "/catalog/search", CATALOG),
    limits: page_size,
    entry: &Typed::<CatalogArgs<SearchIn>, SearchResponse<'static>>::new(|brain, args, call| {
        answer(brain.search(args.catalog, call.release))
    }),
};

fn page_size(schema: &mut Schema, limits: &LimitsConfig) -> Result<(), String> {
    at(
        schema,
        "/properties/catalog/properties/pagination/properties/limit",
    )?
    .insert(
        "description".into(),
        json!(format!(
            "Page size, default {}; larger values are clamped to {}.",
            limits.default_page_size, limits.max_page_size
        )),
    );
    Ok(())
}

pub static LOOKUP_CATALOG: Declaration = Declaration {
    name: ToolName::new("lookup_catalog", Capability::CatalogLookup, Effect::Reads),
    title: "Look up products by id",
    what: "Fetch several products or variants at once by product id, variant id, SKU or handle. Each returned variant says which request ids it answers (inputs); unknown ids come back as not_found info messages.",
    example: r#"{"meta": {"ucp-agent": {"profile": "https://your-agent.example/.well-known/ucp"}}, "catalog": {"ids": ["prod_abc123", "var_xyz789"]}}"#,
    destructive: false,
    idempotent: true,
    requires_key: false,
    refuses_payload_id: None,
    rest: Rest::new(RestMethod::Post, "/catalog/lookup", CATALOG).batch("$.ids"),
    limits: lookup_batch,
    entry: &Typed::<CatalogArgs<LookupIn>, LookupResponse<'static>>::new(|brain, args, call| {
        answer(brain.lookup(args.catalog, call.release))
    }),
};

fn lookup_batch(schema: &mut Schema, limits: &LimitsConfig) -> Result<(), String> {
    at(schema, "/properties/catalog/properties/ids")?
        .insert("maxItems".into(), json!(limits.max_lookup_batch));
    Ok(())
}

pub static GET_PRODUCT: Declaration = Declaration {
    name: ToolName::new("get_product", Capability::CatalogLookup, Effect::Reads),
    title: "Get one product with option availability",
    what: "Get one product with all its options. Pass `selected` options (and `preferences` for which to keep when a combination does not exist) to narrow variants; each option value says whether it exists and is available with the current selections.",
    example: r#"{"meta": {"ucp-agent": {"profile": "https://your-agent.example/.well-known/ucp"}}, "catalog": {"id": "prod_abc123", "selected": [{"name": "Color", "label": "Blue"}], "preferences": ["Color", "Size"]}}"#,
    destructive: false,
    idempotent: true,
    requires_key: false,
    refuses_payload_id: None,
    rest: Rest::new(RestMethod::Post, "/catalog/product", CATALOG),
    limits: super::no_limits,
    entry: &Typed::<CatalogArgs<GetProductIn>, ProductResponse<'static>>::new(
        |brain, args, call| match reject_repeated_selections(&args.catalog) {
            Ok(()) => answer(brain.get_product(args.catalog, call.release)),
            Err(error) => refused(error),
        },
    ),
};

fn reject_repeated_selections(request: &GetProductIn) -> Result<(), ProtocolError> {
    for (index, choice) in request.selected.iter().enumerate() {
        if request.selected[..index]
            .iter()
            .any(|earlier| earlier.name.eq_ignore_ascii_case(&choice.name))
        {
            return Err(ProtocolError::invalid_at(
                &format!("$.catalog.selected[{index}].name"),
                format!("option {:?} is selected more than once", choice.name),
            ));
        }
    }
    Ok(())
}
