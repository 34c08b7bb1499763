//! bcp-bridge: serves an existing store to AI shopping agents over MCP, speaking BCP.
//!
//! Layers, each importing only the ones below it (top first): `server` and `config` (the top
//! level, which assembles) with `registry`; the MCP transport `mcp`; the call policies `gate`,
//! `hardening`, `access`, `idempotency`, `negotiation`; the protocol `brain`; the `platform`
//! layer; `observability` and `discovery`; and the leaves `protocol` (wire), `model`, `money`
//! and `settings` (the configuration vocabulary).

pub mod access;
pub mod brain;
pub mod config;
pub mod discovery;
pub mod doctor;
pub mod gate;
pub mod hardening;
pub mod idempotency;
pub mod logging;
pub mod mcp;
pub mod model;
pub mod money;
pub mod negotiation;
pub mod observability;
pub mod platform;
pub mod protocol;
pub mod registry;
pub mod serve;
pub mod server;
pub mod settings;
pub mod tls;
