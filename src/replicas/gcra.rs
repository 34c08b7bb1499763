//! A rate budget every replica draws from: GCRA (the algorithm `governor` runs in memory)
//! as one Lua script, so checking and charging is one atomic step in Redis, timed by Redis's
//! own clock (replicas' clocks need not agree). The key holds only the "theoretical arrival
//! time" and expires once the budget is full again.

use std::time::Duration;

use super::link::{Link, RedisDown};

/// KEYS[1] the budget; ARGV[1] µs between two requests; ARGV[2] requests allowed at once.
/// Returns 0 when admitted (and charged), else the µs to wait before asking again.
const SCRIPT: &str = r"
redis.replicate_commands()
local interval = tonumber(ARGV[1])
local tolerance = interval * (tonumber(ARGV[2]) - 1)
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000000 + tonumber(clock[2])
local tat = tonumber(redis.call('GET', KEYS[1])) or now
if tat < now then tat = now end
local wait = tat - tolerance - now
if wait > 0 then return math.ceil(wait) end
local next_tat = tat + interval
redis.call('SET', KEYS[1], string.format('%d', next_tat), 'PX', math.ceil((next_tat - now) / 1000) + 1)
return 0
";

/// `burst` requests at once, then one per `interval`, across every replica using `key`.
#[derive(Debug, Clone)]
pub struct Gcra {
    pub key: String,
    pub interval: Duration,
    pub burst: u32,
}

impl Gcra {
    /// `per_period` requests per `period`, `burst` at once (0 → `per_period`).
    pub fn new(key: String, per_period: u32, period: Duration, burst: u32) -> Self {
        let per_period = per_period.max(1);
        Self {
            key,
            interval: period / per_period,
            burst: if burst == 0 { per_period } else { burst },
        }
    }

    /// Takes one request from the budget: `None` when admitted, else how long until one is free.
    pub async fn take(&self, link: &Link) -> Result<Option<Duration>, RedisDown> {
        let mut eval = redis::cmd("EVAL");
        eval.arg(SCRIPT)
            .arg(1)
            .arg(&self.key)
            .arg(
                u64::try_from(self.interval.as_micros())
                    .unwrap_or(u64::MAX)
                    .max(1),
            )
            .arg(self.burst.max(1));
        let wait_micros: u64 = link.query(&eval).await?;
        Ok((wait_micros > 0).then(|| Duration::from_micros(wait_micros)))
    }
}
