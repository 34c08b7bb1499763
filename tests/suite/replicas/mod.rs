//! Three real bridge processes sharing one real `redis-server` on loopback (`[redis] url`), in
//! front of the WooCommerce stand-in (the Shopify one for order webhooks): invalidations, the
//! upstream budget, per-agent limits, cart writes and order webhooks agree across replicas,
//! and losing Redis or a replica degrades as documented.

mod budget;
pub mod carts;
mod chaos;
mod checkouts;
mod config;
pub mod fencing;
mod handles;
mod invalidation;
mod ledger;
mod order_event_queue;
mod order_webhooks;
mod outages;
mod pix;
mod shopify_orders;

use std::path::PathBuf;

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::support::binary::Running;
use crate::support::redis::RedisServer;
use crate::support::woo_standin::WooStandin;

pub const PROFILE: &str = "https://agent.example/profiles/shopping-agent.json";
pub const WEBHOOK_SECRET: &str = "whsec-replicas-test";

pub fn meta() -> Value {
    json!({"ucp-agent": {"profile": PROFILE}})
}

/// One bridge process, by its MCP endpoint and base URL.
pub struct Replica {
    pub process: Running,
    pub endpoint: String,
    pub base_url: String,
}

pub struct Replicas {
    pub replicas: Vec<Replica>,
    config: PathBuf,
    client: reqwest::Client,
}

impl Drop for Replicas {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.config);
    }
}

/// The `[redis]` config of three replicas on `redis`, after `woo`'s `[store]` and `extra`.
pub fn config(woo: &WooStandin, redis: &RedisServer, extra: &str) -> String {
    format!(
        "{}\n[negotiation]\nenabled = false\n\n[redis]\nurl = \"{}\"\nreplicas = 3\nlock_lease_ms = 1500\n\n{extra}\n",
        woo.config(""),
        redis.url(None)
    )
}

impl Replicas {
    /// Three replicas of one configuration.
    pub fn start(config_text: &str) -> Self {
        let config = std::env::temp_dir().join(format!(
            "bcp-replicas-{}-{}.toml",
            std::process::id(),
            uuid::Uuid::new_v4()
        ));
        std::fs::write(&config, config_text).unwrap();
        let replicas = (0..3)
            .map(|_| {
                let mut process = Running::serve(&config);
                let endpoint = process.endpoint();
                let base_url = endpoint.trim_end_matches("/bcp/mcp").to_owned();
                Replica {
                    process,
                    endpoint,
                    base_url,
                }
            })
            .collect();
        Self {
            replicas,
            config,
            client: reqwest::Client::new(),
        }
    }

    /// `tools/call` on replica `index`; the HTTP status and the whole JSON-RPC reply.
    pub async fn call_raw(
        &self,
        index: usize,
        tool: &str,
        arguments: Value,
    ) -> (StatusCode, Value) {
        let response = self
            .client
            .post(&self.replicas[index].endpoint)
            .header("accept", "application/json")
            .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}))
            .send()
            .await
            .unwrap();
        let status = response.status();
        (status, response.json().await.unwrap())
    }

    /// A call that must succeed; its `structuredContent`.
    pub async fn call(&self, index: usize, tool: &str, arguments: Value) -> Value {
        let (status, reply) = self.call_raw(index, tool, arguments).await;
        assert_eq!(status, StatusCode::OK, "{reply}");
        assert!(reply.get("error").is_none(), "replica {index}: {reply}");
        reply["result"]["structuredContent"].clone()
    }

    pub async fn get(&self, index: usize, path: &str) -> (StatusCode, String) {
        let response = self
            .client
            .get(format!("{}{path}", self.replicas[index].base_url))
            .send()
            .await
            .unwrap();
        let status = response.status();
        (status, response.text().await.unwrap())
    }
}

/// Keys of the shared Redis matching `pattern` (what the replicas left there).
pub async fn redis_keys(redis: &RedisServer, pattern: &str) -> Vec<String> {
    let client = redis::Client::open(redis.url(None)).unwrap();
    let mut connection = client.get_multiplexed_async_connection().await.unwrap();
    redis::cmd("KEYS")
        .arg(pattern)
        .query_async(&mut connection)
        .await
        .unwrap()
}
