//! The UCP REST binding: the same operations as the MCP front, over plain HTTP resources.
//! It only reads and writes the REST wire: every call goes through `crate::pipeline`, so
//! signatures, negotiation, validation, idempotency and activity are the pipeline's alone.
//!
//! Under a namespace's base path (`[server] rest_path` for BCP, `ucp_rest_path` for UCP):
//! `POST /catalog/search`, `POST /catalog/lookup`, `POST /catalog/product`, `POST /carts`,
//! `GET /carts/{id}`, `PUT /carts/{id}`, `POST /carts/{id}/cancel`.

mod body;
mod front;
mod headers;
mod operation;
mod refusal;
mod token;

pub use front::{RestFront, routes};
pub use operation::Operation;
