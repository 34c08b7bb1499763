//! The integration tests, linked as one binary (one link instead of one per file on a small
//! machine). Each module is one area; `support` holds every helper they share.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "../support/mod.rs"]
mod support;

mod access;
mod attribution;
mod cache;
mod cart;
mod catalog;
mod checkout;
mod cli;
mod concurrent_carts;
mod config_checks;
mod config_schema;
mod conformance;
mod corpus;
mod direct;
mod doctor;
mod errors;
mod fair_admission;
mod first_call;
mod fuzz;
mod get_product;
mod hardening;
mod healthcheck;
mod hostile;
mod idempotency;
mod input_schemas;
mod json_logs;
mod jsonrpc;
mod log_privacy;
mod mcp;
mod negotiation;
mod observability;
mod order_webhooks;
mod real_woo;
mod replicas;
mod rest;
mod schemas;
mod secrets;
mod seeds;
mod shopify_cart;
mod shopify_catalog;
mod shopify_checkout;
mod shopify_end_to_end;
mod shopify_errors;
mod shopify_schema;
mod shutdown;
mod signatures;
mod smoke;
mod status_page;
mod status_page_browser;
mod telemetry;
mod tls;
mod ucp;
mod ucp_2026_08_25;
mod untrusted_text;
mod upstream;
mod upstream_counts;
mod vtex;
mod vtex_checkout;
mod woo_cart;
mod woo_catalog;
mod woo_round_trips;
mod woo_safety;
