//! Small records kept by id for a while — in this process's memory, or with `[redis]` where
//! every replica and a restarted one reads them. One shape for the maps that would otherwise
//! each hold state in one replica (a cart's conversion, a checkout's hand-off, Shopify's carts
//! and orders): in memory, bounded in bytes and forgotten after `kept` without use, least
//! recently used first; in Redis, one key per id (`<prefix>:<sha256 of the id>`, so an id an
//! outsider chose never shapes the key space) holding the record as JSON, expiring `kept`
//! after it was last written or read.

use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use serde::de::DeserializeOwned;

use super::link::millis;
use super::{Link, RedisDown, hashed};

/// How much one record weighs in memory, in bytes (key and value), for the byte bound.
pub type Weigher<V> = fn(&str, &V) -> usize;

pub struct Records<V: Clone + Send + Sync + 'static> {
    prefix: &'static str,
    kept: Duration,
    place: Place<V>,
}

enum Place<V: Clone + Send + Sync + 'static> {
    Local(moka::future::Cache<String, V>),
    Shared(Arc<Link>),
}

impl<V> Records<V>
where
    V: Clone + Send + Sync + Serialize + DeserializeOwned + 'static,
{
    /// In memory: at most `max_bytes` (as `weigh` counts them), each for `kept` after its last
    /// use. `prefix` names the Redis keys once `shared` is given a link.
    pub fn local(prefix: &'static str, kept: Duration, max_bytes: u64, weigh: Weigher<V>) -> Self {
        Self {
            prefix,
            kept,
            place: Place::Local(
                moka::future::Cache::builder()
                    .max_capacity(max_bytes)
                    .weigher(move |id: &String, value: &V| {
                        u32::try_from(weigh(id, value)).unwrap_or(u32::MAX)
                    })
                    .eviction_policy(moka::policy::EvictionPolicy::lru())
                    .time_to_idle(kept)
                    .build(),
            ),
        }
    }

    /// In `link` (`[redis]`) instead of memory, when there is one.
    pub fn shared(mut self, link: Option<Arc<Link>>) -> Self {
        if let Some(link) = link {
            self.place = Place::Shared(link);
        }
        self
    }

    fn key(&self, id: &str) -> String {
        format!("{}:{}", self.prefix, hashed(id))
    }

    /// The record of `id`, its life renewed. A record that no longer parses counts as none.
    pub async fn get(&self, id: &str) -> Result<Option<V>, RedisDown> {
        let link = match &self.place {
            Place::Local(cache) => return Ok(cache.get(id).await),
            Place::Shared(link) => link,
        };
        let mut get = redis::cmd("GETEX");
        get.arg(self.key(id)).arg("PX").arg(millis(self.kept));
        let text: Option<String> = link.query(&get).await?;
        Ok(text.and_then(|text| serde_json::from_str(&text).ok()))
    }

    /// Keeps `value` for `id`, replacing what was kept, for `kept` (or `kept_for`'s life when
    /// given: a record that outlives the usual).
    pub async fn put(&self, id: &str, value: V) -> Result<(), RedisDown> {
        self.put_for(id, value, self.kept).await
    }

    pub async fn put_for(&self, id: &str, value: V, kept: Duration) -> Result<(), RedisDown> {
        let link = match &self.place {
            Place::Local(cache) => {
                cache.insert(id.to_owned(), value).await;
                return Ok(());
            }
            Place::Shared(link) => link,
        };
        let text = serde_json::to_string(&value).map_err(|_| RedisDown)?;
        let mut set = redis::cmd("SET");
        set.arg(self.key(id)).arg(text).arg("PX").arg(millis(kept));
        link.query::<()>(&set).await
    }

    pub async fn remove(&self, id: &str) -> Result<(), RedisDown> {
        let link = match &self.place {
            Place::Local(cache) => {
                cache.invalidate(id).await;
                return Ok(());
            }
            Place::Shared(link) => link,
        };
        let mut del = redis::cmd("DEL");
        del.arg(self.key(id));
        link.query::<i64>(&del).await.map(|_| ())
    }

    /// Whether the records are in Redis.
    pub fn is_shared(&self) -> bool {
        matches!(self.place, Place::Shared(_))
    }

    /// The bytes held in memory (0 in Redis), once pending evictions ran.
    pub async fn local_bytes(&self) -> u64 {
        match &self.place {
            Place::Local(cache) => {
                cache.run_pending_tasks().await;
                cache.weighted_size()
            }
            Place::Shared(_) => 0,
        }
    }

    /// How many records memory holds (0 in Redis), once pending evictions ran.
    pub async fn local_count(&self) -> u64 {
        match &self.place {
            Place::Local(cache) => {
                cache.run_pending_tasks().await;
                cache.entry_count()
            }
            Place::Shared(_) => 0,
        }
    }
}
