//! Issue 38 item 5, a replica restart between charge and settlement: real bridge processes
//! sharing one real `redis-server`, in front of the WooCommerce stand-in selling in BRL, with
//! `[pix]` at the PSP stand-in. What settling a charge needs (the charge, the store order's
//! access, where the agent hears of the order, the applied `endToEndId`s) is in Redis, so a
//! replica that never saw the checkout settles it, and each `endToEndId` is applied once
//! across replicas and restarts.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::pix::{Agent, agent, fresh, meta, pix_completion, reais, txid_of, until};
use crate::pix_woo::{PRODUCT, QUANTITY, order_writes, woo_pix_config, woo_ready};
use crate::support::binary::Running;
use crate::support::pix_psp::PixPsp;
use crate::support::redis::RedisServer;
use crate::support::values::amount;
use crate::support::woo_standin::WooStandin;

/// One bridge process.
struct Node {
    process: Running,
    endpoint: String,
    base_url: String,
}

impl Node {
    fn start(config: &Path) -> Self {
        let mut process = Running::start(&[
            "serve",
            "--config",
            config.to_str().unwrap(),
            "--listen",
            "127.0.0.1:0",
        ]);
        let endpoint = process.endpoint();
        let base_url = endpoint.trim_end_matches("/bcp/mcp").to_owned();
        Self {
            process,
            endpoint,
            base_url,
        }
    }

    async fn call(&self, tool: &str, arguments: Value) -> Value {
        crate::support::tool_call_at(&self.endpoint, tool, arguments).await
    }

    /// The PSP's notification, delivered to this replica's webhook route.
    async fn notify(&self, body: &Value) -> u16 {
        reqwest::Client::new()
            .post(format!("{}/webhooks/pix/pix", self.base_url))
            .json(body)
            .send()
            .await
            .unwrap()
            .status()
            .as_u16()
    }

    async fn checkout(&self, agent: &Agent, id: &str) -> Value {
        self.call("get_checkout", json!({"meta": meta(agent, None), "id": id}))
            .await
    }
}

struct Setup {
    _redis: RedisServer,
    psp: PixPsp,
    woo: WooStandin,
    agent: Agent,
    config: PathBuf,
}

impl Drop for Setup {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.config);
    }
}

async fn setup() -> Setup {
    let redis = RedisServer::run(None);
    let psp = PixPsp::start().await;
    let woo = WooStandin::start().await;
    woo.sell_in("BRL");
    let agent = agent().await;
    let text = woo_pix_config(
        &psp,
        &woo,
        &format!("[redis]\nurl = \"{}\"\n", redis.url(None)),
    );
    let config = std::env::temp_dir().join(format!("bcp-pix-replicas-{}.toml", fresh()));
    std::fs::write(&config, text).unwrap();
    Setup {
        _redis: redis,
        psp,
        woo,
        agent,
        config,
    }
}

impl Setup {
    /// `node` registered its webhook with the PSP (each replica does at start).
    async fn registered(&self, node: &Node) {
        let url = format!("{}/webhooks/pix", node.base_url);
        until("the webhook registration", || {
            self.psp.webhook().as_deref() == Some(url.as_str())
        })
        .await;
    }

    /// A checkout completed with Pix on `node`: its id, total and txid, and the store's order
    /// on-hold.
    async fn charged_on(&self, node: &Node) -> (String, i64, String, String) {
        let ready = woo_ready(
            async |tool, arguments| node.call(tool, arguments).await,
            &self.agent,
        )
        .await;
        let id = ready["id"].as_str().unwrap().to_owned();
        let total = amount(&ready, "total").unwrap();
        let answer = node
            .call(
                "complete_checkout",
                pix_completion(&self.agent, &id, &fresh()),
            )
            .await;
        assert_eq!(answer["status"], "complete_in_progress", "{answer}");
        let order = self.woo.last_order().unwrap();
        assert_eq!(self.woo.order_status(&order).as_deref(), Some("on-hold"));
        (id, total, txid_of(&answer), order)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs redis-server: cargo test -- --include-ignored with redis-server on the PATH (.ci/run installs it)"]
async fn issue_38_a_replica_restart_between_charge_and_settlement_settles_once() {
    let setup = setup().await;
    let stock = setup.woo.stock(PRODUCT).unwrap();
    let a = Node::start(&setup.config);
    setup.registered(&a).await;
    let (id, total, txid, order) = setup.charged_on(&a).await;
    // A dies with the charge pending: what it held in memory is gone.
    drop(a);
    let b = Node::start(&setup.config);
    setup.registered(&b).await;
    // B never saw the checkout: it reads the pending charge from the shared store.
    let pending = b.checkout(&setup.agent, &id).await;
    assert_eq!(pending["status"], "complete_in_progress", "{pending}");
    assert_eq!(txid_of(&pending), txid);
    let end_to_end = setup.psp.pay(&txid, &reais(total)).await;
    assert_eq!(setup.psp.notifications().last().unwrap().status, Some(200));
    assert_eq!(
        setup.woo.order_status(&order).as_deref(),
        Some("processing")
    );
    assert_eq!(setup.woo.order_payment(&order).unwrap().1, end_to_end);
    assert_eq!(setup.woo.stock(PRODUCT), Some(stock - QUANTITY));
    let completed = b.checkout(&setup.agent, &id).await;
    assert_eq!(completed["status"], "completed", "{completed}");
    let handle = completed["order"]["id"].as_str().unwrap().to_owned();
    until("the order event", || setup.agent.events_for(&handle) > 0).await;
    let read = b
        .call(
            "get_order",
            json!({"meta": meta(&setup.agent, None), "id": handle}),
        )
        .await;
    assert_eq!(read["checkout_id"], id.as_str(), "{read}");
    // The PSP repeats itself to B: applied once, one event, one write to the store.
    let repeated = setup.psp.notifications().last().unwrap().body.clone();
    assert_eq!(setup.psp.notify(repeated).await, Some(200));
    assert_eq!(order_writes(&setup.woo), 1);
    assert_eq!(setup.agent.events_for(&handle), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs redis-server: cargo test -- --include-ignored with redis-server on the PATH (.ci/run installs it)"]
async fn issue_38_one_notification_to_two_live_replicas_at_once_is_applied_once() {
    let setup = setup().await;
    let a = Node::start(&setup.config);
    setup.registered(&a).await;
    let b = Node::start(&setup.config);
    setup.registered(&b).await;
    let (id, total, txid, order) = setup.charged_on(&a).await;
    let notification = setup.psp.settle(&txid, &reais(total));
    let (to_a, to_b) = tokio::join!(a.notify(&notification), b.notify(&notification));
    assert_eq!((to_a, to_b), (200, 200));
    assert_eq!(
        setup.woo.order_status(&order).as_deref(),
        Some("processing")
    );
    assert_eq!(order_writes(&setup.woo), 1);
    let on_a = a.checkout(&setup.agent, &id).await;
    let on_b = b.checkout(&setup.agent, &id).await;
    assert_eq!(on_a["status"], "completed", "{on_a}");
    assert_eq!(on_b["status"], "completed", "{on_b}");
    let handle = on_b["order"]["id"].as_str().unwrap().to_owned();
    assert_eq!(on_a["order"]["id"], handle.as_str());
    until("the order event", || setup.agent.events_for(&handle) > 0).await;
    // Delivered again to both: still once.
    let (to_a, to_b) = tokio::join!(a.notify(&notification), b.notify(&notification));
    assert_eq!((to_a, to_b), (200, 200));
    assert_eq!(order_writes(&setup.woo), 1);
    assert_eq!(setup.agent.events_for(&handle), 1);
    drop((a.process, b.process));
}
