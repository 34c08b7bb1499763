//! Production hardening: upstream budget and retries, inbound rate limits, the request
//! guard around every tool call, and cache-invalidating webhooks.

pub mod guard;
pub mod inbound;
pub mod upstream;
pub mod webhooks;
