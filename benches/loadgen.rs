//! The load generator of `bench/run.sh`: closed-loop HTTP/1.1 keep-alive POSTs of one body
//! over N connections on one thread (pin it with taskset, away from the server), for a
//! fixed time. Prints one JSON line: requests, req/s, latency percentiles, non-200 answers,
//! and — with `--pid` — the server's CPU time per request read from /proc. Built with the
//! other benches, so a fresh machine needs nothing installed; under `cargo bench` it exits.
//! The soak run (`bench/soak.sh`) mixes tools with `--bodies-file` (one body a line, each
//! connection walking the list from its own offset) and reads `--report-every SECS`: one
//! JSON line per interval with that interval's percentiles, so a drift shows over time.
//! The load run (`bench/load.sh`) plays agent sessions: `--offset-step N` starts connection
//! k at line k·N (so blocks of N lines stay whole), `{seq}` in a body becomes a number unique
//! to the request (arguments no cache has seen; fresh idempotency keys), and with
//! `--capture cart_` a connection keeps the first `cart_…` id of its last answer holding one
//! and puts it wherever a body says `{capture}` (the cart it created). The final line also
//! breaks the calls down per tool (`tools`, from each body's `params.name`).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout
)]

use std::borrow::Cow;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

struct Args {
    url: String,
    bodies: Vec<String>,
    report_every: Option<Duration>,
    connections: usize,
    duration: Duration,
    pid: Option<u32>,
    offset_step: usize,
    capture: Option<String>,
}

fn parse_args() -> Option<Args> {
    let args: Vec<String> = std::env::args().collect();
    let value = |name: &str| {
        args.iter()
            .position(|arg| arg == name)
            .and_then(|at| args.get(at + 1))
            .cloned()
    };
    let url = value("--url")?;
    let bodies = match (value("--bodies-file"), value("--body-file")) {
        (Some(path), _) => std::fs::read_to_string(path)
            .unwrap()
            .lines()
            .filter(|line| !line.trim().is_empty())
            .map(str::to_owned)
            .collect(),
        (None, Some(path)) => vec![std::fs::read_to_string(path).unwrap()],
        (None, None) => vec![value("--body")?],
    };
    Some(Args {
        url,
        bodies,
        report_every: value("--report-every")
            .map(|secs| Duration::from_secs_f64(secs.parse().unwrap())),
        connections: value("-c").map_or(8, |c| c.parse().unwrap()),
        duration: Duration::from_secs_f64(value("-z").map_or(5.0, |z| z.parse().unwrap())),
        pid: value("--pid").map(|pid| pid.parse().unwrap()),
        offset_step: value("--offset-step").map_or(1, |step| step.parse().unwrap()),
        capture: value("--capture"),
    })
}

/// utime + stime of a process, in clock ticks.
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // Fields after the command name (which may hold spaces) start after the last ')'.
    let rest = &stat[stat.rfind(')').unwrap() + 2..];
    let fields: Vec<&str> = rest.split(' ').collect();
    fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
}

fn clock_ticks_per_second() -> u64 {
    std::process::Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|out| String::from_utf8(out.stdout).ok())
        .and_then(|text| text.trim().parse().ok())
        .unwrap_or(100)
}

#[derive(Default)]
struct Tally {
    latencies_us: Vec<u32>,
    non_200: u64,
    errors: u64,
    /// 200 answers that are not a JSON-RPC result (an error frame).
    not_result: u64,
    bytes: u64,
}

impl Tally {
    fn add(&mut self, other: &Tally) {
        self.latencies_us.extend_from_slice(&other.latencies_us);
        self.non_200 += other.non_200;
        self.errors += other.errors;
        self.not_result += other.not_result;
        self.bytes += other.bytes;
    }
}

/// What every connection adds to as it goes: the whole run, the current interval, and the
/// whole run per tool (the runtime has one thread, so the lock is never contended).
type Shared = Arc<Mutex<(Tally, Tally, Vec<Tally>)>>;

/// One body, ready to send: fixed bytes, or a template filled per request.
struct Request {
    tool: usize,
    fixed: Option<Vec<u8>>,
    body: String,
}

impl Request {
    fn bytes(&self, head: &str, seq: u64, captured: &str) -> Cow<'_, [u8]> {
        if let Some(fixed) = &self.fixed {
            return Cow::Borrowed(fixed);
        }
        let body = self
            .body
            .replace("{seq}", &seq.to_string())
            .replace("{capture}", captured);
        Cow::Owned(format!("{head}content-length: {}\r\n\r\n{body}", body.len()).into_bytes())
    }
}

/// The first `prefix…` token (letters, digits, `_`, `-`) of an answer.
fn captured(answer: &[u8], prefix: &[u8]) -> Option<String> {
    let at = find(answer, prefix)?;
    let end = answer[at..]
        .iter()
        .position(|byte| !(byte.is_ascii_alphanumeric() || *byte == b'_' || *byte == b'-'))
        .map_or(answer.len(), |length| at + length);
    String::from_utf8(answer[at..end].to_vec()).ok()
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|window| window == needle)
}

struct Response {
    status: u16,
    length: usize,
    result: bool,
    captured: Option<String>,
}

/// One response off the stream. Needs Content-Length.
async fn read_response(
    stream: &mut TcpStream,
    buffer: &mut Vec<u8>,
    capture: Option<&[u8]>,
) -> Option<Response> {
    loop {
        if let Some(end) = find(buffer, b"\r\n\r\n") {
            let head = std::str::from_utf8(&buffer[..end]).ok()?;
            let status: u16 = head.split(' ').nth(1)?.parse().ok()?;
            let length: usize = head
                .lines()
                .find_map(|line| {
                    let (name, value) = line.split_once(':')?;
                    name.eq_ignore_ascii_case("content-length")
                        .then(|| value.trim().parse().ok())?
                })
                .unwrap_or(0);
            let total = end + 4 + length;
            while buffer.len() < total {
                let mut chunk = [0u8; 65536];
                let read = stream.read(&mut chunk).await.ok()?;
                if read == 0 {
                    return None;
                }
                buffer.extend_from_slice(&chunk[..read]);
            }
            // The frame opens with jsonrpc and id, then "result" or "error".
            let opening = &buffer[end + 4..total.min(end + 4 + 80)];
            let result = find(opening, b"\"result\"").is_some();
            let captured = capture.and_then(|prefix| captured(&buffer[end + 4..total], prefix));
            buffer.drain(..total);
            return Some(Response {
                status,
                length,
                result,
                captured,
            });
        }
        let mut chunk = [0u8; 65536];
        let read = stream.read(&mut chunk).await.ok()?;
        if read == 0 {
            return None;
        }
        buffer.extend_from_slice(&chunk[..read]);
    }
}

struct Plan {
    head: String,
    requests: Vec<Request>,
    capture: Option<String>,
    seq: std::sync::atomic::AtomicU64,
}

async fn connection(
    plan: Arc<Plan>,
    address: String,
    offset: usize,
    deadline: Instant,
    shared: Shared,
) {
    let mut buffer = Vec::with_capacity(1 << 16);
    let mut stream = None;
    let mut next = offset;
    let mut kept = String::new();
    let record = |tool: usize, update: &dyn Fn(&mut Tally)| {
        let mut all = shared.lock().unwrap();
        update(&mut all.0);
        update(&mut all.1);
        update(&mut all.2[tool]);
    };
    let requests = &plan.requests;
    while Instant::now() < deadline {
        if stream.is_none() {
            stream = TcpStream::connect(&address).await.ok();
            if let Some(open) = &stream {
                let _ = open.set_nodelay(true);
            }
            buffer.clear();
        }
        let request = &requests[next % requests.len()];
        let Some(open) = stream.as_mut() else {
            record(request.tool, &|tally| tally.errors += 1);
            tokio::time::sleep(Duration::from_millis(10)).await;
            continue;
        };
        next += 1;
        let seq = plan.seq.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let bytes = request.bytes(&plan.head, seq, &kept);
        let started = Instant::now();
        if open.write_all(&bytes).await.is_err() {
            record(request.tool, &|tally| tally.errors += 1);
            stream = None;
            continue;
        }
        match read_response(
            open,
            &mut buffer,
            plan.capture.as_deref().map(str::as_bytes),
        )
        .await
        {
            Some(response) => {
                let micros = u32::try_from(started.elapsed().as_micros()).unwrap_or(u32::MAX);
                if let Some(id) = &response.captured {
                    kept.clone_from(id);
                }
                record(request.tool, &|tally| {
                    tally.latencies_us.push(micros);
                    tally.bytes += response.length as u64;
                    if response.status != 200 {
                        tally.non_200 += 1;
                    } else if !response.result {
                        tally.not_result += 1;
                    }
                });
            }
            None => {
                record(request.tool, &|tally| tally.errors += 1);
                stream = None;
            }
        }
    }
}

/// Prints one JSON line per interval until the deadline: that interval's calls only.
async fn reporter(every: Duration, started: Instant, deadline: Instant, shared: Shared) {
    let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
    let mut last = started;
    loop {
        tick.tick().await;
        if Instant::now() > deadline + Duration::from_millis(100) {
            return;
        }
        let mut window = std::mem::take(&mut shared.lock().unwrap().1);
        let now = Instant::now();
        window.latencies_us.sort_unstable();
        let calls = window.latencies_us.len();
        println!(
            "{{\"interval\":true,\"t_s\":{:.1},\"requests\":{calls},\"rps\":{:.0},\"p50_ms\":{:.3},\"p99_ms\":{:.3},\"max_ms\":{:.3},\"non_200\":{},\"errors\":{},\"not_result\":{}}}",
            now.duration_since(started).as_secs_f64(),
            calls as f64 / now.duration_since(last).as_secs_f64(),
            percentile(&window.latencies_us, 0.50),
            percentile(&window.latencies_us, 0.99),
            percentile(&window.latencies_us, 1.0),
            window.non_200,
            window.errors,
            window.not_result,
        );
        last = now;
    }
}

fn percentile(sorted: &[u32], fraction: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let index = ((sorted.len() as f64 - 1.0) * fraction).round() as usize;
    f64::from(sorted[index]) / 1000.0
}

fn main() {
    let Some(args) = parse_args() else {
        println!(
            "loadgen: the load generator of bench/run.sh (--url URL --body JSON|--body-file F|--bodies-file F [-c 8] [-z 5] [--pid PID] [--report-every SECS] [--offset-step N] [--capture PREFIX])"
        );
        return;
    };
    let rest = args.url.strip_prefix("http://").expect("http:// URLs only");
    let (address, path) = match rest.find('/') {
        Some(at) => (rest[..at].to_owned(), rest[at..].to_owned()),
        None => (rest.to_owned(), "/".to_owned()),
    };
    let head = format!(
        "POST {path} HTTP/1.1\r\nhost: {address}\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\n"
    );
    // Calls are counted per tool: the body's params.name, else the method.
    let mut tools: Vec<String> = Vec::new();
    let requests = args
        .bodies
        .iter()
        .map(|body| {
            let parsed: serde_json::Value = serde_json::from_str(body).unwrap_or_default();
            let name = parsed
                .pointer("/params/name")
                .or_else(|| parsed.get("method"))
                .and_then(serde_json::Value::as_str)
                .unwrap_or("other")
                .to_owned();
            let tool = tools
                .iter()
                .position(|known| *known == name)
                .unwrap_or_else(|| {
                    tools.push(name);
                    tools.len() - 1
                });
            let template = body.contains("{seq}") || body.contains("{capture}");
            Request {
                tool,
                fixed: (!template).then(|| {
                    format!("{head}content-length: {}\r\n\r\n{body}", body.len()).into_bytes()
                }),
                body: body.clone(),
            }
        })
        .collect();
    let plan = Arc::new(Plan {
        head,
        requests,
        capture: args.capture.clone(),
        seq: std::sync::atomic::AtomicU64::new(0),
    });
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let ticks_before = args.pid.map(cpu_ticks);
    let started = Instant::now();
    let deadline = started + args.duration;
    let shared: Shared = Arc::new(Mutex::new((
        Tally::default(),
        Tally::default(),
        tools.iter().map(|_| Tally::default()).collect(),
    )));
    runtime.block_on(async {
        let reporter = args
            .report_every
            .map(|every| tokio::spawn(reporter(every, started, deadline, shared.clone())));
        let tasks: Vec<_> = (0..args.connections)
            .map(|at| {
                tokio::spawn(connection(
                    plan.clone(),
                    address.clone(),
                    at * args.offset_step,
                    deadline,
                    shared.clone(),
                ))
            })
            .collect();
        for task in tasks {
            task.await.unwrap();
        }
        if let Some(reporter) = reporter {
            reporter.abort();
        }
    });
    let mut total = Tally::default();
    total.add(&shared.lock().unwrap().0);
    let elapsed = started.elapsed().as_secs_f64();
    let per_tool: Vec<String> = tools
        .iter()
        .zip(shared.lock().unwrap().2.iter_mut())
        .map(|(name, tally)| {
            tally.latencies_us.sort_unstable();
            let calls = tally.latencies_us.len();
            format!(
                "\"{name}\":{{\"requests\":{calls},\"rps\":{:.0},\"p50_ms\":{:.3},\"p99_ms\":{:.3},\"non_200\":{},\"errors\":{},\"not_result\":{}}}",
                calls as f64 / elapsed,
                percentile(&tally.latencies_us, 0.50),
                percentile(&tally.latencies_us, 0.99),
                tally.non_200,
                tally.errors,
                tally.not_result
            )
        })
        .collect();
    let ticks = args
        .pid
        .zip(ticks_before)
        .map(|(pid, before)| cpu_ticks(pid) - before);
    let mut latencies = std::mem::take(&mut total.latencies_us);
    latencies.sort_unstable();
    let requests = latencies.len() as u64;
    let (non_200, errors, not_result, bytes) =
        (total.non_200, total.errors, total.not_result, total.bytes);
    let cpu_us_per_request = ticks
        .map(|ticks| ticks as f64 * 1e6 / clock_ticks_per_second() as f64 / requests.max(1) as f64);
    println!(
        "{{\"requests\":{requests},\"rps\":{:.0},\"p50_ms\":{:.3},\"p90_ms\":{:.3},\"p99_ms\":{:.3},\"max_ms\":{:.3},\"non_200\":{non_200},\"errors\":{errors},\"not_result\":{not_result},\"body_bytes\":{},\"server_cpu_us\":{},\"tools\":{{{}}}}}",
        requests as f64 / elapsed,
        percentile(&latencies, 0.50),
        percentile(&latencies, 0.90),
        percentile(&latencies, 0.99),
        percentile(&latencies, 1.0),
        bytes / requests.max(1),
        cpu_us_per_request.map_or("null".to_owned(), |us| format!("{us:.1}")),
        per_tool.join(",")
    );
}
