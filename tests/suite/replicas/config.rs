//! `[redis]` is checked by key, and replicas name their one Redis once.

use bcp_bridge::startup::{BridgeConfig, ConfigError};

fn problem_keys(text: &str) -> Vec<String> {
    match BridgeConfig::from_toml(text) {
        Err(ConfigError::Invalid(problems)) => problems.into_iter().map(|p| p.key).collect(),
        other => panic!("expected problems, got {other:?}"),
    }
}

#[test]
fn redis_keys_are_checked_and_idempotency_needs_no_second_url() {
    let keys =
        problem_keys("[redis]\nurl = \"http://cache:6379\"\nreplicas = 0\nlock_lease_ms = 5\n");
    for key in ["redis.url", "redis.replicas", "redis.lock_lease_ms"] {
        assert!(keys.iter().any(|found| found == key), "{key}: {keys:?}");
    }
    let keys = problem_keys(
        "[redis]\nurl = \"redis://cache:6379/0\"\n[idempotency]\nbackend = \"memory\"\nredis_url = \"redis://other:6379/\"\n",
    );
    assert!(
        keys.contains(&"idempotency.redis_url".to_owned()),
        "{keys:?}"
    );
    assert!(keys.contains(&"idempotency.backend".to_owned()), "{keys:?}");
    // With [redis], idempotency needs no key of its own; without it nothing changes.
    let config = BridgeConfig::from_toml("[redis]\nurl = \"redis://cache:6379/0\"\n").unwrap();
    assert!(config.redis.url.is_some());
    assert!(config.idempotency.backend.is_none());
    let single = BridgeConfig::from_toml("").unwrap();
    assert!(single.redis.url.is_none());
}
