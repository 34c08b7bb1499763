//! `[idempotency]`: the store, how long records keep, and the bounds that keep one client
//! from filling it for others.

use serde::Deserialize;

use super::redis_store;
use crate::settings::{ConfigProblem, Secret};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Backend {
    Memory,
    Redis,
}

#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct IdempotencyConfig {
    /// Unset: Redis when `[redis] url` is set (replicas share records), memory otherwise.
    pub backend: Option<Backend>,
    /// How long a finished request's result is replayed; UCP asks for at least 24 h.
    pub ttl_secs: u64,
    /// `redis://[:password@]host:port[/db]` for a single process that keeps its records in
    /// Redis; replicas name their one Redis in `[redis] url` instead.
    pub redis_url: Option<Secret>,
    /// How long a request may hold its key while it runs; a duplicate waits at most this long.
    pub lock_secs: u64,
    /// With the in-memory store: the most its records may hold, in bytes (a cart mutation's
    /// record is about 2 KB). When full, new keyed mutations are refused (503, `retry_after`
    /// until the oldest record expires); live records are never evicted before `ttl_secs`.
    /// An eighth of it is kept for `complete_checkout` alone, so a buyer's completion is
    /// admitted when other calls filled the rest.
    pub memory_bytes: u64,
    /// The most one client's records may hold, in bytes. A record is charged to the caller's
    /// address (behind `server.trusted_proxies`, the one `X-Forwarded-For` names; IPv6 by its
    /// /64) and, when its request signature verified, to that agent as well; a new key is
    /// refused (503, `retry_after` until that address's or agent's own oldest record expires)
    /// once either holds this much, while other clients go on. Counted by each process (with
    /// Redis: per replica). Business errors are kept only `lock_secs`, so mostly successes count.
    pub client_bytes: u64,
    /// The room a keyed mutation holds for its answer while it runs, in bytes: what the store
    /// and the client's share are charged until the answer is known. At the default `[limits]`
    /// every answer fits; a larger one is still kept whole (a retry must get the same bytes)
    /// and charged in full to its client.
    pub max_record_bytes: u64,
}

/// 128 MiB: some 60,000 keyed cart mutations a day on one process; more wants Redis.
pub const DEFAULT_MEMORY_BYTES: usize = 128 << 20;
/// 8 MiB: some 4,000 kept cart mutations a day per client, and a sixteenth of the default
/// store, so it takes many clients (and more than one address each) to fill it.
pub const DEFAULT_CLIENT_BYTES: usize = 8 << 20;
/// 128 KiB: above a 100-line cart or checkout answer (the default `[limits] max_cart_lines`).
pub const DEFAULT_MAX_RECORD_BYTES: usize = 128 << 10;
/// The part of `memory_bytes` only `complete_checkout` may use: one eighth.
pub const COMPLETION_RESERVE_DIVISOR: usize = 8;

impl Default for IdempotencyConfig {
    fn default() -> Self {
        Self {
            backend: None,
            ttl_secs: 86_400,
            redis_url: None,
            lock_secs: 30,
            memory_bytes: DEFAULT_MEMORY_BYTES as u64,
            client_bytes: DEFAULT_CLIENT_BYTES as u64,
            max_record_bytes: DEFAULT_MAX_RECORD_BYTES as u64,
        }
    }
}

impl IdempotencyConfig {
    /// `shared_redis`: whether `[redis] url` is set, which this store then uses.
    pub fn problems(&self, shared_redis: bool) -> Vec<ConfigProblem> {
        let mut problems = Vec::new();
        // CART-026: results must be kept for at least 24 hours.
        if self.ttl_secs < 86_400 {
            problems.push(ConfigProblem::new(
                "idempotency.ttl_secs",
                "must be at least 86400 (UCP keeps idempotent results for 24 h or more)",
            ));
        }
        if self.lock_secs == 0 || self.lock_secs > 600 {
            problems.push(ConfigProblem::new(
                "idempotency.lock_secs",
                "must be between 1 and 600",
            ));
        }
        if self.memory_bytes < 1 << 20 {
            problems.push(ConfigProblem::new(
                "idempotency.memory_bytes",
                "must be at least 1048576 (1 MiB): a few hundred keyed mutations",
            ));
        }
        if self.max_record_bytes < 4096 {
            problems.push(ConfigProblem::new(
                "idempotency.max_record_bytes",
                "must be at least 4096: a cart answer is a few KB",
            ));
        } else if self.max_record_bytes > self.client_bytes {
            problems.push(ConfigProblem::new(
                "idempotency.client_bytes",
                "must be at least idempotency.max_record_bytes: a client must fit one running mutation",
            ));
        }
        let memory = !shared_redis && self.backend != Some(Backend::Redis);
        if memory
            && self.memory_bytes >= 1 << 20
            && self.max_record_bytes > self.memory_bytes / COMPLETION_RESERVE_DIVISOR as u64
        {
            problems.push(ConfigProblem::new(
                "idempotency.max_record_bytes",
                "must be at most an eighth of idempotency.memory_bytes (the room kept for complete_checkout)",
            ));
        }
        if shared_redis {
            if self.redis_url.is_some() {
                problems.push(ConfigProblem::new(
                    "idempotency.redis_url",
                    "not needed: idempotency uses [redis] url, the one Redis of every replica",
                ));
            }
            if self.backend == Some(Backend::Memory) {
                problems.push(ConfigProblem::new(
                    "idempotency.backend",
                    "\"memory\" would let replicas run one mutation twice; with [redis] the records live there",
                ));
            }
            return problems;
        }
        match (self.backend.unwrap_or(Backend::Memory), &self.redis_url) {
            (Backend::Redis, None) => problems.push(ConfigProblem::new(
                "idempotency.redis_url",
                "required when backend = \"redis\" (or set [redis] url)",
            )),
            (Backend::Redis, Some(url)) => {
                if let Err(message) = redis_store::check_url(url) {
                    problems.push(ConfigProblem::new("idempotency.redis_url", message));
                }
            }
            (Backend::Memory, Some(_)) => problems.push(ConfigProblem::new(
                "idempotency.redis_url",
                "only used with backend = \"redis\"",
            )),
            (Backend::Memory, None) => {}
        }
        problems
    }
}
