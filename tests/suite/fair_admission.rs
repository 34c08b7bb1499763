//! Fair admission against the real binary on loopback (issue 27 item 1): one address cannot
//! starve the others of connections, whether it holds its sockets idle and reopens each one
//! closed, or several addresses fill every slot with idle connections.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::json;
use tokio::io::AsyncReadExt;
use tokio::net::{TcpSocket, TcpStream};

use crate::support::binary::Running;
use crate::support::wait::until;

/// The real binary with `server` as its `[server]` section (sample store, no negotiation).
fn start(name: &str, server: &str) -> (Running, String) {
    let dir = std::env::temp_dir().join(format!("bcp-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("bridge.toml");
    std::fs::write(
        &path,
        format!("[server]\n{server}\n[negotiation]\nenabled = false\n"),
    )
    .unwrap();
    let mut running = Running::serve(&path);
    let endpoint = running.endpoint();
    (running, endpoint)
}

fn addr_of(endpoint: &str) -> SocketAddr {
    let url = url::Url::parse(endpoint).unwrap();
    format!("{}:{}", url.host_str().unwrap(), url.port().unwrap())
        .parse()
        .unwrap()
}

/// A connection from `from` (any 127.x address is loopback on Linux: a client of its own).
async fn connect_from(from: [u8; 4], to: SocketAddr) -> std::io::Result<TcpStream> {
    let socket = TcpSocket::new_v4()?;
    socket.bind(SocketAddr::new(IpAddr::from(from), 0))?;
    socket.connect(to).await
}

/// Holds a connection from `from` open, sending nothing, until the bridge closes it; then,
/// if `reopen`, opens another, until `stop`. Counts each connection made in `connected`.
/// Answers how many times the bridge closed it.
async fn hold(
    from: [u8; 4],
    to: SocketAddr,
    reopen: bool,
    stop: Arc<AtomicBool>,
    connected: Arc<AtomicUsize>,
) -> usize {
    let mut closed = 0;
    while !stop.load(Ordering::Relaxed) {
        let Ok(mut stream) = connect_from(from, to).await else {
            tokio::time::sleep(Duration::from_millis(20)).await;
            continue;
        };
        connected.fetch_add(1, Ordering::SeqCst);
        let mut sink = [0u8; 1024];
        loop {
            if stop.load(Ordering::Relaxed) {
                return closed;
            }
            match tokio::time::timeout(Duration::from_millis(200), stream.read(&mut sink)).await {
                Err(_) => {}
                Ok(Ok(0) | Err(_)) => break,
                Ok(Ok(_)) => {}
            }
        }
        closed += 1;
        if !reopen {
            break;
        }
    }
    closed
}

/// Ten tries of a well-behaved client (a fresh connection each, 200 ms apart): how many were
/// answered 200.
async fn tries_served(endpoint: &str) -> usize {
    tries_served_from(endpoint, [127, 0, 0, 1]).await
}

/// `tries_served` from the address `from`.
async fn tries_served_from(endpoint: &str, from: [u8; 4]) -> usize {
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .local_address(IpAddr::from(from))
        .timeout(Duration::from_secs(5))
        .build()
        .unwrap();
    let mut served = 0;
    for id in 0..10 {
        let answer = client
            .post(endpoint)
            .header("content-type", "application/json")
            .body(json!({"jsonrpc": "2.0", "id": id, "method": "ping"}).to_string())
            .send()
            .await;
        if answer.is_ok_and(|answer| answer.status() == 200) {
            served += 1;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    served
}

#[tokio::test]
async fn one_address_holding_and_reopening_24_idle_sockets_does_not_starve_another() {
    let (_running, endpoint) = start("starvation", "max_connections = 8");
    let to = addr_of(&endpoint);
    let stop = Arc::new(AtomicBool::new(false));
    let connected = Arc::new(AtomicUsize::new(0));
    let attackers: Vec<_> = (0..24)
        .map(|_| {
            let (stop, connected) = (Arc::clone(&stop), Arc::clone(&connected));
            tokio::spawn(hold([127, 0, 0, 2], to, true, stop, connected))
        })
        .collect();
    // The attack is on once every socket has connected and some were shed and reopened.
    until("the 24 attacking sockets to connect and reopen", || {
        connected.load(Ordering::SeqCst) > 24
    })
    .await;
    let served = tries_served(&endpoint).await;
    stop.store(true, Ordering::Relaxed);
    for attacker in attackers {
        let _ = attacker.await;
    }
    assert!(served >= 9, "served {served} of 10");
}

#[tokio::test]
async fn when_idle_connections_of_many_addresses_fill_every_slot_a_newcomer_evicts_one() {
    let (_running, endpoint) = start("eviction", "max_connections = 8");
    let to = addr_of(&endpoint);
    let stop = Arc::new(AtomicBool::new(false));
    // Four addresses, each at its share (a quarter of 8): every slot idle and taken.
    let connected = Arc::new(AtomicUsize::new(0));
    let holders: Vec<_> = (2..6)
        .flat_map(|last| [last, last])
        .map(|last| {
            let (stop, connected) = (Arc::clone(&stop), Arc::clone(&connected));
            tokio::spawn(hold([127, 0, 0, last], to, false, stop, connected))
        })
        .collect();
    until("the 8 holders to connect", || {
        connected.load(Ordering::SeqCst) == 8
    })
    .await;
    let served = tries_served(&endpoint).await;
    stop.store(true, Ordering::Relaxed);
    let mut evicted = 0;
    for holder in holders {
        evicted += holder.await.unwrap();
    }
    assert_eq!(served, 10);
    // The first try took an idle slot; each later one found the slot its predecessor left.
    assert!((1..8).contains(&evicted), "{evicted} evicted");
}

/// Issue 39 item 5: agents behind one NAT share an address. A hog holding (and reopening) 24
/// idle sockets from the polite client's own address leaves it served: a connection that has
/// sent nothing yields to a newcomer of its address that sends a request.
#[tokio::test]
async fn a_polite_client_is_served_beside_an_idle_hog_on_its_own_address() {
    let (_running, endpoint) = start("same-address", "max_connections = 8");
    let to = addr_of(&endpoint);
    let stop = Arc::new(AtomicBool::new(false));
    let hog = [127, 0, 0, 3];
    let connected = Arc::new(AtomicUsize::new(0));
    let sockets: Vec<_> = (0..24)
        .map(|_| {
            let (stop, connected) = (Arc::clone(&stop), Arc::clone(&connected));
            tokio::spawn(hold(hog, to, true, stop, connected))
        })
        .collect();
    until("the hog's 24 sockets to connect and reopen", || {
        connected.load(Ordering::SeqCst) > 24
    })
    .await;
    let served = tries_served_from(&endpoint, hog).await;
    stop.store(true, Ordering::Relaxed);
    let mut closed = 0;
    for socket in sockets {
        closed += socket.await.unwrap();
    }
    assert!(served >= 9, "served {served} of 10");
    // The hog's silent sockets are what made room (and the ones past its share were shed).
    assert!(closed > 0);
}
