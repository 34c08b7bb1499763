//! The UCP REST binding: the same operations as the MCP front, over plain HTTP resources.
//! It only reads and writes the REST wire: every call goes through `crate::pipeline`, so
//! signatures, negotiation, validation, idempotency and activity are the pipeline's alone.
//!
//! Under a namespace's base path (`[server] rest_path` for BCP, `ucp_rest_path` for UCP),
//! each tool the store serves at the method and path its declaration names
//! (`pipeline::tools`: `POST /catalog/search`, `GET /carts/{id}`, …).

mod body;
mod error;
mod front;
mod headers;
mod token;

pub use front::{RestFront, routes};
