//! Idempotent cart mutations: a request carrying `meta["idempotency-key"]` is run against the
//! store at most once per (agent profile, tool, key); a retry with the same payload gets the
//! stored result, a different payload gets 409. Records live in a shared store (memory or
//! Redis) so several replicas agree; when that store is down the bridge refuses (503) rather
//! than risk running a mutation twice.
//!
//! No client can fill the records for others (issue 35 item 2):
//! - an answer that changed nothing (a business error: `ucp.status: "error"`, no resource) is
//!   kept for the lock window only, so concurrent duplicates still share it, not for 24 h; a
//!   retry after that runs again, which cannot do anything twice since the first did nothing.
//!   `complete_checkout` is the exception: its "not found" can follow an order the store placed
//!   (the checkout read back after placing was gone), so every completion answer keeps 24 h;
//! - a running mutation holds `max_record_bytes` of room for its answer, and every record is
//!   charged to its [`Client`]'s address and, when its signature verified, its agent, each of
//!   which may hold `client_bytes`; past it a new key is refused with a `retry_after` from that
//!   holder's own oldest record;
//! - the in-memory store keeps an eighth of `memory_bytes` for `complete_checkout` alone, so a
//!   fresh-key completion is admitted when other calls filled the rest.

mod config;
mod local;
mod quota;
mod record;
mod redis_store;

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use serde_json::Value;
use serde_json::value::RawValue;
use sha2::{Digest, Sha256};

use crate::protocol::answer::{Answer, Outcome};
use crate::protocol::tool::{Effect, ToolName};
use crate::replicas::Shared;
use crate::settings::ConfigProblem;

pub use config::{
    Backend, COMPLETION_RESERVE_DIVISOR, DEFAULT_CLIENT_BYTES, DEFAULT_MAX_RECORD_BYTES,
    DEFAULT_MEMORY_BYTES, IdempotencyConfig,
};
pub use local::MemoryStore;
pub use quota::{Charge, Client, Holder, Quotas};
pub use record::Record;
use record::weight;
pub use redis_store::RedisStore;

/// What a claim asks of a bounded store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Room {
    /// Held for the answer while the mutation runs (`max_record_bytes`), so mutations in
    /// flight cannot carry the store past its bound when their answers land.
    pub bytes: usize,
    /// A `complete_checkout`: it may use the part of the store kept for completions.
    pub completion: bool,
}

#[derive(Debug, thiserror::Error)]
#[error("idempotency store unavailable")]
pub struct StoreUnavailable;

/// Why a key could not be claimed.
#[derive(Debug, thiserror::Error)]
pub enum ClaimError {
    #[error(transparent)]
    Unavailable(#[from] StoreUnavailable),
    /// The store is at its bound; room frees up as its oldest record expires.
    #[error("idempotency store full")]
    Full { retry_after: Duration },
}

#[async_trait]
pub trait IdempotencyStore: Send + Sync {
    /// Atomically stores `Pending` under `key` for `lock` if nothing is there; otherwise
    /// returns what is there. `Ok(None)` means the caller now owns the key. A bounded store
    /// holds `room` for the answer until the claim completes or is released.
    async fn claim(
        &self,
        key: &str,
        fingerprint: &str,
        lock: Duration,
        room: Room,
    ) -> Result<Option<Record>, ClaimError>;
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

/// Whose key it is: agent-chosen keys are scoped per agent profile and per operation; the
/// record is charged to `client`.
#[derive(Debug, Clone, Copy)]
pub struct Scope<'a> {
    pub profile: &'a str,
    pub tool: ToolName,
    pub key: &'a str,
    pub client: Client,
}

/// Who runs a keyed mutation, and which: what its record is charged to and how long it keeps.
#[derive(Debug, Clone, Copy)]
pub struct Claimant {
    pub client: Client,
    pub tool: ToolName,
}

impl Claimant {
    fn completion(self) -> bool {
        self.tool.effect() == Effect::Completes
    }

    /// Whether `answer` may have changed the store, and so must be replayed for `ttl_secs`.
    /// A business error is an outcome without a resource: nothing was created, changed or
    /// canceled (a cart whose every line the store refused is discarded before the answer).
    /// A completion's answer may follow a placed order whatever it says, so it always keeps.
    fn keeps(self, answer: &Answer) -> bool {
        answer.outcome() == Outcome::Success || self.completion()
    }
}

pub struct Idempotency {
    store: SharedStore,
    quotas: Arc<Quotas>,
    ttl: Duration,
    lock: Duration,
    record_room: usize,
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
    /// A call that may only be replayed found no answer recorded for its key and payload.
    #[error("no answer recorded to replay")]
    NotRecorded,
}

fn full(retry_after: Duration) -> IdempotencyError {
    IdempotencyError::Full {
        retry_after_secs: retry_after.as_secs().max(1),
    }
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
            quotas: Arc::new(Quotas::new(
                usize::try_from(config.client_bytes).unwrap_or(usize::MAX),
            )),
            ttl: Duration::from_secs(config.ttl_secs),
            lock: Duration::from_secs(config.lock_secs),
            record_room: usize::try_from(config.max_record_bytes).unwrap_or(usize::MAX),
        }
    }

    /// What each client's records hold.
    pub fn quotas(&self) -> &Quotas {
        &self.quotas
    }

    /// Runs `operation` on `arguments`; with a scope, once for its key, the arguments'
    /// fingerprint telling a retry from a different payload (duplicates are replayed or
    /// refused). Without one (no key, or a read) it simply runs. `replay_only` (a signed
    /// request whose nonce was already used) runs nothing: only the answer recorded for the
    /// same key and payload is given, and `NotRecorded` when there is none.
    pub async fn once<O, F, E>(
        &self,
        scope: Option<Scope<'_>>,
        arguments: Value,
        replay_only: bool,
        operation: O,
    ) -> Result<Answer, E>
    where
        O: FnOnce(Value) -> F,
        F: Future<Output = Result<Answer, E>>,
        E: From<IdempotencyError>,
    {
        if replay_only {
            let recorded = match scope {
                Some(scope) => self.recorded(scope, &arguments).await?,
                None => None,
            };
            return recorded.ok_or_else(|| IdempotencyError::NotRecorded.into());
        }
        let Some(scope) = scope else {
            return operation(arguments).await;
        };
        let key = scoped_key(scope.profile, scope.tool.as_str(), scope.key);
        let fingerprint = fingerprint(&arguments);
        let claimant = Claimant {
            client: scope.client,
            tool: scope.tool,
        };
        self.run(&key, &fingerprint, claimant, operation(arguments))
            .await
    }

    /// The recorded answer of the mutation `scope` names when it ran with these `arguments`
    /// (waiting while it still runs), running nothing: what a signed request whose nonce was
    /// already used may be answered with (its byte-identical retry). `None` when no such
    /// answer is, or will shortly be, recorded.
    async fn recorded(
        &self,
        scope: Scope<'_>,
        arguments: &Value,
    ) -> Result<Option<Answer>, IdempotencyError> {
        let key = scoped_key(scope.profile, scope.tool.as_str(), scope.key);
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

    /// Runs `operation` once for `key` (already scoped) and `fingerprint`; replays or refuses
    /// duplicates. Protocol errors are not recorded: the store was not changed, so a retry
    /// should really run again. The record is charged to `claimant`'s client, who is refused
    /// past its share (a replay charges nothing: it is refused nothing).
    pub async fn run<F, E>(
        &self,
        key: &str,
        fingerprint: &str,
        claimant: Claimant,
        operation: F,
    ) -> Result<Answer, E>
    where
        F: Future<Output = Result<Answer, E>>,
        E: From<IdempotencyError>,
    {
        let started = Instant::now();
        let room = Room {
            bytes: self.record_room,
            completion: claimant.completion(),
        };
        loop {
            let existing = self
                .store
                .claim(key, fingerprint, self.lock, room)
                .await
                .map_err(|refused| match refused {
                    ClaimError::Unavailable(_) => {
                        tracing::warn!("idempotency store unavailable: refusing the mutation");
                        E::from(unavailable())
                    }
                    ClaimError::Full { retry_after } => {
                        tracing::warn!(
                            retry_after_secs = retry_after.as_secs(),
                            "idempotency store full: refusing the mutation; raise \
                             [idempotency] memory_bytes or use Redis"
                        );
                        E::from(full(retry_after))
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
        // The key is ours: now its client's share. Checked after the claim so a replay,
        // which adds nothing, is never refused for it.
        let charge = match self.quotas.charge(
            claimant.client,
            self.record_room,
            Instant::now() + self.lock,
        ) {
            Ok(charge) => charge,
            Err(retry_after) => {
                if self.store.release(key).await.is_err() {
                    tracing::warn!("idempotency store unavailable: claim left to expire");
                }
                // Debug, not warn: a flood would write one line per refused call, and a
                // client past its own share stops no one else.
                tracing::debug!(
                    retry_after_secs = retry_after.as_secs(),
                    "idempotency: a client holds all [idempotency] client_bytes allows; \
                     refusing its new key"
                );
                return Err(full(retry_after).into());
            }
        };
        let mut claim = Claim {
            held: Some((self.store.clone(), self.quotas.clone(), charge)),
            key: key.to_owned(),
        };
        let outcome = operation.await;
        claim.held = None;
        match outcome {
            Ok(answer) => {
                let ttl = if claimant.keeps(&answer) {
                    self.ttl
                } else {
                    // Changed nothing: kept while duplicates may still arrive together.
                    self.lock
                };
                // The brain's encoding is valid JSON; this only wraps the bytes.
                let recorded = RawValue::from_string(answer.json().to_owned()).ok();
                let stored = match recorded {
                    Some(recorded) => {
                        let record = Record::Done {
                            fingerprint: fingerprint.to_owned(),
                            answer: recorded,
                        };
                        let held = weight(key, &record);
                        if held > self.record_room {
                            tracing::warn!(
                                bytes = held,
                                "idempotency: an answer past [idempotency] max_record_bytes, \
                                 kept whole for its retries and charged in full to its client"
                            );
                        }
                        let stored = self.store.complete(key, &record, ttl).await.is_ok();
                        if stored {
                            self.quotas.settle(charge, held, Instant::now() + ttl);
                        }
                        stored
                    }
                    None => false,
                };
                if !stored {
                    self.quotas.cancel(charge);
                    // The store already changed: the agent gets its answer; a retry after the
                    // lock expires could run again, which is all we can do without the store.
                    tracing::warn!("idempotency store unavailable: result not recorded");
                }
                Ok(answer)
            }
            Err(error) => {
                self.quotas.cancel(charge);
                if self.store.release(key).await.is_err() {
                    tracing::warn!("idempotency store unavailable: claim left to expire");
                }
                Err(error)
            }
        }
    }
}

/// Releases a claim whose request was dropped mid-way (client gone, shutdown), so duplicates
/// need not wait for the lock to expire, and gives its client's share back.
struct Claim {
    held: Option<(SharedStore, Arc<Quotas>, Charge)>,
    key: String,
}

impl Drop for Claim {
    fn drop(&mut self) {
        let Some((store, quotas, charge)) = self.held.take() else {
            return;
        };
        quotas.cancel(charge);
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let key = std::mem::take(&mut self.key);
            runtime.spawn(async move {
                let _ = store.release(&key).await;
            });
        }
    }
}

#[cfg(test)]
mod tests;
