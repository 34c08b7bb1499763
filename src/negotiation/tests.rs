//! The fetcher against real sockets on loopback. Host names go through a table resolver, so no
//! test sends a query or a packet off this machine; refused addresses must never see a connect.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::Router;
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::routing::get;
use serde_json::json;

use crate::protocol::request::CallMeta;
use tokio::net::TcpListener;

use super::fetch::{Resolver, TestAnswer};
use super::special_use::tests::TABLE;
use super::*;

fn config(hosts: &[&str]) -> NegotiationConfig {
    let hosts: Vec<String> = hosts.iter().map(|host| (*host).to_owned()).collect();
    NegotiationConfig {
        allow_http_hosts: hosts.clone(),
        allow_private_hosts: hosts,
        timeout_ms: 2_000,
        ..NegotiationConfig::default()
    }
}

fn negotiator(config: &NegotiationConfig, names: Vec<(String, TestAnswer)>) -> Negotiator {
    let table: HashMap<String, TestAnswer> = names.into_iter().collect();
    Negotiator::with_resolver(config, &Namespace::BCP, Resolver::Table(table))
}

fn to_loopback(name: &str) -> (String, TestAnswer) {
    (
        name.to_owned(),
        TestAnswer::Addresses(vec!["127.0.0.1".parse().unwrap()]),
    )
}

/// A loopback listener that only counts the connections it accepts.
async fn counting_listener() -> (u16, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let accepts = Arc::new(AtomicUsize::new(0));
    let counted = accepts.clone();
    tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            counted.fetch_add(1, Ordering::SeqCst);
            drop(socket);
        }
    });
    (port, accepts)
}

#[derive(Clone, Default)]
struct Load {
    hits: Arc<AtomicUsize>,
    in_flight: Arc<std::sync::Mutex<HashMap<String, usize>>>,
    max_global: Arc<AtomicUsize>,
    max_per_host: Arc<AtomicUsize>,
}

/// A profile host on loopback: `/slow/{ms}` answers a supported profile after `ms`, counting
/// requests and the most it had in flight, overall and per `Host` header.
async fn profile_server() -> (SocketAddr, Load) {
    let load = Load::default();
    let app = Router::new()
        .route(
            "/slow/{ms}",
            get(
                |State(load): State<Load>, Path(ms): Path<u64>, headers: HeaderMap| async move {
                    let host = headers
                        .get("host")
                        .and_then(|value| value.to_str().ok())
                        .unwrap_or("")
                        .to_owned();
                    load.hits.fetch_add(1, Ordering::SeqCst);
                    {
                        let mut in_flight = load.in_flight.lock().unwrap();
                        *in_flight.entry(host.clone()).or_insert(0) += 1;
                        let total: usize = in_flight.values().sum();
                        load.max_global.fetch_max(total, Ordering::SeqCst);
                        load.max_per_host
                            .fetch_max(in_flight[&host], Ordering::SeqCst);
                    }
                    tokio::time::sleep(Duration::from_millis(ms)).await;
                    *load.in_flight.lock().unwrap().get_mut(&host).unwrap() -= 1;
                    json!({"ucp": {"version": Namespace::BCP.version}}).to_string()
                },
            ),
        )
        .with_state(load.clone());
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (addr, load)
}

fn literal(ip: IpAddr, port: u16) -> String {
    match ip {
        IpAddr::V4(v4) => format!("https://{v4}:{port}/profile.json"),
        IpAddr::V6(v6) => format!("https://[{v6}]:{port}/profile.json"),
    }
}

#[tokio::test]
async fn refused_addresses_are_never_connected_to() {
    // DISC-011: every special-use block, as a literal and as a name resolving to it, is refused
    // before any connect: the listener that a wrong connect would reach sees no accept.
    let (port, accepts) = counting_listener().await;
    let refused: Vec<IpAddr> = TABLE
        .iter()
        .filter(|(_, refused)| *refused)
        .map(|(address, _)| address.parse().unwrap())
        .collect();
    let mut names: Vec<(String, TestAnswer)> = refused
        .iter()
        .enumerate()
        .map(|(index, ip)| (format!("s{index}.test"), TestAnswer::Addresses(vec![*ip])))
        .collect();
    // DNS rebinding shapes: a public answer next to a loopback one, a mapped loopback answer.
    names.push((
        "mixed.test".to_owned(),
        TestAnswer::Addresses(vec![
            "2606:4700:4700::1111".parse().unwrap(),
            "127.0.0.1".parse().unwrap(),
        ]),
    ));
    names.push(to_loopback("rebind.test"));
    names.push(to_loopback("allowed.test"));
    let negotiator = negotiator(&config(&["allowed.test"]), names);

    let mut urls: Vec<String> = refused.iter().map(|ip| literal(*ip, port)).collect();
    urls.extend((0..refused.len()).map(|index| format!("https://s{index}.test:{port}/p")));
    urls.extend(
        [
            "mixed.test",
            "rebind.test",
            // WHATWG spellings of 127.0.0.1 and IPv6 forms around it
            "0x7f.1",
            "2130706433",
            "127.1",
            "[::127.0.0.1]",
            "[::ffff:127.0.0.1]",
            "[::ffff:0:7f00:1]",
            "[64:ff9b::7f00:1]",
            "[64:ff9b:1::7f00:1]",
            "[2002:7f00:1::]",
        ]
        .iter()
        .map(|host| format!("https://{host}:{port}/p")),
    );
    for url in &urls {
        let refusal = negotiator.outcome(url).await.unwrap_err();
        assert_eq!(
            refusal.code,
            NegotiationCode::InvalidProfileUrl,
            "{url}: {refusal:?}"
        );
    }
    assert_eq!(
        accepts.load(Ordering::SeqCst),
        0,
        "a refused address was connected to"
    );

    // The counter does count: a listed host reaches the listener (and fails TLS there).
    let refusal = negotiator
        .outcome(&format!("https://allowed.test:{port}/p"))
        .await
        .unwrap_err();
    assert_eq!(refusal.code, NegotiationCode::ProfileUnreachable);
    assert_eq!(accepts.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn concurrent_checks_of_one_url_share_one_fetch() {
    let (addr, load) = profile_server().await;
    // No caching at all: sharing must come from coalescing, not from a stored outcome.
    let config = NegotiationConfig {
        cache_ttl_secs: 0,
        failure_cache_ttl_secs: 0,
        ..config(&["127.0.0.1"])
    };
    let negotiator = Arc::new(negotiator(&config, Vec::new()));
    let url = format!("http://{addr}/slow/1000");
    let mut calls = tokio::task::JoinSet::new();
    for _ in 0..20 {
        let negotiator = negotiator.clone();
        let url = url.clone();
        calls.spawn(async move { negotiator.outcome(&url).await });
    }
    while let Some(outcome) = calls.join_next().await {
        assert!(outcome.unwrap().is_ok());
    }
    assert_eq!(load.hits.load(Ordering::SeqCst), 1);
    negotiator.outcome(&url).await.unwrap();
    assert_eq!(load.hits.load(Ordering::SeqCst), 2, "nothing was cached");
}

#[tokio::test]
async fn fetches_are_bounded_globally_and_per_host() {
    let (addr, load) = profile_server().await;
    let hosts = ["a.test", "b.test", "c.test", "d.test"];
    // Waiting for a slot counts against the timeout: generous, so a loaded machine cannot
    // turn a queued fetch into a refusal (the bounds, not the speed, are under test).
    let config = NegotiationConfig {
        max_concurrent_fetches: 3,
        max_fetches_per_host: 2,
        timeout_ms: 10_000,
        ..config(&hosts)
    };
    let negotiator = Arc::new(negotiator(
        &config,
        hosts.iter().map(|host| to_loopback(host)).collect(),
    ));
    let mut calls = tokio::task::JoinSet::new();
    for host in hosts {
        for n in 0..3 {
            let negotiator = negotiator.clone();
            // Distinct URLs, so coalescing does not hide the limits.
            let url = format!("http://{host}:{}/slow/{}", addr.port(), 300 + n);
            calls.spawn(async move { negotiator.outcome(&url).await });
        }
    }
    while let Some(outcome) = calls.join_next().await {
        assert!(outcome.unwrap().is_ok());
    }
    assert_eq!(load.hits.load(Ordering::SeqCst), 12);
    assert_eq!(load.max_global.load(Ordering::SeqCst), 3);
    assert!(load.max_per_host.load(Ordering::SeqCst) <= 2);
    assert_eq!(negotiator.fetcher.limits().hosts_tracked(), 0);
}

#[tokio::test]
async fn one_busy_host_does_not_hold_the_other_hosts_back() {
    // Two a.test fetches, one host slot: the second waits for a.test without taking the
    // second global slot, which b.test gets at once.
    let (addr, load) = profile_server().await;
    let config = NegotiationConfig {
        max_concurrent_fetches: 2,
        max_fetches_per_host: 1,
        timeout_ms: 5_000,
        ..config(&["a.test", "b.test"])
    };
    let negotiator = Arc::new(negotiator(
        &config,
        vec![to_loopback("a.test"), to_loopback("b.test")],
    ));
    let port = addr.port();
    let mut queued = tokio::task::JoinSet::new();
    for n in 0..2 {
        let negotiator = negotiator.clone();
        let url = format!("http://a.test:{port}/slow/{}", 1_500 + n);
        queued.spawn(async move { negotiator.outcome(&url).await });
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    negotiator
        .outcome(&format!("http://b.test:{port}/slow/0"))
        .await
        .unwrap();
    // Ordered by events, not timed: b.test's answer came while a.test's were still pending.
    assert!(queued.try_join_next().is_none(), "b.test waited for a.test");
    while let Some(outcome) = queued.join_next().await {
        outcome.unwrap().unwrap();
    }
    assert_eq!(load.max_per_host.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_full_bridge_answers_busy_and_does_not_remember_it() {
    let (addr, load) = profile_server().await;
    let config = NegotiationConfig {
        max_concurrent_fetches: 1,
        max_fetches_per_host: 1,
        // How long the refused call waits for the held slot; the fetch after it gets as long.
        timeout_ms: 1_000,
        ..config(&["127.0.0.1"])
    };
    let negotiator = negotiator(&config, Vec::new());
    let url = format!("http://{addr}/slow/0");
    let held = negotiator
        .fetcher
        .limits()
        .admit("127.0.0.1")
        .await
        .unwrap();
    let refusal = negotiator.outcome(&url).await.unwrap_err();
    // NEG-003: the fetch failed (it never started), 424
    assert_eq!(refusal, NegotiationError::busy());
    assert_eq!(refusal.code, NegotiationCode::ProfileUnreachable);
    drop(held);
    assert!(negotiator.outcome(&url).await.is_ok());
    assert_eq!(load.hits.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn resolution_failures_are_classified_per_the_registry() {
    let config = NegotiationConfig {
        timeout_ms: 200,
        ..config(&[])
    };
    let negotiator = negotiator(
        &config,
        vec![
            ("silent.test".to_owned(), TestAnswer::Hang),
            ("empty.test".to_owned(), TestAnswer::Addresses(Vec::new())),
        ],
    );
    // NEG-005: "Profile URL is malformed, missing, or unresolvable" -> invalid_profile_url, 400
    for url in ["https://nowhere.test/p", "https://empty.test/p"] {
        let refusal = negotiator.outcome(url).await.unwrap_err();
        assert_eq!(refusal.code, NegotiationCode::InvalidProfileUrl, "{url}");
    }
    // NEG-003: "fetch failed (timeout, ...)" -> profile_unreachable, 424
    let refusal = negotiator
        .outcome("https://silent.test/p")
        .await
        .unwrap_err();
    assert_eq!(refusal.code, NegotiationCode::ProfileUnreachable);
}

#[tokio::test]
async fn check_reads_the_profile_from_meta() {
    let (addr, load) = profile_server().await;
    let negotiator = negotiator(&config(&["127.0.0.1"]), Vec::new());
    let meta = CallMeta {
        profile: Some(format!("http://{addr}/slow/0")),
        idempotency_key: None,
    };
    negotiator.check(&meta).await.unwrap();
    negotiator.check(&meta).await.unwrap();
    assert_eq!(load.hits.load(Ordering::SeqCst), 1, "the success is cached");
    negotiator.check(&CallMeta::default()).await.unwrap();
}

#[test]
fn fetch_limits_are_checked() {
    let bad = |config: NegotiationConfig| {
        config
            .problems()
            .iter()
            .map(|problem| problem.to_string())
            .collect::<Vec<_>>()
            .join("; ")
    };
    assert!(NegotiationConfig::default().problems().is_empty());
    let zero = bad(NegotiationConfig {
        max_concurrent_fetches: 0,
        ..NegotiationConfig::default()
    });
    assert!(
        zero.contains("negotiation.max_concurrent_fetches"),
        "{zero}"
    );
    let wider = bad(NegotiationConfig {
        max_fetches_per_host: 17,
        ..NegotiationConfig::default()
    });
    assert!(
        wider.contains("negotiation.max_fetches_per_host"),
        "{wider}"
    );
}

#[test]
fn fetch_limit_keys_parse_and_unknown_keys_do_not() {
    let config: NegotiationConfig =
        toml::from_str("max_concurrent_fetches = 8\nmax_fetches_per_host = 2\n").unwrap();
    assert_eq!(
        (config.max_concurrent_fetches, config.max_fetches_per_host),
        (8, 2)
    );
    assert!(toml::from_str::<NegotiationConfig>("max_fetches = 8\n").is_err());
}
