//! The completion ledger (`ledger`: "placed at most once") where every replica reads it. One
//! process keeps it in memory; with `[redis]` each checkout's entry is one Redis key, changed
//! only by scripts that run the ledger's rules there, so a completion running on one replica
//! makes a second key on another `Busy`, and an order placed on one is `Placed` on all, and
//! after a restart.
//!
//! What Redis holds per checkout (`bcp:checkout-ledger:<sha256 of the id>`): the entry's kind,
//! the SHA-256 of the idempotency key that owns it (never the key itself) and, while running,
//! when it started. No buyer data. Entries live as long as an idempotency key (a day), as in
//! memory; a `Running` one left by a dead replica is re-checked by its own key after
//! `RUNNING_STALE`, as in memory. While Redis is unreachable, completions are refused with a
//! retriable error (fail closed, as cart writes are); reads go on.

use std::sync::Arc;
use std::time::Duration;

use super::ledger::{Ledger, Settled, Turn};
use crate::brain::BrainError;
use crate::platform::PlatformError;
use crate::replicas::link::millis;
use crate::replicas::{Link, RedisDown, hashed};

/// How long an entry is kept: the idempotency key's life, past which no retry is one.
const KEPT: Duration = Duration::from_secs(24 * 3600);
/// As `ledger`'s: a completion still `Running` this long after it started was dropped.
const RUNNING_STALE: Duration = Duration::from_secs(15 * 60);

/// `ledger::Ledger::admit`, as one script. ARGV: key hash, now (ms), stale (ms), kept (ms).
/// Entries are `R|owner|since`, `U|owner`, `P|owner`.
const ADMIT: &str = r"
local entry = redis.call('GET', KEYS[1])
local now = tonumber(ARGV[2])
local function run()
  redis.call('SET', KEYS[1], 'R|' .. ARGV[1] .. '|' .. ARGV[2], 'PX', ARGV[4])
end
if not entry then
  run()
  return 'place'
end
local kind, owner, since = string.match(entry, '^(%a)|([^|]*)|?(%d*)$')
if kind == 'P' then
  if owner == ARGV[1] then return 'placed_same' end
  return 'placed_other'
end
if owner == ARGV[1] then
  if kind == 'R' and since ~= '' and now - tonumber(since) < tonumber(ARGV[3]) then
    return 'in_progress'
  end
  run()
  return 'recheck'
end
return 'busy'
";

/// `ledger::Ledger::settle`: only the owner's entry changes. ARGV: key hash, how, kept (ms).
const SETTLE: &str = r"
local entry = redis.call('GET', KEYS[1])
if not entry then return 0 end
local owner = string.match(entry, '^%a|([^|]*)')
if owner ~= ARGV[1] then return 0 end
if ARGV[2] == 'refused' then
  return redis.call('DEL', KEYS[1])
end
local kind = 'U'
if ARGV[2] == 'placed' then kind = 'P' end
redis.call('SET', KEYS[1], kind .. '|' .. ARGV[1], 'PX', ARGV[3])
return 1
";

pub enum Completions {
    /// This process's own ledger.
    Local(Ledger),
    /// The replicas' ledger in Redis.
    Shared(Arc<Link>),
}

impl Default for Completions {
    fn default() -> Self {
        Self::Local(Ledger::default())
    }
}

fn key(checkout: &str) -> String {
    format!("bcp:checkout-ledger:{}", hashed(checkout))
}

/// A completion is refused, retriably, while the replicas cannot agree who places.
fn unreachable(_: RedisDown) -> BrainError {
    BrainError::Platform(PlatformError::WritesPaused {
        reason: "replicas cannot coordinate checkout completions while their shared Redis is unreachable",
        retry_after: Duration::from_secs(2),
    })
}

fn now_ms() -> u64 {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    millis(now)
}

impl Completions {
    pub async fn admit(&self, checkout: &str, idempotency_key: &str) -> Result<Turn, BrainError> {
        let link = match self {
            Self::Local(ledger) => return Ok(ledger.admit(checkout, idempotency_key)),
            Self::Shared(link) => link,
        };
        let mut eval = redis::cmd("EVAL");
        eval.arg(ADMIT)
            .arg(1)
            .arg(key(checkout))
            .arg(hashed(idempotency_key))
            .arg(now_ms())
            .arg(millis(RUNNING_STALE))
            .arg(millis(KEPT));
        let answer: String = link.query(&eval).await.map_err(unreachable)?;
        Ok(match answer.as_str() {
            "place" => Turn::Place,
            "recheck" => Turn::Recheck,
            "in_progress" => Turn::InProgress,
            "placed_same" => Turn::Placed { same_key: true },
            "placed_other" => Turn::Placed { same_key: false },
            _ => Turn::Busy,
        })
    }

    /// Whether a completion is running or unsettled. `Err` only when Redis cannot say: a
    /// write refuses then, a read goes on as if not.
    pub async fn frozen(&self, checkout: &str) -> Result<bool, BrainError> {
        let link = match self {
            Self::Local(ledger) => return Ok(ledger.frozen(checkout)),
            Self::Shared(link) => link,
        };
        let mut get = redis::cmd("GET");
        get.arg(key(checkout));
        let entry: Option<String> = link.query(&get).await.map_err(unreachable)?;
        Ok(entry.is_some_and(|entry| entry.starts_with("R|") || entry.starts_with("U|")))
    }

    /// How the completion under `idempotency_key` ended. Unrecorded (Redis away), the entry
    /// stays `Running`: only the same key may try again, after `RUNNING_STALE` and a re-read
    /// of the store, so nothing is placed twice.
    pub async fn settle(&self, checkout: &str, idempotency_key: &str, how: Settled) {
        let link = match self {
            Self::Local(ledger) => return ledger.settle(checkout, idempotency_key, how),
            Self::Shared(link) => link,
        };
        let how = match how {
            Settled::Placed => "placed",
            Settled::Refused => "refused",
            Settled::Unknown => "unknown",
        };
        let mut eval = redis::cmd("EVAL");
        eval.arg(SETTLE)
            .arg(1)
            .arg(key(checkout))
            .arg(hashed(idempotency_key))
            .arg(how)
            .arg(millis(KEPT));
        let settled: Result<i64, RedisDown> = link.query(&eval).await;
        if settled.is_err() {
            tracing::warn!(
                "checkout completion not settled in the shared ledger: it stays running"
            );
        }
    }

    /// The store already holds the order (seen on a read). In memory only: with Redis, a
    /// later key is admitted to the store re-read, which finds the order and places nothing.
    pub fn placed_elsewhere(&self, checkout: &str) {
        if let Self::Local(ledger) = self {
            ledger.placed_elsewhere(checkout);
        }
    }

    /// A canceled checkout keeps no entry.
    pub async fn forget(&self, checkout: &str) {
        let link = match self {
            Self::Local(ledger) => return ledger.forget(checkout),
            Self::Shared(link) => link,
        };
        let mut del = redis::cmd("DEL");
        del.arg(key(checkout));
        let _: Result<i64, RedisDown> = link.query(&del).await;
    }
}
