//! The durable queue of order events with `[redis]`: every replica enqueues there and every
//! live replica drains it, so an event survives the replica that placed the order, a restart,
//! and a replica that dies while sending it.
//!
//! Three keys: a sorted set of event ids scored by when each may next be taken (milliseconds,
//! Redis's clock, so replicas' clocks never disagree), a hash of the events themselves, and a
//! hash of claims (event id → the claiming batch's random token). Claiming a due event moves
//! its score `claim_timeout` ahead and records the token; the claimer renews the score every
//! third of that while it holds the event. A replica that dies stops renewing, the score comes
//! due, and another replica claims it: delivery is at-least-once, and the receiver
//! deduplicates on the event id (`Webhook-Id`). A failed attempt is put back with its backoff
//! as the score, so the retry goes to whichever replica is alive then. Every step after the
//! claim is fenced by the token: a replica whose claim lapsed changes nothing.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{Notify, Semaphore};

use super::OrderWebhooksConfig;
use super::deliver::{Deliverer, Event};
use crate::replicas::link::millis;
use crate::replicas::{Link, RedisDown, Shared};

const DUE: &str = "bcp:order-events:due";
const RECORDS: &str = "bcp:order-events:records";
const CLAIMS: &str = "bcp:order-events:claims";

/// Events claimed in one round trip at most.
const BATCH: usize = 32;
/// The longest a replica goes without looking for due events (those another replica queued,
/// or whose claim lapsed).
const IDLE_POLL: Duration = Duration::from_millis(500);

/// `TIME` in milliseconds, as a Lua number (exact up to 2^53).
const NOW: &str = r"
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
";

/// KEYS: due, records. ARGV: id, event, capacity. 1 when queued, 0 when full.
const ENQUEUE: &str = r"
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then
  return 0
end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[1], now, ARGV[1])
return 1
";

/// KEYS: due, records, claims. ARGV: most to claim, claim ms, token. Answers the ms until the
/// next event comes due (-1: none), then id and event of each claimed.
const CLAIM: &str = r"
local held_until = now + tonumber(ARGV[2])
local reply = {-1}
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[1]))
for _, id in ipairs(due) do
  local event = redis.call('HGET', KEYS[2], id)
  if event then
    redis.call('ZADD', KEYS[1], held_until, id)
    redis.call('HSET', KEYS[3], id, ARGV[3])
    reply[#reply + 1] = id
    reply[#reply + 1] = event
  else
    redis.call('ZREM', KEYS[1], id)
    redis.call('HDEL', KEYS[3], id)
  end
end
local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
if first[2] then
  reply[1] = math.max(0, tonumber(first[2]) - now)
end
return reply
";

/// KEYS: due, claims. ARGV: claim ms, then id and token pairs. Answers the ids no longer ours.
const RENEW: &str = r"
local held_until = now + tonumber(ARGV[1])
local lost = {}
for i = 2, #ARGV, 2 do
  if redis.call('HGET', KEYS[2], ARGV[i]) == ARGV[i + 1] then
    redis.call('ZADD', KEYS[1], 'XX', held_until, ARGV[i])
  else
    lost[#lost + 1] = ARGV[i]
  end
end
return lost
";

/// KEYS: due, records, claims. ARGV: id, token, the event as it now is, wait ms. The event
/// goes back to the queue, due after the wait; 0 when the claim was no longer ours.
const RETRY_LATER: &str = r"
if redis.call('HGET', KEYS[3], ARGV[1]) ~= ARGV[2] then
  return 0
end
redis.call('HDEL', KEYS[3], ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[4]), ARGV[1])
return 1
";

/// KEYS: due, records, claims. ARGV: id, token. The delivery is over; 0 when the claim was
/// no longer ours.
const FINISH: &str = r"
if redis.call('HGET', KEYS[3], ARGV[1]) ~= ARGV[2] then
  return 0
end
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('HDEL', KEYS[3], ARGV[1])
return 1
";

fn eval(code: &str, keys: &[&str], args: &[&str]) -> redis::Cmd {
    let mut eval = redis::cmd("EVAL");
    eval.arg(format!("{NOW}{code}")).arg(keys.len());
    for key in keys {
        eval.arg(*key);
    }
    for arg in args {
        eval.arg(*arg);
    }
    eval
}

/// Due events taken by one claim.
struct Claimed {
    token: String,
    events: Vec<(String, Option<Event>)>,
    /// When the next event comes due, if any is queued.
    next_due: Option<Duration>,
}

pub(super) struct SharedQueue {
    link: Arc<Link>,
    capacity: usize,
    claim_timeout: Duration,
    deliverer: Arc<Deliverer>,
    /// Events this replica holds a claim on, by id: the claim's token.
    in_hand: Mutex<HashMap<String, String>>,
    /// Claims this replica may hold at once.
    hand: Arc<Semaphore>,
    /// Wakes the claimer when this replica queued an event.
    queued: Notify,
}

impl SharedQueue {
    /// Starts this replica's claimer and the renewal of its claims (needs a runtime).
    pub(super) fn start(
        shared: &Shared,
        config: &OrderWebhooksConfig,
        deliverer: Arc<Deliverer>,
    ) -> Arc<Self> {
        let queue = Arc::new(Self {
            link: shared.link.clone(),
            capacity: config.queue_capacity.max(1),
            claim_timeout: Duration::from_millis(config.claim_timeout_ms.max(1_000)),
            deliverer,
            in_hand: Mutex::new(HashMap::new()),
            hand: Arc::new(Semaphore::new(config.queue_capacity.max(1))),
            queued: Notify::new(),
        });
        // The tasks hold the queue weakly: they end with the bridge.
        let weak = Arc::downgrade(&queue);
        tokio::spawn(async move { claim_forever(weak).await });
        let weak = Arc::downgrade(&queue);
        tokio::spawn(async move { renew_forever(weak).await });
        queue
    }

    fn lock_hand(&self) -> std::sync::MutexGuard<'_, HashMap<String, String>> {
        self.in_hand
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Queues `event` in Redis (or drops it, logged, when `queue_capacity` events are held
    /// already); gives it back when Redis cannot take it.
    pub(super) async fn enqueue(&self, event: Event) -> Result<(), Event> {
        let Ok(text) = serde_json::to_string(&event) else {
            return Ok(());
        };
        let capacity = self.capacity.to_string();
        let queued: Result<i64, RedisDown> = self
            .link
            .query(&eval(
                ENQUEUE,
                &[DUE, RECORDS],
                &[&event.id, &text, &capacity],
            ))
            .await;
        match queued {
            Ok(1) => {
                tracing::info!(event_id = event.id, "order event queued");
                self.queued.notify_one();
                Ok(())
            }
            Ok(_) => {
                tracing::warn!(
                    event_id = event.id,
                    "order event dropped: the delivery queue is full (order_webhooks.queue_capacity)"
                );
                Ok(())
            }
            Err(RedisDown) => Err(event),
        }
    }

    async fn claim(&self, most: usize) -> Result<Claimed, RedisDown> {
        let token = uuid::Uuid::new_v4().to_string();
        let reply: Vec<redis::Value> = self
            .link
            .query(&eval(
                CLAIM,
                &[DUE, RECORDS, CLAIMS],
                &[
                    &most.max(1).to_string(),
                    &millis(self.claim_timeout).to_string(),
                    &token,
                ],
            ))
            .await?;
        let mut reply = reply.into_iter();
        let next_due = match reply.next() {
            Some(redis::Value::Int(wait)) if wait >= 0 => {
                Some(Duration::from_millis(u64::try_from(wait).unwrap_or(0)))
            }
            _ => None,
        };
        let mut events = Vec::new();
        while let (Some(id), Some(event)) = (reply.next(), reply.next()) {
            let (Ok(id), Ok(event)) = (
                redis::from_redis_value::<String>(&id),
                redis::from_redis_value::<String>(&event),
            ) else {
                continue;
            };
            events.push((id, serde_json::from_str::<Event>(&event).ok()));
        }
        Ok(Claimed {
            token,
            events,
            next_due,
        })
    }

    /// One claimed event: one attempt, then the event finished or put back for its retry.
    async fn deliver(self: Arc<Self>, id: String, event: Option<Event>) {
        let next = match &event {
            Some(event) => {
                self.deliverer
                    .attempt_once(event, event.attempts.saturating_add(1))
                    .await
            }
            None => {
                tracing::warn!(
                    event_id = id,
                    "order event dropped: its queued record is unreadable"
                );
                None
            }
        };
        let Some(token) = self.lock_hand().remove(&id) else {
            tracing::warn!(
                event_id = id,
                "order event claim lapsed during the attempt; another replica has it"
            );
            return;
        };
        let settled: Result<i64, RedisDown> = match (next, event) {
            (Some(wait), Some(mut event)) => {
                event.attempts = event.attempts.saturating_add(1);
                match serde_json::to_string(&event) {
                    Ok(text) => {
                        self.link
                            .query(&eval(
                                RETRY_LATER,
                                &[DUE, RECORDS, CLAIMS],
                                &[&id, &token, &text, &millis(wait).to_string()],
                            ))
                            .await
                    }
                    Err(_) => self.finish(&id, &token).await,
                }
            }
            _ => self.finish(&id, &token).await,
        };
        if settled.is_err() {
            // The claim lapses and another replica takes the event again.
            tracing::warn!(
                event_id = id,
                "order event outcome not recorded: redis unavailable; it will be claimed again"
            );
        }
    }

    async fn finish(&self, id: &str, token: &str) -> Result<i64, RedisDown> {
        self.link
            .query(&eval(FINISH, &[DUE, RECORDS, CLAIMS], &[id, token]))
            .await
    }

    /// Claims what is due, as far as the hand allows; the wait before looking again.
    async fn claim_round(self: &Arc<Self>) -> Duration {
        let room = self.hand.available_permits().min(BATCH);
        if room == 0 {
            // Every place is taken: look again when one is given back.
            if let Ok(permit) = self.hand.clone().acquire_owned().await {
                drop(permit);
            }
            return Duration::ZERO;
        }
        let claimed = match self.claim(room).await {
            Ok(claimed) => claimed,
            Err(RedisDown) => return IDLE_POLL,
        };
        let full = claimed.events.len() >= room;
        for (id, event) in claimed.events {
            let Ok(place) = self.hand.clone().try_acquire_owned() else {
                break;
            };
            self.lock_hand().insert(id.clone(), claimed.token.clone());
            let queue = self.clone();
            tokio::spawn(async move {
                queue.deliver(id, event).await;
                drop(place);
            });
        }
        if full {
            return Duration::ZERO;
        }
        claimed.next_due.unwrap_or(IDLE_POLL).min(IDLE_POLL)
    }

    /// Keeps this replica's claims from lapsing; forgets the ones that did.
    async fn renew(&self) {
        let held: Vec<(String, String)> = self
            .lock_hand()
            .iter()
            .map(|(id, token)| (id.clone(), token.clone()))
            .collect();
        if held.is_empty() {
            return;
        }
        let timeout = millis(self.claim_timeout).to_string();
        let mut args: Vec<&str> = vec![&timeout];
        for (id, token) in &held {
            args.push(id);
            args.push(token);
        }
        let lost: Result<Vec<String>, RedisDown> =
            self.link.query(&eval(RENEW, &[DUE, CLAIMS], &args)).await;
        match lost {
            Ok(lost) => {
                let mut hand = self.lock_hand();
                for id in lost {
                    hand.remove(&id);
                }
            }
            Err(RedisDown) => tracing::warn!("order event claims not renewed: redis unavailable"),
        }
    }
}

async fn claim_forever(queue: std::sync::Weak<SharedQueue>) {
    loop {
        let Some(strong) = queue.upgrade() else {
            return;
        };
        let wait = strong.claim_round().await;
        if wait.is_zero() {
            continue;
        }
        tokio::select! {
            () = strong.queued.notified() => {}
            () = tokio::time::sleep(wait) => {}
        }
    }
}

async fn renew_forever(queue: std::sync::Weak<SharedQueue>) {
    loop {
        let Some(period) = queue.upgrade().map(|queue| queue.claim_timeout / 3) else {
            return;
        };
        tokio::time::sleep(period).await;
        let Some(queue) = queue.upgrade() else {
            return;
        };
        queue.renew().await;
    }
}
