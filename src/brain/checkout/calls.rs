//! The checkout tools as the pipeline's brain step calls them: the request types decoded
//! into the checkout rules' inputs (`CheckoutDraft`, `CheckoutUpdate`, `Completion`), and the
//! judged checkout rendered for the negotiated release. Nothing here knows which front the
//! call came through; buyer data goes from the request into the model field by field and
//! never into a log line.

use std::sync::Arc;

use super::{
    CheckoutBrain, CheckoutUpdate, Completion, HandedOff, HandoffAnnouncer, Judged, OrderEvents,
    render,
};
use crate::brain::filters::buyer_context;
use crate::brain::fiscal::{self, Document};
use crate::brain::{Brain, BrainError};
use crate::model::CartLineInput;
use crate::model::checkout::{
    Address, Buyer, CheckoutDraft, CheckoutSource, CheckoutState, Order, Stage,
};
use crate::platform::PlatformError;
use crate::protocol::answer::Answer;
use crate::protocol::envelope::{Extensions, Status, declare_pix, handler_registry};
use crate::protocol::fiscal::SellerIdentityOut;
use crate::protocol::request::{AddressIn, BuyerIn, CartIn, CheckoutIn, LineItemIn};
use crate::protocol::{Capability, Message, MessageCode, Namespace, Release, Severity};

/// A buyer-typed text field: blank means not given.
fn clean(value: &Option<String>) -> Option<String> {
    value
        .as_deref()
        .map(str::trim)
        .filter(|value| !value.is_empty())
        .map(str::to_owned)
}

fn buyer(input: &BuyerIn) -> Buyer {
    Buyer {
        first_name: clean(&input.first_name),
        last_name: clean(&input.last_name),
        email: clean(&input.email),
        phone_number: clean(&input.phone_number),
        taxpayer_id: None,
    }
}

fn address(input: &AddressIn) -> Address {
    Address {
        first_name: clean(&input.first_name),
        last_name: clean(&input.last_name),
        street_address: clean(&input.street_address),
        extended_address: clean(&input.extended_address),
        address_locality: clean(&input.address_locality),
        address_region: clean(&input.address_region),
        postal_code: clean(&input.postal_code),
        // Stores key their shipping tables on the upper-case code.
        address_country: clean(&input.address_country).map(|code| code.to_ascii_uppercase()),
        phone_number: clean(&input.phone_number),
        neighborhood: None,
        number: None,
    }
}

/// Which "no such thing" a checkout operation ran into, as the store or the rules said it:
/// answered as a business outcome (`not_found`), like an unknown cart, not as a malformed
/// request. `CheckoutBrain` names an unknown checkout at `$.id`; adapters an unknown cart at
/// `$.cart_id`.
fn not_found(error: &BrainError) -> Option<&'static str> {
    match error {
        BrainError::Platform(PlatformError::InvalidAt { path, .. }) => match path.as_str() {
            "$.id" => Some("Checkout not found or has expired"),
            "$.cart_id" => Some("Cart not found or has expired"),
            _ => None,
        },
        _ => None,
    }
}

/// The parts of a Checkout payload other than its lines, as an update.
fn update_parts(input: &CheckoutIn, creating: bool) -> Result<CheckoutUpdate, BrainError> {
    let mut update = CheckoutUpdate {
        buyer: input.buyer.as_ref().map(buyer),
        codes: input
            .discounts
            .as_ref()
            .map(|discounts| discounts.codes.clone()),
        ..CheckoutUpdate::default()
    };
    if let Some(fulfillment) = &input.fulfillment {
        for (m, method) in fulfillment.methods.iter().enumerate() {
            if method
                .kind
                .as_deref()
                .is_some_and(|kind| kind != "shipping")
                && !method.destinations.is_empty()
            {
                return Err(BrainError::invalid(
                    format!("$.checkout.fulfillment.methods[{m}].destinations"),
                    "only a shipping method takes the buyer's destination; pickup locations are the store's",
                ));
            }
            if let Some(destination) = method.destinations.first() {
                update.address = Some(crate::brain::address::read(address(destination)));
            }
            for (g, group) in method.groups.iter().enumerate() {
                let Some(option) = &group.selected_option_id else {
                    continue;
                };
                match &group.id {
                    Some(id) => update.selections.push((id.clone(), option.clone())),
                    // A create matches its groups by position (`positional`).
                    None if creating => {}
                    None => {
                        return Err(BrainError::invalid(
                            format!("$.checkout.fulfillment.methods[{m}].groups[{g}].id"),
                            "an update names each group by the id this checkout gave it",
                        ));
                    }
                }
            }
        }
    }
    Ok(update)
}

/// The selections of a create payload, matched to the groups the store made by position: a new
/// checkout has handed out no group ids (fulfillment_group.json: `id` is omitted on create), so
/// whatever id the agent wrote there names nothing. A group the store did not make keeps the
/// agent's id, and is refused as unknown.
fn positional(input: &CheckoutIn, state: &CheckoutState) -> Vec<(String, String)> {
    let Some(fulfillment) = &input.fulfillment else {
        return Vec::new();
    };
    let mut selections = Vec::new();
    for (m, method) in fulfillment.methods.iter().enumerate() {
        for (g, group) in method.groups.iter().enumerate() {
            if let Some(option) = &group.selected_option_id {
                // An id the checkout already gave (a resumed checkout) names its group.
                let named = group.id.as_ref().filter(|id| {
                    state
                        .fulfillment
                        .iter()
                        .flat_map(|method| &method.groups)
                        .any(|made| made.id == **id)
                });
                let made = named.cloned().or_else(|| {
                    state
                        .fulfillment
                        .get(m)
                        .and_then(|method| method.groups.get(g))
                        .map(|made| made.id.clone())
                        .or_else(|| group.id.clone())
                });
                if let Some(made) = made {
                    selections.push((made, option.clone()));
                }
            }
        }
    }
    selections
}

/// A selection sent with a create names ids the new checkout never handed out: one the store
/// does not hold is a warning beside the made checkout, not an error to fix.
fn tentative(message: &mut Message) {
    let selection = message
        .path
        .as_deref()
        .is_some_and(|path| path.ends_with(".selected_option_id"));
    if selection && message.code == MessageCode::Invalid && message.severity.is_some() {
        *message = Message::warning(
            MessageCode::Invalid,
            format!(
                "{}; choose one of the options this checkout lists",
                message.content
            ),
        )
        .at(message.path.clone().unwrap_or_default());
    }
}

fn is_empty(update: &CheckoutUpdate) -> bool {
    update.lines.is_none()
        && update.buyer.is_none()
        && update.address.is_none()
        && update.selections.is_empty()
        && update.codes.is_none()
}

impl Brain {
    /// The checkout rules, shared by every namespace's brain (one ledger, so a checkout
    /// completed through one door is completed through the other).
    pub fn with_checkout(mut self, rules: Arc<CheckoutBrain>) -> Self {
        self.checkout_rules = Some(rules);
        self
    }

    /// Placed orders' events go to `events` (order.md "Events").
    pub fn with_order_events(mut self, events: Arc<dyn OrderEvents>) -> Self {
        self.order_events = Some(events);
        self
    }

    fn checkout_rules(&self) -> Result<&CheckoutBrain, BrainError> {
        self.checkout_rules
            .as_deref()
            .ok_or(BrainError::Platform(PlatformError::Unsupported("checkout")))
    }

    /// The lines the store may receive, judged as a cart's are (unknown, ambiguous, sold-out
    /// items become messages at `$.line_items[i]`).
    async fn checkout_lines(
        &self,
        lines: &[LineItemIn],
        input: &CheckoutIn,
    ) -> Result<(Vec<CartLineInput>, Vec<Message>), BrainError> {
        let cart = CartIn {
            line_items: lines.to_vec(),
            context: input.context.clone(),
            buyer: None,
            signals: None,
            attribution: None,
        };
        let prepared = self.prepare_lines(&cart).await?;
        Ok((prepared.lines, prepared.messages))
    }

    async fn checkout_answer(
        &self,
        mut judged: Judged,
        messages: Vec<Message>,
        release: Release,
    ) -> Result<Answer, BrainError> {
        judged.messages.splice(0..0, messages);
        self.fiscal_view(&mut judged);
        // Issue 35: the order is named by its handle, never by the store's own id.
        if let Stage::Placed(order) = &mut judged.state.stage {
            order.id = self
                .checkout_rules()?
                .handles()
                .sealer()
                .await?
                .seal(&order.id)?;
        }
        let mut ucp = self
            .namespace
            .envelope(release, Capability::Checkout, Status::Success);
        // PAY-003: a checkout response declares the handlers it takes (an empty map when the
        // buyer pays on the store's page), as the profile does.
        // BCP's Pix handler is declared under its own name, and only through the BCP door
        // (UCP has no Pix handler): elsewhere it is not offered at all.
        let pix = brain_pix_id(self.checkout_rules()?);
        let bcp = fiscal::is_bcp(&self.namespace);
        if !bcp && let Some(pix) = &pix {
            let offered = judged.state.handlers.len();
            judged.state.handlers.retain(|handler| handler.id != *pix);
            if judged.state.handlers.len() != offered
                && judged.state.handlers.is_empty()
                && judged.status == super::status::Status::ReadyForComplete
            {
                let messages = std::mem::take(&mut judged.messages);
                judged = super::status::judge(judged.state);
                judged.messages.splice(0..0, messages);
            }
        }
        let mut handlers = handler_registry(
            self.namespace.service,
            release.version,
            judged
                .state
                .handlers
                .iter()
                .filter(|handler| Some(&handler.id) != pix.as_ref())
                .map(|handler| handler.id.as_str()),
        );
        if let Some(pix) = &pix
            && bcp
            && (judged
                .state
                .handlers
                .iter()
                .any(|handler| handler.id == *pix)
                || judged.pix.is_some())
        {
            declare_pix(&mut handlers, pix, release.version);
        }
        ucp.payment_handlers = Some(handlers);
        self.declare_fiscal(&mut ucp);
        let mut wire = render::checkout(&judged, release, ucp, Vec::new());
        // fiscal-identity.md rule 1: in every checkout answer while the capability is active.
        wire.seller_identity = self.seller_identity();
        // The store's page, with the merchant's public host and attribution rules (as a cart's).
        wire.continue_url = wire
            .continue_url
            .and_then(|url| self.continue_urls.rewrite(&url));
        // The first message's code, as a replayed answer reads it back: a front may map it
        // (REST answers a write refused as immutable with 409, `rest::front`).
        let reason = judged
            .messages
            .first()
            .map(|message| message.code.as_str().to_owned());
        Self::to_json(&wire).map(|answer| answer.with_reason(reason))
    }

    /// A judged checkout, or the business outcome for one that does not exist.
    async fn checkout_outcome(
        &self,
        outcome: Result<Judged, BrainError>,
        messages: Vec<Message>,
        release: Release,
    ) -> Result<Answer, BrainError> {
        match outcome {
            Ok(judged) => self.checkout_answer(judged, messages, release).await,
            Err(error) => match not_found(&error) {
                Some(content) => self.business_error(
                    release,
                    Capability::Checkout,
                    vec![Message::error(
                        MessageCode::NotFound,
                        content,
                        Severity::Unrecoverable,
                    )],
                    self.storefront_url(),
                ),
                None => Err(error),
            },
        }
    }

    pub async fn create_checkout(
        &self,
        input: CheckoutIn,
        release: Release,
    ) -> Result<Answer, BrainError> {
        let brain = self.checkout_rules()?;
        // CART-001: converting a cart uses the cart's contents; line items sent beside its id
        // are ignored.
        let line_items = input
            .line_items
            .as_ref()
            .filter(|_| input.cart_id.is_none());
        let (source, messages) = match (line_items, &input.cart_id) {
            (_, Some(cart_id)) => (CheckoutSource::Cart(cart_id.clone()), Vec::new()),
            (None, None) => {
                return Err(BrainError::invalid(
                    "$.checkout.line_items",
                    "give the line items, or the cart_id of a cart to check out",
                ));
            }
            (Some(lines), None) => {
                let (lines, messages) = self.checkout_lines(lines, &input).await?;
                if lines.is_empty() {
                    // checkout-mcp.md: no checkout when no item can be bought.
                    let mut messages = messages;
                    if messages.is_empty() {
                        messages.push(
                            Message::error(
                                MessageCode::Missing,
                                "The checkout needs at least one line item",
                                Severity::Recoverable,
                            )
                            .at("$.line_items"),
                        );
                    }
                    return self.business_error(
                        release,
                        Capability::Checkout,
                        messages,
                        self.storefront_url(),
                    );
                }
                (CheckoutSource::Lines(lines), messages)
            }
        };
        let document = self.document(&input);
        let mut draft = CheckoutDraft {
            source,
            context: buyer_context(&input.context),
            buyer: input.buyer.as_ref().map(buyer).unwrap_or_default(),
        };
        if let Document::Taken(taken) = &document {
            draft.buyer.taxpayer_id = Some(taken.clone());
        }
        let (created, resumed) = match brain.create(&draft).await {
            Ok(created) => created,
            Err(error) => return self.checkout_outcome(Err(error), messages, release).await,
        };
        // The rest of the payload (address, options, codes; the buyer too when the cart's
        // open checkout was resumed) is an update of the checkout.
        let mut update = update_parts(&input, true)?;
        fiscal::with_document(&mut update, &document);
        if !resumed {
            update.buyer = None;
        }
        // A new checkout has handed out no group or option ids yet, so a selection sent with
        // its creation is tried after the address has priced the options, and one the store
        // does not hold becomes a warning: the checkout is made either way.
        update.selections.clear();
        let selects = input.fulfillment.as_ref().is_some_and(|fulfillment| {
            fulfillment
                .methods
                .iter()
                .flat_map(|method| &method.groups)
                .any(|group| group.selected_option_id.is_some())
        });
        if is_empty(&update) && !selects {
            return self
                .checkout_answer(fiscal::held_back(created, &document), messages, release)
                .await
                .map(|answer| answer.resuming(resumed));
        }
        let id = created.state.id.clone();
        // Only the store's refusals of lines outlive the create: the rest of its messages
        // describe the state the update replaces.
        let stale = super::status::judge(created.state.clone()).messages;
        let mut line_messages = created.messages.clone();
        line_messages.retain(|message| !stale.contains(message));
        let mut outcome = if is_empty(&update) {
            Ok(Judged {
                messages: Vec::new(),
                ..created
            })
        } else {
            brain.update(&id, &update).await
        };
        if let (Ok(judged), true) = (&mut outcome, selects) {
            let choose = CheckoutUpdate {
                selections: positional(&input, &judged.state),
                ..CheckoutUpdate::default()
            };
            match brain.update(&id, &choose).await {
                Ok(mut chosen) => {
                    for message in &mut chosen.messages {
                        tentative(message);
                    }
                    *judged = chosen;
                }
                Err(error @ BrainError::InvalidParams { .. })
                | Err(error @ BrainError::Platform(PlatformError::InvalidAt { .. })) => {
                    judged.messages.push(
                        Message::warning(
                            MessageCode::Invalid,
                            format!("{error}; choose one of the options this checkout lists"),
                        )
                        .at("$.fulfillment.methods[0].groups[0].selected_option_id"),
                    );
                }
                Err(error) => outcome = Err(error),
            }
        }
        let outcome = outcome.map(|mut judged| {
            // The store's refusals of lines at create stay in the answer.
            line_messages.retain(|message| !judged.messages.contains(message));
            judged.messages.splice(0..0, line_messages);
            fiscal::held_back(judged, &document)
        });
        self.checkout_outcome(outcome, messages, release)
            .await
            .map(|answer| answer.resuming(resumed))
    }

    pub async fn get_checkout(&self, id: &str, release: Release) -> Result<Answer, BrainError> {
        let brain = self.checkout_rules()?;
        // A charge past its expiry, or paid without a notification heard, is brought up to
        // date before the answer.
        brain.pix_refresh(id).await;
        self.checkout_outcome(brain.get(id).await, Vec::new(), release)
            .await
    }

    pub async fn update_checkout(
        &self,
        id: &str,
        input: CheckoutIn,
        release: Release,
    ) -> Result<Answer, BrainError> {
        let brain = self.checkout_rules()?;
        if input.cart_id.is_some() {
            return Err(BrainError::invalid(
                "$.checkout.cart_id",
                "a checkout's cart is chosen when it is created",
            ));
        }
        let mut update = update_parts(&input, false)?;
        let document = self.document(&input);
        fiscal::with_document(&mut update, &document);
        let mut messages = Vec::new();
        if let Some(lines) = &input.line_items {
            let (lines, refused) = self.checkout_lines(lines, &input).await?;
            update.lines = Some(lines);
            messages = refused;
        }
        let outcome = brain.update(id, &update).await;
        let outcome = outcome.map(|judged| fiscal::held_back(judged, &document));
        self.checkout_outcome(outcome, messages, release).await
    }

    /// `idempotency_key` is the call's `meta["idempotency-key"]` (required by the schema; the
    /// rules check it again). Other parts of the payload are applied first, as an update.
    /// `webhook_url` is the agent's order webhook (its profile's), where the order this call
    /// places is announced.
    pub async fn complete_checkout(
        &self,
        id: &str,
        input: CheckoutIn,
        idempotency_key: Option<String>,
        release: Release,
        webhook_url: Option<&str>,
    ) -> Result<Answer, BrainError> {
        let brain = self.checkout_rules()?;
        let mut update = update_parts(&input, false)?;
        let document = self.document(&input);
        fiscal::with_document(&mut update, &document);
        let mut messages = Vec::new();
        if let Some(lines) = &input.line_items {
            let (lines, refused) = self.checkout_lines(lines, &input).await?;
            update.lines = Some(lines);
            messages = refused;
        }
        if !is_empty(&update)
            && let Err(error) = brain.update(id, &update).await
        {
            return self.checkout_outcome(Err(error), messages, release).await;
        }
        // A document the agent completes with and that is wrong places nothing: the order
        // would go out without the identity the agent meant it to carry.
        if let Document::Refused(_) = &document {
            let outcome = brain.get(id).await;
            let outcome = outcome.map(|judged| fiscal::held_back(judged, &document));
            return self.checkout_outcome(outcome, messages, release).await;
        }
        let completion = Completion {
            idempotency_key: idempotency_key.unwrap_or_default(),
            handler_id: input
                .payment
                .as_ref()
                .and_then(|payment| payment.instruments.first())
                .map(|instrument| instrument.handler_id.clone()),
        };
        if !fiscal::is_bcp(&self.namespace)
            && completion.handler_id.is_some()
            && completion.handler_id == brain_pix_id(brain)
        {
            return Err(BrainError::invalid(
                "$.checkout.payment.instruments[0].handler_id",
                "Pix (br.dev.bcp.pix) is BCP's handler: complete this checkout through the BCP endpoint",
            ));
        }
        let outcome = brain.complete_placing(id, &completion).await;
        if let (Ok((judged, placed)), Some(url), Some(events)) =
            (&outcome, webhook_url, &self.order_events)
        {
            match placed {
                Some(order) => match brain.handles().sealer().await {
                    Ok(sealer) => {
                        let mut order = order.clone();
                        order.id = sealer.seal(&order.id)?;
                        announce(
                            &self.namespace,
                            events.as_ref(),
                            url,
                            &order,
                            release,
                            self.seller_identity(),
                            self.invoices_declared(brain),
                        )
                        .await;
                    }
                    Err(_) => tracing::warn!("order event not sent: its handle could not be made"),
                },
                // Handed to the store's page: the order is announced when the store reports
                // it (a store with an order feed, as Shopify's webhooks), by whichever
                // replica hears of it. Or waiting on its Pix payment: announced once
                // settlement is verified.
                None if (judged.status == super::status::Status::RequiresEscalation
                    && brain.port().reads_orders())
                    || judged.pix.is_some() =>
                {
                    let handed = super::HandedOff {
                        webhook_url: url.to_owned(),
                        service: self.namespace.service.to_owned(),
                        version: release.version.to_owned(),
                        fulfillment: release.extensions.fulfillment,
                        discount: release.extensions.discount,
                    };
                    brain.handed_off(id, handed).await;
                }
                None => {}
            }
        }
        let outcome = outcome.map(|(judged, _)| judged);
        self.checkout_outcome(outcome, messages, release).await
    }

    /// An order placed through this bridge, by the handle its checkout answered with; any
    /// other id (a guess, a store's own order number) is `not_found` in the same words as a
    /// handle whose order the store no longer holds (issue 35).
    pub async fn get_order(&self, id: &str, release: Release) -> Result<Answer, BrainError> {
        let brain = self.checkout_rules()?;
        let sealer = brain.handles().sealer().await?;
        let found = match sealer.open(id) {
            Some(store_id) => match brain.order(&store_id).await {
                Ok(order) => Some(order),
                Err(BrainError::Platform(PlatformError::InvalidAt { path, .. }))
                    if path == "$.id" =>
                {
                    None
                }
                Err(error) => return Err(error),
            },
            None => None,
        };
        let Some(mut order) = found else {
            return self.business_error(
                release,
                Capability::Order,
                vec![Message::error(
                    MessageCode::NotFound,
                    "Order not found",
                    Severity::Unrecoverable,
                )],
                self.storefront_url(),
            );
        };
        order.id = sealer.seal(&order.id)?;
        let mut ucp = self
            .namespace
            .envelope(release, Capability::Order, Status::Success);
        self.declare_fiscal(&mut ucp);
        if self.invoices_declared(brain) {
            crate::brain::nfe::declare(&mut ucp);
        }
        let mut wire = render::order(&order, ucp);
        // fiscal-identity.md rule 1: in every order answer while the capability is active.
        wire.seller_identity = self.seller_identity();
        Self::to_json(&wire)
    }

    pub async fn cancel_checkout(&self, id: &str, release: Release) -> Result<Answer, BrainError> {
        let brain = self.checkout_rules()?;
        self.checkout_outcome(brain.cancel(id).await, Vec::new(), release)
            .await
    }
}

/// The id the Pix handler has where it is offered.
fn brain_pix_id(brain: &CheckoutBrain) -> Option<String> {
    brain.pix().map(|flow| flow.handler_id().to_owned())
}

/// ORD-029, ORD-030: the event carries the full order entity, rendered as `get_order` answers
/// it at the agent's release, for the namespace the order was placed through.
async fn announce(
    namespace: &Namespace,
    events: &dyn OrderEvents,
    url: &str,
    order: &Order,
    release: Release,
    seller: Option<SellerIdentityOut>,
    invoices: bool,
) {
    let mut ucp = namespace.envelope(release, Capability::Order, Status::Success);
    fiscal::declare(&mut ucp, seller.as_ref());
    if invoices {
        crate::brain::nfe::declare(&mut ucp);
    }
    let mut wire = render::order(order, ucp);
    wire.seller_identity = seller;
    match serde_json::to_value(wire) {
        Ok(entity) => {
            let path = namespace.profile_paths.first().copied().unwrap_or("");
            events.placed(url, path, entity).await;
        }
        Err(_) => tracing::warn!("order event not rendered"),
    }
}

/// The release a hand-off was answered in, as `namespace` serves it (none for a version it
/// no longer serves).
fn release_of(namespace: &Namespace, handed: &HandedOff) -> Option<Release> {
    let version = namespace
        .versions()
        .find(|version| *version == handed.version)?;
    Some(Release {
        version,
        edition: (namespace.edition_of)(version),
        extensions: Extensions {
            fulfillment: handed.fulfillment,
            discount: handed.discount,
        },
    })
}

impl Brain {
    /// How this namespace announces the order of a checkout handed off through it, once the
    /// store reports the order (`CheckoutBrain::announce_through`); none without order events.
    pub fn handoff_announcer(&self) -> Option<HandoffAnnouncer> {
        let events = self.order_events.clone()?;
        let namespace = self.namespace.clone();
        let seller = self.seller_identity();
        let invoices = self
            .checkout_rules()
            .is_ok_and(|checkouts| self.invoices_declared(checkouts));
        Some(Arc::new(move |order: Order, handed: HandedOff| {
            let (namespace, events, seller) = (namespace.clone(), events.clone(), seller.clone());
            Box::pin(async move {
                let Some(release) = release_of(&namespace, &handed) else {
                    tracing::warn!("order event not sent: its release is no longer served");
                    return;
                };
                announce(
                    &namespace,
                    events.as_ref(),
                    &handed.webhook_url,
                    &order,
                    release,
                    seller,
                    invoices,
                )
                .await;
            })
        }))
    }
}
