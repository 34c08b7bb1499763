//! Production hardening at the bridge's own door: inbound rate limits (shared by replicas in
//! `shared_inbound`), the request guard around every tool call, and cache-invalidating
//! webhooks (fanned out to every replica by `invalidations`). (The upstream budget and retries
//! belong to the platform layer's `platform::upstream`.)

pub mod guard;
pub mod inbound;
pub mod invalidations;
mod keyed;
pub mod shared_inbound;
pub mod webhooks;
