//! Inbound limits at the bridge's own door: tool calls per agent profile and per client
//! address (`budget`, shared by replicas in `shared`), and the limits every call runs within
//! (`limits`: those budgets and the whole-request deadline), and how a late request body is
//! told apart (`body_read`, below both fronts). The upstream budget and retries
//! belong to the platform layer's `platform::upstream`.

pub mod body_read;
pub mod budget;
mod limiter;
pub mod limits;
pub mod shared;
