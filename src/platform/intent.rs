//! The write-ahead record of a cart replacement. A replacement can take several upstream
//! requests and stores cannot group them, so a writer that dies (`kill -9`), loses its lease
//! or meets a store failing between two of them leaves a cart that is neither the set before
//! nor the one asked for. Before its first request a writer records what it was asked for
//! (under the cart's lease, tagged with its fencing token) and clears the record once the
//! store holds it; a record still there when the lease is free marks a cart that may be half
//! replaced, and whoever touches the cart next finishes the replacement (a replacement is
//! "empty, then add": running it again from any midpoint ends at exactly the requested set).
//!
//! The record holds the draft (lines, buyer context, pass-through attributes): it lives only
//! in the replicas' Redis, for at most `TTL`, like the idempotency records beside it.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::model::CartDraft;
use crate::replicas::link::{DELETE_IF_HOLDS, millis, script};
use crate::replicas::{Link, RedisDown, hashed};

/// How long an unfinished replacement is remembered; past it, a cart left half replaced
/// stays so until its next write.
const TTL: Duration = Duration::from_secs(3600);

/// Puts back the record ours replaced (or none) while ours is still there.
const ABANDON: &str = r"
if redis.call('GET', KEYS[1]) == ARGV[1] then
  if ARGV[2] == '' then
    return redis.call('DEL', KEYS[1])
  end
  redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
  return 1
end
return 0
";

#[derive(Serialize, Deserialize)]
struct Stored {
    /// The fencing token of the writer that recorded it: makes each record's text unique.
    token: String,
    draft: CartDraft,
}

/// A recorded, unfinished replacement: its text (to clear exactly it) and its draft.
pub struct Intent {
    pub text: String,
    pub draft: CartDraft,
}

pub fn key(id: &str) -> String {
    format!("bcp:cart-intent:{}", hashed(id))
}

/// What `record` wrote and what it replaced.
pub struct Recorded {
    pub text: String,
    /// An earlier writer's unfinished replacement, superseded by this one.
    pub replaced: Option<String>,
}

/// Records that the holder of `token` is replacing cart `id` with `draft`.
pub async fn record(
    link: &Link,
    id: &str,
    token: &str,
    draft: &CartDraft,
) -> Result<Recorded, RedisDown> {
    let text = serde_json::to_string(&Stored {
        token: token.to_owned(),
        draft: draft.clone(),
    })
    .map_err(|_| RedisDown)?;
    let mut set = redis::cmd("SET");
    set.arg(key(id))
        .arg(&text)
        .arg("PX")
        .arg(millis(TTL))
        .arg("GET");
    let replaced: Option<String> = link.query(&set).await?;
    Ok(Recorded { text, replaced })
}

/// The replacement recorded as `recorded` failed before sending anything: the record it
/// superseded (a cart possibly still half replaced by an earlier writer) is put back.
pub async fn abandon(link: &Link, id: &str, recorded: &Recorded) {
    let ttl = millis(TTL).to_string();
    let eval = script(
        ABANDON,
        &key(id),
        &[
            &recorded.text,
            recorded.replaced.as_deref().unwrap_or(""),
            &ttl,
        ],
    );
    let abandoned: Result<i64, RedisDown> = link.query(&eval).await;
    if abandoned.is_err() {
        tracing::warn!("unsent cart replacement left recorded: the next read runs it");
    }
}

/// The unfinished replacement of cart `id`, if any (an unreadable record counts as none).
pub fn parse(text: Option<String>) -> Option<Intent> {
    let text = text?;
    let stored: Stored = serde_json::from_str(&text).ok()?;
    Some(Intent {
        text,
        draft: stored.draft,
    })
}

pub async fn pending(link: &Link, id: &str) -> Result<Option<Intent>, RedisDown> {
    let mut get = redis::cmd("GET");
    get.arg(key(id));
    let text: Option<String> = link.query(&get).await?;
    Ok(parse(text))
}

/// The replacement recorded as `text` is in the store: forgets it (unless a newer one
/// replaced it meanwhile). A failure only leaves the next toucher a finished replacement to
/// run again, which changes nothing.
pub async fn clear(link: &Link, id: &str, text: &str) {
    // Only while it is still the record we read, not a newer writer's.
    let eval = script(DELETE_IF_HOLDS, &key(id), &[text]);
    let cleared: Result<i64, RedisDown> = link.query(&eval).await;
    if cleared.is_err() {
        tracing::warn!("finished cart replacement not cleared: the next read runs it again");
    }
}
