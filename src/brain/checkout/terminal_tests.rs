//! Issue 36 item 2: terminal states kept by the bridge, over a store that forgets a checkout
//! once it ended (as WooCommerce empties the cart on cancel, and as a replica that did not
//! place an order, or a restarted one, knows nothing of it).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use super::*;
use crate::model::checkout::{CodeOutcome, PaymentHandler};
use crate::platform::checkout::{CheckoutOutcome, CheckoutPort};
use crate::platform::sample::checkout::{APPROVE, SampleCheckout};
use crate::platform::sample::{self};

const SANDAL: &str = "prod_chinelo_praia_azm_3334";

/// The sample store's checkout, except that a canceled or placed checkout is forgotten: the
/// store answers `None` for it from then on.
struct Forgetful {
    inner: SampleCheckout,
    forgotten: Mutex<HashSet<String>>,
}

impl Forgetful {
    fn knows(&self, id: &str) -> bool {
        !self.forgotten.lock().unwrap().contains(id)
    }

    fn forget(&self, id: &str) {
        self.forgotten.lock().unwrap().insert(id.to_owned());
    }
}

#[async_trait::async_trait]
impl CheckoutPort for Forgetful {
    fn handlers(&self) -> &[PaymentHandler] {
        self.inner.handlers()
    }
    fn reads_orders(&self) -> bool {
        true
    }
    async fn create_checkout(&self, d: &CheckoutDraft) -> Result<CheckoutOutcome, PlatformError> {
        self.inner.create_checkout(d).await
    }
    async fn get_checkout(&self, id: &str) -> Result<Option<CheckoutState>, PlatformError> {
        if !self.knows(id) {
            return Ok(None);
        }
        self.inner.get_checkout(id).await
    }
    async fn set_lines(
        &self,
        id: &str,
        l: &[CartLineInput],
    ) -> Result<Option<CheckoutOutcome>, PlatformError> {
        assert!(self.knows(id), "a write reached a forgotten checkout");
        self.inner.set_lines(id, l).await
    }
    async fn set_buyer(&self, id: &str, b: &Buyer) -> Result<Option<CheckoutState>, PlatformError> {
        assert!(self.knows(id), "a write reached a forgotten checkout");
        self.inner.set_buyer(id, b).await
    }
    async fn set_destination(
        &self,
        id: &str,
        a: &Address,
    ) -> Result<Option<CheckoutState>, PlatformError> {
        assert!(self.knows(id), "a write reached a forgotten checkout");
        self.inner.set_destination(id, a).await
    }
    async fn select_option(
        &self,
        id: &str,
        g: &str,
        o: &str,
    ) -> Result<Option<CheckoutState>, PlatformError> {
        assert!(self.knows(id), "a write reached a forgotten checkout");
        self.inner.select_option(id, g, o).await
    }
    async fn apply_code(&self, id: &str, c: &str) -> Result<Option<CodeOutcome>, PlatformError> {
        assert!(self.knows(id), "a write reached a forgotten checkout");
        self.inner.apply_code(id, c).await
    }
    async fn remove_code(&self, id: &str, c: &str) -> Result<Option<CheckoutState>, PlatformError> {
        assert!(self.knows(id), "a write reached a forgotten checkout");
        self.inner.remove_code(id, c).await
    }
    async fn place(&self, id: &str, h: Option<&str>) -> Result<Option<Placement>, PlatformError> {
        assert!(self.knows(id), "a placement reached a forgotten checkout");
        let placed = self.inner.place(id, h).await;
        self.forget(id);
        placed
    }
    async fn cancel_checkout(&self, id: &str) -> Result<Option<CheckoutState>, PlatformError> {
        assert!(self.knows(id), "a cancel reached a forgotten checkout");
        let before = self.inner.cancel_checkout(id).await;
        self.forget(id);
        before
    }
    async fn order(&self, id: &str) -> Result<Option<Order>, PlatformError> {
        self.inner.order(id).await
    }
}

fn brain() -> CheckoutBrain {
    let store = sample::open(&toml::Table::new()).unwrap();
    CheckoutBrain::new(Arc::new(Forgetful {
        inner: SampleCheckout::new(store),
        forgotten: Mutex::new(HashSet::new()),
    }))
}

fn draft() -> CheckoutDraft {
    CheckoutDraft {
        source: CheckoutSource::Lines(vec![CartLineInput {
            item_id: SANDAL.into(),
            quantity: 2,
        }]),
        context: crate::model::BuyerContext::default(),
        buyer: Buyer::default(),
    }
}

fn completion(key: &str) -> Completion {
    Completion {
        idempotency_key: key.into(),
        handler_id: Some(APPROVE.into()),
    }
}

fn immutable(judged: &Judged) -> bool {
    judged
        .messages
        .first()
        .is_some_and(|message| message.code == MessageCode::CheckoutImmutable)
}

async fn ready(brain: &CheckoutBrain) -> String {
    let id = brain.create(&draft()).await.unwrap().0.state.id;
    let update = CheckoutUpdate {
        buyer: Some(Buyer {
            email: Some("ana@example.com".into()),
            ..Buyer::default()
        }),
        address: Some(Address {
            street_address: Some("Av. Paulista, 1000".into()),
            address_locality: Some("São Paulo".into()),
            address_region: Some("SP".into()),
            postal_code: Some("01310-100".into()),
            address_country: Some("BR".into()),
            ..Address::default()
        }),
        ..CheckoutUpdate::default()
    };
    brain.update(&id, &update).await.unwrap();
    let chosen = CheckoutUpdate {
        selections: vec![("grp_1".into(), "sedex".into())],
        ..CheckoutUpdate::default()
    };
    let judged = brain.update(&id, &chosen).await.unwrap();
    assert_eq!(
        judged.status,
        Status::ReadyForComplete,
        "{:?}",
        judged.messages
    );
    id
}

#[tokio::test]
async fn a_canceled_checkout_the_store_forgot_reads_canceled_and_refuses_every_write() {
    let brain = brain();
    let id = brain.create(&draft()).await.unwrap().0.state.id;
    let canceled = brain.cancel(&id).await.unwrap();
    assert_eq!(canceled.status, Status::Canceled);
    // The store says nothing of it any more: the bridge's record answers.
    let read = brain.get(&id).await.unwrap();
    assert_eq!(read.status, Status::Canceled);
    assert_eq!(read.state.id, id);
    assert_eq!(read.state.totals, canceled.state.totals);
    assert!(read.state.buyer.is_empty(), "no buyer data is kept");
    let update = CheckoutUpdate {
        codes: Some(vec!["DESCONTO10".into()]),
        ..CheckoutUpdate::default()
    };
    let updated = brain.update(&id, &update).await.unwrap();
    assert_eq!(updated.status, Status::Canceled);
    assert!(immutable(&updated), "{:?}", updated.messages);
    let again = brain.cancel(&id).await.unwrap();
    assert_eq!(again.status, Status::Canceled);
    assert!(immutable(&again));
    let (completed, placed) = brain
        .complete_placing(&id, &completion("k1"))
        .await
        .unwrap();
    assert_eq!(completed.status, Status::Canceled);
    assert!(immutable(&completed));
    assert!(placed.is_none());
}

#[tokio::test]
async fn a_completed_checkout_the_store_forgot_replays_its_order_and_refuses_writes() {
    let brain = brain();
    let id = ready(&brain).await;
    let (done, placed) = brain
        .complete_placing(&id, &completion("k1"))
        .await
        .unwrap();
    assert_eq!(done.status, Status::Completed);
    let order = placed.expect("this call placed the order");
    // The same key replays the order; the store no longer holds the checkout.
    let replay = brain.complete(&id, &completion("k1")).await.unwrap();
    assert_eq!(replay.status, Status::Completed);
    assert!(replay.messages.is_empty(), "{:?}", replay.messages);
    let Stage::Placed(kept) = &replay.state.stage else {
        panic!("no order on the replay: {:?}", replay.state.stage)
    };
    assert_eq!(kept.id, order.id);
    let other = brain.complete(&id, &completion("k2")).await.unwrap();
    assert!(immutable(&other));
    let update = CheckoutUpdate {
        codes: Some(Vec::new()),
        ..CheckoutUpdate::default()
    };
    let updated = brain.update(&id, &update).await.unwrap();
    assert_eq!(updated.status, Status::Completed);
    assert!(immutable(&updated));
    let canceled = brain.cancel(&id).await.unwrap();
    assert_eq!(canceled.status, Status::Completed);
    assert!(immutable(&canceled));
}
