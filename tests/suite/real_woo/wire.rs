//! Sequential rounds, timed on the wire between the bridge and the real store. The store's
//! own access log cannot tell them: `php -S` workers accept several connections and serve
//! them one after another, so two requests the bridge sent together can show up there as
//! two rounds. This relay notes when each request's first byte left the bridge and when the
//! last byte of its answer went back; a request belongs to a later round only when it left
//! after an earlier one was answered.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

struct Exchange {
    /// `METHOD URI`, as the bridge sent it.
    request: String,
    sent: Instant,
    answered: Instant,
}

pub struct Wire {
    /// Put in front of the store's URL in the bridge's `[store] base_url`.
    pub url: String,
    exchanges: Arc<Mutex<Vec<Exchange>>>,
}

impl Wire {
    pub async fn start(store: &str) -> Wire {
        let store: SocketAddr = url::Url::parse(store)
            .unwrap()
            .socket_addrs(|| None)
            .unwrap()[0];
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/", listener.local_addr().unwrap());
        let exchanges = Arc::new(Mutex::new(Vec::new()));
        let log = exchanges.clone();
        tokio::spawn(async move {
            while let Ok((bridge, _)) = listener.accept().await {
                tokio::spawn(relay(bridge, store, log.clone()));
            }
        });
        Wire { url, exchanges }
    }

    /// Forgets what was relayed so far.
    pub fn clear(&self) {
        self.exchanges.lock().unwrap().clear();
    }

    /// The requests relayed since `clear`, in the order they left the bridge.
    pub fn requests(&self) -> Vec<String> {
        let mut exchanges = self.exchanges.lock().unwrap();
        exchanges.sort_by_key(|exchange| exchange.sent);
        exchanges.iter().map(|e| e.request.clone()).collect()
    }

    /// The longest chain of requests each sent after the previous one was answered.
    pub fn rounds(&self) -> usize {
        let mut exchanges = self.exchanges.lock().unwrap();
        exchanges.sort_by_key(|exchange| exchange.sent);
        let mut round = vec![0usize; exchanges.len()];
        for later in 0..exchanges.len() {
            round[later] = 1
                + (0..later)
                    .filter(|&earlier| exchanges[earlier].answered <= exchanges[later].sent)
                    .map(|earlier| round[earlier])
                    .max()
                    .unwrap_or(0);
        }
        round.into_iter().max().unwrap_or(0)
    }
}

async fn relay(bridge: TcpStream, store: SocketAddr, log: Arc<Mutex<Vec<Exchange>>>) {
    let (mut from_bridge, mut to_bridge) = bridge.into_split();
    let mut first = vec![0u8; 16 * 1024];
    let Ok(read) = from_bridge.read(&mut first).await else {
        return;
    };
    if read == 0 {
        return;
    }
    let sent = Instant::now();
    first.truncate(read);
    let request = String::from_utf8_lossy(&first)
        .lines()
        .next()
        .unwrap_or_default()
        .rsplit_once(' ')
        .map(|(request, _version)| request.to_owned())
        .unwrap_or_default();
    let Ok(upstream) = TcpStream::connect(store).await else {
        return;
    };
    let (mut from_store, mut to_store) = upstream.into_split();
    if to_store.write_all(&first).await.is_err() {
        return;
    }
    // The rest of a request body, if any; the store answers `Connection: close`.
    tokio::spawn(async move {
        let _ = tokio::io::copy(&mut from_bridge, &mut to_store).await;
    });
    let mut answered = sent;
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        match from_store.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                if to_bridge.write_all(&chunk[..n]).await.is_err() {
                    break;
                }
                answered = Instant::now();
            }
        }
    }
    let _ = to_bridge.shutdown().await;
    log.lock().unwrap().push(Exchange {
        request,
        sent,
        answered,
    });
}
