//! The checkout rules, written once over `model::checkout` and the `CheckoutPort`: the
//! status lifecycle (`status`), "placed at most once" and the narrow retry of complete
//! (`ledger`), and the wire shapes at both releases (`render`). Adapters only perform the
//! store operations; fronts decode arguments into `CheckoutUpdate` / `Completion` and send
//! back what `render` builds.

mod calls;
pub mod handles;
pub mod ledger;
pub mod render;
mod requirements;
pub mod status;

use crate::model::CartLineInput;
use crate::model::checkout::{
    Address, Buyer, CheckoutDraft, CheckoutSource, CheckoutState, Order, Placement, Stage,
};
use crate::platform::PlatformError;
use crate::platform::checkout::SharedCheckout;
use crate::platform::footprint;
use crate::protocol::{Message, MessageCode, Severity};

use super::BrainError;
use handles::OrderHandles;
use ledger::{Admission, Ledger, Settled};
pub use status::{Judged, Status};

/// An Update Checkout, decoded. `None` leaves that part as the store holds it; `codes`
/// replaces the submitted set (an empty list clears it, discount.md).
#[derive(Debug, Clone, Default)]
pub struct CheckoutUpdate {
    pub lines: Option<Vec<CartLineInput>>,
    pub buyer: Option<Buyer>,
    pub address: Option<Address>,
    /// `(group id, option id)` pairs, as the checkout handed them out.
    pub selections: Vec<(String, String)>,
    pub codes: Option<Vec<String>>,
}

/// Where a placed order's event goes (order.md "Events"): `order_webhooks` queues and
/// delivers it. The brain only renders the order and names the agent's webhook.
pub trait OrderEvents: Send + Sync {
    /// An order was placed through the bridge: `order` is the entity as Get Order renders it,
    /// `webhook_url` the agent's (from its profile), `profile_path` the path of the bridge's
    /// profile for the namespace the order was placed through. Must not wait.
    fn placed(&self, webhook_url: &str, profile_path: &str, order: serde_json::Value);
}

/// A Complete Checkout, decoded: the idempotency key is required (checkout-mcp.md), the
/// handler is the one of `payment.instruments[0].handler_id`.
#[derive(Debug, Clone)]
pub struct Completion {
    pub idempotency_key: String,
    pub handler_id: Option<String>,
}

pub struct CheckoutBrain {
    port: SharedCheckout,
    ledger: Ledger,
    /// The open checkout each cart was converted into (cart id → checkout id), so converting
    /// the same cart again answers that checkout (CART-002). Per process: replicas that
    /// share no memory each keep their own.
    conversions: moka::future::Cache<String, String>,
    /// Checkouts handed to the store's page whose agent declared an order webhook: how to
    /// announce the order once the store reports it (`order_arrived`), rendered for the
    /// namespace and release the checkout was completed through.
    handoffs: moka::future::Cache<String, Handoff>,
    /// What agents are given for orders instead of the store's ids.
    handles: OrderHandles,
}

/// Renders and queues one order's event for the agent that handed the checkout off.
pub type Announcer = std::sync::Arc<dyn Fn(&Order) + Send + Sync>;

/// An announcer and the bytes it holds (the agent's webhook URL), for the byte bound.
#[derive(Clone)]
struct Handoff {
    announce: Announcer,
    held: usize,
}

/// What conversions may hold, in bytes; past it the least recently used are forgotten (a
/// forgotten cart converts into a new checkout, as a store would without the rule). Keyed by
/// ids the store made, so only real carts enter; least recently used, so a new buyer's
/// conversion is always kept (issue 35 item 2).
const CONVERSION_BYTES: u64 = 16 << 20;
/// What hand-offs may hold, in bytes: each is a real checkout the store made and handed off.
const HANDOFF_BYTES: u64 = 16 << 20;
/// A map entry's own cost beyond its strings (slot, moka's node, the `Arc`).
const ENTRY_OVERHEAD: usize = 160;
/// How long a conversion is remembered after it was last used: a day, as idempotency keys.
const CONVERSION_IDLE: std::time::Duration = std::time::Duration::from_secs(24 * 3600);
/// How long a hand-off waits for the buyer to pay on the store's page (a Shopify cart lives
/// ten days).
const HANDOFF_IDLE: std::time::Duration = std::time::Duration::from_secs(10 * 24 * 3600);

fn gone(id: &str) -> BrainError {
    BrainError::Platform(PlatformError::InvalidAt {
        path: "$.id".into(),
        message: format!("no checkout {id} (unknown, expired or canceled)"),
    })
}

fn with_message(mut judged: Judged, message: Message) -> Judged {
    judged.messages.insert(0, message);
    judged
}

impl CheckoutBrain {
    pub fn new(port: SharedCheckout) -> Self {
        Self {
            port,
            ledger: Ledger::default(),
            conversions: moka::future::Cache::builder()
                .max_capacity(CONVERSION_BYTES)
                .weigher(|cart: &String, checkout: &String| {
                    footprint::weight(ENTRY_OVERHEAD + cart.len() + checkout.len())
                })
                .eviction_policy(moka::policy::EvictionPolicy::lru())
                .time_to_idle(CONVERSION_IDLE)
                .build(),
            handoffs: moka::future::Cache::builder()
                .max_capacity(HANDOFF_BYTES)
                .weigher(|checkout: &String, handoff: &Handoff| {
                    footprint::weight(ENTRY_OVERHEAD + checkout.len() + handoff.held)
                })
                .eviction_policy(moka::policy::EvictionPolicy::lru())
                .time_to_idle(HANDOFF_IDLE)
                .build(),
            handles: OrderHandles::local(),
        }
    }

    /// Order handles every replica opens (`[redis]`), instead of this process's own.
    pub fn with_handles(mut self, handles: OrderHandles) -> Self {
        self.handles = handles;
        self
    }

    pub fn handles(&self) -> &OrderHandles {
        &self.handles
    }

    /// A checkout was handed to the store's page: when the store reports its order, the
    /// agent's webhook hears of it through `announce`, which holds `held` bytes.
    pub async fn handed_off(&self, id: &str, announce: Announcer, held: usize) {
        self.handoffs
            .insert(id.to_owned(), Handoff { announce, held })
            .await;
    }

    /// The store reported an order (created or changed) for a checkout the bridge handed
    /// off: its event goes to the agent that completed the checkout (ORD-029, ORD-030).
    pub async fn order_arrived(&self, order: &Order) {
        let Some(Handoff { announce, .. }) = self.handoffs.get(&order.checkout_id).await else {
            return;
        };
        let sealed = match self.handles.sealer().await {
            Ok(sealer) => sealer.seal(&order.id),
            Err(error) => Err(error),
        };
        match sealed {
            Ok(id) => announce(&Order {
                id,
                ..order.clone()
            }),
            Err(_) => tracing::warn!("order event not sent: its handle could not be made"),
        }
    }

    pub fn port(&self) -> &SharedCheckout {
        &self.port
    }

    fn judge(&self, state: CheckoutState) -> Judged {
        if matches!(state.stage, Stage::Placed(_)) {
            self.ledger.placed_elsewhere(&state.id);
        }
        status::judge(state)
    }

    /// The checkout as it is if it may change, or the answer refusing the change: a running
    /// completion leaves it unchanged with a recoverable error (checkout.md "Accepted
    /// completion"), a terminal one is immutable (CHK-017, CHK-027).
    async fn writable(&self, id: &str, what: &str) -> Result<Result<Judged, Judged>, BrainError> {
        let mut current = self.get(id).await?;
        if self.ledger.frozen(id) {
            current.status = Status::CompleteInProgress;
            return Ok(Err(with_message(
                current,
                Message::error(
                    MessageCode::CheckoutCompleteInProgress,
                    format!("Complete Checkout was accepted: the checkout cannot be {what} now"),
                    Severity::Recoverable,
                ),
            )));
        }
        if current.status.is_terminal() {
            return Ok(Err(with_message(
                current,
                Message::error(
                    MessageCode::CheckoutImmutable,
                    format!("A completed or canceled checkout cannot be {what}"),
                    Severity::Unrecoverable,
                ),
            )));
        }
        Ok(Ok(current))
    }

    /// The new checkout, or (`true`) the open one the same cart was converted into.
    pub async fn create(&self, draft: &CheckoutDraft) -> Result<(Judged, bool), BrainError> {
        let cart = match &draft.source {
            CheckoutSource::Cart(cart) => Some(cart),
            CheckoutSource::Lines(_) => None,
        };
        if let Some(cart) = cart
            && let Some(open) = self.open_conversion(cart).await
        {
            return Ok((open, true));
        }
        let outcome = self.port.create_checkout(draft).await?;
        let mut judged = self.judge(outcome.checkout);
        judged
            .messages
            .splice(0..0, line_messages(&outcome.problems));
        if let Some(cart) = cart {
            self.conversions
                .insert(cart.clone(), judged.state.id.clone())
                .await;
        }
        Ok((judged, false))
    }

    /// The checkout `cart` was converted into, while it is still open (CART-002).
    async fn open_conversion(&self, cart: &str) -> Option<Judged> {
        let id = self.conversions.get(cart).await?;
        match self.get(&id).await {
            Ok(judged) if !judged.status.is_terminal() && !self.ledger.frozen(&id) => Some(judged),
            _ => {
                self.conversions.invalidate(cart).await;
                None
            }
        }
    }

    pub async fn get(&self, id: &str) -> Result<Judged, BrainError> {
        let state = self.port.get_checkout(id).await?.ok_or_else(|| gone(id))?;
        let mut judged = self.judge(state);
        if self.ledger.frozen(id) && judged.status != Status::Completed {
            judged.status = Status::CompleteInProgress;
        }
        Ok(judged)
    }

    /// Applies the update part by part, in the order a store needs them (lines before the
    /// address prices them, the address before its options can be selected, codes last), and
    /// answers with what the store then holds. A completed or canceled checkout is immutable
    /// (CHK-017); one whose completion is running is left unchanged (checkout.md "Accepted
    /// completion").
    pub async fn update(&self, id: &str, update: &CheckoutUpdate) -> Result<Judged, BrainError> {
        let current = match self.writable(id, "updated").await? {
            Ok(current) => current,
            Err(refused) => return Ok(refused),
        };
        let mut problems = Vec::new();
        let mut state = current.state;
        if let Some(lines) = &update.lines {
            let outcome = self
                .port
                .set_lines(id, lines)
                .await?
                .ok_or_else(|| gone(id))?;
            problems = outcome.problems;
            state = outcome.checkout;
        }
        // An agent builds the buyer up over several updates: a member it leaves out keeps
        // what the store holds.
        if let Some(buyer) = &update.buyer {
            let merged = Buyer {
                first_name: buyer.first_name.clone().or(state.buyer.first_name.clone()),
                last_name: buyer.last_name.clone().or(state.buyer.last_name.clone()),
                email: buyer.email.clone().or(state.buyer.email.clone()),
                phone_number: buyer
                    .phone_number
                    .clone()
                    .or(state.buyer.phone_number.clone()),
                taxpayer_id: buyer
                    .taxpayer_id
                    .clone()
                    .or(state.buyer.taxpayer_id.clone()),
            };
            if merged != state.buyer {
                state = self
                    .port
                    .set_buyer(id, &merged)
                    .await?
                    .ok_or_else(|| gone(id))?;
            }
        }
        if let Some(address) = &update.address
            && state.address.as_ref() != Some(address)
        {
            state = self
                .port
                .set_destination(id, address)
                .await?
                .ok_or_else(|| gone(id))?;
        }
        for (group, option) in &update.selections {
            state = self
                .port
                .select_option(id, group, option)
                .await?
                .ok_or_else(|| gone(id))?;
        }
        let mut refused = Vec::new();
        if let Some(codes) = &update.codes {
            let held: Vec<String> = state.codes.clone();
            for code in held.iter().filter(|held| !contains(codes, held)) {
                state = self
                    .port
                    .remove_code(id, code)
                    .await?
                    .ok_or_else(|| gone(id))?;
            }
            for code in codes.iter().filter(|code| !contains(&held, code)) {
                let outcome = self
                    .port
                    .apply_code(id, code)
                    .await?
                    .ok_or_else(|| gone(id))?;
                state = outcome.checkout;
                refused.extend(outcome.refused);
            }
            // The response echoes every submitted code, applied or not (discount.md).
            state.codes = codes.clone();
        }
        state.refused_codes.extend(refused);
        let mut judged = self.judge(state);
        judged.messages.splice(0..0, line_messages(&problems));
        Ok(judged)
    }

    /// Places the order at most once. Only a checkout that is `ready_for_complete` (or that
    /// escalates for payment, where placing creates the order the buyer then pays on the
    /// store's page) reaches the store; every other status answers as it is.
    pub async fn complete(&self, id: &str, completion: &Completion) -> Result<Judged, BrainError> {
        self.complete_placing(id, completion)
            .await
            .map(|(judged, _)| judged)
    }

    /// `complete`, and the order when this call is the one that placed it (a replay, or an
    /// order placed earlier, gives `None`: its event was sent when it was placed).
    pub async fn complete_placing(
        &self,
        id: &str,
        completion: &Completion,
    ) -> Result<(Judged, Option<Order>), BrainError> {
        let key = completion.idempotency_key.trim();
        if key.is_empty() {
            return Err(BrainError::invalid(
                "$.meta.idempotency-key",
                "Complete Checkout requires an idempotency key",
            ));
        }
        if let Some(handler) = &completion.handler_id
            && !self
                .port
                .handlers()
                .iter()
                .any(|known| known.id == *handler)
        {
            return Err(BrainError::invalid(
                "$.checkout.payment.instruments[0].handler_id",
                format!("{handler} is not one of this checkout's payment handlers"),
            ));
        }
        match self.ledger.admit(id, key) {
            Admission::Place => {}
            Admission::Recheck => {
                let state = self.port.get_checkout(id).await;
                match state {
                    Ok(Some(state)) if !matches!(state.stage, Stage::Open) => {
                        self.ledger.settle(id, key, Settled::Placed);
                        return Ok((self.judge(state), None));
                    }
                    Ok(Some(_)) => {}
                    Ok(None) => {
                        self.ledger.settle(id, key, Settled::Unknown);
                        return Err(gone(id));
                    }
                    Err(error) => {
                        self.ledger.settle(id, key, Settled::Unknown);
                        return Err(error.into());
                    }
                }
            }
            Admission::InProgress => {
                let mut judged = self.get(id).await?;
                judged.status = Status::CompleteInProgress;
                return Ok((judged, None));
            }
            Admission::Busy => {
                let judged = self.get(id).await?;
                return Ok((
                    with_message(
                        judged,
                        Message::error(
                            MessageCode::CheckoutCompleteInProgress,
                            "Another Complete Checkout for this checkout is being processed",
                            Severity::Recoverable,
                        ),
                    ),
                    None,
                ));
            }
            Admission::Placed { same_key } => {
                let judged = self.get(id).await?;
                return Ok((
                    if same_key {
                        judged
                    } else {
                        with_message(
                            judged,
                            Message::error(
                                MessageCode::CheckoutImmutable,
                                "This checkout already placed its order",
                                Severity::Unrecoverable,
                            ),
                        )
                    },
                    None,
                ));
            }
        }
        let before = match self.port.get_checkout(id).await {
            Ok(Some(state)) => self.judge(state),
            Ok(None) => {
                self.ledger.settle(id, key, Settled::Refused);
                return Err(gone(id));
            }
            Err(error) => {
                self.ledger.settle(id, key, Settled::Refused);
                return Err(error.into());
            }
        };
        let placeable = match before.status {
            Status::ReadyForComplete => completion.handler_id.is_some(),
            Status::RequiresEscalation => true,
            _ => false,
        };
        if !placeable {
            self.ledger.settle(id, key, Settled::Refused);
            let mut judged = before;
            // Canceled, or completed where this bridge did not see the order placed (the
            // store's page, a restart): terminal, so immutable as any other write (CHK-017;
            // a replay of the completing call is the idempotency layer's recorded answer).
            if judged.status.is_terminal() {
                return Ok((
                    with_message(
                        judged,
                        Message::error(
                            MessageCode::CheckoutImmutable,
                            "A completed or canceled checkout cannot be completed",
                            Severity::Unrecoverable,
                        ),
                    ),
                    None,
                ));
            }
            if judged.status == Status::ReadyForComplete {
                judged.messages.insert(
                    0,
                    Message::error(
                        MessageCode::Missing,
                        "Choose one of the checkout's payment handlers",
                        Severity::Recoverable,
                    )
                    .at("$.payment.instruments".to_owned()),
                );
            }
            return Ok((judged, None));
        }
        let handler = if before.status == Status::RequiresEscalation {
            None
        } else {
            completion.handler_id.as_deref()
        };
        match self.port.place(id, handler).await {
            Ok(Some(Placement::Declined { reason })) => {
                self.ledger.settle(id, key, Settled::Refused);
                let judged = self.get(id).await?;
                Ok((
                    with_message(
                        judged,
                        Message::error(
                            MessageCode::PaymentFailed,
                            super::untrusted::line(&reason, super::untrusted::MESSAGE_MAX),
                            Severity::Recoverable,
                        )
                        .at("$.payment".to_owned()),
                    ),
                    None,
                ))
            }
            // No order exists to place twice, so the key releases the checkout: another
            // completion hands off again, as the checkout read just before says.
            Ok(Some(Placement::HandedOff)) => {
                self.ledger.settle(id, key, Settled::Refused);
                Ok((before, None))
            }
            Ok(Some(Placement::Placed(order))) => {
                self.ledger.settle(id, key, Settled::Placed);
                let judged = self.get(id).await?;
                // The event is the completed order's: one the buyer must still pay for on the
                // store's page is not announced here.
                let placed = (judged.status == Status::Completed).then_some(order);
                Ok((judged, placed))
            }
            Ok(Some(Placement::Escalated { .. })) => {
                self.ledger.settle(id, key, Settled::Placed);
                self.get(id).await.map(|judged| (judged, None))
            }
            Ok(None) => {
                self.ledger.settle(id, key, Settled::Refused);
                Err(gone(id))
            }
            // The store refused to place it for want of something (a field it requires that
            // its checkout schema did not say): nothing was placed, and the agent is told what,
            // where, as a recoverable message on the checkout, not a protocol error (issue 37
            // item 3). An unknown checkout stays `not_found`.
            Err(PlatformError::InvalidAt { path, message }) if path != "$.id" => {
                self.ledger.settle(id, key, Settled::Refused);
                let refused = store_refusal(&message).at(path);
                Ok((refuse_placement(self.get(id).await?, refused), None))
            }
            Err(PlatformError::InvalidInput(message)) => {
                self.ledger.settle(id, key, Settled::Refused);
                let refused = store_refusal(&message);
                Ok((refuse_placement(self.get(id).await?, refused), None))
            }
            // The store's refusal of the request left nothing placed; anything else may have
            // placed the order before the answer was lost.
            Err(error @ PlatformError::InvalidAt { .. }) => {
                self.ledger.settle(id, key, Settled::Refused);
                Err(error.into())
            }
            Err(error) => {
                self.ledger.settle(id, key, Settled::Unknown);
                Err(error.into())
            }
        }
    }

    /// CHK-027/028: open checkouts cancel; a terminal one answers as it is, with an error.
    pub async fn cancel(&self, id: &str) -> Result<Judged, BrainError> {
        if let Err(refused) = self.writable(id, "canceled").await? {
            return Ok(refused);
        }
        let mut state = self
            .port
            .cancel_checkout(id)
            .await?
            .ok_or_else(|| gone(id))?;
        self.ledger.forget(id);
        state.stage = Stage::Canceled;
        state.continue_url = None;
        Ok(self.judge(state))
    }

    pub async fn order(&self, id: &str) -> Result<Order, BrainError> {
        if !self.port.reads_orders() {
            return Err(BrainError::Platform(PlatformError::Unsupported(
                "reading orders",
            )));
        }
        self.port.order(id).await?.ok_or_else(|| {
            BrainError::Platform(PlatformError::InvalidAt {
                path: "$.id".into(),
                message: format!("no order {id} placed through this bridge"),
            })
        })
    }
}

/// The store's refusal to place an order, in its own words (merchant text: data).
fn store_refusal(message: &str) -> Message {
    Message::error(
        MessageCode::Invalid,
        format!(
            "The store did not place the order: {}",
            super::untrusted::line(message, super::untrusted::MESSAGE_MAX)
        ),
        Severity::Recoverable,
    )
}

/// An open checkout the store would not place: `incomplete`, with why first.
fn refuse_placement(mut judged: Judged, refused: Message) -> Judged {
    if !judged.status.is_terminal() {
        judged.status = Status::Incomplete;
    }
    with_message(judged, refused)
}

/// The store's refusals of lines, as the cart words them.
fn line_messages(problems: &[crate::model::LineProblem]) -> Vec<Message> {
    problems
        .iter()
        .map(|problem| {
            super::cart::problem_message(
                &problem.kind,
                super::untrusted::line(&problem.message, super::untrusted::MESSAGE_MAX)
                    .into_owned(),
            )
        })
        .collect()
}

/// Codes are case-insensitive (discount.md).
fn contains(codes: &[String], code: &str) -> bool {
    codes.iter().any(|held| held.eq_ignore_ascii_case(code))
}

#[cfg(test)]
mod refusal_tests;
#[cfg(test)]
mod tests;
