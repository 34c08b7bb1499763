//! The load generator of `bench/run.sh`: closed-loop HTTP/1.1 keep-alive POSTs of one body
//! over N connections on one thread (pin it with taskset, away from the server), for a
//! fixed time. Prints one JSON line: requests, req/s, latency percentiles, non-200 answers,
//! and — with `--pid` — the server's CPU time per request read from /proc. Built with the
//! other benches, so a fresh machine needs nothing installed; under `cargo bench` it exits.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout
)]

use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

struct Args {
    url: String,
    body: String,
    connections: usize,
    duration: Duration,
    pid: Option<u32>,
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
    let body = match value("--body-file") {
        Some(path) => std::fs::read_to_string(path).unwrap(),
        None => value("--body")?,
    };
    Some(Args {
        url,
        body,
        connections: value("-c").map_or(8, |c| c.parse().unwrap()),
        duration: Duration::from_secs_f64(value("-z").map_or(5.0, |z| z.parse().unwrap())),
        pid: value("--pid").map(|pid| pid.parse().unwrap()),
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
    bytes: u64,
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|window| window == needle)
}

/// One response off the stream: (status, body length). Needs Content-Length.
async fn read_response(stream: &mut TcpStream, buffer: &mut Vec<u8>) -> Option<(u16, usize)> {
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
            buffer.drain(..total);
            return Some((status, length));
        }
        let mut chunk = [0u8; 65536];
        let read = stream.read(&mut chunk).await.ok()?;
        if read == 0 {
            return None;
        }
        buffer.extend_from_slice(&chunk[..read]);
    }
}

async fn connection(address: String, request: Vec<u8>, deadline: Instant) -> Tally {
    let mut tally = Tally::default();
    let mut buffer = Vec::with_capacity(1 << 16);
    let mut stream = None;
    while Instant::now() < deadline {
        if stream.is_none() {
            stream = TcpStream::connect(&address).await.ok();
            if let Some(open) = &stream {
                let _ = open.set_nodelay(true);
            }
            buffer.clear();
        }
        let Some(open) = stream.as_mut() else {
            tally.errors += 1;
            tokio::time::sleep(Duration::from_millis(10)).await;
            continue;
        };
        let started = Instant::now();
        if open.write_all(&request).await.is_err() {
            tally.errors += 1;
            stream = None;
            continue;
        }
        match read_response(open, &mut buffer).await {
            Some((status, length)) => {
                let micros = started.elapsed().as_micros();
                tally
                    .latencies_us
                    .push(u32::try_from(micros).unwrap_or(u32::MAX));
                tally.bytes += length as u64;
                if status != 200 {
                    tally.non_200 += 1;
                }
            }
            None => {
                tally.errors += 1;
                stream = None;
            }
        }
    }
    tally
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
            "loadgen: the load generator of bench/run.sh (--url URL --body JSON|--body-file F [-c 8] [-z 5] [--pid PID])"
        );
        return;
    };
    let rest = args.url.strip_prefix("http://").expect("http:// URLs only");
    let (address, path) = match rest.find('/') {
        Some(at) => (rest[..at].to_owned(), rest[at..].to_owned()),
        None => (rest.to_owned(), "/".to_owned()),
    };
    let request = format!(
        "POST {path} HTTP/1.1\r\nhost: {address}\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\ncontent-length: {}\r\n\r\n{}",
        args.body.len(),
        args.body
    )
    .into_bytes();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let ticks_before = args.pid.map(cpu_ticks);
    let started = Instant::now();
    let deadline = started + args.duration;
    let tallies = runtime.block_on(async {
        let tasks: Vec<_> = (0..args.connections)
            .map(|_| tokio::spawn(connection(address.clone(), request.clone(), deadline)))
            .collect();
        let mut tallies = Vec::new();
        for task in tasks {
            tallies.push(task.await.unwrap());
        }
        tallies
    });
    let elapsed = started.elapsed().as_secs_f64();
    let ticks = args
        .pid
        .zip(ticks_before)
        .map(|(pid, before)| cpu_ticks(pid) - before);
    let mut latencies: Vec<u32> = tallies
        .iter()
        .flat_map(|tally| tally.latencies_us.iter().copied())
        .collect();
    latencies.sort_unstable();
    let requests = latencies.len() as u64;
    let non_200: u64 = tallies.iter().map(|tally| tally.non_200).sum();
    let errors: u64 = tallies.iter().map(|tally| tally.errors).sum();
    let bytes: u64 = tallies.iter().map(|tally| tally.bytes).sum();
    let cpu_us_per_request = ticks
        .map(|ticks| ticks as f64 * 1e6 / clock_ticks_per_second() as f64 / requests.max(1) as f64);
    println!(
        "{{\"requests\":{requests},\"rps\":{:.0},\"p50_ms\":{:.3},\"p90_ms\":{:.3},\"p99_ms\":{:.3},\"max_ms\":{:.3},\"non_200\":{non_200},\"errors\":{errors},\"body_bytes\":{},\"server_cpu_us\":{}}}",
        requests as f64 / elapsed,
        percentile(&latencies, 0.50),
        percentile(&latencies, 0.90),
        percentile(&latencies, 0.99),
        percentile(&latencies, 1.0),
        bytes / requests.max(1),
        cpu_us_per_request.map_or("null".to_owned(), |us| format!("{us:.1}"))
    );
}
