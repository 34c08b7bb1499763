//! The Pix charges complete created, where every replica reads them: in this process's memory,
//! or with `[redis]` in Redis, so a replica that did not create a charge (or restarted since)
//! still settles or expires it, and each `endToEndId` is applied once across all of them.
//!
//! What Redis holds: per checkout (`bcp:pix:charge:<sha256 of the checkout id>`) the charge as
//! the checkout shows it (txid, amount, BR Code, expiry, the store's order id, how it ended);
//! per txid the checkout it belongs to; the set of checkouts whose charge is still pending
//! (the sweeper's list); and each applied `endToEndId`. No buyer data: the BR Code carries
//! the merchant's key and the amount only.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::brain::BrainError;
use crate::platform::PlatformError;
use crate::replicas::link::millis;
use crate::replicas::{Link, RedisDown, hashed};

/// How a charge stands for the bridge.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChargeState {
    /// Created, not yet paid: the checkout is `complete_in_progress`.
    Pending,
    /// Settlement verified and the store's order marked paid.
    Paid,
    /// Expired unpaid: the store's order was cancelled.
    Expired,
    /// The PSP reported a payment that does not match the charge: never marked paid.
    Failed,
}

/// One checkout's charge.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChargeRecord {
    pub checkout_id: String,
    /// The store's own id of the order placed awaiting payment.
    pub order_id: String,
    pub handler_id: String,
    pub txid: String,
    /// BRL, minor units.
    pub amount: i64,
    pub copia_e_cola: String,
    pub location: Option<String>,
    /// Unix seconds.
    pub expires_at: i64,
    pub state: ChargeState,
    pub end_to_end_id: Option<String>,
}

/// How long a charge is remembered after it expires: long enough for a late read of the
/// checkout, as a terminal checkout is remembered.
const KEPT: Duration = Duration::from_secs(7 * 24 * 3600);
/// How long an applied `endToEndId` is remembered: a Pix return (devolução) may come up to
/// 90 days later, and a notification is never that late.
const APPLIED_KEPT: Duration = Duration::from_secs(90 * 24 * 3600);
const PENDING: &str = "bcp:pix:pending";

/// The charge, its txid's index and its place on the pending list, written together. KEYS:
/// charge, txid, pending; ARGV: body, checkout id, ttl (ms), pending (1/0).
const PUT: &str = r"
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[3])
redis.call('SET', KEYS[2], ARGV[2], 'PX', ARGV[3])
if ARGV[4] == '1' then
  redis.call('SADD', KEYS[3], ARGV[2])
else
  redis.call('SREM', KEYS[3], ARGV[2])
end
return 1
";

fn charge_key(checkout: &str) -> String {
    format!("bcp:pix:charge:{}", hashed(checkout))
}

fn txid_key(txid: &str) -> String {
    format!("bcp:pix:txid:{}", hashed(txid))
}

fn applied_key(end_to_end: &str) -> String {
    format!("bcp:pix:e2e:{}", hashed(end_to_end))
}

fn unreachable(_: RedisDown) -> BrainError {
    BrainError::Platform(PlatformError::WritesPaused {
        reason: "replicas cannot share Pix charges while their shared Redis is unreachable",
        retry_after: Duration::from_secs(2),
    })
}

#[derive(Default)]
pub struct Local {
    charges: HashMap<String, ChargeRecord>,
    txids: HashMap<String, String>,
    applied: HashMap<String, String>,
}

pub enum PixBook {
    Local(Mutex<Local>),
    Shared(Arc<Link>),
}

impl Default for PixBook {
    fn default() -> Self {
        Self::Local(Mutex::new(Local::default()))
    }
}

/// Whether an `endToEndId` may be applied to `txid`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Claim {
    /// First seen now, or seen before for this same charge (an interrupted settlement).
    Ours,
    /// Already applied to another charge.
    Elsewhere,
}

impl PixBook {
    pub fn shared(link: Arc<Link>) -> Self {
        Self::Shared(link)
    }

    fn local(&self) -> Option<std::sync::MutexGuard<'_, Local>> {
        match self {
            Self::Local(local) => Some(
                local
                    .lock()
                    .unwrap_or_else(|poisoned| poisoned.into_inner()),
            ),
            Self::Shared(_) => None,
        }
    }

    /// Records (or rewrites) a checkout's charge.
    pub async fn put(&self, record: &ChargeRecord) -> Result<(), BrainError> {
        if let Some(mut local) = self.local() {
            let now = time::OffsetDateTime::now_utc().unix_timestamp();
            let kept = i64::try_from(KEPT.as_secs()).unwrap_or(i64::MAX);
            // Ended charges leave a week after they expired: the map never grows past what
            // a week of checkouts made.
            let stale: HashSet<String> = local
                .charges
                .values()
                .filter(|held| {
                    held.state != ChargeState::Pending && held.expires_at.saturating_add(kept) < now
                })
                .map(|held| held.checkout_id.clone())
                .collect();
            local.charges.retain(|id, _| !stale.contains(id));
            local.txids.retain(|_, id| !stale.contains(id));
            local
                .txids
                .insert(record.txid.clone(), record.checkout_id.clone());
            local
                .charges
                .insert(record.checkout_id.clone(), record.clone());
            return Ok(());
        }
        let Self::Shared(link) = self else {
            return Ok(());
        };
        let body = serde_json::to_string(record)
            .map_err(|_| BrainError::Internal("a Pix charge could not be recorded".into()))?;
        let now = time::OffsetDateTime::now_utc().unix_timestamp();
        let left = u64::try_from(record.expires_at.saturating_sub(now)).unwrap_or(0);
        let ttl = millis(KEPT + Duration::from_secs(left));
        let mut eval = redis::cmd("EVAL");
        eval.arg(PUT)
            .arg(3)
            .arg(charge_key(&record.checkout_id))
            .arg(txid_key(&record.txid))
            .arg(PENDING)
            .arg(&body)
            .arg(&record.checkout_id)
            .arg(ttl)
            .arg(if record.state == ChargeState::Pending {
                "1"
            } else {
                "0"
            });
        link.query::<i64>(&eval).await.map_err(unreachable)?;
        Ok(())
    }

    pub async fn get(&self, checkout: &str) -> Result<Option<ChargeRecord>, BrainError> {
        if let Some(local) = self.local() {
            return Ok(local.charges.get(checkout).cloned());
        }
        let Self::Shared(link) = self else {
            return Ok(None);
        };
        let mut get = redis::cmd("GET");
        get.arg(charge_key(checkout));
        let body: Option<String> = link.query(&get).await.map_err(unreachable)?;
        Ok(body.and_then(|body| serde_json::from_str(&body).ok()))
    }

    /// The checkout a txid belongs to.
    pub async fn by_txid(&self, txid: &str) -> Result<Option<String>, BrainError> {
        if let Some(local) = self.local() {
            return Ok(local.txids.get(txid).cloned());
        }
        let Self::Shared(link) = self else {
            return Ok(None);
        };
        let mut get = redis::cmd("GET");
        get.arg(txid_key(txid));
        link.query(&get).await.map_err(unreachable)
    }

    /// The checkouts whose charge is still pending, for the sweeper.
    pub async fn pending(&self) -> Result<Vec<String>, BrainError> {
        if let Some(local) = self.local() {
            return Ok(local
                .charges
                .values()
                .filter(|held| held.state == ChargeState::Pending)
                .map(|held| held.checkout_id.clone())
                .collect());
        }
        let Self::Shared(link) = self else {
            return Ok(Vec::new());
        };
        let mut members = redis::cmd("SMEMBERS");
        members.arg(PENDING);
        let ids: Vec<String> = link.query(&members).await.map_err(unreachable)?;
        Ok(ids)
    }

    /// Drops a checkout from the pending list whose record is gone (it outlived `KEPT`).
    pub async fn unlist(&self, checkout: &str) {
        if let Self::Shared(link) = self {
            let mut srem = redis::cmd("SREM");
            srem.arg(PENDING).arg(checkout);
            let _: Result<i64, RedisDown> = link.query(&srem).await;
        }
    }

    /// Claims `end_to_end` for `txid`: once applied to a charge it is never applied to
    /// another, across replicas and restarts.
    pub async fn claim(&self, end_to_end: &str, txid: &str) -> Result<Claim, BrainError> {
        if let Some(mut local) = self.local() {
            let owner = local
                .applied
                .entry(end_to_end.to_owned())
                .or_insert_with(|| txid.to_owned());
            return Ok(if owner == txid {
                Claim::Ours
            } else {
                Claim::Elsewhere
            });
        }
        let Self::Shared(link) = self else {
            return Ok(Claim::Elsewhere);
        };
        let key = applied_key(end_to_end);
        let mut set = redis::cmd("SET");
        set.arg(&key)
            .arg(txid)
            .arg("NX")
            .arg("PX")
            .arg(millis(APPLIED_KEPT));
        let taken: Option<String> = link.query(&set).await.map_err(unreachable)?;
        if taken.is_some() {
            return Ok(Claim::Ours);
        }
        let mut get = redis::cmd("GET");
        get.arg(&key);
        let owner: Option<String> = link.query(&get).await.map_err(unreachable)?;
        Ok(if owner.as_deref() == Some(txid) {
            Claim::Ours
        } else {
            Claim::Elsewhere
        })
    }
}
