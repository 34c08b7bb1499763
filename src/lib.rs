//! bcp-bridge: serves an existing store to AI shopping agents over MCP, speaking BCP.
//!
//! Layers, each importing only the ones below it (top first): `startup` (the top level, which
//! configures, builds and starts; `doctor` beside it) with `registry`; the MCP transport
//! `mcp`; the call `pipeline` every front calls; its steps `inbound`, `access`,
//! `idempotency`, `negotiation`, `signatures` (and `order_webhooks`, which pushes placed
//! orders the brain hands it, signed, to the agent's webhook); the protocol `brain`; the `platform` layer;
//! `prometheus` (metrics), `telemetry` (OTLP traces), `discovery` and `inbound_webhooks` (the webhooks
//! stores and the Pix provider send the bridge); `replicas` (the one Redis several replicas share,
//! `[redis]`); and the leaves `protocol` (wire), `model`, `money` and `settings` (the
//! configuration vocabulary).

pub mod access;
pub mod brain;
pub mod discovery;
pub mod doctor;
pub mod idempotency;
pub mod inbound;
pub mod inbound_webhooks;
pub mod logging;
pub mod mcp;
pub mod model;
pub mod money;
pub mod negotiation;
pub mod order_webhooks;
pub mod pipeline;
pub mod pix;
pub mod platform;
pub mod prometheus;
pub mod protocol;
pub mod registry;
pub mod replicas;
pub mod rest;
pub mod settings;
pub mod signatures;
pub mod startup;
pub mod status_page;
pub mod telemetry;
pub mod tls;
