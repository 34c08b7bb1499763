//! Checkout on the Storefront API. A checkout IS a Storefront cart, and its id is the cart's
//! id (as a WooCommerce checkout's is its cart session's): converting a cart checks out that
//! very cart, so its lines and codes come along (CART-001, DSC-009) and every replica, or a
//! restarted bridge, addresses the same checkout without shared state.
//!
//! Round trips: lines go through the cart port (`Carts`: create, replace, cancel), then one
//! `CheckoutGet` reads the checkout; the buyer (`cartBuyerIdentityUpdate`), a code
//! (`cartDiscountCodesUpdate`, one more write when Shopify does not apply it) and an option
//! (`cartSelectedDeliveryOptionsUpdate`) are one read and one write each; the address
//! (`cartDeliveryAddressesReplace`) is one write, whose answer carries the groups and options
//! Shopify priced for it.
//!
//! The Storefront API cannot take payment and creates no order: complete always escalates to
//! the cart's `checkoutUrl`, where the buyer pays on Shopify's own page and Shopify creates
//! the order. So no handler is offered. Orders are read only when Shopify reports them by
//! webhook (`orders_webhook_secret`, see `orders`): the checkout then answers `completed`
//! with its order, and `get_order` is served.
//!
//! Shopify cannot delete a cart either: cancel marks it cancelled and empties it, as a
//! cancelled cart (`cart::CANCELLED_ATTRIBUTE`), so its `checkoutUrl` sells nothing and every
//! replica reads it as canceled. A checkout made from a cart cancels that cart with it.

mod brazil;
mod orders;
mod raw;
mod refusals;
mod state;

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use iso_currency::Currency;

pub use self::orders::OrderBook;
use self::raw::{Payload, RawCheckout, RawWarning};
use self::refusals::{DESTINATION_PATH, address_path, bad, buyer_path, not_applied, settle};
use self::state::Names;
use super::cart::Carts;
use super::client::Storefront;
use super::ids::is_cart_id;
use super::market;
use super::wire::{
    self, CheckoutAddressReplace, CheckoutBuyerUpdate, CheckoutCodesUpdate, CheckoutGet,
    CheckoutOptionSelect,
};
use crate::model::checkout::{
    Address, Buyer, CheckoutDraft, CheckoutSource, CheckoutState, CodeOutcome, CodeRefusal, Order,
    Placement, RefusedCode,
};
use crate::model::{CartDraft, CartLineInput, LineProblem};
use crate::platform::cart::CartPort;
use crate::platform::checkout::{CheckoutOutcome, CheckoutPort, OrderFeed};
use crate::platform::port::PlatformError;
use crate::platform::upstream::CallKind;

/// Bytes of buyers' names kept (about 100,000 checkouts), least recently used first past it,
/// and for how long after their checkout was last touched (a cart's life).
const MAX_NAMES_BYTES: u64 = 24 << 20;
const NAMES_IDLE: Duration = Duration::from_secs(10 * 24 * 3600);

const OPTION_PATH: &str = "$.fulfillment.methods[0].groups[0].selected_option_id";

pub struct ShopifyCheckout {
    client: Arc<Storefront>,
    /// Writes the lines: the cart port already judges them as Shopify answers (`LineJudge`).
    carts: Arc<Carts>,
    currency: Currency,
    names: moka::future::Cache<String, Names>,
    /// The orders Shopify reported for these checkouts, when its webhook is configured.
    orders: Option<Arc<OrderBook>>,
}

fn holds(codes: &[(String, bool)], code: &str) -> bool {
    codes
        .iter()
        .any(|(held, _)| held.eq_ignore_ascii_case(code))
}

fn text(value: &Option<String>) -> Option<String> {
    value.clone().filter(|value| !value.trim().is_empty())
}

impl ShopifyCheckout {
    pub fn new(
        client: Arc<Storefront>,
        carts: Arc<Carts>,
        currency: Currency,
        orders: Option<Arc<OrderBook>>,
    ) -> Self {
        Self {
            client,
            carts,
            currency,
            orders,
            names: moka::future::Cache::builder()
                .max_capacity(MAX_NAMES_BYTES)
                .weigher(|id: &String, names: &Names| {
                    let text = |name: &Option<String>| name.as_ref().map_or(0, String::len);
                    crate::platform::footprint::weight(
                        128 + id.len() + text(&names.first) + text(&names.last),
                    )
                })
                .eviction_policy(moka::policy::EvictionPolicy::lru())
                .time_to_idle(NAMES_IDLE)
                .build(),
        }
    }

    /// The cart as Shopify holds it, cancelled or not; `None` when Shopify does not know it.
    async fn read(&self, id: &str) -> Result<Option<RawCheckout>, PlatformError> {
        if !is_cart_id(id) {
            return Ok(None);
        }
        let data = self
            .client
            .run::<CheckoutGet>(
                wire::checkout_get::Variables { id: id.to_owned() },
                CallKind::Read,
            )
            .await?;
        Ok(data.cart.map(RawCheckout::from))
    }

    /// A checkout that may still change.
    async fn open(&self, id: &str) -> Result<Option<RawCheckout>, PlatformError> {
        Ok(self.read(id).await?.filter(|cart| !cart.cancelled()))
    }

    async fn state(&self, raw: &RawCheckout) -> Result<CheckoutState, PlatformError> {
        let names = self.names.get(&raw.id).await.unwrap_or_default();
        state::checkout(raw, self.currency, &names)
    }

    /// The order Shopify reported for this checkout, if any.
    async fn placed(&self, id: &str) -> Option<Order> {
        self.orders.as_ref()?.of_checkout(id).await
    }

    async fn answer(
        &self,
        raw: Option<RawCheckout>,
    ) -> Result<Option<CheckoutState>, PlatformError> {
        match raw {
            Some(raw) => self.state(&raw).await.map(Some),
            None => Ok(None),
        }
    }

    async fn remember(&self, id: &str, buyer: &Buyer) {
        let names = Names {
            first: text(&buyer.first_name),
            last: text(&buyer.last_name),
        };
        if names != Names::default() {
            self.names.insert(id.to_owned(), names).await;
        }
    }

    async fn write_codes(
        &self,
        id: &str,
        codes: Vec<String>,
    ) -> Result<Option<(RawCheckout, Vec<RawWarning>)>, PlatformError> {
        let data = self
            .client
            .run::<CheckoutCodesUpdate>(
                wire::checkout_codes_update::Variables {
                    cart_id: id.to_owned(),
                    codes,
                },
                CallKind::Write,
            )
            .await?;
        let payload = Option::<Payload>::from(data)
            .ok_or_else(|| bad("cartDiscountCodesUpdate answered without a payload"))?;
        let warnings = payload.warnings.clone();
        let cart = settle(Some(payload), "cartDiscountCodesUpdate", |_| {
            "$.discounts.codes".to_owned()
        })?;
        Ok(cart.map(|cart| (cart, warnings)))
    }

    /// Lines the store left nothing of: no cart was opened, so there is no checkout to answer.
    fn nothing_bought(problems: &[LineProblem]) -> PlatformError {
        let words: Vec<&str> = problems
            .iter()
            .map(|problem| problem.message.as_str())
            .collect();
        PlatformError::InvalidAt {
            path: "$.line_items".into(),
            message: if words.is_empty() {
                "no line item could be added".to_owned()
            } else {
                words.join("; ")
            },
        }
    }
}

#[async_trait]
impl CheckoutPort for ShopifyCheckout {
    async fn create_checkout(
        &self,
        draft: &CheckoutDraft,
    ) -> Result<CheckoutOutcome, PlatformError> {
        let (id, problems) = match &draft.source {
            CheckoutSource::Cart(id) => (id.clone(), Vec::new()),
            CheckoutSource::Lines(lines) => {
                let outcome = self
                    .carts
                    .create(&CartDraft {
                        lines: lines.clone(),
                        context: draft.context.clone(),
                        ..CartDraft::default()
                    })
                    .await?;
                if outcome.cart.id.is_empty() {
                    return Err(Self::nothing_bought(&outcome.problems));
                }
                (outcome.cart.id, outcome.problems)
            }
        };
        let missing = || PlatformError::InvalidAt {
            path: "$.cart_id".into(),
            message: format!("no cart {id}"),
        };
        let Some(cart) = self.open(&id).await? else {
            return Err(missing());
        };
        // Only a cart Shopify answered for, under the id (and key) it answered with.
        if let Some(orders) = &self.orders {
            orders.watch(&cart.id).await;
        }
        self.remember(&id, &draft.buyer).await;
        let checkout = if draft.buyer.email.is_some() || draft.buyer.phone_number.is_some() {
            self.set_buyer(&id, &draft.buyer).await?
        } else {
            self.get_checkout(&id).await?
        }
        .ok_or_else(missing)?;
        Ok(CheckoutOutcome { checkout, problems })
    }

    async fn get_checkout(&self, id: &str) -> Result<Option<CheckoutState>, PlatformError> {
        // Once paid for, the cart is Shopify's order: the checkout is what was ordered.
        if let Some(order) = self.placed(id).await {
            let names = self.names.get(id).await.unwrap_or_default();
            return Ok(Some(state::placed(id, &order, &names)));
        }
        let raw = self.read(id).await?;
        self.answer(raw).await
    }

    async fn set_lines(
        &self,
        id: &str,
        lines: &[CartLineInput],
    ) -> Result<Option<CheckoutOutcome>, PlatformError> {
        let draft = CartDraft {
            lines: lines.to_vec(),
            ..CartDraft::default()
        };
        let Some(outcome) = self.carts.replace(id, &draft).await? else {
            return Ok(None);
        };
        let Some(checkout) = self.get_checkout(id).await? else {
            return Ok(None);
        };
        Ok(Some(CheckoutOutcome {
            checkout,
            problems: outcome.problems,
        }))
    }

    async fn set_buyer(
        &self,
        id: &str,
        buyer: &Buyer,
    ) -> Result<Option<CheckoutState>, PlatformError> {
        // The buyer identity is written whole: the country Shopify prices the cart for is
        // sent back as it is, so naming the buyer never moves the cart to another market.
        let Some(current) = self.open(id).await? else {
            return Ok(None);
        };
        self.remember(id, buyer).await;
        let data = self
            .client
            .run::<CheckoutBuyerUpdate>(
                wire::checkout_buyer_update::Variables {
                    cart_id: id.to_owned(),
                    buyer_identity: wire::checkout_buyer_update::CartBuyerIdentityInput {
                        country_code: current
                            .country
                            .map(wire::checkout_buyer_update::CountryCode::Other),
                        email: text(&buyer.email),
                        phone: text(&buyer.phone_number),
                    },
                },
                CallKind::Write,
            )
            .await?;
        let raw = settle(data.into(), "cartBuyerIdentityUpdate", buyer_path)?;
        self.answer(raw).await
    }

    async fn set_destination(
        &self,
        id: &str,
        address: &Address,
    ) -> Result<Option<CheckoutState>, PlatformError> {
        use wire::checkout_address_replace::{
            CartAddressInput, CartDeliveryAddressInput, CartSelectableAddressInput, CountryCode,
            Variables,
        };
        if !is_cart_id(id) {
            return Ok(None);
        }
        // Shopify refuses the whole mutation over a country outside its enum.
        let country = match text(&address.address_country) {
            Some(given) => Some(market::country_code(&given).ok_or_else(|| {
                PlatformError::InvalidAt {
                    path: format!("{DESTINATION_PATH}.address_country"),
                    message: "not a country this store knows (ISO 3166-1 alpha-2, e.g. \"US\")"
                        .to_owned(),
                }
            })?),
            None => None,
        };
        let names = self.names.get(id).await.unwrap_or_default();
        let (address1, address2) = brazil::lines(address);
        let data = self
            .client
            .run::<CheckoutAddressReplace>(
                Variables {
                    cart_id: id.to_owned(),
                    addresses: vec![CartSelectableAddressInput {
                        address: CartAddressInput {
                            delivery_address: Some(CartDeliveryAddressInput {
                                address1,
                                address2,
                                city: text(&address.address_locality),
                                company: None,
                                country_code: country
                                    .map(|code| CountryCode::Other(code.to_owned())),
                                first_name: text(&address.first_name).or(names.first),
                                last_name: text(&address.last_name).or(names.last),
                                phone: text(&address.phone_number),
                                province_code: text(&address.address_region),
                                zip: text(&address.postal_code),
                            }),
                        },
                        // The address is this purchase's; it is not kept for the buyer.
                        one_time_use: Some(true),
                        selected: Some(true),
                    }],
                },
                CallKind::Write,
            )
            .await?;
        let raw = settle(data.into(), "cartDeliveryAddressesReplace", address_path)?;
        self.answer(raw).await
    }

    /// Checked against the options the checkout offers before anything is written: Shopify
    /// would also take a pickup handle the checkout does not offer, and the checkout would
    /// then hold a selection it cannot show.
    async fn select_option(
        &self,
        id: &str,
        group_id: &str,
        option_id: &str,
    ) -> Result<Option<CheckoutState>, PlatformError> {
        let Some(current) = self.open(id).await? else {
            return Ok(None);
        };
        let invalid = || PlatformError::InvalidAt {
            path: OPTION_PATH.into(),
            message: format!("{option_id} is not one of group {group_id}'s options"),
        };
        let offered = self
            .state(&current)
            .await?
            .fulfillment
            .iter()
            .flat_map(|method| &method.groups)
            .filter(|group| group.id == group_id)
            .any(|group| group.options.iter().any(|option| option.id == option_id));
        if !offered {
            return Err(invalid());
        }
        let data = self
            .client
            .run::<CheckoutOptionSelect>(
                wire::checkout_option_select::Variables {
                    cart_id: id.to_owned(),
                    selected: vec![
                        wire::checkout_option_select::CartSelectedDeliveryOptionInput {
                            delivery_group_id: group_id.to_owned(),
                            delivery_option_handle: option_id.to_owned(),
                        },
                    ],
                },
                CallKind::Write,
            )
            .await?;
        // INVALID_DELIVERY_GROUP / INVALID_DELIVERY_OPTION: the groups changed meanwhile.
        let raw = match settle(data.into(), "cartSelectedDeliveryOptionsUpdate", |_| {
            OPTION_PATH.to_owned()
        }) {
            Err(PlatformError::InvalidAt { .. }) => return Err(invalid()),
            other => other?,
        };
        self.answer(raw).await
    }

    async fn apply_code(&self, id: &str, code: &str) -> Result<Option<CodeOutcome>, PlatformError> {
        let Some(current) = self.open(id).await? else {
            return Ok(None);
        };
        if holds(&current.codes, code) {
            return Ok(Some(CodeOutcome {
                checkout: self.state(&current).await?,
                refused: Some(RefusedCode {
                    code: code.to_owned(),
                    refusal: CodeRefusal::AlreadyApplied,
                    reason: "This code is already applied".to_owned(),
                }),
            }));
        }
        let held: Vec<String> = current.codes.iter().map(|(held, _)| held.clone()).collect();
        let mut codes = held.clone();
        codes.push(code.to_owned());
        let Some((cart, warnings)) = self.write_codes(id, codes).await? else {
            return Ok(None);
        };
        let applied = cart
            .codes
            .iter()
            .any(|(held, applicable)| *applicable && held.eq_ignore_ascii_case(code));
        if applied {
            return Ok(Some(CodeOutcome {
                checkout: self.state(&cart).await?,
                refused: None,
            }));
        }
        // Shopify keeps a code it cannot apply; the port leaves a refused code's checkout as it
        // was, so the codes held before are written back.
        let refused = not_applied(code, &warnings);
        let Some((cart, _)) = self.write_codes(id, held).await? else {
            return Ok(None);
        };
        Ok(Some(CodeOutcome {
            checkout: self.state(&cart).await?,
            refused: Some(refused),
        }))
    }

    async fn remove_code(
        &self,
        id: &str,
        code: &str,
    ) -> Result<Option<CheckoutState>, PlatformError> {
        let Some(current) = self.open(id).await? else {
            return Ok(None);
        };
        if !holds(&current.codes, code) {
            return self.state(&current).await.map(Some);
        }
        let kept = current
            .codes
            .iter()
            .filter(|(held, _)| !held.eq_ignore_ascii_case(code))
            .map(|(held, _)| held.clone())
            .collect();
        let Some((cart, _)) = self.write_codes(id, kept).await? else {
            return Ok(None);
        };
        self.state(&cart).await.map(Some)
    }

    /// Shopify creates the order when the buyer pays on its page: nothing is placed here,
    /// and the checkout keeps escalating to the cart's `checkoutUrl`.
    async fn place(
        &self,
        id: &str,
        _handler_id: Option<&str>,
    ) -> Result<Option<Placement>, PlatformError> {
        if let Some(order) = self.placed(id).await {
            return Ok(Some(Placement::Placed(order)));
        }
        if let Some(orders) = &self.orders {
            // The order book takes the cart as Shopify names it, never as the agent did.
            let Some(cart) = self.open(id).await? else {
                return Ok(None);
            };
            orders.handed_off(&cart.id).await;
        }
        Ok(Some(Placement::HandedOff))
    }

    fn reads_orders(&self) -> bool {
        self.orders.is_some()
    }

    async fn order(&self, id: &str) -> Result<Option<Order>, PlatformError> {
        match &self.orders {
            Some(orders) => orders.by_id(id).await,
            None => Ok(None),
        }
    }

    fn order_feed(&self) -> Option<Arc<dyn OrderFeed>> {
        self.orders
            .clone()
            .map(|orders| orders as Arc<dyn OrderFeed>)
    }

    async fn cancel_checkout(&self, id: &str) -> Result<Option<CheckoutState>, PlatformError> {
        let Some(raw) = self.open(id).await? else {
            return Ok(None);
        };
        let before = self.state(&raw).await?;
        if self.carts.cancel(id).await?.is_none() {
            return Ok(None);
        }
        self.names.invalidate(id).await;
        Ok(Some(before))
    }
}
