//! Issue 38 on WooCommerce, through its stand-in: `[pix] store_gateway` places the order
//! on-hold (stock held) with the store's offline gateway, and REST v3 with a read/write key
//! (`PUT /wp-json/wc/v3/orders/{id}`) marks it paid (status processing, `date_paid`; `set_paid` would leave an on-hold order as it is)
//! once the PSP's settlement is verified, or cancels it (stock back) when the charge expires.

use serde_json::{Value, json};

use crate::pix::{
    Agent, agent, config_with, fresh, get_checkout, meta, pix_completion, reais, txid_of, until,
};
use crate::support::TestBridge;
use crate::support::pix_psp::PixPsp;
use crate::support::values::{amount, codes};
use crate::support::woo_standin::{RATES, V3_WRITE_KEY, V3_WRITE_SECRET, WooStandin};

/// The simple product bought, and how many.
pub const PRODUCT: u64 = 16;
pub const QUANTITY: u32 = 2;

/// `[store]` on `woo` selling in BRL, with the REST v3 key pair `keys` (the stand-in over
/// loopback http stands for a store behind a TLS-terminating proxy).
pub fn woo_store(woo: &WooStandin, keys: (&str, &str)) -> String {
    format!(
        "[store]\nplatform = \"woocommerce\"\nbase_url = \"{}\"\ncurrency = \"BRL\"\nname = \"Stand-in Woo\"\ntimeout_ms = 2000\nrest_v3_tls_proxy = true\nconsumer_key = \"{}\"\nconsumer_secret = \"{}\"\n",
        woo.base_url, keys.0, keys.1
    )
}

/// The whole config: `[pix]` at `psp` placing with `bacs` (on-hold), the store, then `rest`.
pub fn woo_pix_config(psp: &PixPsp, woo: &WooStandin, rest: &str) -> String {
    config_with(
        psp,
        "store_gateway = \"bacs\"\n",
        &format!(
            "{}\n{rest}",
            woo_store(woo, (V3_WRITE_KEY, V3_WRITE_SECRET))
        ),
    )
}

/// A checkout on the WooCommerce stand-in, ready to complete, made through `call`.
pub async fn woo_ready(call: impl AsyncFn(&str, Value) -> Value, agent: &Agent) -> Value {
    let created = call(
        "create_checkout",
        json!({"meta": meta(agent, Some(&fresh())), "checkout": {
            "line_items": [{"item": {"id": PRODUCT.to_string()}, "quantity": QUANTITY}],
            "buyer": {"email": "ana@example.com", "first_name": "Ana", "last_name": "Souza"},
            "fulfillment": {"methods": [{"type": "shipping", "destinations": [{
                "street_address": "Rua Doutor Quirino, 1481", "address_locality": "Campinas",
                "address_region": "SP", "postal_code": "13015-081", "address_country": "BR"}]}]}}}),
    )
    .await;
    // The store selected its first rate (PAC) itself: nothing else to choose. Its own page
    // is not where the buyer pays: Pix is offered, so the checkout is ready.
    let ready = created;
    assert_eq!(ready["status"], "ready_for_complete", "{ready}");
    assert_eq!(amount(&ready, "fulfillment"), Some(RATES[0].4), "{ready}");
    assert_eq!(ready["currency"], "BRL", "{ready}");
    ready
}

/// REST v3 order writes the stand-in received.
pub fn order_writes(woo: &WooStandin) -> usize {
    woo.requests()
        .iter()
        .filter(|line| line.starts_with("PUT /wp-json/wc/v3/orders/"))
        .count()
}

struct WooRun {
    psp: PixPsp,
    woo: WooStandin,
    bridge: TestBridge,
    agent: Agent,
}

impl WooRun {
    async fn start() -> Self {
        let psp = PixPsp::start().await;
        let woo = WooStandin::start().await;
        woo.sell_in("BRL");
        let agent = agent().await;
        let bridge = TestBridge::start(&woo_pix_config(&psp, &woo, "")).await;
        until("the webhook registration", || psp.webhook().is_some()).await;
        Self {
            psp,
            woo,
            bridge,
            agent,
        }
    }

    /// A checkout completed with Pix: its id, total and charge's txid; the store's order.
    async fn charged(&self) -> (String, i64, String, String) {
        let ready = woo_ready(
            async |tool, arguments| self.bridge.call(tool, arguments).await,
            &self.agent,
        )
        .await;
        let id = ready["id"].as_str().unwrap().to_owned();
        let total = amount(&ready, "total").unwrap();
        let answer = self
            .bridge
            .call(
                "complete_checkout",
                pix_completion(&self.agent, &id, &fresh()),
            )
            .await;
        assert_eq!(answer["status"], "complete_in_progress", "{answer}");
        let order = self.woo.last_order().expect("an order placed in the store");
        (id, total, txid_of(&answer), order)
    }

    async fn get(&self, id: &str) -> Value {
        get_checkout(&self.bridge, &self.agent, id).await
    }
}

#[tokio::test]
async fn issue_38_on_woocommerce_a_settled_charge_turns_the_order_processing_once() {
    let run = WooRun::start().await;
    let stock = run.woo.stock(PRODUCT).unwrap();
    let (id, total, txid, order) = run.charged().await;
    // Placed awaiting payment: on-hold, stock held, not paid.
    assert_eq!(run.woo.order_status(&order).as_deref(), Some("on-hold"));
    assert_eq!(run.woo.stock(PRODUCT), Some(stock - QUANTITY));
    assert_eq!(run.woo.order_payment(&order), None);
    let end_to_end = run.psp.pay(&txid, &reais(total)).await;
    assert_eq!(run.psp.notifications().last().unwrap().status, Some(200));
    // Marked paid in the store through REST v3: processing, with the date and the Pix's id.
    assert_eq!(run.woo.order_status(&order).as_deref(), Some("processing"));
    let (date_paid, transaction) = run.woo.order_payment(&order).unwrap();
    assert!(!date_paid.is_empty());
    assert_eq!(transaction, end_to_end);
    assert_eq!(run.woo.stock(PRODUCT), Some(stock - QUANTITY));
    let completed = run.get(&id).await;
    assert_eq!(completed["status"], "completed", "{completed}");
    let handle = completed["order"]["id"].as_str().unwrap().to_owned();
    until("the order event", || run.agent.events_for(&handle) > 0).await;
    let read = run
        .bridge
        .call(
            "get_order",
            json!({"meta": meta(&run.agent, None), "id": handle}),
        )
        .await;
    assert_eq!(read["checkout_id"], id.as_str(), "{read}");
    // The PSP repeats itself: nothing is written again, no second event.
    let repeated = run.psp.notifications().last().unwrap().body.clone();
    assert_eq!(run.psp.notify(repeated).await, Some(200));
    assert_eq!(order_writes(&run.woo), 1);
    assert_eq!(run.agent.events_for(&handle), 1);
}

#[tokio::test]
async fn issue_38_on_woocommerce_an_expired_charge_cancels_the_order_and_puts_the_stock_back() {
    let run = WooRun::start().await;
    let stock = run.woo.stock(PRODUCT).unwrap();
    let (id, _, txid, order) = run.charged().await;
    assert_eq!(run.woo.stock(PRODUCT), Some(stock - QUANTITY));
    run.psp.expire(&txid);
    let expired = run.get(&id).await;
    assert_eq!(expired["status"], "canceled", "{expired}");
    assert_eq!(codes(&expired)[0], "payment_expired", "{expired}");
    assert_eq!(run.woo.order_status(&order).as_deref(), Some("cancelled"));
    assert_eq!(run.woo.stock(PRODUCT), Some(stock));
    assert_eq!(run.woo.order_payment(&order), None);
    // Read again: cancelled once, the stock not put back twice.
    let again = run.get(&id).await;
    assert_eq!(again["status"], "canceled", "{again}");
    assert_eq!(order_writes(&run.woo), 1);
    assert_eq!(run.woo.stock(PRODUCT), Some(stock));
    assert!(run.agent.events.lock().unwrap().is_empty());
}

/// A key WooCommerce lets read but not write: the settlement cannot be applied, so the PSP is
/// told to retry (503) and nothing is marked paid or announced; the checkout still waits.
#[tokio::test]
async fn issue_38_on_woocommerce_a_read_only_key_leaves_the_settlement_to_be_retried() {
    use crate::support::woo_standin::{V3_KEY, V3_SECRET};
    let psp = PixPsp::start().await;
    let woo = WooStandin::start().await;
    woo.sell_in("BRL");
    let agent = agent().await;
    let config = config_with(
        &psp,
        "store_gateway = \"bacs\"\n",
        &woo_store(&woo, (V3_KEY, V3_SECRET)),
    );
    let bridge = TestBridge::start(&config).await;
    until("the webhook registration", || psp.webhook().is_some()).await;
    let ready = woo_ready(
        async |tool, arguments| bridge.call(tool, arguments).await,
        &agent,
    )
    .await;
    let id = ready["id"].as_str().unwrap().to_owned();
    let total = amount(&ready, "total").unwrap();
    let answer = bridge
        .call("complete_checkout", pix_completion(&agent, &id, &fresh()))
        .await;
    let order = woo.last_order().unwrap();
    psp.pay(&txid_of(&answer), &reais(total)).await;
    assert_eq!(psp.notifications().last().unwrap().status, Some(503));
    assert_eq!(woo.order_status(&order).as_deref(), Some("on-hold"));
    let still = bridge
        .call(
            "get_checkout",
            json!({"meta": meta(&agent, None), "id": id}),
        )
        .await;
    assert_eq!(still["status"], "complete_in_progress", "{still}");
    assert!(agent.events.lock().unwrap().is_empty());
}

/// REST v3 order writes as WooCommerce answers them: refused without the key pair or with a
/// read-only one (401), an unknown order refused (400), a bad status named.
#[tokio::test]
async fn issue_38_the_woocommerce_stand_in_answers_order_writes_as_rest_v3_does() {
    use crate::support::woo_standin::{V3_KEY, V3_SECRET};
    let woo = WooStandin::start().await;
    let client = reqwest::Client::new();
    let put = |order: &str, keys: Option<(&str, &str)>, body: Value| {
        let mut request = client
            .put(format!("{}/wp-json/wc/v3/orders/{order}", woo.base_url))
            .json(&body);
        if let Some((key, secret)) = keys {
            request = request.basic_auth(key, Some(secret));
        }
        async move {
            let response = request.send().await.unwrap();
            let status = response.status().as_u16();
            (status, response.json::<Value>().await.unwrap())
        }
    };
    let (status, body) = put("40", None, json!({"set_paid": true})).await;
    assert_eq!(
        (status, body["code"].as_str()),
        (401, Some("woocommerce_rest_cannot_edit"))
    );
    let (status, body) = put("40", Some((V3_KEY, V3_SECRET)), json!({"set_paid": true})).await;
    assert_eq!(
        (status, body["code"].as_str()),
        (401, Some("woocommerce_rest_authentication_error"))
    );
    let write = Some((V3_WRITE_KEY, V3_WRITE_SECRET));
    let (status, body) = put("999", write, json!({"set_paid": true})).await;
    assert_eq!(
        (status, body["code"].as_str()),
        (400, Some("woocommerce_rest_shop_order_invalid_id"))
    );
    let (status, body) = put("999", write, json!({"status": "paid"})).await;
    assert_eq!(
        (status, body["code"].as_str()),
        (400, Some("rest_invalid_param"))
    );
}
