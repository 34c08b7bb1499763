//! The typed Storefront operations. All derives live here because each one re-parses the schema
//! subset at compile time; the schema is the generated subset of the real 2026-04 schema (see
//! `graphql/tools/subset.py`) and `tests/suite/shopify_schema.rs` checks every operation against the
//! full schema.
#![allow(clippy::enum_variant_names, clippy::upper_case_acronyms, dead_code)]

use graphql_client::GraphQLQuery;

// Custom scalars of the Storefront schema, all JSON strings on the wire.
pub type Decimal = String;
pub type URL = String;
pub type HTML = String;
pub type DateTime = String;
pub type ID = String;

#[derive(GraphQLQuery)]
#[graphql(
    schema_path = "graphql/storefront.subset.graphql",
    query_path = "graphql/catalog.graphql",
    response_derives = "Debug",
    variables_derives = "Debug"
)]
pub struct ShopInfo;

#[derive(GraphQLQuery)]
#[graphql(
    schema_path = "graphql/storefront.subset.graphql",
    query_path = "graphql/catalog.graphql",
    response_derives = "Debug",
    variables_derives = "Debug"
)]
pub struct SearchProducts;

#[derive(GraphQLQuery)]
#[graphql(
    schema_path = "graphql/storefront.subset.graphql",
    query_path = "graphql/catalog.graphql",
    response_derives = "Debug",
    variables_derives = "Debug"
)]
pub struct BrowseProducts;

#[derive(GraphQLQuery)]
#[graphql(
    schema_path = "graphql/storefront.subset.graphql",
    query_path = "graphql/catalog.graphql",
    response_derives = "Debug",
    variables_derives = "Debug"
)]
pub struct Nodes;

#[derive(GraphQLQuery)]
#[graphql(
    schema_path = "graphql/storefront.subset.graphql",
    query_path = "graphql/catalog.graphql",
    response_derives = "Debug",
    variables_derives = "Debug"
)]
pub struct ProductVariants;

#[derive(GraphQLQuery)]
#[graphql(
    schema_path = "graphql/storefront.subset.graphql",
    query_path = "graphql/cart.graphql",
    response_derives = "Debug",
    variables_derives = "Debug"
)]
pub struct CartGet;

#[derive(GraphQLQuery)]
#[graphql(
    schema_path = "graphql/storefront.subset.graphql",
    query_path = "graphql/cart.graphql",
    response_derives = "Debug",
    variables_derives = "Debug"
)]
pub struct CartCreate;

#[derive(GraphQLQuery)]
#[graphql(
    schema_path = "graphql/storefront.subset.graphql",
    query_path = "graphql/cart.graphql",
    response_derives = "Debug",
    variables_derives = "Debug"
)]
pub struct CartLinesAdd;

#[derive(GraphQLQuery)]
#[graphql(
    schema_path = "graphql/storefront.subset.graphql",
    query_path = "graphql/cart.graphql",
    response_derives = "Debug",
    variables_derives = "Debug"
)]
pub struct CartLinesUpdate;

#[derive(GraphQLQuery)]
#[graphql(
    schema_path = "graphql/storefront.subset.graphql",
    query_path = "graphql/cart.graphql",
    response_derives = "Debug",
    variables_derives = "Debug"
)]
pub struct CartAttributesUpdate;

#[derive(GraphQLQuery)]
#[graphql(
    schema_path = "graphql/storefront.subset.graphql",
    query_path = "graphql/cart.graphql",
    response_derives = "Debug",
    variables_derives = "Debug"
)]
pub struct CartReplace;

#[derive(GraphQLQuery)]
#[graphql(
    schema_path = "graphql/storefront.subset.graphql",
    query_path = "graphql/cart.graphql",
    response_derives = "Debug",
    variables_derives = "Debug"
)]
pub struct CartCancel;

#[derive(GraphQLQuery)]
#[graphql(
    schema_path = "graphql/storefront.subset.graphql",
    query_path = "graphql/cart.graphql",
    response_derives = "Debug",
    variables_derives = "Debug"
)]
pub struct VariantTitles;

#[derive(GraphQLQuery)]
#[graphql(
    schema_path = "graphql/storefront.subset.graphql",
    query_path = "graphql/checkout.graphql",
    response_derives = "Debug",
    variables_derives = "Debug"
)]
pub struct CheckoutGet;

#[derive(GraphQLQuery)]
#[graphql(
    schema_path = "graphql/storefront.subset.graphql",
    query_path = "graphql/checkout.graphql",
    response_derives = "Debug",
    variables_derives = "Debug"
)]
pub struct CheckoutBuyerUpdate;

#[derive(GraphQLQuery)]
#[graphql(
    schema_path = "graphql/storefront.subset.graphql",
    query_path = "graphql/checkout.graphql",
    response_derives = "Debug",
    variables_derives = "Debug"
)]
pub struct CheckoutAddressReplace;

#[derive(GraphQLQuery)]
#[graphql(
    schema_path = "graphql/storefront.subset.graphql",
    query_path = "graphql/checkout.graphql",
    response_derives = "Debug",
    variables_derives = "Debug"
)]
pub struct CheckoutOptionSelect;

#[derive(GraphQLQuery)]
#[graphql(
    schema_path = "graphql/storefront.subset.graphql",
    query_path = "graphql/checkout.graphql",
    response_derives = "Debug",
    variables_derives = "Debug"
)]
pub struct CheckoutCodesUpdate;
