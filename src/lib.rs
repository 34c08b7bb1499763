//! bcp-bridge: serves an existing store to AI shopping agents over MCP, speaking BCP.

pub mod access;
pub mod brain;
pub mod config;
pub mod discovery;
pub mod gate;
pub mod hardening;
pub mod idempotency;
pub mod mcp;
pub mod model;
pub mod negotiation;
pub mod observability;
pub mod platform;
pub mod protocol;
pub mod server;
