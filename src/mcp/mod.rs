//! The MCP/JSON-RPC transport: rmcp's Streamable HTTP service in sessionless JSON mode,
//! the tool table with its schemas, argument validation, and the error mapping.

pub mod agents;
pub mod bearer;
pub mod direct;
pub mod errors;
pub mod frame;
pub mod handler;
pub mod http;
pub mod schemas;
pub mod shared_service;
pub mod status;
pub mod tools;

pub use handler::{BcpMcp, McpState};
