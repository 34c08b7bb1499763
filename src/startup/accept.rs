//! The accept loop: every connection gets a header, body and idle deadline, the number of
//! open connections is capped and shared fairly between clients (`admission`: the surplus is
//! shed with a JSON-RPC answer, not left to pile up until the process runs out of file
//! descriptors), and shutdown has a deadline. With
//! `[server.tls]` each connection first completes a TLS handshake, within the header deadline.

use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Body;
use axum::extract::ConnectInfo;
use bytes::Bytes;
use http_body::{Body as HttpBody, Frame, SizeHint};
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;

use super::admission::{Admission, Admitted, Shed};
use super::proxies::TrustedProxies;
use tokio::task::JoinSet;
use tokio_rustls::TlsAcceptor;
use tower_service::Service;

use super::server_config::ServerConfig;
use crate::inbound::body_read::BodyTimedOut;
use crate::mcp::jsonrpc;

/// What the accept loop needs from `[server]`.
#[derive(Debug, Clone)]
pub struct Hygiene {
    pub header_read_timeout: Duration,
    pub body_read_timeout: Duration,
    pub idle_timeout: Duration,
    pub max_connections: usize,
    /// Open connections one client address may hold at most.
    pub max_connections_per_client: usize,
    /// Peers that speak for many clients: no per-address share, and their requests count as
    /// the client's they forward.
    pub trusted_proxies: TrustedProxies,
    pub shutdown_grace: Duration,
}

impl From<&ServerConfig> for Hygiene {
    fn from(config: &ServerConfig) -> Self {
        Self {
            header_read_timeout: Duration::from_millis(config.header_read_timeout_ms),
            body_read_timeout: Duration::from_millis(config.body_read_timeout_ms),
            idle_timeout: Duration::from_millis(config.idle_timeout_ms),
            max_connections: config.max_connections,
            max_connections_per_client: config.connections_per_client(),
            trusted_proxies: TrustedProxies::new(config.trusted_proxies.clone()),
            shutdown_grace: Duration::from_millis(config.shutdown_grace_ms),
        }
    }
}

/// The deadlines every connection carries.
#[derive(Debug, Clone, Copy)]
struct Deadlines {
    header: Duration,
    body: Duration,
    idle: Duration,
}

/// Seconds a shed client is told to wait before trying again.
const SHED_RETRY_AFTER_SECS: u64 = 1;
/// Shed answers being written at once; past it a surplus connection is simply closed, so
/// shedding itself cannot hold an unbounded number of sockets.
const MAX_SHEDDING: usize = 64;
/// How long a connection past its address's share has to send its first bytes (a request
/// head, or a TLS ClientHello) to take a silent neighbour's place.
const FIRST_BYTES: Duration = Duration::from_millis(500);
/// A shed TLS client must finish its handshake this fast to be told why it is refused.
const SHED_HANDSHAKE: Duration = Duration::from_secs(1);

/// Serves `router` on `listener` until `shutdown` resolves, then gives in-flight calls
/// `shutdown_grace` and closes whatever is left.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    hygiene: Hygiene,
    shutdown: impl Future<Output = ()>,
) {
    accept_loop(listener, router, hygiene, None, shutdown).await;
}

/// [`serve`] over TLS: every connection, shed ones included, is a TLS session from `tls`.
pub async fn serve_tls(
    listener: TcpListener,
    router: Router,
    hygiene: Hygiene,
    tls: TlsAcceptor,
    shutdown: impl Future<Output = ()>,
) {
    accept_loop(listener, router, hygiene, Some(tls), shutdown).await;
}

async fn accept_loop(
    listener: TcpListener,
    router: Router,
    hygiene: Hygiene,
    tls: Option<TlsAcceptor>,
    shutdown: impl Future<Output = ()>,
) {
    let admission = Arc::new(Admission::new(
        hygiene.max_connections,
        hygiene.max_connections_per_client,
        hygiene.trusted_proxies.clone(),
    ));
    let deadlines = Deadlines {
        header: hygiene.header_read_timeout,
        body: hygiene.body_read_timeout,
        idle: hygiene.idle_timeout,
    };
    let shedding = Arc::new(Semaphore::new(MAX_SHEDDING));
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let mut connections = JoinSet::new();
    tokio::pin!(shutdown);
    loop {
        let accepted = tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => accepted,
            Some(_) = connections.join_next(), if !connections.is_empty() => continue,
        };
        let (stream, remote) = match accepted {
            Ok(pair) => pair,
            Err(error) => {
                // Out of descriptors or a connection reset before accept: back off briefly
                // instead of spinning, and keep serving.
                tracing::warn!(%error, "accept failed");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        match admission.admit(remote.ip()) {
            Ok(admitted) => {
                let router = router.clone();
                let stop = stop_rx.clone();
                let tls = tls.clone();
                connections.spawn(async move {
                    serve_connection(stream, remote, router, deadlines, admitted, tls, stop).await;
                });
            }
            // Past its address's share: admitted once it sends its request, in the place of
            // a connection of its address that has sent nothing (issue 39 item 5).
            Err(Shed::OverShare) => {
                if let Ok(slot) = Arc::clone(&shedding).try_acquire_owned() {
                    let (admission, router) = (Arc::clone(&admission), router.clone());
                    let (tls, stop) = (tls.clone(), stop_rx.clone());
                    connections.spawn(async move {
                        let mut first = [0u8; 1];
                        let sent = tokio::time::timeout(FIRST_BYTES, stream.peek(&mut first));
                        let admitted = match sent.await {
                            Ok(Ok(read)) if read > 0 => admission.admit_sending(remote.ip()).ok(),
                            _ => None,
                        };
                        match admitted {
                            Some(admitted) => {
                                drop(slot);
                                serve_connection(
                                    stream, remote, router, deadlines, admitted, tls, stop,
                                )
                                .await;
                            }
                            None => {
                                tracing::debug!(%remote, "connection shed: over its address's share");
                                refuse(stream, tls).await;
                                drop(slot);
                            }
                        }
                    });
                }
            }
            Err(Shed::Full) => {
                tracing::debug!(%remote, "connection shed: every slot is busy");
                if let Ok(slot) = Arc::clone(&shedding).try_acquire_owned() {
                    let tls = tls.clone();
                    connections.spawn(async move {
                        refuse(stream, tls).await;
                        drop(slot);
                    });
                }
            }
        }
    }
    drop(listener);
    let _ = stop_tx.send(true);
    let drained = tokio::time::timeout(hygiene.shutdown_grace, async {
        while connections.join_next().await.is_some() {}
    })
    .await;
    if drained.is_err() {
        tracing::warn!(
            open = connections.len(),
            "shutdown grace period over: closing the remaining connections"
        );
        connections.abort_all();
        while connections.join_next().await.is_some() {}
    }
}

/// Answers a shed connection (over TLS once its handshake is done, if it is quick).
async fn refuse(stream: TcpStream, tls: Option<TlsAcceptor>) {
    match tls {
        None => shed(stream).await,
        Some(tls) => {
            if let Ok(Ok(stream)) = tokio::time::timeout(SHED_HANDSHAKE, tls.accept(stream)).await {
                shed(stream).await;
            }
        }
    }
}

/// The answer to a connection over `max_connections`: the same JSON-RPC shape as every
/// other refusal, so clients can tell "busy, come back" from a broken bridge.
fn shed_response() -> Vec<u8> {
    let mut error = jsonrpc::plain_error(
        -32000,
        "Server busy: too many open connections; retry later",
    );
    error.data = Some(serde_json::json!({"retry_after": SHED_RETRY_AFTER_SECS}));
    let body = jsonrpc::error(jsonrpc::NULL_ID, &error);
    let mut answer = format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\ncontent-length: {}\r\nretry-after: {SHED_RETRY_AFTER_SECS}\r\nconnection: close\r\n\r\n",
        body.len()
    )
    .into_bytes();
    answer.extend_from_slice(&body);
    answer
}

async fn shed(mut stream: impl AsyncRead + AsyncWrite + Unpin) {
    let answer = shed_response();
    let mut sink = [0u8; 4096];
    // An HTTP client reads an answer only after sending its request: wait briefly for the
    // request head (a silent client gets the answer anyway).
    let _ = tokio::time::timeout(Duration::from_millis(500), async {
        let mut seen = Vec::new();
        while seen.len() < 64 * 1024 {
            match stream.read(&mut sink).await {
                Ok(0) | Err(_) => break,
                Ok(read) => seen.extend_from_slice(&sink[..read]),
            }
            if seen.windows(4).any(|window| window == b"\r\n\r\n") {
                break;
            }
        }
    })
    .await;
    let _ = tokio::time::timeout(Duration::from_secs(2), async {
        let _ = stream.write_all(&answer).await;
        let _ = stream.shutdown().await;
        // Read what the client still sends, so closing does not reset the connection
        // before it has read the answer.
        let mut total = 0usize;
        while total < 64 * 1024 {
            match stream.read(&mut sink).await {
                Ok(0) | Err(_) => break,
                Ok(read) => total += read,
            }
        }
    })
    .await;
}

/// Milliseconds since the connection opened of its last byte read or written, and the
/// connection's place in the admission table (whose byte count it keeps).
struct Activity {
    opened: Instant,
    last: AtomicU64,
    admitted: Admitted,
}

impl Activity {
    fn touch(&self) {
        let now = u64::try_from(self.opened.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.last.store(now, Ordering::Relaxed);
    }

    fn quiet_for(&self) -> Duration {
        let now = u64::try_from(self.opened.elapsed().as_millis()).unwrap_or(u64::MAX);
        Duration::from_millis(now.saturating_sub(self.last.load(Ordering::Relaxed)))
    }
}

/// The socket, noting every byte that moves so an idle connection can be told apart.
struct Watched {
    inner: TcpStream,
    activity: Arc<Activity>,
}

impl AsyncRead for Watched {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        let read = buf.filled().len().saturating_sub(before);
        if read > 0 {
            self.activity.touch();
            self.activity
                .admitted
                .slot
                .received
                .fetch_add(u64::try_from(read).unwrap_or(u64::MAX), Ordering::Relaxed);
        }
        polled
    }
}

impl AsyncWrite for Watched {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let polled = Pin::new(&mut self.inner).poll_write(cx, buf);
        if matches!(polled, Poll::Ready(Ok(written)) if written > 0) {
            self.activity.touch();
        }
        polled
    }

    /// Forwarded so hyper writes head and body with one `writev` instead of first copying
    /// the body behind the head.
    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        let polled = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        if matches!(polled, Poll::Ready(Ok(written)) if written > 0) {
            self.activity.touch();
        }
        polled
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// Counts a request as in flight until its response head is ready (a connection with one is
/// never evicted).
struct InFlight(Arc<AtomicUsize>);

impl InFlight {
    fn enter(counter: &Arc<AtomicUsize>) -> Self {
        counter.fetch_add(1, Ordering::Relaxed);
        Self(Arc::clone(counter))
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

async fn serve_connection(
    stream: TcpStream,
    remote: SocketAddr,
    router: Router,
    deadlines: Deadlines,
    admitted: Admitted,
    tls: Option<TlsAcceptor>,
    mut stop: tokio::sync::watch::Receiver<bool>,
) {
    let activity = Arc::new(Activity {
        opened: Instant::now(),
        last: AtomicU64::new(0),
        admitted,
    });
    let watched = Watched {
        inner: stream,
        activity: Arc::clone(&activity),
    };
    let Some(tls) = tls else {
        return serve_http(watched, remote, router, deadlines, activity, stop).await;
    };
    // The handshake gets the header deadline (a client that stalls it holds a connection
    // slot like a slow header would) and is abandoned on shutdown: nothing is in flight yet.
    let handshake = tokio::time::timeout(deadlines.header, tls.accept(watched));
    let secured = tokio::select! {
        done = handshake => match done {
            Ok(Ok(secured)) => secured,
            Ok(Err(error)) => {
                tracing::debug!(%remote, %error, "TLS handshake failed");
                return;
            }
            Err(_) => {
                tracing::debug!(%remote, "TLS handshake timed out");
                return;
            }
        },
        _ = stop.changed() => return,
        () = evicted(&activity) => return,
    };
    serve_http(secured, remote, router, deadlines, activity, stop).await;
}

/// Resolves once a newcomer has taken this connection's place.
async fn evicted(activity: &Activity) {
    let slot = &activity.admitted.slot;
    while !slot.evicted() {
        slot.evict.notified().await;
    }
}

async fn serve_http(
    stream: impl AsyncRead + AsyncWrite + Unpin + Send + 'static,
    remote: SocketAddr,
    router: Router,
    deadlines: Deadlines,
    activity: Arc<Activity>,
    mut stop: tokio::sync::watch::Receiver<bool>,
) {
    let in_flight = Arc::clone(&activity.admitted.slot.in_flight);
    let io = TokioIo::new(stream);
    let counter = Arc::clone(&in_flight);
    let body_timeout = deadlines.body;
    let admitted = Arc::clone(&activity);
    let service = hyper::service::service_fn(move |mut request: http::Request<Incoming>| {
        let mut router = router.clone();
        let guard = InFlight::enter(&counter);
        let client = admitted.admitted.client(remote, request.headers());
        request.extensions_mut().insert(ConnectInfo(client));
        let request = request.map(|body| Body::new(DeadlineBody::new(body, body_timeout)));
        async move {
            let response = router.call(request).await;
            drop(guard);
            response
        }
    });
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(deadlines.header);
    let connection = builder.serve_connection(io, service);
    tokio::pin!(connection);
    let tick = (deadlines.idle / 4).max(Duration::from_millis(25));
    let mut stopping = false;
    loop {
        tokio::select! {
            _ = connection.as_mut() => return,
            () = evicted(&activity), if !stopping => {
                // Chosen while idle; should a request have started since, it is finished
                // first (the same as at shutdown).
                tracing::debug!(%remote, "connection evicted for a newcomer");
                stopping = true;
                connection.as_mut().graceful_shutdown();
                if in_flight.load(Ordering::Relaxed) == 0 {
                    return;
                }
            }
            changed = stop.changed(), if !stopping => {
                // Finish the request in flight, take no new one; the caller's grace period
                // ends the rest.
                let _ = changed;
                stopping = true;
                connection.as_mut().graceful_shutdown();
                if in_flight.load(Ordering::Relaxed) == 0 {
                    // Nothing to finish: a client holding half-sent headers gets no say.
                    return;
                }
            }
            () = tokio::time::sleep(tick) => {
                if in_flight.load(Ordering::Relaxed) == 0
                    && activity.quiet_for() >= deadlines.idle
                {
                    tracing::debug!(%remote, "closing an idle connection");
                    return;
                }
            }
        }
    }
}

/// A request body that must arrive whole before a deadline set when its headers were read:
/// a per-frame timeout would let a client dribble one byte at a time forever.
struct DeadlineBody {
    inner: Incoming,
    deadline: Pin<Box<tokio::time::Sleep>>,
}

impl DeadlineBody {
    fn new(inner: Incoming, within: Duration) -> Self {
        Self {
            inner,
            deadline: Box::pin(tokio::time::sleep(within)),
        }
    }
}

impl HttpBody for DeadlineBody {
    type Data = Bytes;
    type Error = Box<dyn std::error::Error + Send + Sync>;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        if let Poll::Ready(frame) = Pin::new(&mut self.inner).poll_frame(cx) {
            return Poll::Ready(frame.map(|result| result.map_err(Into::into)));
        }
        match self.deadline.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Some(Err(Box::new(BodyTimedOut)))),
            Poll::Pending => Poll::Pending,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}
