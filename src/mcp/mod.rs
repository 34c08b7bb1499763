//! The MCP/JSON-RPC front: rmcp's Streamable HTTP service in sessionless JSON mode for
//! initialize, the tool list and sessions; the direct path for plain `tools/call`s. It only
//! reads and writes JSON-RPC: every call goes through `crate::pipeline`.

pub mod direct;
pub mod frame;
pub mod handler;
pub mod http;
pub mod jsonrpc;
pub mod shared_service;
pub mod token;

pub use handler::BcpMcp;
