//! Benchmark baseline, the SDK floor: rmcp's Streamable HTTP service configured exactly as
//! the bridge configures it (sessionless, JSON responses), with one tool returning a fixed
//! struct. What the bridge costs beyond this is its own work. `bench/run.sh` starts it with
//! `--serve ADDR`; under `cargo bench` it exits at once.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout
)]

use std::sync::Arc;

use axum::Router;
use rmcp::handler::server::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ErrorData, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use serde::Serialize;
use serde_json::json;

#[derive(Serialize)]
struct Fixed {
    ok: bool,
    name: &'static str,
    amount: i64,
}

#[derive(Clone)]
struct Floor {
    tool: Arc<Tool>,
    /// `--payload FILE`: answer with this JSON instead of the small struct, so the floor can
    /// be measured at the size of a real catalog answer.
    payload: Option<Arc<serde_json::Value>>,
}

impl ServerHandler for Floor {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(vec![(*self.tool).clone()]))
    }

    async fn call_tool(
        &self,
        _request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if let Some(payload) = &self.payload {
            return Ok(CallToolResult::structured((**payload).clone()).into());
        }
        let value = serde_json::to_value(Fixed {
            ok: true,
            name: "fixed",
            amount: 1250,
        })
        .unwrap();
        Ok(CallToolResult::structured(value).into())
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(addr) = args
        .iter()
        .position(|arg| arg == "--serve")
        .and_then(|at| args.get(at + 1))
    else {
        println!("baseline_rmcp: a server for bench/run.sh (--serve ADDR); nothing to bench here");
        return;
    };
    let payload = args
        .iter()
        .position(|arg| arg == "--payload")
        .and_then(|at| args.get(at + 1))
        .map(|path| {
            Arc::new(serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap())
        });
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let schema = json!({"type": "object"});
        let tool = Arc::new(Tool::new(
            "fixed",
            "Returns a fixed struct",
            Arc::new(schema.as_object().unwrap().clone()),
        ));
        let config = StreamableHttpServerConfig::default()
            .with_legacy_session_mode(false)
            .with_json_response(true)
            .with_sse_keep_alive(None);
        let service = StreamableHttpService::new(
            move || {
                Ok(Floor {
                    tool: tool.clone(),
                    payload: payload.clone(),
                })
            },
            LocalSessionManager::default().into(),
            config,
        );
        let app = Router::new().route_service("/mcp", service);
        let listener = tokio::net::TcpListener::bind(addr).await.unwrap();
        println!("listening on {}", listener.local_addr().unwrap());
        axum::serve(listener, app).await.unwrap();
    });
}
