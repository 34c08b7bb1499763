//! Benchmark baselines on bare axum (no MCP SDK). `bench/run.sh` starts them with
//! `--serve ADDR` and loads them next to the bridge; under `cargo bench` they exit at once.
//!   (default)            one small fixed JSON-RPC body: the transport ceiling;
//!   --fixed FRAME_FILE   "fixed bytes": answers every POST with the bytes of FRAME_FILE (a
//!                        whole JSON-RPC answer of the bridge), the transport limit at that
//!                        payload size;
//!   --lean PAYLOAD_FILE  "lean double-encoding": parses each request into a `Value`, then
//!                        encodes the payload twice (the escaped text copy and the structured
//!                        copy) into a JSON-RPC result echoing the request id — what a lean
//!                        hand-written MCP server costs at that payload size.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout
)]

use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::header::CONTENT_TYPE;
use axum::response::IntoResponse;
use axum::routing::post;
use serde::Serialize;
use serde_json::Value;

const BODY: &str = r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"{\"ok\":true}"}],"structuredContent":{"ok":true}}}"#;

#[derive(Serialize)]
struct Text<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    text: &'a str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CallResult<'a> {
    content: [Text<'a>; 1],
    structured_content: &'a Value,
    is_error: bool,
}

#[derive(Serialize)]
struct Frame<'a> {
    jsonrpc: &'static str,
    id: &'a Value,
    result: CallResult<'a>,
}

async fn lean(State(payload): State<Arc<Value>>, body: Bytes) -> impl IntoResponse {
    let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let id = request.get("id").unwrap_or(&Value::Null);
    let text = serde_json::to_string(&*payload).unwrap();
    let frame = Frame {
        jsonrpc: "2.0",
        id,
        result: CallResult {
            content: [Text {
                kind: "text",
                text: &text,
            }],
            structured_content: &payload,
            is_error: false,
        },
    };
    (
        [(CONTENT_TYPE, "application/json")],
        serde_json::to_vec(&frame).unwrap(),
    )
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let value = |name: &str| {
        args.iter()
            .position(|arg| arg == name)
            .and_then(|at| args.get(at + 1))
            .cloned()
    };
    let Some(addr) = value("--serve") else {
        println!("baseline_axum: servers for bench/run.sh (--serve ADDR); nothing to bench here");
        return;
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let app = if let Some(path) = value("--fixed") {
            let frame = Bytes::from(std::fs::read(path).unwrap());
            Router::new().route(
                "/mcp",
                post(move || {
                    let frame = frame.clone();
                    async move { ([(CONTENT_TYPE, "application/json")], frame) }
                }),
            )
        } else if let Some(path) = value("--lean") {
            let payload: Value =
                serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
            Router::new()
                .route("/mcp", post(lean))
                .with_state(Arc::new(payload))
        } else {
            Router::new().route(
                "/mcp",
                post(|| async { ([(CONTENT_TYPE, "application/json")], BODY) }),
            )
        };
        let listener = tokio::net::TcpListener::bind(addr).await.unwrap();
        println!("listening on {}", listener.local_addr().unwrap());
        axum::serve(listener, app).await.unwrap();
    });
}
