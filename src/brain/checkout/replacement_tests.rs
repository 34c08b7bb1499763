//! Issue 36 item 1: update is a full replacement. What the checkout already holds writes
//! nothing to the store; a part the store cannot take is a recoverable message at its path
//! and the rest of the update is applied. Over the sample store's checkout, with every store
//! write counted.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::*;
use crate::model::BuyerContext;
use crate::model::checkout::{CodeOutcome, PaymentHandler};
use crate::platform::checkout::{CheckoutOutcome, CheckoutPort};
use crate::platform::sample::checkout::{CODE, SampleCheckout};
use crate::platform::sample::{self};

const SANDAL: &str = "prod_chinelo_praia_azm_3334";
const SHOE: &str = "prod_cloud_stride_blu_39";

/// The sample checkout, counting every write that reaches it; `refuse_lines` makes it a
/// store that cannot change lines at all.
struct Counted {
    inner: SampleCheckout,
    writes: AtomicUsize,
    refuse_lines: bool,
}

impl Counted {
    fn wrote(&self) {
        self.writes.fetch_add(1, Ordering::SeqCst);
    }
}

#[async_trait::async_trait]
impl CheckoutPort for Counted {
    fn handlers(&self) -> &[PaymentHandler] {
        self.inner.handlers()
    }
    async fn create_checkout(&self, d: &CheckoutDraft) -> Result<CheckoutOutcome, PlatformError> {
        self.inner.create_checkout(d).await
    }
    async fn get_checkout(&self, id: &str) -> Result<Option<CheckoutState>, PlatformError> {
        self.inner.get_checkout(id).await
    }
    async fn set_lines(
        &self,
        id: &str,
        lines: &[CartLineInput],
    ) -> Result<Option<CheckoutOutcome>, PlatformError> {
        if self.refuse_lines {
            return Err(PlatformError::InvalidAt {
                path: "$.checkout.line_items".into(),
                message: "this store's checkout lines are fixed".into(),
            });
        }
        self.wrote();
        self.inner.set_lines(id, lines).await
    }
    async fn set_buyer(&self, id: &str, b: &Buyer) -> Result<Option<CheckoutState>, PlatformError> {
        self.wrote();
        self.inner.set_buyer(id, b).await
    }
    async fn set_destination(
        &self,
        id: &str,
        a: &Address,
    ) -> Result<Option<CheckoutState>, PlatformError> {
        self.wrote();
        self.inner.set_destination(id, a).await
    }
    async fn select_option(
        &self,
        id: &str,
        g: &str,
        o: &str,
    ) -> Result<Option<CheckoutState>, PlatformError> {
        self.wrote();
        self.inner.select_option(id, g, o).await
    }
    async fn apply_code(&self, id: &str, c: &str) -> Result<Option<CodeOutcome>, PlatformError> {
        self.wrote();
        self.inner.apply_code(id, c).await
    }
    async fn remove_code(&self, id: &str, c: &str) -> Result<Option<CheckoutState>, PlatformError> {
        self.wrote();
        self.inner.remove_code(id, c).await
    }
    async fn place(&self, id: &str, h: Option<&str>) -> Result<Option<Placement>, PlatformError> {
        self.wrote();
        self.inner.place(id, h).await
    }
    async fn cancel_checkout(&self, id: &str) -> Result<Option<CheckoutState>, PlatformError> {
        self.wrote();
        self.inner.cancel_checkout(id).await
    }
}

fn counted(refuse_lines: bool) -> (Arc<Counted>, CheckoutBrain) {
    let port = Arc::new(Counted {
        inner: SampleCheckout::new(sample::open(&toml::Table::new()).unwrap()),
        writes: AtomicUsize::new(0),
        refuse_lines,
    });
    (port.clone(), CheckoutBrain::new(port))
}

fn line(item_id: &str, quantity: u32) -> CartLineInput {
    CartLineInput {
        item_id: item_id.to_owned(),
        quantity,
    }
}

fn address(country: &str) -> Address {
    Address {
        street_address: Some("Rua Augusta 100".into()),
        address_locality: Some("São Paulo".into()),
        postal_code: Some("01305-000".into()),
        address_country: Some(country.into()),
        ..Address::default()
    }
}

fn buyer() -> Buyer {
    Buyer {
        email: Some("ana@example.com".into()),
        first_name: Some("Ana".into()),
        ..Buyer::default()
    }
}

/// The checkout as an agent echoes it back whole: its own lines, buyer, address, selections
/// and codes.
fn echo(judged: &Judged) -> CheckoutUpdate {
    let state = &judged.state;
    CheckoutUpdate {
        lines: Some(
            state
                .lines
                .iter()
                .rev()
                .map(|held| line(&held.variant_id, held.quantity))
                .collect(),
        ),
        buyer: Some(state.buyer.clone()),
        address: state.address.clone(),
        selections: selections(state),
        codes: Some(state.codes.clone()),
    }
}

async fn filled(brain: &CheckoutBrain) -> Judged {
    let draft = CheckoutDraft {
        source: CheckoutSource::Lines(vec![line(SANDAL, 2), line(SHOE, 1)]),
        context: BuyerContext::default(),
        buyer: Buyer::default(),
    };
    let id = brain.create(&draft).await.unwrap().0.state.id;
    let addressed = brain
        .update(
            &id,
            &CheckoutUpdate {
                buyer: Some(buyer()),
                address: Some(address("BR")),
                ..CheckoutUpdate::default()
            },
        )
        .await
        .unwrap();
    let mut chosen = echo(&addressed);
    chosen.selections = vec![("grp_1".into(), "sedex".into())];
    chosen.codes = Some(vec![CODE.into()]);
    brain.update(&id, &chosen).await.unwrap()
}

#[tokio::test]
async fn an_update_echoing_the_checkout_writes_nothing_and_a_new_quantity_writes_only_lines() {
    let (port, brain) = counted(false);
    let ready = filled(&brain).await;
    assert_eq!(
        ready.status,
        Status::ReadyForComplete,
        "{:?}",
        ready.messages
    );
    let id = ready.state.id.clone();

    // Issue 36 item 1: the same lines (other order), buyer, address, option and code.
    let before = port.writes.load(Ordering::SeqCst);
    let again = brain.update(&id, &echo(&ready)).await.unwrap();
    assert_eq!(port.writes.load(Ordering::SeqCst), before, "an echo wrote");
    assert_eq!(again.status, Status::ReadyForComplete);
    assert_eq!(again.state.totals, ready.state.totals);

    // One quantity changes: one write, and the option and the code stay.
    let mut more = echo(&ready);
    more.lines = Some(vec![line(SANDAL, 3), line(SHOE, 1)]);
    let changed = brain.update(&id, &more).await.unwrap();
    assert_eq!(port.writes.load(Ordering::SeqCst), before + 1);
    let sandal = changed
        .state
        .lines
        .iter()
        .find(|held| held.variant_id == SANDAL)
        .unwrap();
    assert_eq!(sandal.quantity, 3);
    assert!(selected(&changed.state, "grp_1", "sedex"));
    assert_eq!(changed.state.codes, [CODE]);
    assert!(changed.state.totals.total > ready.state.totals.total);
}

#[tokio::test]
async fn a_destination_without_the_kept_option_is_a_message_at_that_option_and_the_rest_applies() {
    let (_, brain) = counted(false);
    let ready = filled(&brain).await;
    let id = ready.state.id.clone();
    // UCP conformance test_update_checkout: the destination moves abroad while the update
    // still names the Brazilian option it had.
    let mut moved = echo(&ready);
    moved.address = Some(address("US"));
    moved.buyer = Some(Buyer {
        first_name: Some("Jane".into()),
        ..buyer()
    });
    let judged = brain.update(&id, &moved).await.unwrap();
    assert_eq!(
        judged
            .state
            .address
            .as_ref()
            .unwrap()
            .address_country
            .as_deref(),
        Some("US")
    );
    assert_eq!(judged.state.buyer.first_name.as_deref(), Some("Jane"));
    assert_eq!(judged.state.codes, [CODE]);
    let refusal = judged
        .messages
        .iter()
        .find(|message| message.code == MessageCode::Invalid)
        .unwrap_or_else(|| panic!("{:?}", judged.messages));
    assert_eq!(refusal.severity, Some(Severity::Recoverable));
    assert_eq!(
        refusal.path.as_deref(),
        Some("$.fulfillment.methods[0].groups[0].selected_option_id")
    );
    assert_eq!(judged.status, Status::Incomplete);
    // The agent picks again from what this answer lists.
    let mut picked = echo(&judged);
    picked.selections = vec![("grp_1".into(), "intl".into())];
    let ready = brain.update(&id, &picked).await.unwrap();
    assert_eq!(
        ready.status,
        Status::ReadyForComplete,
        "{:?}",
        ready.messages
    );
}

#[tokio::test]
async fn lines_a_store_cannot_change_are_a_recoverable_message_at_line_items() {
    let (port, brain) = counted(true);
    let ready = filled(&brain).await;
    let id = ready.state.id.clone();
    // Equal lines never ask the store, so a store that cannot change them still updates.
    let same = brain.update(&id, &echo(&ready)).await.unwrap();
    assert!(
        same.messages
            .iter()
            .all(|m| m.path.as_deref() != Some("$.line_items"))
    );

    let before = port.writes.load(Ordering::SeqCst);
    let mut changed = echo(&ready);
    changed.lines = Some(vec![line(SANDAL, 5)]);
    changed.buyer = Some(Buyer {
        phone_number: Some("+5511999990000".into()),
        ..buyer()
    });
    let judged = brain.update(&id, &changed).await.unwrap();
    let refusal = &judged.messages[0];
    assert_eq!(refusal.code, MessageCode::Invalid);
    assert_eq!(refusal.severity, Some(Severity::Recoverable));
    assert_eq!(refusal.path.as_deref(), Some("$.line_items"));
    assert!(refusal.content.contains("fixed"), "{}", refusal.content);
    // The lines are as they were; the buyer's phone went through.
    assert_eq!(judged.state.lines, ready.state.lines);
    assert_eq!(
        judged.state.buyer.phone_number.as_deref(),
        Some("+5511999990000")
    );
    assert_eq!(port.writes.load(Ordering::SeqCst), before + 1);
}
