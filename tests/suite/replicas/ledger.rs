//! Issue 36 item 4: the completion ledger's rules ("placed at most once", the narrow retry of
//! checkout.md) hold when its entries live in the real Redis the replicas share: two handles on
//! two connections stand for two replicas.

use std::sync::Arc;

use bcp_bridge::brain::checkout::completions::Completions;
use bcp_bridge::brain::checkout::ledger::{Settled, Turn};
use bcp_bridge::replicas::Link;
use bcp_bridge::settings::Secret;

use crate::support::redis::RedisServer;

fn replica(redis: &RedisServer) -> Completions {
    let url = Secret(redis.url(None).into());
    Completions::Shared(Arc::new(Link::new(&url).unwrap()))
}

#[tokio::test]
#[ignore = "needs redis-server: cargo test -- --include-ignored with redis-server on the PATH (.ci/run installs it)"]
async fn a_completion_on_one_replica_holds_the_checkout_on_the_other() {
    let redis = RedisServer::run(None);
    let (a, b) = (replica(&redis), replica(&redis));
    assert_eq!(a.admit("chk_1", "k1").await.unwrap(), Turn::Place);
    // Running on A: B's other key places nothing, A's own key is told it is in progress.
    assert_eq!(b.admit("chk_1", "k2").await.unwrap(), Turn::Busy);
    assert_eq!(b.admit("chk_1", "k1").await.unwrap(), Turn::InProgress);
    assert!(b.frozen("chk_1").await.unwrap());
    // A settle by a key that does not own the entry changes nothing.
    b.settle("chk_1", "k2", Settled::Placed).await;
    assert_eq!(b.admit("chk_1", "k2").await.unwrap(), Turn::Busy);
    a.settle("chk_1", "k1", Settled::Placed).await;
    assert_eq!(
        b.admit("chk_1", "k1").await.unwrap(),
        Turn::Placed { same_key: true }
    );
    assert_eq!(
        b.admit("chk_1", "k2").await.unwrap(),
        Turn::Placed { same_key: false }
    );
    assert!(!b.frozen("chk_1").await.unwrap());
    // The idempotency key itself is not what Redis holds.
    let keys = super::redis_keys(&redis, "bcp:checkout-ledger:*").await;
    assert_eq!(keys.len(), 1);
    assert!(!keys[0].contains("chk_1"));
}

#[tokio::test]
#[ignore = "needs redis-server: cargo test -- --include-ignored with redis-server on the PATH (.ci/run installs it)"]
async fn only_the_same_key_retries_an_unknown_outcome_on_any_replica() {
    let redis = RedisServer::run(None);
    let (a, b) = (replica(&redis), replica(&redis));
    assert_eq!(a.admit("chk_2", "k1").await.unwrap(), Turn::Place);
    a.settle("chk_2", "k1", Settled::Unknown).await;
    assert_eq!(b.admit("chk_2", "k2").await.unwrap(), Turn::Busy);
    assert_eq!(b.admit("chk_2", "k1").await.unwrap(), Turn::Recheck);
    // A refusal frees the checkout for a fresh key.
    b.settle("chk_2", "k1", Settled::Refused).await;
    assert_eq!(a.admit("chk_2", "k3").await.unwrap(), Turn::Place);
}

#[tokio::test]
async fn without_redis_a_completion_is_refused_not_admitted() {
    let port = crate::support::redis::free_port();
    let url = Secret(format!("redis://127.0.0.1:{port}").into());
    let ledger = Completions::Shared(Arc::new(Link::new(&url).unwrap()));
    assert!(ledger.admit("chk_3", "k1").await.is_err());
    assert!(ledger.frozen("chk_3").await.is_err());
}
