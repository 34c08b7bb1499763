//! Issue 38: the Pix rules over the sample store's checkout and a PSP faked in process (the
//! suite drives the real API Pix client against the PSP stand-in).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use time::OffsetDateTime;

use super::pix::{PixFlow, Settlement};
use super::*;
use crate::model::BuyerContext;
use crate::model::checkout::CheckoutSource;
use crate::model::fiscal::{TaxpayerId, TaxpayerKind};
use crate::money::Money;
use crate::pix::port::{Charge, ChargeRequest, ChargeStatus, PixError, PixProvider, Received};
use crate::platform::checkout::CheckoutPort;
use crate::platform::sample::checkout::SampleCheckout;
use crate::platform::sample::{self};
use crate::protocol::MessageCode;

const SANDAL: &str = "prod_chinelo_praia_azm_3334";
const KEY: &str = "12345678000195";

#[derive(Default)]
struct FakePsp {
    charges: Mutex<HashMap<String, Charge>>,
    debtors: Mutex<Vec<Option<String>>>,
    down: AtomicBool,
    created: AtomicUsize,
}

impl FakePsp {
    /// The payer's bank paid `amount` under `end_to_end`.
    fn pay(&self, txid: &str, amount: i64, end_to_end: &str) {
        let mut charges = self.charges.lock().unwrap();
        let charge = charges.get_mut(txid).unwrap();
        charge.status = ChargeStatus::Completed;
        charge.received.push(Received {
            end_to_end_id: end_to_end.to_owned(),
            amount: Money::new(amount, iso_currency::Currency::BRL),
            at: OffsetDateTime::now_utc(),
        });
    }
}

#[async_trait]
impl PixProvider for FakePsp {
    async fn create_charge(&self, request: &ChargeRequest) -> Result<Charge, PixError> {
        if self.down.load(Ordering::SeqCst) {
            return Err(PixError::Unavailable("connection refused".into()));
        }
        let mut charges = self.charges.lock().unwrap();
        if let Some(held) = charges.get(&request.txid) {
            return Ok(held.clone());
        }
        self.created.fetch_add(1, Ordering::SeqCst);
        self.debtors.lock().unwrap().push(
            request
                .debtor
                .as_ref()
                .map(|debtor| format!("{}|{}", debtor.document.value, debtor.name)),
        );
        let now = OffsetDateTime::now_utc();
        let charge = Charge {
            txid: request.txid.clone(),
            status: ChargeStatus::Active,
            amount: request.amount,
            key: KEY.to_owned(),
            copia_e_cola: format!("00020101021226...{}6304ABCD", request.txid),
            location: None,
            created_at: now,
            expires_at: now + time::Duration::seconds(i64::from(request.expires_secs)),
            received: Vec::new(),
        };
        charges.insert(request.txid.clone(), charge.clone());
        Ok(charge)
    }

    async fn read_charge(&self, txid: &str) -> Result<Charge, PixError> {
        if self.down.load(Ordering::SeqCst) {
            return Err(PixError::Unavailable("connection refused".into()));
        }
        self.charges
            .lock()
            .unwrap()
            .get(txid)
            .cloned()
            .ok_or_else(|| PixError::NotFound(txid.to_owned()))
    }

    fn key(&self) -> &str {
        KEY
    }
}

struct Setup {
    brain: CheckoutBrain,
    psp: Arc<FakePsp>,
    store: Arc<SampleCheckout>,
}

fn setup(expires_secs: u32) -> Setup {
    let psp = Arc::new(FakePsp::default());
    let store = Arc::new(SampleCheckout::new(
        sample::open(&toml::Table::new()).unwrap(),
    ));
    let brain = CheckoutBrain::new(store.clone()).with_pix(PixFlow::new(
        psp.clone(),
        "pix".into(),
        expires_secs,
    ));
    Setup { brain, psp, store }
}

fn buyer() -> Buyer {
    Buyer {
        first_name: Some("Ana".into()),
        last_name: Some("Souza".into()),
        email: Some("ana@example.com".into()),
        phone_number: None,
        taxpayer_id: Some(TaxpayerId {
            kind: TaxpayerKind::Cpf,
            value: "39053344705".into(),
        }),
    }
}

async fn ready(brain: &CheckoutBrain) -> Judged {
    let draft = CheckoutDraft {
        source: CheckoutSource::Lines(vec![CartLineInput {
            item_id: SANDAL.into(),
            quantity: 2,
        }]),
        context: BuyerContext::default(),
        buyer: Buyer::default(),
    };
    let created = brain.create(&draft).await.unwrap().0;
    let update = CheckoutUpdate {
        buyer: Some(buyer()),
        address: Some(Address {
            first_name: Some("Ana".into()),
            last_name: Some("Souza".into()),
            street_address: Some("Rua Augusta 100".into()),
            address_locality: Some("São Paulo".into()),
            address_region: Some("SP".into()),
            postal_code: Some("01305-000".into()),
            address_country: Some("BR".into()),
            ..Address::default()
        }),
        selections: Vec::new(),
        ..CheckoutUpdate::default()
    };
    let id = created.state.id.clone();
    brain.update(&id, &update).await.unwrap();
    let chosen = CheckoutUpdate {
        selections: vec![("grp_1".into(), "sedex".into())],
        ..CheckoutUpdate::default()
    };
    brain.update(&id, &chosen).await.unwrap()
}

/// WooCommerce without `[checkout] place_with` has no handler of its own and would send the
/// buyer to its page to pay; with Pix offered the buyer pays in the conversation, so that
/// hand-off goes (any other reason to visit the store's page stays).
#[tokio::test]
async fn pix_alone_needs_no_hand_off_to_pay_issue_38_item_2() {
    use crate::model::checkout::EscalationReason;
    let s = setup(600);
    let judged = ready(&s.brain).await;
    let mut state = judged.state.clone();
    state.handlers.clear();
    state.escalation = Some(EscalationReason::Payment);
    s.brain.offer_pix(&mut state);
    let offered: Vec<&str> = state.handlers.iter().map(|held| held.id.as_str()).collect();
    assert_eq!(offered, ["pix"]);
    assert_eq!(state.escalation, None);
    assert_eq!(status::judge(state).status, Status::ReadyForComplete);
    let mut review = judged.state.clone();
    review.handlers.clear();
    review.escalation = Some(EscalationReason::Review);
    s.brain.offer_pix(&mut review);
    assert_eq!(review.escalation, Some(EscalationReason::Review));
}

fn pix(key: &str) -> Completion {
    Completion {
        idempotency_key: key.into(),
        handler_id: Some("pix".into()),
    }
}

fn wire(judged: &Judged) -> serde_json::Value {
    use crate::protocol::envelope::Extensions;
    use crate::protocol::{Edition, Release, Ucp};
    let ucp = Ucp {
        version: "2026-08-25",
        status: None,
        capabilities: std::collections::BTreeMap::new(),
        payment_handlers: None,
    };
    let release = Release {
        version: "2026-08-25",
        edition: Edition::Ucp20260825,
        extensions: Extensions::ALL,
    };
    serde_json::to_value(render::checkout(judged, release, ucp, Vec::new())).unwrap()
}

fn codes(judged: &Judged) -> Vec<MessageCode> {
    judged.messages.iter().map(|message| message.code).collect()
}

/// The store's order behind a Pix checkout, read from the store itself.
async fn store_order(brain: &CheckoutBrain, store: &SampleCheckout, judged: &Judged) -> Order {
    let txid = &judged.pix.as_ref().unwrap().txid;
    let flow = brain.pix.as_deref().unwrap();
    for number in 1..10 {
        let id = format!("ord_{number}");
        if flow.txid(&judged.state.id, &id) == *txid {
            return store.order(&id).await.unwrap().unwrap();
        }
    }
    panic!("no store order for the charge");
}

#[tokio::test]
async fn pix_is_offered_only_with_pix_set_and_a_store_that_takes_orders_unpaid_issue_38_item_2() {
    let without = CheckoutBrain::new(Arc::new(SampleCheckout::new(
        sample::open(&toml::Table::new()).unwrap(),
    )));
    let plain = ready(&without).await;
    assert!(
        !plain
            .state
            .handlers
            .iter()
            .any(|handler| handler.id == "pix")
    );
    let Setup { brain, .. } = setup(1800);
    let judged = ready(&brain).await;
    assert_eq!(judged.status, Status::ReadyForComplete);
    assert!(
        judged
            .state
            .handlers
            .iter()
            .any(|handler| handler.id == "pix")
    );
    // Completing with it through a brain without Pix is refused by name.
    let refused = without
        .complete(&judged.state.id, &pix("k0"))
        .await
        .unwrap_err();
    assert!(refused.to_string().contains("pix"), "{refused}");
}

#[tokio::test]
async fn complete_with_pix_answers_in_progress_with_one_charge_for_the_store_total_issue_38_item_2()
{
    let Setup { brain, psp, store } = setup(1800);
    let ready = ready(&brain).await;
    let id = ready.state.id.clone();
    let judged = brain.complete(&id, &pix("k1")).await.unwrap();
    assert_eq!(judged.status, Status::CompleteInProgress);
    let shown = judged.pix.clone().expect("the charge is shown");
    assert_eq!(shown.amount, ready.state.totals.total);
    assert!((26..=35).contains(&shown.txid.len()));
    assert_eq!(shown.checkout_id, id);
    // The order is in the store, held unpaid.
    let order = store_order(&brain, &store, &judged).await;
    assert_eq!(order.store_status, "on-hold");
    assert!(!order.paid);
    // `devedor`: the buyer's CPF with their name.
    assert_eq!(
        psp.debtors.lock().unwrap().as_slice(),
        [Some("39053344705|Ana Souza".to_owned())]
    );
    // The wire: a pix_payment_instrument with its pix_charge credential.
    let wire = wire(&judged);
    let instrument = &wire["payment"]["instruments"][0];
    assert_eq!(instrument["type"], "pix");
    assert_eq!(instrument["handler_id"], "pix");
    assert_eq!(instrument["credential"]["type"], "pix_charge");
    assert_eq!(instrument["credential"]["provider_payment_id"], shown.txid);
    assert_eq!(instrument["credential"]["binding"]["checkout_id"], id);
    assert!(instrument["credential"]["expires_at"].is_string());
    assert!(
        instrument["credential"]["copia_e_cola"]
            .as_str()
            .unwrap()
            .contains(&shown.txid)
    );
    // A repeated complete (same key, or another) answers the same charge: never a second.
    let again = brain.complete(&id, &pix("k1")).await.unwrap();
    assert_eq!(again.pix.as_ref().unwrap().txid, shown.txid);
    let other = brain.complete(&id, &pix("k2")).await.unwrap();
    assert_eq!(other.pix.as_ref().unwrap().txid, shown.txid);
    assert_eq!(psp.created.load(Ordering::SeqCst), 1);
    // While it waits, the checkout takes no change.
    let update = CheckoutUpdate {
        codes: Some(vec!["BEMVINDO10".into()]),
        ..CheckoutUpdate::default()
    };
    let refused = brain.update(&id, &update).await.unwrap();
    assert_eq!(codes(&refused)[0], MessageCode::CheckoutCompleteInProgress);
}

#[tokio::test]
async fn a_verified_settlement_marks_the_order_paid_once_and_completes_the_checkout_issue_38_item_3()
 {
    let Setup { brain, psp, store } = setup(1800);
    let id = ready(&brain).await.state.id;
    let judged = brain.complete(&id, &pix("k1")).await.unwrap();
    let heard = Arc::new(AtomicUsize::new(0));
    let counter = heard.clone();
    brain.announce_through(
        "test",
        Arc::new(move |_: Order, _: HandedOff| {
            counter.fetch_add(1, Ordering::SeqCst);
            Box::pin(async {})
        }),
    );
    let handed = HandedOff {
        webhook_url: "https://agent.example/orders".into(),
        service: "test".into(),
        version: "2026-04-08".into(),
        fulfillment: true,
        discount: true,
    };
    brain.handed_off(&id, handed).await;
    let shown = judged.pix.clone().unwrap();
    // Not paid yet: the signal changes nothing.
    assert_eq!(
        brain.pix_notified(&shown.txid).await,
        Settlement::Unverified
    );
    assert_eq!(
        brain.get(&id).await.unwrap().status,
        Status::CompleteInProgress
    );
    psp.pay(
        &shown.txid,
        shown.amount,
        "E12345678202612071234abcdefghijk",
    );
    assert_eq!(brain.pix_notified(&shown.txid).await, Settlement::Settled);
    let completed = brain.get(&id).await.unwrap();
    assert_eq!(completed.status, Status::Completed);
    assert!(completed.pix.is_none());
    let order = store_order(&brain, &store, &judged).await;
    assert!(order.paid);
    assert_eq!(order.store_status, "processing");
    assert_eq!(heard.load(Ordering::SeqCst), 1);
    // The PSP repeats its notification: applied once.
    assert_eq!(
        brain.pix_notified(&shown.txid).await,
        Settlement::AlreadySettled
    );
    assert_eq!(heard.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn an_unknown_txid_is_refused_and_settles_nothing_issue_38_item_4() {
    let Setup { brain, .. } = setup(1800);
    let id = ready(&brain).await.state.id;
    brain.complete(&id, &pix("k1")).await.unwrap();
    assert_eq!(
        brain.pix_notified("forgedforgedforgedforgedforged12").await,
        Settlement::Unverified
    );
    assert_eq!(
        brain.get(&id).await.unwrap().status,
        Status::CompleteInProgress
    );
}

#[tokio::test]
async fn an_amount_mismatch_is_payment_failed_and_never_paid_issue_38_item_3() {
    let Setup { brain, psp, store } = setup(1800);
    let id = ready(&brain).await.state.id;
    let judged = brain.complete(&id, &pix("k1")).await.unwrap();
    let shown = judged.pix.clone().unwrap();
    psp.pay(
        &shown.txid,
        shown.amount - 1,
        "E12345678202612071234mismatch01",
    );
    assert_eq!(brain.pix_notified(&shown.txid).await, Settlement::Mismatch);
    let after = brain.get(&id).await.unwrap();
    assert_ne!(after.status, Status::Completed);
    assert_eq!(codes(&after)[0], MessageCode::PaymentFailed);
    assert!(after.pix.is_none());
    assert!(!store_order(&brain, &store, &judged).await.paid);
}

#[tokio::test]
async fn an_end_to_end_id_is_applied_to_one_charge_only_issue_38_item_3() {
    let Setup { brain, psp, store } = setup(1800);
    let first = ready(&brain).await.state.id;
    let second = ready(&brain).await.state.id;
    let one = brain.complete(&first, &pix("k1")).await.unwrap();
    let two = brain.complete(&second, &pix("k2")).await.unwrap();
    let (one_shown, two_shown) = (one.pix.clone().unwrap(), two.pix.clone().unwrap());
    psp.pay(
        &one_shown.txid,
        one_shown.amount,
        "E00000000202612070000replayed0",
    );
    psp.pay(
        &two_shown.txid,
        two_shown.amount,
        "E00000000202612070000replayed0",
    );
    assert_eq!(
        brain.pix_notified(&one_shown.txid).await,
        Settlement::Settled
    );
    assert_eq!(
        brain.pix_notified(&two_shown.txid).await,
        Settlement::Mismatch
    );
    assert!(!store_order(&brain, &store, &two).await.paid);
}

#[tokio::test]
async fn psp_down_at_complete_is_processor_unavailable_and_leaves_no_order_issue_38_item_3() {
    let Setup { brain, psp, store } = setup(1800);
    let id = ready(&brain).await.state.id;
    psp.down.store(true, Ordering::SeqCst);
    let judged = brain.complete(&id, &pix("k1")).await.unwrap();
    assert_eq!(codes(&judged)[0], MessageCode::ProcessorUnavailable);
    assert_eq!(judged.status, Status::Canceled);
    assert!(judged.pix.is_none());
    let order = store.order("ord_1").await.unwrap().unwrap();
    assert_eq!(order.store_status, "cancelled");
    assert!(!order.paid);
    // Read again later, it is still canceled (not completed by the placed stage).
    assert_eq!(brain.get(&id).await.unwrap().status, Status::Canceled);
}

#[tokio::test]
async fn an_expired_charge_cancels_the_order_and_answers_payment_expired_issue_38_item_3() {
    let Setup { brain, psp, store } = setup(0);
    let id = ready(&brain).await.state.id;
    let judged = brain.complete(&id, &pix("k1")).await.unwrap();
    let shown = judged.pix.clone().unwrap();
    brain.pix_sweep().await;
    let expired = brain.get(&id).await.unwrap();
    assert_eq!(expired.status, Status::Canceled);
    assert_eq!(codes(&expired)[0], MessageCode::PaymentExpired);
    // Never presented after expiry.
    assert!(expired.pix.is_none());
    let order = store_order(&brain, &store, &judged).await;
    assert_eq!(order.store_status, "cancelled");
    // A payment reported after it was expired is not applied.
    psp.pay(&shown.txid, shown.amount, "E00000000202612070000toolate00");
    assert_eq!(
        brain.pix_notified(&shown.txid).await,
        Settlement::Unverified
    );
    assert!(!store_order(&brain, &store, &judged).await.paid);
}

#[tokio::test]
async fn a_charge_paid_at_the_last_moment_is_settled_not_expired_issue_38_item_3() {
    let Setup { brain, psp, store } = setup(0);
    let id = ready(&brain).await.state.id;
    let judged = brain.complete(&id, &pix("k1")).await.unwrap();
    let shown = judged.pix.clone().unwrap();
    psp.pay(&shown.txid, shown.amount, "E00000000202612070000lastmoment");
    // The read finds it past its expiry, asks the PSP first, and settles it.
    brain.pix_refresh(&id).await;
    assert_eq!(brain.get(&id).await.unwrap().status, Status::Completed);
    assert!(store_order(&brain, &store, &judged).await.paid);
}
