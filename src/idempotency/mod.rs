//! Idempotent cart mutations: a request carrying `meta["idempotency-key"]` is run against the
//! store at most once per (agent profile, tool, key); a retry with the same payload gets the
//! stored result, a different payload gets 409. Records live in a shared store (memory or
//! Redis) so several replicas agree; when that store is down the bridge refuses (503) rather
//! than risk running a mutation twice.

mod local;
mod redis_store;

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;
use sha2::{Digest, Sha256};

use crate::protocol::answer::Answer;
use crate::replicas::Shared;
use crate::settings::{ConfigProblem, Secret};

pub use local::MemoryStore;
pub use redis_store::RedisStore;

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
    pub memory_bytes: u64,
}

/// 128 MiB: some 60,000 keyed cart mutations a day on one process; more wants Redis.
pub const DEFAULT_MEMORY_BYTES: usize = 128 << 20;

impl Default for IdempotencyConfig {
    fn default() -> Self {
        Self {
            backend: None,
            ttl_secs: 86_400,
            redis_url: None,
            lock_secs: 30,
            memory_bytes: DEFAULT_MEMORY_BYTES as u64,
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

/// What the store holds under one scoped key.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(into = "Stored", try_from = "Stored")]
pub enum Record {
    /// Claimed by a request still running.
    Pending { fingerprint: String },
    /// The answer's bytes as the agent first got them, so a replay is the same bytes.
    Done {
        fingerprint: String,
        answer: Box<RawValue>,
    },
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
enum State {
    Pending,
    Done,
}

/// A record as stored text: flat, because serde cannot carry raw JSON through an
/// internally tagged enum.
#[derive(Serialize, Deserialize)]
struct Stored {
    state: State,
    fingerprint: String,
    /// `result`: records written before answers were kept as bytes.
    #[serde(default, alias = "result", skip_serializing_if = "Option::is_none")]
    answer: Option<Box<RawValue>>,
}

impl From<Record> for Stored {
    fn from(record: Record) -> Self {
        match record {
            Record::Pending { fingerprint } => Self {
                state: State::Pending,
                fingerprint,
                answer: None,
            },
            Record::Done {
                fingerprint,
                answer,
            } => Self {
                state: State::Done,
                fingerprint,
                answer: Some(answer),
            },
        }
    }
}

impl TryFrom<Stored> for Record {
    type Error = &'static str;

    fn try_from(stored: Stored) -> Result<Self, Self::Error> {
        match (stored.state, stored.answer) {
            (State::Pending, _) => Ok(Self::Pending {
                fingerprint: stored.fingerprint,
            }),
            (State::Done, Some(answer)) => Ok(Self::Done {
                fingerprint: stored.fingerprint,
                answer,
            }),
            (State::Done, None) => Err("a done record without its answer"),
        }
    }
}

impl PartialEq for Record {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Self::Pending { fingerprint: a }, Self::Pending { fingerprint: b }) => a == b,
            (
                Self::Done {
                    fingerprint: a,
                    answer: x,
                },
                Self::Done {
                    fingerprint: b,
                    answer: y,
                },
            ) => a == b && x.get() == y.get(),
            _ => false,
        }
    }
}

#[derive(Debug, thiserror::Error)]
#[error("idempotency store unavailable")]
pub struct StoreUnavailable;

/// Why a key could not be claimed.
#[derive(Debug, thiserror::Error)]
pub enum ClaimRefused {
    #[error(transparent)]
    Unavailable(#[from] StoreUnavailable),
    /// The store is at its bound; room frees up as its oldest record expires.
    #[error("idempotency store full")]
    Full { retry_after: Duration },
}

#[async_trait]
pub trait IdempotencyStore: Send + Sync {
    /// Atomically stores `Pending` under `key` for `lock` if nothing is there; otherwise
    /// returns what is there. `Ok(None)` means the caller now owns the key.
    async fn claim(
        &self,
        key: &str,
        fingerprint: &str,
        lock: Duration,
    ) -> Result<Option<Record>, ClaimRefused>;
    async fn complete(
        &self,
        key: &str,
        record: &Record,
        ttl: Duration,
    ) -> Result<(), StoreUnavailable>;
    /// Drops a claim whose request failed before reaching a result, so a retry can run.
    async fn release(&self, key: &str) -> Result<(), StoreUnavailable>;
    /// What is stored under `key`, claiming nothing.
    async fn peek(&self, key: &str) -> Result<Option<Record>, StoreUnavailable>;
}

pub type SharedStore = Arc<dyn IdempotencyStore>;

/// The configured store; `shared` is the replicas' Redis (`[redis] url`), which wins.
pub fn build_store(
    config: &IdempotencyConfig,
    shared: Option<&Shared>,
) -> Result<SharedStore, ConfigProblem> {
    if let Some(shared) = shared {
        return Ok(Arc::new(RedisStore::on(shared.link.clone())));
    }
    match (config.backend.unwrap_or(Backend::Memory), &config.redis_url) {
        (Backend::Redis, Some(url)) => {
            Ok(Arc::new(RedisStore::new(url).map_err(|message| {
                ConfigProblem::new("idempotency.redis_url", message)
            })?))
        }
        (Backend::Redis, None) => Err(ConfigProblem::new(
            "idempotency.redis_url",
            "required when backend = \"redis\"",
        )),
        (Backend::Memory, _) => Ok(Arc::new(MemoryStore::new(
            usize::try_from(config.memory_bytes).unwrap_or(usize::MAX),
        ))),
    }
}

const RETRY_AFTER_SECS: u64 = 2;
const POLL: Duration = Duration::from_millis(25);

fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// The hash of the arguments without `meta`: what makes two requests "the same payload".
pub fn fingerprint(arguments: &Value) -> String {
    sha256_hex(&crate::protocol::canonical::payload(arguments))
}

/// The store key: hashed parts, so agent-chosen strings never shape the key space.
pub fn scoped_key(profile: &str, tool: &str, key: &str) -> String {
    format!(
        "bcp:idem:{}:{tool}:{}",
        sha256_hex(profile.as_bytes()),
        sha256_hex(key.as_bytes())
    )
}

/// Whose key it is: agent-chosen keys are scoped per agent profile and per operation.
#[derive(Debug, Clone, Copy)]
pub struct Scope<'a> {
    pub profile: &'a str,
    pub tool: &'a str,
    pub key: &'a str,
}

pub struct Idempotency {
    store: SharedStore,
    ttl: Duration,
    lock: Duration,
}

/// Why a mutation carrying an idempotency key was not run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum IdempotencyError {
    /// The key's store cannot be reached (or a duplicate waited past the lock): running the
    /// mutation now could run it twice.
    #[error("idempotency store unavailable")]
    Unavailable { retry_after_secs: u64 },
    #[error("idempotency key reused with a different payload")]
    Conflict,
    /// The in-memory store holds all it may: running the mutation unrecorded could run it
    /// twice on a retry.
    #[error("idempotency store full")]
    Full { retry_after_secs: u64 },
}

fn unavailable() -> IdempotencyError {
    IdempotencyError::Unavailable {
        retry_after_secs: RETRY_AFTER_SECS,
    }
}

impl Idempotency {
    pub fn new(config: &IdempotencyConfig, store: SharedStore) -> Self {
        Self {
            store,
            ttl: Duration::from_secs(config.ttl_secs),
            lock: Duration::from_secs(config.lock_secs),
        }
    }

    /// Runs `operation` on `arguments`; with a scope, once for its key, the arguments'
    /// fingerprint telling a retry from a different payload (duplicates are replayed or
    /// refused). Without one (no key, or a read) it simply runs.
    pub async fn once<O, F, E>(
        &self,
        scope: Option<Scope<'_>>,
        arguments: Value,
        operation: O,
    ) -> Result<Answer, E>
    where
        O: FnOnce(Value) -> F,
        F: Future<Output = Result<Answer, E>>,
        E: From<IdempotencyError>,
    {
        let Some(scope) = scope else {
            return operation(arguments).await;
        };
        let key = scoped_key(scope.profile, scope.tool, scope.key);
        let fingerprint = fingerprint(&arguments);
        self.run(&key, &fingerprint, operation(arguments)).await
    }

    /// Runs `operation` once for `key` (already scoped) and `fingerprint`; replays or refuses
    /// duplicates. Protocol errors are not recorded: the store was not changed, so a retry
    /// should really run again.
    /// The recorded answer of the mutation `scope` names when it ran with these `arguments`
    /// (waiting while it still runs), running nothing: what a signed request whose nonce was
    /// already used may be answered with (its byte-identical retry). `None` when no such
    /// answer is, or will shortly be, recorded.
    pub async fn recorded(
        &self,
        scope: Scope<'_>,
        arguments: &Value,
    ) -> Result<Option<Answer>, IdempotencyError> {
        let key = scoped_key(scope.profile, scope.tool, scope.key);
        let fingerprint = fingerprint(arguments);
        let started = Instant::now();
        loop {
            let stored = self.store.peek(&key).await.map_err(|_| unavailable())?;
            match stored {
                Some(Record::Done {
                    fingerprint: stored,
                    answer,
                }) if stored == fingerprint => {
                    tracing::info!("idempotent replay of a signed request");
                    return Answer::replayed(answer.get().to_owned())
                        .map(Some)
                        .map_err(|_| unavailable());
                }
                Some(Record::Pending {
                    fingerprint: stored,
                }) if stored == fingerprint && started.elapsed() <= self.lock => {
                    tokio::time::sleep(POLL).await;
                }
                _ => return Ok(None),
            }
        }
    }

    pub async fn run<F, E>(&self, key: &str, fingerprint: &str, operation: F) -> Result<Answer, E>
    where
        F: Future<Output = Result<Answer, E>>,
        E: From<IdempotencyError>,
    {
        let started = Instant::now();
        loop {
            let existing = self
                .store
                .claim(key, fingerprint, self.lock)
                .await
                .map_err(|refused| match refused {
                    ClaimRefused::Unavailable(_) => {
                        tracing::warn!("idempotency store unavailable: refusing the mutation");
                        E::from(unavailable())
                    }
                    ClaimRefused::Full { retry_after } => {
                        tracing::warn!(
                            retry_after_secs = retry_after.as_secs(),
                            "idempotency store full: refusing the mutation; raise \
                             [idempotency] memory_bytes or use Redis"
                        );
                        E::from(IdempotencyError::Full {
                            retry_after_secs: retry_after.as_secs().max(1),
                        })
                    }
                })?;
            match existing {
                None => break,
                Some(Record::Done {
                    fingerprint: stored,
                    answer,
                }) => {
                    if stored == fingerprint {
                        tracing::info!("idempotent replay");
                        return Answer::replayed(answer.get().to_owned()).map_err(|_| {
                            tracing::warn!("idempotency store: unreadable recorded answer");
                            E::from(unavailable())
                        });
                    }
                    return Err(IdempotencyError::Conflict.into());
                }
                Some(Record::Pending {
                    fingerprint: stored,
                }) => {
                    if stored != fingerprint {
                        return Err(IdempotencyError::Conflict.into());
                    }
                    // The first request is still running (here or on another replica):
                    // wait for its result instead of running the mutation a second time.
                    if started.elapsed() > self.lock {
                        return Err(unavailable().into());
                    }
                    tokio::time::sleep(POLL).await;
                }
            }
        }
        let mut claim = Claim {
            store: Some(self.store.clone()),
            key: key.to_owned(),
        };
        let outcome = operation.await;
        claim.store = None;
        match outcome {
            Ok(answer) => {
                // The brain's encoding is valid JSON; this only wraps the bytes.
                let recorded = RawValue::from_string(answer.json().to_owned()).ok();
                let stored = match recorded {
                    Some(recorded) => {
                        let record = Record::Done {
                            fingerprint: fingerprint.to_owned(),
                            answer: recorded,
                        };
                        self.store.complete(key, &record, self.ttl).await.is_ok()
                    }
                    None => false,
                };
                if !stored {
                    // The store already changed: the agent gets its answer; a retry after the
                    // lock expires could run again, which is all we can do without the store.
                    tracing::warn!("idempotency store unavailable: result not recorded");
                }
                Ok(answer)
            }
            Err(error) => {
                if self.store.release(key).await.is_err() {
                    tracing::warn!("idempotency store unavailable: claim left to expire");
                }
                Err(error)
            }
        }
    }
}

/// Releases a claim whose request was dropped mid-way (client gone, shutdown), so duplicates
/// need not wait for the lock to expire.
struct Claim {
    store: Option<SharedStore>,
    key: String,
}

impl Drop for Claim {
    fn drop(&mut self) {
        if let (Some(store), Ok(runtime)) =
            (self.store.take(), tokio::runtime::Handle::try_current())
        {
            let key = std::mem::take(&mut self.key);
            runtime.spawn(async move {
                let _ = store.release(&key).await;
            });
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn fingerprint_ignores_meta_and_key_order() {
        let a =
            json!({"meta": {"idempotency-key": "a"}, "cart": {"x": 1, "y": [1, {"b": 2, "a": 1}]}});
        let b =
            json!({"cart": {"y": [1, {"a": 1, "b": 2}], "x": 1}, "meta": {"idempotency-key": "b"}});
        assert_eq!(fingerprint(&a), fingerprint(&b));
        let c = json!({"cart": {"y": [1, {"a": 1, "b": 3}], "x": 1}});
        assert_ne!(fingerprint(&a), fingerprint(&c));
    }

    #[tokio::test]
    async fn a_dropped_request_releases_its_claim() {
        let store: SharedStore = Arc::new(MemoryStore::default());
        let idempotency = Idempotency::new(&IdempotencyConfig::default(), store.clone());
        let pending = idempotency.run(
            "k",
            "fp",
            std::future::pending::<Result<Answer, IdempotencyError>>(),
        );
        // Polls the request until it has claimed the key, then drops it.
        let _ = tokio::time::timeout(Duration::from_millis(50), pending).await;
        tokio::task::yield_now().await;
        let claim = store
            .claim("k", "fp", Duration::from_secs(1))
            .await
            .unwrap();
        assert_eq!(claim, None, "the key is free again");
    }

    #[test]
    fn scoped_keys_differ_by_profile_tool_and_key() {
        let base = scoped_key("p", "update_cart", "k");
        assert_ne!(base, scoped_key("q", "update_cart", "k"));
        assert_ne!(base, scoped_key("p", "cancel_cart", "k"));
        assert_ne!(base, scoped_key("p", "update_cart", "l"));
    }
}

#[cfg(test)]
mod record_tests {
    #![allow(clippy::unwrap_used, clippy::panic)]
    use super::*;

    #[test]
    fn a_recorded_answer_comes_back_as_the_same_bytes_through_the_stored_text() {
        let bytes = r#"{"ucp":{"version":"2026-07-28","status":"error"},"messages":[{"type":"error","code":"not_found","content":"x"}],"z":1,"a":2}"#;
        let record = Record::Done {
            fingerprint: "fp".into(),
            answer: RawValue::from_string(bytes.to_owned()).unwrap(),
        };
        let text = serde_json::to_string(&record).unwrap();
        let back: Record = serde_json::from_str(&text).unwrap();
        assert_eq!(back, record);
        let Record::Done { answer, .. } = back else {
            panic!("a done record");
        };
        let replayed = Answer::replayed(answer.get().to_owned()).unwrap();
        assert_eq!(replayed.json(), bytes);
        assert_eq!(replayed.reason(), Some("not_found"));
        // Records written before answers were kept as bytes still replay.
        let older = r#"{"state":"done","fingerprint":"fp","result":{"ucp":{"status":"success"}}}"#;
        let Record::Done { answer, .. } = serde_json::from_str(older).unwrap() else {
            panic!("a done record");
        };
        assert_eq!(answer.get(), r#"{"ucp":{"status":"success"}}"#);
    }
}
