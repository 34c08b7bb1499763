//! The sample store's checkout: complete and deterministic, so `demo` and the tests can walk
//! the whole flow without a real store. A shipping table (PAC and SEDEX in Brazil, one
//! international rate, pickup at the shop), one discount code (`BEMVINDO10`, 10 % off the
//! items) beside an expired one, free shipping from R$ 300 as an automatic discount, and three
//! test payment handlers: one approves, one declines, and one the issuer challenges (as 3-D
//! Secure does): the order is created pending and the buyer confirms the payment on the shop's
//! page, so the checkout escalates there with `continue_url`.
//!
//! Kept in memory like the carts, and bounded the same way (issue 35 item 2): an open checkout
//! leaves when it expires, a placed or cancelled one (with its order) a week later, and the
//! whole book stays within `MAX_BYTES`. At the bound the oldest settled checkouts go first;
//! an open one is never pushed out, so when only open ones fill it, a new checkout is refused
//! until the soonest expires (as a new cart is at the cart bound).

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use async_trait::async_trait;
use time::OffsetDateTime;

use super::SampleStore;
use crate::model::checkout::{
    Address, Allocation, AllocationTarget, AppliedDiscount, Buyer, CheckoutDraft, CheckoutSource,
    CheckoutState, CheckoutTotals, CodeOutcome, CodeRefusal, Destination, EscalationReason,
    FulfillmentGroup, FulfillmentMethod, FulfillmentOption, MethodKind, Order, OrderLine,
    PaymentHandler, Placement, RefusedCode, Stage,
};
use crate::model::fiscal::{Requirement, TaxpayerKind};
use crate::model::{CartDraft, CartLine, CartLineInput};
use crate::platform::checkout::{CheckoutOutcome, CheckoutPort};
use crate::platform::footprint;
use crate::platform::port::PlatformError;

pub const APPROVE: &str = "sample_test_approve";
pub const DECLINE: &str = "sample_test_decline";
pub const CHALLENGE: &str = "sample_test_challenge";
pub const CODE: &str = "BEMVINDO10";
pub const EXPIRED_CODE: &str = "VERAO2025";
/// Items from this subtotal ship free (an automatic discount).
pub const FREE_SHIPPING_FROM: i64 = 30_000;
const TTL: Duration = Duration::from_secs(6 * 60 * 60);
/// How long a placed or cancelled checkout, and its order, stay readable.
const SETTLED_KEPT: Duration = Duration::from_secs(7 * 24 * 60 * 60);
/// About 20,000 checkouts of a few lines each.
pub const MAX_BYTES: usize = 64 << 20;
/// Expired checkouts removed by one write at most, so no call pays for a long sweep.
const EVICT_PER_CALL: usize = 8;
/// A sheet's map row and its place in an expiry index.
const ENTRY_OVERHEAD: usize = 160;
const GROUP: &str = "grp_1";
/// An order placed awaiting a payment made outside the store (Pix), as WooCommerce names it.
const ON_HOLD: &str = "on-hold";
const METHOD: &str = "ful_1";
const DESTINATION: &str = "dest_1";

/// `(id, title, cost, business days from, to)` for a destination country.
fn rates(country: &str) -> Vec<(&'static str, &'static str, i64, i64, i64)> {
    if country.eq_ignore_ascii_case("BR") {
        vec![
            ("pac", "PAC", 1500, 5, 8),
            ("sedex", "SEDEX", 2990, 1, 3),
            (
                "pickup",
                "Retirar na loja (Rua Exemplo 100, São Paulo)",
                0,
                0,
                1,
            ),
        ]
    } else {
        vec![("intl", "International", 9900, 10, 20)]
    }
}

/// The option selected in the one group this store makes.
fn selected_option(state: &CheckoutState) -> Option<&FulfillmentOption> {
    let group = state.fulfillment.first()?.groups.first()?;
    let selected = group.selected_option.as_ref()?;
    group.options.iter().find(|option| option.id == *selected)
}

struct Sheet {
    state: CheckoutState,
    created: OffsetDateTime,
    /// When the sheet (and its order) leaves the book.
    leaves: OffsetDateTime,
    bytes: usize,
}

#[derive(Default)]
struct Book {
    sheets: HashMap<String, Sheet>,
    orders: HashMap<String, Order>,
    /// When each open sheet expires, and each settled one leaves, soonest first: the next to
    /// go is one look away, and the bound never reaches into the open ones.
    open: BTreeSet<(OffsetDateTime, String)>,
    settled: BTreeSet<(OffsetDateTime, String)>,
    bytes: usize,
    /// Orders placed so far: the next order's number.
    next: u64,
}

fn to_time(duration: Duration) -> time::Duration {
    time::Duration::try_from(duration).unwrap_or(time::Duration::MAX)
}

impl Book {
    fn index(&mut self, open: bool) -> &mut BTreeSet<(OffsetDateTime, String)> {
        if open {
            &mut self.open
        } else {
            &mut self.settled
        }
    }

    /// Keeps `state` as the sheet `id` (and its order, once placed, beside it).
    fn put(
        &mut self,
        id: &str,
        state: CheckoutState,
        created: OffsetDateTime,
        now: OffsetDateTime,
    ) {
        let previous = self.take(id);
        let open = state.stage == Stage::Open;
        let leaves = match previous {
            // A settled sheet keeps its date: nothing changes it after it settled.
            Some(previous) if !open && previous.state.stage != Stage::Open => previous.leaves,
            _ if open => state.expires_at.unwrap_or(created + to_time(TTL)),
            _ => now + to_time(SETTLED_KEPT),
        };
        let order = match &state.stage {
            Stage::Placed(order) => self.orders.get(&order.id).map_or(0, footprint::order),
            Stage::Open | Stage::Canceled => 0,
        };
        let bytes = ENTRY_OVERHEAD + 2 * id.len() + footprint::checkout(&state) + order;
        self.index(open).insert((leaves, id.to_owned()));
        self.bytes += bytes;
        self.sheets.insert(
            id.to_owned(),
            Sheet {
                state,
                created,
                leaves,
                bytes,
            },
        );
    }

    /// The sheet, out of the book and its index (its order stays: `remove` drops both).
    fn take(&mut self, id: &str) -> Option<Sheet> {
        let sheet = self.sheets.remove(id)?;
        let open = sheet.state.stage == Stage::Open;
        self.index(open).remove(&(sheet.leaves, id.to_owned()));
        self.bytes = self.bytes.saturating_sub(sheet.bytes);
        Some(sheet)
    }

    fn remove(&mut self, id: &str) {
        if let Some(sheet) = self.take(id)
            && let Stage::Placed(order) = &sheet.state.stage
        {
            self.orders.remove(&order.id);
        }
    }

    fn soonest(index: &BTreeSet<(OffsetDateTime, String)>, now: OffsetDateTime) -> Option<String> {
        index
            .first()
            .filter(|(leaves, _)| *leaves <= now)
            .map(|(_, id)| id.clone())
    }

    /// Drops up to `EVICT_PER_CALL` sheets whose time is up, soonest first.
    fn evict_expired(&mut self, now: OffsetDateTime) {
        for _ in 0..EVICT_PER_CALL {
            let Some(id) =
                Self::soonest(&self.open, now).or_else(|| Self::soonest(&self.settled, now))
            else {
                break;
            };
            self.remove(&id);
        }
    }

    /// Room for one more sheet: settled sheets go, oldest first, while over `max_bytes`;
    /// when only open ones are left, how long until the soonest expires.
    fn room(&mut self, now: OffsetDateTime, max_bytes: usize) -> Result<(), Duration> {
        self.evict_expired(now);
        while self.bytes >= max_bytes {
            let Some((_, id)) = self.settled.first().cloned() else {
                let soonest = self.open.first().map_or(now, |(expiry, _)| *expiry);
                let wait = Duration::try_from(soonest - now).unwrap_or_default();
                return Err(wait.max(Duration::from_secs(1)));
            };
            self.remove(&id);
        }
        Ok(())
    }
}

pub struct SampleCheckout {
    store: Arc<SampleStore>,
    handlers: Vec<PaymentHandler>,
    book: Mutex<Book>,
    max_bytes: usize,
    /// Asks what a Brazilian store asks (`[store] brazilian_checkout`).
    brazilian: bool,
}

fn invalid(path: &str, message: impl Into<String>) -> PlatformError {
    PlatformError::InvalidAt {
        path: path.to_owned(),
        message: message.into(),
    }
}

impl SampleCheckout {
    pub fn new(store: Arc<SampleStore>) -> Self {
        Self::bounded(store, MAX_BYTES)
    }

    fn bounded(store: Arc<SampleStore>, max_bytes: usize) -> Self {
        Self {
            max_bytes,
            store,
            handlers: vec![
                PaymentHandler {
                    id: APPROVE.to_owned(),
                    name: "Cartão de teste (aprovado)".to_owned(),
                },
                PaymentHandler {
                    id: DECLINE.to_owned(),
                    name: "Cartão de teste (recusado)".to_owned(),
                },
                PaymentHandler {
                    id: CHALLENGE.to_owned(),
                    name: "Cartão de teste (confirmação na loja)".to_owned(),
                },
            ],
            book: Mutex::new(Book::default()),
            brazilian: false,
        }
    }

    /// Behaves as a Brazilian store does (issue 37 item 5): a BRL order needs the buyer's CPF
    /// or CNPJ (for the NF-e), and a Brazilian destination its house number.
    pub fn brazilian(mut self, brazilian: bool) -> Self {
        self.brazilian = brazilian;
        self
    }

    /// What the store requires of `state`, as a Brazilian store's checkout form says it.
    fn require(&self, state: &mut CheckoutState) {
        state.requirements.clear();
        if !self.brazilian || state.currency != iso_currency::Currency::BRL {
            return;
        }
        state.requirements.push(Requirement::TaxpayerId {
            kinds: vec![TaxpayerKind::Cpf, TaxpayerKind::Cnpj],
        });
        let in_brazil = state.address.as_ref().is_some_and(|address| {
            address
                .address_country
                .as_deref()
                .is_some_and(|country| country.eq_ignore_ascii_case("BR"))
        });
        if in_brazil {
            state.requirements.push(Requirement::HouseNumber);
        }
    }

    fn lock(&self) -> MutexGuard<'_, Book> {
        // Every mutation replaces whole values: a poisoned map is still consistent.
        self.book
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn storefront(&self) -> &str {
        &self.store.info.storefront_url
    }

    fn priced(&self, lines: &[CartLineInput]) -> (Vec<CartLine>, Vec<crate::model::LineProblem>) {
        let draft = CartDraft {
            lines: lines.to_vec(),
            ..CartDraft::default()
        };
        let (specs, problems) = self.store.price_lines(&draft);
        let lines = specs
            .into_iter()
            .enumerate()
            .map(|(index, spec)| {
                let subtotal = spec.unit_price.saturating_mul(i64::from(spec.quantity));
                CartLine {
                    id: format!("li_{}", index + 1),
                    variant_id: spec.variant_id,
                    title: spec.title,
                    unit_price: spec.unit_price,
                    quantity: spec.quantity,
                    subtotal,
                    total: subtotal,
                    image_url: spec.image_url,
                }
            })
            .collect();
        (lines, problems)
    }

    /// Everything the store derives from the lines, the address, the selection and the
    /// codes: line totals, options and their costs, discounts and the totals.
    fn reprice(state: &mut CheckoutState, created: OffsetDateTime) {
        let items: i64 = state.lines.iter().map(|line| line.subtotal).sum();
        let line_ids: Vec<String> = state.lines.iter().map(|line| line.id.clone()).collect();
        let selected = state
            .fulfillment
            .first()
            .and_then(|method| method.groups.first())
            .and_then(|group| group.selected_option.clone());
        state.fulfillment = match &state.address {
            None => Vec::new(),
            Some(address) => {
                let country = address.address_country.clone().unwrap_or_default();
                let options: Vec<FulfillmentOption> = rates(&country)
                    .into_iter()
                    .map(|(id, title, cost, from, to)| FulfillmentOption {
                        id: id.to_owned(),
                        title: title.to_owned(),
                        description: None,
                        carrier: (id != "pickup").then(|| "Correios".to_owned()),
                        cost,
                        earliest: Some(created + time::Duration::days(from)),
                        latest: Some(created + time::Duration::days(to)),
                    })
                    .collect();
                let selected = selected.filter(|id| options.iter().any(|option| option.id == *id));
                vec![FulfillmentMethod {
                    id: METHOD.to_owned(),
                    kind: MethodKind::Shipping,
                    line_ids: line_ids.clone(),
                    destinations: vec![Destination {
                        id: DESTINATION.to_owned(),
                        address: address.clone(),
                        name: None,
                    }],
                    selected_destination: Some(DESTINATION.to_owned()),
                    groups: vec![FulfillmentGroup {
                        id: GROUP.to_owned(),
                        line_ids,
                        options,
                        selected_option: selected,
                    }],
                }]
            }
        };
        let shipping = selected_option(state).map(|option| option.cost);
        let mut discounts = Vec::new();
        for line in &mut state.lines {
            line.total = line.subtotal;
        }
        if state
            .codes
            .iter()
            .any(|code| code.eq_ignore_ascii_case(CODE))
        {
            let allocations: Vec<Allocation> = state
                .lines
                .iter()
                .map(|line| Allocation {
                    target: AllocationTarget::Line(line.id.clone()),
                    amount: line.subtotal / 10,
                })
                .collect();
            for (line, allocation) in state.lines.iter_mut().zip(&allocations) {
                line.total = line.subtotal - allocation.amount;
            }
            discounts.push(AppliedDiscount {
                code: Some(CODE.to_owned()),
                title: "Bem-vindo: 10% off".to_owned(),
                amount: allocations.iter().map(|allocation| allocation.amount).sum(),
                allocations,
            });
        }
        if let Some(cost) = shipping.filter(|cost| *cost > 0 && items >= FREE_SHIPPING_FROM) {
            discounts.push(AppliedDiscount {
                code: None,
                title: "Frete grátis acima de R$ 300".to_owned(),
                amount: cost,
                allocations: vec![Allocation {
                    target: AllocationTarget::Shipping,
                    amount: cost,
                }],
            });
        }
        let discount: i64 = discounts.iter().map(|discount| discount.amount).sum();
        state.discounts = discounts;
        state.totals = CheckoutTotals {
            subtotal: items,
            discount,
            fulfillment: shipping,
            tax: Some(0),
            total: items - discount + shipping.unwrap_or(0),
        };
    }

    fn open_sheet<T>(
        &self,
        id: &str,
        change: impl FnOnce(&mut CheckoutState) -> Result<T, PlatformError>,
    ) -> Result<Option<(CheckoutState, T)>, PlatformError> {
        let mut book = self.lock();
        let now = OffsetDateTime::now_utc();
        book.evict_expired(now);
        let Some(sheet) = book.sheets.get(id) else {
            return Ok(None);
        };
        if sheet.state.expires_at.is_some_and(|expiry| expiry <= now) {
            book.remove(id);
            return Ok(None);
        }
        if sheet.state.stage != Stage::Open {
            return Err(invalid("$.id", "the checkout is no longer open"));
        }
        let created = sheet.created;
        let mut next = sheet.state.clone();
        let out = change(&mut next)?;
        Self::reprice(&mut next, created);
        self.require(&mut next);
        book.put(id, next.clone(), created, now);
        Ok(Some((next, out)))
    }

    fn order_from(&self, state: &CheckoutState, number: u64, paid: bool) -> Order {
        let id = format!("ord_{number}");
        Order {
            permalink_url: format!("{}orders/{id}", self.storefront()),
            label: Some(format!("#{}", 1000 + number)),
            id,
            checkout_id: state.id.clone(),
            store_status: if paid { "processing" } else { "pending" }.to_owned(),
            paid,
            lines: state
                .lines
                .iter()
                .map(|line| OrderLine {
                    id: line.id.clone(),
                    variant_id: Some(line.variant_id.clone()),
                    sku: None,
                    title: line.title.clone(),
                    quantity: line.quantity,
                    active: line.quantity,
                    fulfilled: 0,
                    unit_price: line.unit_price,
                    total: line.total,
                })
                .collect(),
            currency: state.currency,
            totals: state.totals,
            shipping_address: state.address.clone(),
            fulfillment_title: selected_option(state).map(|option| option.title.clone()),
            codes: state.codes.clone(),
            placed_at: Some(OffsetDateTime::now_utc()),
            nfe: None,
        }
    }
}

#[async_trait]
impl CheckoutPort for SampleCheckout {
    fn handlers(&self) -> &[PaymentHandler] {
        &self.handlers
    }

    fn reads_orders(&self) -> bool {
        true
    }

    async fn create_checkout(
        &self,
        draft: &CheckoutDraft,
    ) -> Result<CheckoutOutcome, PlatformError> {
        let inputs = match &draft.source {
            CheckoutSource::Lines(lines) => lines.clone(),
            CheckoutSource::Cart(cart_id) => {
                let cart = self
                    .store
                    .carts
                    .get(cart_id)
                    .ok_or_else(|| invalid("$.cart_id", format!("no cart {cart_id}")))?;
                cart.lines
                    .iter()
                    .map(|line| CartLineInput {
                        item_id: line.variant_id.clone(),
                        quantity: line.quantity,
                    })
                    .collect()
            }
        };
        let (lines, problems) = self.priced(&inputs);
        let created = OffsetDateTime::now_utc();
        let mut book = self.lock();
        book.room(created, self.max_bytes)
            .map_err(|retry_after| PlatformError::Full {
                what: "checkout store",
                retry_after,
            })?;
        let id = format!("chk_{}", uuid::Uuid::new_v4().simple());
        let mut state = CheckoutState {
            continue_url: Some(format!("{}checkout?checkout={id}", self.storefront())),
            id: id.clone(),
            lines,
            currency: self.store.info.currency,
            buyer: draft.buyer.clone(),
            // A test order notifies nobody: the flow needs no more of the buyer than the
            // destination (so a conformance client that sends none can still complete).
            needs_email: false,
            address: None,
            needs_fulfillment: true,
            fulfillment: Vec::new(),
            codes: Vec::new(),
            discounts: Vec::new(),
            refused_codes: Vec::new(),
            totals: CheckoutTotals::default(),
            handlers: self.handlers.clone(),
            escalation: None,
            stage: Stage::Open,
            expires_at: Some(created + TTL),
            requirements: Vec::new(),
        };
        Self::reprice(&mut state, created);
        self.require(&mut state);
        book.put(&id, state.clone(), created, created);
        Ok(CheckoutOutcome {
            checkout: state,
            problems,
        })
    }

    async fn get_checkout(&self, id: &str) -> Result<Option<CheckoutState>, PlatformError> {
        let now = OffsetDateTime::now_utc();
        let mut book = self.lock();
        book.evict_expired(now);
        Ok(book
            .sheets
            .get(id)
            .filter(|sheet| {
                sheet.state.stage != Stage::Open
                    || sheet.state.expires_at.is_none_or(|expiry| expiry > now)
            })
            .map(|sheet| sheet.state.clone()))
    }

    async fn set_lines(
        &self,
        id: &str,
        lines: &[CartLineInput],
    ) -> Result<Option<CheckoutOutcome>, PlatformError> {
        let (priced, problems) = self.priced(lines);
        Ok(self
            .open_sheet(id, |state| {
                state.lines = priced;
                Ok(())
            })?
            .map(|(checkout, ())| CheckoutOutcome { checkout, problems }))
    }

    async fn set_buyer(
        &self,
        id: &str,
        buyer: &Buyer,
    ) -> Result<Option<CheckoutState>, PlatformError> {
        Ok(self
            .open_sheet(id, |state| {
                state.buyer = buyer.clone();
                Ok(())
            })?
            .map(|(state, ())| state))
    }

    async fn set_destination(
        &self,
        id: &str,
        address: &Address,
    ) -> Result<Option<CheckoutState>, PlatformError> {
        if address.address_country.is_none() {
            return Err(invalid(
                "$.fulfillment.methods[0].destinations[0].address_country",
                "the store needs the destination's country to price shipping",
            ));
        }
        Ok(self
            .open_sheet(id, |state| {
                state.address = Some(address.clone());
                Ok(())
            })?
            .map(|(state, ())| state))
    }

    async fn select_option(
        &self,
        id: &str,
        group_id: &str,
        option_id: &str,
    ) -> Result<Option<CheckoutState>, PlatformError> {
        Ok(self
            .open_sheet(id, |state| {
                let group = state
                    .fulfillment
                    .iter_mut()
                    .flat_map(|method| method.groups.iter_mut())
                    .find(|group| group.id == group_id)
                    .ok_or_else(|| {
                        invalid(
                            "$.fulfillment.methods[0].groups",
                            format!("no fulfillment group {group_id}: give a destination first"),
                        )
                    })?;
                if !group.options.iter().any(|option| option.id == option_id) {
                    return Err(invalid(
                        "$.fulfillment.methods[0].groups[0].selected_option_id",
                        format!("{option_id} is not one of this group's options"),
                    ));
                }
                group.selected_option = Some(option_id.to_owned());
                Ok(())
            })?
            .map(|(state, ())| state))
    }

    async fn apply_code(&self, id: &str, code: &str) -> Result<Option<CodeOutcome>, PlatformError> {
        Ok(self
            .open_sheet(id, |state| {
                let refusal = if code.eq_ignore_ascii_case(CODE) {
                    if state
                        .codes
                        .iter()
                        .any(|held| held.eq_ignore_ascii_case(CODE))
                    {
                        Some((
                            CodeRefusal::AlreadyApplied,
                            format!("O cupom {code} já foi aplicado."),
                        ))
                    } else {
                        state.codes.push(CODE.to_owned());
                        None
                    }
                } else if code.eq_ignore_ascii_case(EXPIRED_CODE) {
                    Some((CodeRefusal::Expired, format!("O cupom {code} expirou.")))
                } else {
                    Some((CodeRefusal::Invalid, format!("O cupom {code} não existe.")))
                };
                Ok(refusal.map(|(refusal, reason)| RefusedCode {
                    code: code.to_owned(),
                    refusal,
                    reason,
                }))
            })?
            .map(|(checkout, refused)| CodeOutcome { checkout, refused }))
    }

    async fn remove_code(
        &self,
        id: &str,
        code: &str,
    ) -> Result<Option<CheckoutState>, PlatformError> {
        Ok(self
            .open_sheet(id, |state| {
                state.codes.retain(|held| !held.eq_ignore_ascii_case(code));
                Ok(())
            })?
            .map(|(state, ())| state))
    }

    async fn place(
        &self,
        id: &str,
        handler_id: Option<&str>,
    ) -> Result<Option<Placement>, PlatformError> {
        let mut book = self.lock();
        let Some(sheet) = book.sheets.get(id) else {
            return Ok(None);
        };
        if sheet.state.stage != Stage::Open {
            return Err(invalid("$.id", "the checkout is no longer open"));
        }
        if handler_id == Some(DECLINE) {
            return Ok(Some(Placement::Declined {
                reason: "Pagamento recusado pelo emissor de teste.".to_owned(),
            }));
        }
        let mut state = sheet.state.clone();
        let created = sheet.created;
        book.next += 1;
        let number = book.next;
        let paid = handler_id == Some(APPROVE);
        let order = self.order_from(&state, number, paid);
        let placement = if paid {
            Placement::Placed(order.clone())
        } else {
            Placement::Escalated {
                url: format!("{}pay?order={}", self.storefront(), order.id),
                reason: EscalationReason::Payment,
                order: order.clone(),
            }
        };
        state.stage = Stage::Placed(order.reference());
        if let Placement::Escalated { url, reason, .. } = &placement {
            state.continue_url = Some(url.clone());
            state.escalation = Some(*reason);
        }
        book.orders.insert(order.id.clone(), order);
        book.put(id, state, created, OffsetDateTime::now_utc());
        Ok(Some(placement))
    }

    fn takes_unpaid(&self) -> bool {
        true
    }

    async fn place_unpaid(&self, id: &str) -> Result<Option<Placement>, PlatformError> {
        let mut book = self.lock();
        let Some(sheet) = book.sheets.get(id) else {
            return Ok(None);
        };
        if sheet.state.stage != Stage::Open {
            return Err(invalid("$.id", "the checkout is no longer open"));
        }
        let mut state = sheet.state.clone();
        let created = sheet.created;
        book.next += 1;
        let number = book.next;
        let mut order = self.order_from(&state, number, false);
        order.store_status = ON_HOLD.to_owned();
        state.stage = Stage::Placed(order.reference());
        book.orders.insert(order.id.clone(), order.clone());
        book.put(id, state, created, OffsetDateTime::now_utc());
        Ok(Some(Placement::Placed(order)))
    }

    async fn mark_paid(
        &self,
        order_id: &str,
        _reference: &str,
    ) -> Result<Option<Order>, PlatformError> {
        let mut book = self.lock();
        let Some(order) = book.orders.get_mut(order_id) else {
            return Ok(None);
        };
        match order.store_status.as_str() {
            ON_HOLD => {
                order.store_status = "processing".to_owned();
                order.paid = true;
            }
            "processing" => {}
            _ => return Err(invalid("$.id", "the order is no longer awaiting payment")),
        }
        Ok(Some(order.clone()))
    }

    async fn cancel_unpaid(&self, order_id: &str) -> Result<Option<Order>, PlatformError> {
        let mut book = self.lock();
        let Some(order) = book.orders.get_mut(order_id) else {
            return Ok(None);
        };
        if order.paid {
            return Err(invalid("$.id", "a paid order is not cancelled"));
        }
        order.store_status = "cancelled".to_owned();
        Ok(Some(order.clone()))
    }

    async fn cancel_checkout(&self, id: &str) -> Result<Option<CheckoutState>, PlatformError> {
        let mut book = self.lock();
        let Some(sheet) = book.sheets.get(id) else {
            return Ok(None);
        };
        if sheet.state.stage != Stage::Open {
            return Err(invalid("$.id", "the checkout is no longer open"));
        }
        let before = sheet.state.clone();
        let created = sheet.created;
        let mut canceled = before.clone();
        canceled.stage = Stage::Canceled;
        book.put(id, canceled, created, OffsetDateTime::now_utc());
        Ok(Some(before))
    }

    async fn order(&self, id: &str) -> Result<Option<Order>, PlatformError> {
        let mut book = self.lock();
        book.evict_expired(OffsetDateTime::now_utc());
        Ok(book.orders.get(id).cloned())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]
    use super::*;
    use crate::model::BuyerContext;

    fn checkout(max_bytes: usize) -> SampleCheckout {
        SampleCheckout::bounded(super::super::open(&toml::Table::new()).unwrap(), max_bytes)
    }

    fn draft() -> CheckoutDraft {
        CheckoutDraft {
            source: CheckoutSource::Lines(Vec::new()),
            context: BuyerContext::default(),
            buyer: Buyer {
                email: Some("x".repeat(500)),
                ..Buyer::default()
            },
        }
    }

    /// Creates checkouts until the book refuses one; how many it took.
    async fn flood(port: &SampleCheckout) -> usize {
        for created in 0..100_000 {
            match port.create_checkout(&draft()).await {
                Ok(_) => {}
                Err(PlatformError::Full { retry_after, .. }) => {
                    assert!(
                        retry_after > Duration::from_secs(5 * 3600),
                        "{retry_after:?}"
                    );
                    return created;
                }
                Err(other) => panic!("{other}"),
            }
        }
        panic!("never full")
    }

    /// Issue 35 item 2: a flood of open checkouts stays within the byte bound and is refused
    /// there; the buyer's open checkout is never pushed out.
    #[tokio::test]
    async fn a_flood_is_refused_at_the_bound_and_pushes_no_open_checkout_out() {
        let bound = 64 * 1024;
        let port = checkout(bound);
        let buyer = port.create_checkout(&draft()).await.unwrap().checkout.id;
        assert!(flood(&port).await > 10);
        let bytes = port.lock().bytes;
        assert!(bytes <= bound + 4096, "{bytes}");
        assert!(port.get_checkout(&buyer).await.unwrap().is_some());
    }

    /// At the bound a settled (here cancelled) checkout leaves before any new one is refused.
    #[tokio::test]
    async fn settled_checkouts_leave_first_at_the_bound() {
        let port = checkout(64 * 1024);
        let done = port.create_checkout(&draft()).await.unwrap().checkout.id;
        port.cancel_checkout(&done).await.unwrap().unwrap();
        assert_eq!(
            port.get_checkout(&done).await.unwrap().unwrap().stage,
            Stage::Canceled
        );
        flood(&port).await;
        assert!(port.get_checkout(&done).await.unwrap().is_none());
    }

    /// An expired checkout is gone from the book, not only hidden.
    #[tokio::test]
    async fn an_expired_checkout_is_gone() {
        let port = checkout(MAX_BYTES);
        let id = port.create_checkout(&draft()).await.unwrap().checkout.id;
        {
            let mut book = port.lock();
            let mut state = book.sheets.get(&id).unwrap().state.clone();
            let past = OffsetDateTime::now_utc() - time::Duration::seconds(1);
            state.expires_at = Some(past);
            book.put(&id, state, past, past);
        }
        assert!(port.get_checkout(&id).await.unwrap().is_none());
        let book = port.lock();
        assert!(book.sheets.is_empty());
        assert!(book.open.is_empty());
        assert_eq!(book.bytes, 0);
    }
}
