//! Pix inside the conversation (BCP `br.dev.bcp.pix`, issue 38), written once for every store
//! that can take an order unpaid. Complete places the order awaiting payment (stock held),
//! creates the PSP's dynamic charge for the store's total and answers `complete_in_progress`
//! with the charge; the PSP's notification is only a signal to read the charge back, and the
//! order is marked paid only for a charge the PSP says is concluded with the exact amount,
//! into the merchant's key, under the txid derived from this very order. A charge that
//! expires unpaid cancels the order (stock back).
//!
//! A charge is created once, by the one completion the ledger let place the order (after
//! the checkout's lease is released: the order is placed, nothing else may place it). Every
//! later change of its state runs under the checkout's lease (`writes`, across replicas with
//! `[redis]`) and re-reads the charge's record first, so a webhook, a read and the sweeper
//! racing on two replicas settle or expire it once.

use std::sync::Arc;
use std::time::Duration;

use time::OffsetDateTime;

use super::pix_book::{ChargeRecord, ChargeState, Claim, PixBook};
use super::terminal::Terminal;
use super::{CheckoutBrain, Judged, Status, with_message};
use crate::brain::BrainError;
use crate::model::checkout::{
    Buyer, CheckoutState, EscalationReason, Order, PaymentHandler, Stage,
};
use crate::model::fiscal::TaxpayerKind;
use crate::money::Money;
use crate::pix::port::{ChargeRequest, ChargeStatus, Debtor, PixError, PixProvider};
use crate::protocol::{Message, MessageCode, Severity};

/// The handler's name, under which profiles and checkout answers declare it.
pub const HANDLER: &str = "br.dev.bcp.pix";

/// Renders a BR Code payload as a PNG QR image, base64-encoded.
pub type QrRenderer = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// Derives a charge's txid from its order's reference, the same on every replica.
pub type TxidDerivation = Arc<dyn Fn(&str) -> String + Send + Sync>;

/// The PSP and how charges are made: `[pix]` as the brain uses it.
pub struct PixFlow {
    provider: Arc<dyn PixProvider>,
    handler_id: String,
    expires_secs: u32,
    book: PixBook,
    qr: Option<QrRenderer>,
    txids: TxidDerivation,
}

impl PixFlow {
    pub fn new(provider: Arc<dyn PixProvider>, handler_id: String, expires_secs: u32) -> Self {
        Self {
            provider,
            handler_id,
            expires_secs,
            book: PixBook::default(),
            qr: None,
            txids: Arc::new(unkeyed_txid),
        }
    }

    /// Txids keyed with a secret (`pix::txid`), so nobody computes another order's.
    pub fn with_txids(mut self, txids: TxidDerivation) -> Self {
        self.txids = txids;
        self
    }

    /// The txid of the charge for `order` of `checkout`: bound to both, so a charge read back
    /// names this very order, and a store that numbers orders again (a reset sample store)
    /// never meets an old charge.
    pub fn txid(&self, checkout: &str, order: &str) -> String {
        (self.txids)(&format!("{order}@{checkout}"))
    }

    /// Charges kept where every replica reads them (`[redis]`).
    pub fn with_book(mut self, book: PixBook) -> Self {
        self.book = book;
        self
    }

    /// Checkout answers carry the charge's QR image too.
    pub fn with_qr(mut self, qr: QrRenderer) -> Self {
        self.qr = Some(qr);
        self
    }

    pub fn handler_id(&self) -> &str {
        &self.handler_id
    }

    pub fn provider(&self) -> &Arc<dyn PixProvider> {
        &self.provider
    }
}

/// A pending charge as a checkout answer shows it (`pix_payment_instrument`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shown {
    pub handler_id: String,
    pub txid: String,
    pub copia_e_cola: String,
    pub qr_code_base64: Option<String>,
    pub expires_at: OffsetDateTime,
    pub checkout_id: String,
    /// BRL, minor units.
    pub amount: i64,
}

/// What a notification for one txid came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Settlement {
    /// Verified now: the store's order is marked paid.
    Settled,
    /// Verified before (a repeated notification).
    AlreadySettled,
    /// Nothing the bridge can verify: a txid it did not create, a charge not concluded.
    Unverified,
    /// The PSP reports a payment that does not match the charge: never marked paid.
    Mismatch,
    /// The PSP, the store or Redis could not be asked: try again later.
    Unavailable,
}

/// A txid without a secret: 32 characters of `[0-9a-f]` (API Pix wants 26–35 of
/// `[a-zA-Z0-9]`). `with_txids` replaces it where `[pix]` is configured.
fn unkeyed_txid(reference: &str) -> String {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(format!("bcp-pix\n{reference}").as_bytes());
    let mut txid = hex::encode(digest);
    txid.truncate(32);
    txid
}

fn unix(at: OffsetDateTime) -> i64 {
    at.unix_timestamp()
}

fn at(seconds: i64) -> OffsetDateTime {
    OffsetDateTime::from_unix_timestamp(seconds).unwrap_or(OffsetDateTime::UNIX_EPOCH)
}

fn expired_message() -> Message {
    Message::error(
        MessageCode::PaymentExpired,
        "The Pix charge expired unpaid: the store's order was cancelled. Start a new checkout to buy again",
        Severity::Unrecoverable,
    )
    .at("$.payment")
}

fn failed_message() -> Message {
    Message::error(
        MessageCode::PaymentFailed,
        "The PSP reported a payment that does not match the Pix charge: the order was not marked paid and the store will reconcile it",
        Severity::Unrecoverable,
    )
    .at("$.payment")
}

fn unavailable_message() -> Message {
    Message::error(
        MessageCode::ProcessorUnavailable,
        "The store's Pix provider could not be reached: no order was left placed. Start a new checkout to try again",
        Severity::Unrecoverable,
    )
    .at("$.payment")
}

impl CheckoutBrain {
    /// Offers Pix through `flow` where the store can take an order unpaid.
    pub fn with_pix(mut self, flow: PixFlow) -> Self {
        self.pix = Some(Arc::new(flow));
        self
    }

    /// The Pix flow, when the store can take an order unpaid (else Pix is not offered).
    pub fn pix(&self) -> Option<&PixFlow> {
        self.pix.as_deref().filter(|_| self.port.takes_unpaid())
    }

    /// Whether `handler` is the Pix handler this checkout offers.
    pub fn is_pix(&self, handler: Option<&str>) -> bool {
        self.pix()
            .is_some_and(|flow| handler == Some(flow.handler_id.as_str()))
    }

    /// An open BRL checkout offers Pix beside the store's own handlers. A store with no handler
    /// of its own (WooCommerce without `[checkout] place_with`) would send the buyer to its
    /// page to pay; with Pix offered the buyer pays in the conversation instead.
    pub(super) fn offer_pix(&self, state: &mut CheckoutState) {
        let Some(flow) = self.pix() else {
            return;
        };
        if state.stage != Stage::Open
            || state.currency != iso_currency::Currency::BRL
            || state.handlers.iter().any(|held| held.id == flow.handler_id)
        {
            return;
        }
        state.handlers.push(PaymentHandler {
            id: flow.handler_id.clone(),
            name: "Pix".to_owned(),
        });
        if state.escalation == Some(EscalationReason::Payment) {
            state.escalation = None;
        }
    }

    async fn charge_of(&self, id: &str) -> Option<ChargeRecord> {
        let flow = self.pix.as_deref()?;
        // A read goes on while Redis cannot say: the checkout answers as the store holds it.
        flow.book.get(id).await.ok().flatten()
    }

    /// A checkout whose order awaits its Pix payment, as its charge's record and the store's
    /// order say, for a replica that did not place it (or restarted since): the store's cart
    /// is empty once the order is placed, and what the placing replica kept of the checkout
    /// was in its memory. The order is read with the access every replica shares.
    pub(super) async fn pix_placed(&self, id: &str) -> Option<CheckoutState> {
        let record = self.charge_of(id).await?;
        let order = self.port.order(&record.order_id).await.ok().flatten()?;
        Some(CheckoutState::of_order(id, &order, Buyer::default()))
    }

    /// The checkout as its charge stands: pending (`complete_in_progress`, the charge shown),
    /// paid (`completed`), expired (`canceled`, `payment_expired`), or refused as a mismatch.
    pub(super) async fn pix_view(&self, judged: &mut Judged) {
        let Some(record) = self.charge_of(&judged.state.id).await else {
            return;
        };
        match record.state {
            ChargeState::Pending => {
                judged.status = Status::CompleteInProgress;
                judged.state.continue_url = None;
                let qr = self
                    .pix
                    .as_deref()
                    .and_then(|flow| flow.qr.as_ref())
                    .and_then(|render| render(&record.copia_e_cola));
                judged.pix = Some(Shown {
                    handler_id: record.handler_id,
                    txid: record.txid,
                    copia_e_cola: record.copia_e_cola,
                    qr_code_base64: qr,
                    expires_at: at(record.expires_at),
                    checkout_id: record.checkout_id,
                    amount: record.amount,
                });
            }
            ChargeState::Paid => {
                if matches!(judged.state.stage, Stage::Placed(_)) {
                    judged.status = Status::Completed;
                }
            }
            ChargeState::Expired => {
                judged.status = Status::Canceled;
                judged.state.stage = Stage::Canceled;
                judged.messages.insert(0, expired_message());
            }
            ChargeState::Failed => {
                judged.status = Status::CompleteInProgress;
                judged.messages.insert(0, failed_message());
            }
        }
    }

    /// An order awaiting its Pix payment is not paid, whatever the store's status word says
    /// (WooCommerce counts on-hold as paid offline).
    pub(super) async fn pix_order_view(&self, order: &mut Order) {
        if let Some(record) = self.charge_of(&order.checkout_id).await
            && record.order_id == order.id
            && record.state != ChargeState::Paid
        {
            order.paid = false;
        }
    }

    /// Complete with the Pix handler, once the store holds the order unpaid and the ledger
    /// is settled `Placed` (whatever follows, the checkout is never placed twice, and a
    /// repeated complete answers the charge made here): the charge for the order's total.
    pub(super) async fn charge_placed(
        &self,
        id: &str,
        flow: &PixFlow,
        order: Order,
        before: Judged,
    ) -> Result<(Judged, Option<Order>), BrainError> {
        let txid = flow.txid(id, &order.id);
        let amount = Money::new(order.totals.total, order.currency);
        let request = ChargeRequest {
            txid: txid.clone(),
            amount,
            expires_secs: flow.expires_secs,
            debtor: debtor(&before.state),
            note: order
                .label
                .as_ref()
                .map(|label| format!("Pedido {label}"))
                .map(|note| crate::brain::untrusted::line(&note, 140).into_owned()),
        };
        let created = if order.currency == iso_currency::Currency::BRL {
            flow.provider.create_charge(&request).await
        } else {
            Err(PixError::Refused("Pix charges are in BRL only".into()))
        };
        let charge = match created {
            // A new charge: an old one under the same txid (paid or removed) is not this one.
            Ok(charge)
                if charge.txid == txid
                    && charge.status == ChargeStatus::Active
                    && charge.amount == amount
                    && charge.key == flow.provider.key() =>
            {
                charge
            }
            outcome => {
                let message = match outcome {
                    Err(PixError::Unavailable(_)) => unavailable_message(),
                    Err(error) => {
                        tracing::warn!(error = %error, "the PSP refused a Pix charge");
                        Message::error(
                            MessageCode::PaymentFailed,
                            "The store's Pix provider refused the charge: no order was left placed",
                            Severity::Unrecoverable,
                        )
                        .at("$.payment")
                    }
                    Ok(_) => {
                        tracing::warn!(
                            "the PSP answered a Pix charge other than the one asked for"
                        );
                        unavailable_message()
                    }
                };
                // Nothing half-made: the unpaid order goes, its stock back.
                if self.port.cancel_unpaid(&order.id).await.is_err() {
                    tracing::warn!(
                        "an order placed for a Pix charge that could not be made was not cancelled: the store holds it on hold"
                    );
                }
                self.end_canceled(id).await;
                let judged = self.get(id).await?;
                return Ok((with_message(judged, message), None));
            }
        };
        let record = ChargeRecord {
            checkout_id: id.to_owned(),
            order_id: order.id.clone(),
            handler_id: flow.handler_id.clone(),
            txid,
            amount: amount.amount,
            copia_e_cola: charge.copia_e_cola,
            location: charge.location,
            expires_at: unix(charge.expires_at),
            state: ChargeState::Pending,
            end_to_end_id: None,
        };
        if let Err(error) = flow.book.put(&record).await {
            // Unrecorded, no replica could settle it: the charge is left to expire at the
            // PSP and the order goes.
            let _ = self.port.cancel_unpaid(&order.id).await;
            self.end_canceled(id).await;
            return Err(error);
        }
        Ok((self.get(id).await?, None))
    }

    /// Records `id` as canceled, so every read answers it so whatever the store still holds.
    async fn end_canceled(&self, id: &str) {
        if let Ok(mut state) = self.read(id).await {
            state.stage = Stage::Canceled;
            if let Some(ended) = Terminal::of(&state, false) {
                self.terminals.remember(id, ended).await;
            }
        }
    }

    /// On a read of `id`: a pending charge past its expiry is expired now, and one the PSP
    /// already holds concluded is settled (a lost notification), so the answer is current.
    pub async fn pix_refresh(&self, id: &str) {
        let Some(record) = self.charge_of(id).await else {
            return;
        };
        if record.state != ChargeState::Pending {
            return;
        }
        if OffsetDateTime::now_utc() >= at(record.expires_at) {
            let _ = self.pix_transition(id, Transition::Expire).await;
            return;
        }
        let Some(flow) = self.pix.as_deref() else {
            return;
        };
        match flow.provider.read_charge(&record.txid).await {
            Ok(charge) if charge.status == ChargeStatus::Completed => {
                let _ = self.pix_transition(id, Transition::Settle).await;
            }
            // The PSP ended it unpaid (its own expiry, or the merchant removed it).
            Ok(charge)
                if charge.status != ChargeStatus::Active
                    || OffsetDateTime::now_utc() >= charge.expires_at =>
            {
                let _ = self.pix_transition(id, Transition::Expire).await;
            }
            _ => {}
        }
    }

    /// The PSP's notification named `txid`: settled only on what the PSP answers when asked.
    pub async fn pix_notified(&self, txid: &str) -> Settlement {
        let Some(flow) = self.pix.as_deref() else {
            return Settlement::Unverified;
        };
        let checkout = match flow.book.by_txid(txid).await {
            Ok(Some(checkout)) => checkout,
            Ok(None) => return Settlement::Unverified,
            Err(_) => return Settlement::Unavailable,
        };
        self.pix_transition(&checkout, Transition::Settle)
            .await
            .unwrap_or(Settlement::Unavailable)
    }

    /// One pass of the sweeper: every pending charge past its expiry is expired (or settled,
    /// when the PSP says it was paid at the last moment).
    pub async fn pix_sweep(&self) {
        let Some(flow) = self.pix.as_deref() else {
            return;
        };
        let Ok(pending) = flow.book.pending().await else {
            return;
        };
        let now = OffsetDateTime::now_utc();
        for id in pending {
            match flow.book.get(&id).await {
                Ok(Some(record)) if record.state == ChargeState::Pending => {
                    if now >= at(record.expires_at) {
                        let _ = self.pix_transition(&id, Transition::Expire).await;
                    }
                }
                Ok(Some(_)) | Ok(None) => flow.book.unlist(&id).await,
                Err(_) => return,
            }
        }
    }

    /// Sweeps pending charges every `every` for as long as the brain lives.
    pub fn spawn_pix_sweeper(self: &Arc<Self>, every: Duration) {
        if self.pix.is_none() {
            return;
        }
        let brain = Arc::downgrade(self);
        tokio::spawn(async move {
            let mut ticks = tokio::time::interval(every);
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                ticks.tick().await;
                let Some(brain) = brain.upgrade() else {
                    return;
                };
                brain.pix_sweep().await;
            }
        });
    }

    /// A change of `id`'s charge, under the checkout's lease, from its record as now kept.
    async fn pix_transition(
        &self,
        id: &str,
        transition: Transition,
    ) -> Result<Settlement, BrainError> {
        self.writes
            .run(
                id,
                Box::pin(async {
                    let Some(flow) = self.pix.as_deref() else {
                        return Ok(Settlement::Unverified);
                    };
                    let record = match flow.book.get(id).await {
                        Ok(Some(record)) => record,
                        Ok(None) => return Ok(Settlement::Unverified),
                        Err(_) => return Ok(Settlement::Unavailable),
                    };
                    Ok(match record.state {
                        ChargeState::Paid => Settlement::AlreadySettled,
                        ChargeState::Failed => Settlement::Mismatch,
                        ChargeState::Expired => Settlement::Unverified,
                        ChargeState::Pending => match transition {
                            Transition::Settle => self.settle_charge(flow, record).await,
                            Transition::Expire => self.expire_charge(flow, record).await,
                        },
                    })
                }),
            )
            .await
    }

    async fn settle_charge(&self, flow: &PixFlow, mut record: ChargeRecord) -> Settlement {
        let charge = match flow.provider.read_charge(&record.txid).await {
            Ok(charge) => charge,
            Err(PixError::NotFound(_)) => return Settlement::Unverified,
            Err(_) => return Settlement::Unavailable,
        };
        if charge.status != ChargeStatus::Completed {
            return Settlement::Unverified;
        }
        let brl = |money: &Money| money.currency == iso_currency::Currency::BRL;
        let received: i64 = charge
            .received
            .iter()
            .map(|payment| payment.amount.amount)
            .sum();
        let bound = charge.txid == record.txid
            && record.txid == flow.txid(&record.checkout_id, &record.order_id);
        let exact = brl(&charge.amount)
            && charge.amount.amount == record.amount
            && charge.received.iter().all(|payment| brl(&payment.amount))
            && received == record.amount;
        let ours = charge.key == flow.provider.key();
        let mut claimed = !charge.received.is_empty();
        if bound && exact && ours {
            for payment in &charge.received {
                match flow.book.claim(&payment.end_to_end_id, &record.txid).await {
                    Ok(Claim::Ours) => {}
                    Ok(Claim::Elsewhere) => claimed = false,
                    Err(_) => return Settlement::Unavailable,
                }
            }
        }
        if !(bound && exact && ours && claimed) {
            tracing::warn!(
                bound,
                exact,
                ours,
                claimed,
                "a concluded Pix charge does not match what was charged: not marked paid"
            );
            record.state = ChargeState::Failed;
            if flow.book.put(&record).await.is_err() {
                return Settlement::Unavailable;
            }
            return Settlement::Mismatch;
        }
        let reference = charge
            .received
            .first()
            .map(|payment| payment.end_to_end_id.clone())
            .unwrap_or_default();
        let mut order = match self.port.mark_paid(&record.order_id, &reference).await {
            Ok(Some(order)) => order,
            Ok(None) => {
                tracing::warn!("a paid Pix charge's order is gone from the store");
                return Settlement::Unavailable;
            }
            Err(_) => return Settlement::Unavailable,
        };
        record.state = ChargeState::Paid;
        record.end_to_end_id = Some(reference);
        if flow.book.put(&record).await.is_err() {
            return Settlement::Unavailable;
        }
        // Recorded completed on every replica, even one whose store no longer holds the
        // checkout (it was placed elsewhere): the paid order stands for it.
        let state = match self.read(&record.checkout_id).await {
            Ok(state) if matches!(state.stage, Stage::Placed(_)) => state,
            _ => CheckoutState::of_order(&record.checkout_id, &order, Buyer::default()),
        };
        if let Some(ended) = Terminal::of(&state, true) {
            self.terminals.remember(&record.checkout_id, ended).await;
        }
        order.checkout_id = record.checkout_id.clone();
        self.order_arrived(&order).await;
        Settlement::Settled
    }

    async fn expire_charge(&self, flow: &PixFlow, mut record: ChargeRecord) -> Settlement {
        match flow.provider.read_charge(&record.txid).await {
            // Paid at the last moment: settled, not expired.
            Ok(charge) if charge.status == ChargeStatus::Completed => {
                return self.settle_charge(flow, record).await;
            }
            Ok(charge)
                if charge.status == ChargeStatus::Active
                    && OffsetDateTime::now_utc() < at(record.expires_at)
                    && OffsetDateTime::now_utc() < charge.expires_at =>
            {
                return Settlement::Unverified;
            }
            Ok(_) | Err(PixError::NotFound(_)) => {}
            // Whether it was paid is unknown: the next sweep asks again.
            Err(_) => return Settlement::Unavailable,
        }
        if self.port.cancel_unpaid(&record.order_id).await.is_err() {
            return Settlement::Unavailable;
        }
        record.state = ChargeState::Expired;
        if flow.book.put(&record).await.is_err() {
            return Settlement::Unavailable;
        }
        self.end_canceled(&record.checkout_id).await;
        Settlement::Unverified
    }
}

#[derive(Debug, Clone, Copy)]
enum Transition {
    Settle,
    Expire,
}

/// `devedor`: the buyer's document with their name, when the buyer gave both (API Pix wants
/// a name beside a CPF or CNPJ).
fn debtor(state: &CheckoutState) -> Option<Debtor> {
    let document = state
        .buyer
        .taxpayer_id
        .clone()
        .filter(|document| matches!(document.kind, TaxpayerKind::Cpf | TaxpayerKind::Cnpj))?;
    let name = [&state.buyer.first_name, &state.buyer.last_name]
        .into_iter()
        .flatten()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(" ");
    (!name.trim().is_empty()).then(|| Debtor {
        document,
        name: name.trim().to_owned(),
    })
}
