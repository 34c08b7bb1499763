//! Issue 35 item 1: order handles are sealed under one key every replica shares through the
//! real Redis, so a handle minted by one replica (or before a restart) opens on another, and a
//! bridge on another Redis opens none of them.

use std::sync::Arc;

use bcp_bridge::brain::checkout::handles::OrderHandles;
use bcp_bridge::replicas::Link;
use bcp_bridge::settings::Secret;

use crate::support::redis::RedisServer;

fn link(redis: &RedisServer) -> Arc<Link> {
    let url = Secret(redis.url(None).into());
    Arc::new(Link::new(&url).unwrap())
}

#[tokio::test]
#[ignore = "needs redis-server: cargo test -- --include-ignored with redis-server on the PATH (.ci/run installs it)"]
async fn a_handle_minted_on_one_replica_opens_on_another_and_after_a_restart() {
    let redis = RedisServer::run(None);
    let first = OrderHandles::shared(link(&redis));
    let handle = first.sealer().await.unwrap().seal("wc_order_1234").unwrap();
    // Another replica, or this one restarted: a new link, the same key from Redis.
    let second = OrderHandles::shared(link(&redis));
    let sealer = second.sealer().await.unwrap();
    assert_eq!(sealer.open(&handle).as_deref(), Some("wc_order_1234"));
    assert_eq!(sealer.seal("wc_order_1234").unwrap(), handle);
    // A bridge on another Redis (another key) opens nothing minted here.
    let elsewhere = RedisServer::run(None);
    let foreign = OrderHandles::shared(link(&elsewhere));
    assert_eq!(foreign.sealer().await.unwrap().open(&handle), None);
}

#[tokio::test]
async fn with_redis_down_no_handle_is_made_and_none_is_guessed() {
    let port = crate::support::redis::free_port();
    let url = Secret(format!("redis://127.0.0.1:{port}").into());
    let handles = OrderHandles::shared(Arc::new(Link::new(&url).unwrap()));
    assert!(handles.sealer().await.is_err(), "no key without Redis");
}
