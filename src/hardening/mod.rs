//! Production hardening at the bridge's own door: inbound rate limits, the request guard
//! around every tool call, and cache-invalidating webhooks. (The upstream budget and retries
//! belong to the platform layer's `platform::upstream`.)

pub mod guard;
pub mod inbound;
mod keyed;
pub mod webhooks;
