//! Benchmark baseline, the ceiling: a bare axum endpoint answering every POST with one fixed
//! JSON-RPC body. Not a criterion bench: `bench/run.sh` starts it with `--serve ADDR` and
//! loads it with oha next to the bridge. Under `cargo bench` it exits at once.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout
)]

use axum::Router;
use axum::http::header::CONTENT_TYPE;
use axum::routing::post;

const BODY: &str = r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"{\"ok\":true}"}],"structuredContent":{"ok":true}}}"#;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(addr) = args
        .iter()
        .position(|arg| arg == "--serve")
        .and_then(|at| args.get(at + 1))
    else {
        println!("baseline_axum: a server for bench/run.sh (--serve ADDR); nothing to bench here");
        return;
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let app = Router::new().route(
            "/mcp",
            post(|| async { ([(CONTENT_TYPE, "application/json")], BODY) }),
        );
        let listener = tokio::net::TcpListener::bind(addr).await.unwrap();
        println!("listening on {}", listener.local_addr().unwrap());
        axum::serve(listener, app).await.unwrap();
    });
}
