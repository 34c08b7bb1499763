//! What a front hands the pipeline: one typed call, whatever wire it came over.

use std::net::IpAddr;

use http::HeaderMap;
use serde_json::{Map, Value};

pub use crate::signatures::Passage;
pub use crate::signatures::Received as Covered;

/// One tool call as a front read it.
pub struct Call<'a> {
    /// The tool's wire name (`search_catalog`, …); an unknown one is refused by the pipeline.
    pub tool: &'a str,
    /// The tool's arguments, `meta` included when the wire carries it there.
    pub arguments: Map<String, Value>,
    /// Metadata the transport carries beside the arguments (MCP's `params._meta`; a REST
    /// front maps `UCP-Agent` and `Idempotency-Key` headers here as `ucp-agent` and
    /// `idempotency-key`). Keys the arguments' `meta` lacks are taken from it.
    pub meta: Option<&'a Map<String, Value>>,
    /// The request as sent, for the signature step; `None` when the front already had the
    /// whole message admitted (`Pipeline::admit`), e.g. a call inside a frame rmcp reads.
    pub covered: Option<Covered<'a>>,
    /// What the front's own signature check found when `covered` is `None`.
    pub admitted: Passage,
    /// The client's address, for the per-peer inbound budget and the idempotency share.
    pub peer: Option<IpAddr>,
    /// The wire it came over (`mcp`, `rest`), for the call's trace span.
    pub transport: &'static str,
    /// The request's headers, whose W3C `traceparent` parents the call's trace span.
    pub trace_headers: Option<&'a HeaderMap>,
}
