//! The checkout rules, written once over `model::checkout` and the `CheckoutPort`: the
//! status lifecycle (`status`), "placed at most once" and the narrow retry of complete
//! (`ledger`), and the wire shapes at both releases (`render`). Adapters only perform the
//! store operations; fronts decode arguments into `CheckoutUpdate` / `Completion` and send
//! back what `render` builds.

mod announcements;
mod calls;
mod complete;
pub mod completions;
pub mod handles;
pub mod ledger;
pub mod pix;
pub mod pix_book;
mod refused;
pub mod render;
mod replacement;
pub mod requirements;
pub mod status;
pub mod terminal;

use crate::model::CartLineInput;
use crate::model::checkout::{
    Address, Buyer, CheckoutDraft, CheckoutSource, CheckoutState, Order, Stage,
};
use crate::platform::PlatformError;
use crate::platform::checkout::SharedCheckout;
use crate::platform::exclusive::Exclusive;
use crate::protocol::{Message, MessageCode, Severity};
use crate::replicas::records::Records;

use super::BrainError;
pub use announcements::{HandedOff, HandoffAnnouncer};
use completions::Completions;
use handles::OrderHandles;
use replacement::{
    lines_refused, names_lines, offered, option_path, same_lines, selected, selections,
};
pub use status::{Judged, Status};
use terminal::{Terminal, Terminals};

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
#[async_trait::async_trait]
pub trait OrderEvents: Send + Sync {
    /// An order was placed through the bridge: `order` is the entity as Get Order renders it,
    /// `webhook_url` the agent's (from its profile), `profile_path` the path of the bridge's
    /// profile for the namespace the order was placed through. Returns once the event is
    /// queued (durably, with `[redis]`), so an answer that says "placed" never outlives it.
    async fn placed(&self, webhook_url: &str, profile_path: &str, order: serde_json::Value);
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
    /// "Placed at most once", in this process or shared by the replicas.
    completions: Completions,
    /// Checkouts that ended, remembered where stores forget them.
    terminals: Terminals,
    /// One writer per checkout (and the cart it is), across replicas with `[redis]`.
    writes: Exclusive,
    /// The open checkout each cart was converted into (cart id → checkout id), so converting
    /// the same cart again answers that checkout (CART-002); in Redis with `[redis]`, so a
    /// conversion on one replica is answered on every one.
    conversions: Records<String>,
    /// Checkouts handed to the store's page whose agent declared an order webhook: how to
    /// announce the order once the store reports it (`order_arrived`), for the namespace and
    /// release the checkout was completed through; in Redis with `[redis]`, so whichever
    /// replica the store's webhook reaches announces it.
    handoffs: Records<HandedOff>,
    /// How each namespace renders and queues an order's event (`announce_through`).
    announcers: std::sync::RwLock<Vec<(&'static str, HandoffAnnouncer)>>,
    /// What agents are given for orders instead of the store's ids.
    handles: OrderHandles,
    /// `[pix]`: the Pix handler, offered where the store can take an order unpaid.
    pix: Option<std::sync::Arc<pix::PixFlow>>,
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
            completions: Completions::default(),
            terminals: Terminals::local(),
            writes: Exclusive::local(),
            conversions: Records::local(
                "bcp:checkout-conversion",
                CONVERSION_IDLE,
                CONVERSION_BYTES,
                |cart, checkout| ENTRY_OVERHEAD + cart.len() + checkout.len(),
            ),
            handoffs: Records::local(
                "bcp:checkout-handoff",
                HANDOFF_IDLE,
                HANDOFF_BYTES,
                |checkout, handed| ENTRY_OVERHEAD + checkout.len() + handed.held(),
            ),
            announcers: std::sync::RwLock::default(),
            handles: OrderHandles::local(),
            pix: None,
        }
    }

    /// Order handles every replica opens (`[redis]`), instead of this process's own.
    pub fn with_handles(mut self, handles: OrderHandles) -> Self {
        self.handles = handles;
        self
    }

    /// Writes taking turns through `writes`; with `link` (`[redis]`) the completion ledger,
    /// the terminal records, conversions and hand-offs are the replicas' shared ones.
    pub fn with_writes(
        mut self,
        writes: Exclusive,
        link: Option<std::sync::Arc<crate::replicas::Link>>,
    ) -> Self {
        self.writes = writes;
        if let Some(link) = link {
            self.completions = Completions::Shared(link.clone());
            self.terminals = Terminals::Shared(link.clone());
            self.conversions = self.conversions.shared(Some(link.clone()));
            self.handoffs = self.handoffs.shared(Some(link));
        }
        self
    }

    pub fn handles(&self) -> &OrderHandles {
        &self.handles
    }

    pub fn port(&self) -> &SharedCheckout {
        &self.port
    }

    fn judge(&self, mut state: CheckoutState) -> Judged {
        if matches!(state.stage, Stage::Placed(_)) {
            self.completions.placed_elsewhere(&state.id);
        }
        self.offer_pix(&mut state);
        status::judge(state)
    }

    /// The checkout as it is if it may change, or the answer refusing the change: a running
    /// completion leaves it unchanged with a recoverable error (checkout.md "Accepted
    /// completion"), a terminal one is immutable (CHK-017, CHK-027).
    async fn writable(&self, id: &str, what: &str) -> Result<Result<Judged, Judged>, BrainError> {
        let mut current = self.get(id).await?;
        if self.completions.frozen(id).await? {
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
        // A Pix charge is waiting to be paid: the order it pays for is placed.
        if current.status == Status::CompleteInProgress {
            return Ok(Err(with_message(
                current,
                Message::error(
                    MessageCode::CheckoutCompleteInProgress,
                    format!("The order awaits its Pix payment: the checkout cannot be {what} now"),
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
        // A store that names a checkout by its cart (WooCommerce) may make a new one under
        // the id of a checkout canceled before: that end is not the new one's.
        self.terminals.forget_canceled(&outcome.checkout.id).await;
        let mut judged = self.judge(outcome.checkout);
        judged
            .messages
            .splice(0..0, line_messages(&outcome.problems));
        if let Some(cart) = cart
            && self
                .conversions
                .put(cart, judged.state.id.clone())
                .await
                .is_err()
        {
            tracing::warn!(
                "a cart's conversion was not shared: converting it again makes a new checkout"
            );
        }
        Ok((judged, false))
    }

    /// The checkout `cart` was converted into, while it is still open (CART-002).
    async fn open_conversion(&self, cart: &str) -> Option<Judged> {
        // Redis away: the cart converts anew, as a store would without the rule.
        let id = self.conversions.get(cart).await.ok().flatten()?;
        match self.get(&id).await {
            Ok(judged)
                if !judged.status.is_terminal()
                    && !self.completions.frozen(&id).await.unwrap_or(true) =>
            {
                Some(judged)
            }
            _ => {
                let _ = self.conversions.remove(cart).await;
                None
            }
        }
    }

    pub async fn get(&self, id: &str) -> Result<Judged, BrainError> {
        let state = self.read(id).await?;
        let mut judged = self.judge(state);
        // A read goes on while the shared ledger cannot be asked.
        if self.completions.frozen(id).await.unwrap_or(false) && judged.status != Status::Completed
        {
            judged.status = Status::CompleteInProgress;
        }
        self.pix_view(&mut judged).await;
        Ok(judged)
    }

    /// What the store holds for `id`, as it ended if the bridge recorded its end (issue 36
    /// item 2): a store that forgot a canceled checkout still answers it, canceled.
    async fn read(&self, id: &str) -> Result<CheckoutState, BrainError> {
        let held = self.port.get_checkout(id).await?;
        // Redis away: the store's answer alone, as reads go on without the shared state.
        let ended = self.terminals.recall(id).await.unwrap_or(None);
        match (held, ended) {
            (Some(state), Some(ended)) => Ok(ended.over(state)),
            (Some(state), None) => Ok(state),
            (None, Some(ended)) => ended.restored(id).ok_or_else(|| gone(id)),
            (None, None) => self.pix_placed(id).await.ok_or_else(|| gone(id)),
        }
    }

    /// Records `judged`'s end, when it is one.
    async fn ended(&self, judged: &Judged) {
        let completed = judged.status == Status::Completed;
        if let Some(ended) = Terminal::of(&judged.state, completed) {
            self.terminals.remember(&judged.state.id, ended).await;
        }
    }

    /// Applies the update part by part, in the order a store needs them (lines before the
    /// address prices them, the address before its options can be selected, codes last), and
    /// answers with what the store then holds. A completed or canceled checkout is immutable
    /// (CHK-017); one whose completion is running is left unchanged (checkout.md "Accepted
    /// completion").
    ///
    /// Update is a full replacement, so an agent sends back what the checkout already holds:
    /// a part equal to it writes nothing. A part the store cannot take (lines it cannot hold,
    /// an option the destination lacks) is a recoverable message at its path and the rest of
    /// the update is still applied (checkout.md "Error Handling").
    pub async fn update(&self, id: &str, update: &CheckoutUpdate) -> Result<Judged, BrainError> {
        // One writer per checkout across replicas: concurrent updates end as one of them.
        // Boxed: every tool's future is as large as the largest, and these nest deep.
        self.writes
            .run(id, Box::pin(self.apply_update(id, update)))
            .await
    }

    async fn apply_update(&self, id: &str, update: &CheckoutUpdate) -> Result<Judged, BrainError> {
        let current = match self.writable(id, "updated").await? {
            Ok(current) => current,
            Err(refused) => return Ok(refused),
        };
        let before = current.state;
        let mut state = before.clone();
        let mut problems = Vec::new();
        let mut refusals = Vec::new();
        let mut relined = false;
        if let Some(lines) = &update.lines
            && !same_lines(lines, &state.lines)
        {
            match self.port.set_lines(id, lines).await {
                Ok(Some(outcome)) => {
                    problems = outcome.problems;
                    state = outcome.checkout;
                    relined = true;
                }
                Ok(None) => return Err(gone(id)),
                Err(PlatformError::Unsupported(what)) => {
                    refusals.push(lines_refused(format!("this store does not support {what}")))
                }
                Err(PlatformError::InvalidAt { path, message }) if names_lines(&path) => {
                    refusals.push(lines_refused(message));
                }
                Err(error) => return Err(error.into()),
            }
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
            if selected(&state, group, option) {
                continue;
            }
            match self.port.select_option(id, group, option).await {
                Ok(Some(chosen)) => state = chosen,
                Ok(None) => return Err(gone(id)),
                // Typically an option the new destination does not offer: the agent picks
                // again from the options this answer lists.
                Err(PlatformError::InvalidAt { path, message }) => refusals.push(
                    Message::error(
                        MessageCode::Invalid,
                        super::untrusted::line(&message, super::untrusted::MESSAGE_MAX),
                        Severity::Recoverable,
                    )
                    .at(option_path(&state, group).unwrap_or(path)),
                ),
                Err(error) => return Err(error.into()),
            }
        }
        // A store that rebuilds its cart to change lines (WooCommerce empties it) drops the
        // chosen options and codes with it; parts the update leaves out keep what the
        // checkout held.
        if relined {
            for (group, option) in selections(&before) {
                let named = update.selections.iter().any(|(asked, _)| *asked == group);
                if !named && offered(&state, &group, &option) && !selected(&state, &group, &option)
                {
                    state = self
                        .port
                        .select_option(id, &group, &option)
                        .await?
                        .ok_or_else(|| gone(id))?;
                }
            }
        }
        let codes = update
            .codes
            .clone()
            .or_else(|| relined.then(|| before.codes.clone()));
        let mut refused = Vec::new();
        if let Some(codes) = &codes {
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
        judged.messages.splice(0..0, refusals);
        judged.messages.splice(0..0, line_messages(&problems));
        Ok(judged)
    }

    /// CHK-027/028: open checkouts cancel; a terminal one answers as it is, with an error.
    pub async fn cancel(&self, id: &str) -> Result<Judged, BrainError> {
        self.writes.run(id, Box::pin(self.cancel_open(id))).await
    }

    async fn cancel_open(&self, id: &str) -> Result<Judged, BrainError> {
        if let Err(refused) = self.writable(id, "canceled").await? {
            return Ok(refused);
        }
        let mut state = self
            .port
            .cancel_checkout(id)
            .await?
            .ok_or_else(|| gone(id))?;
        self.completions.forget(id).await;
        state.stage = Stage::Canceled;
        state.continue_url = None;
        let judged = self.judge(state);
        // Stores forget a canceled checkout (an emptied cart): the bridge keeps its end.
        self.ended(&judged).await;
        Ok(judged)
    }

    pub async fn order(&self, id: &str) -> Result<Order, BrainError> {
        if !self.port.reads_orders() {
            return Err(BrainError::Platform(PlatformError::Unsupported(
                "reading orders",
            )));
        }
        let mut order = self.port.order(id).await?.ok_or_else(|| {
            BrainError::Platform(PlatformError::InvalidAt {
                path: "$.id".into(),
                message: format!("no order {id} placed through this bridge"),
            })
        })?;
        self.pix_order_view(&mut order).await;
        Ok(order)
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

/// The tests' stand-in ports name what `place` answers.
#[cfg(test)]
use crate::model::checkout::Placement;
#[cfg(test)]
mod pix_tests;
#[cfg(test)]
mod refusal_tests;
#[cfg(test)]
mod replacement_tests;
#[cfg(test)]
mod terminal_tests;
#[cfg(test)]
mod tests;
