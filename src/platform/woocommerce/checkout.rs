//! Checkout on the Store API, no admin keys. A checkout IS a Store API cart session (its id
//! wraps the `Cart-Token`, like a cart's): the buyer's address goes through
//! `cart/update-customer`, which answers the packages and their rates; an option is
//! `cart/select-shipping-rate`; codes are `cart/apply-coupon` / `remove-coupon`; complete is
//! `POST /checkout` with one of the offline gateways `[checkout] place_with` names (the order is
//! then placed, status as the gateway sets it). Without one, `pay_with` (a gateway that leaves
//! the order pending, as Pix plugins do) creates the order and the buyer pays on the store's
//! order-pay page. The order is read back with the order key and billing email the bridge
//! keeps in memory (`sessions`: bounded, for the order's life; a guest order needs both).

mod brazil;
pub(super) mod invoices;
mod refusals;
mod sessions;

use std::sync::Arc;

use async_trait::async_trait;
use iso_currency::Currency;
use reqwest::{Method, StatusCode};
use serde::Deserialize;
use serde_json::{Value, json};
use url::Url;

use self::brazil::{CheckoutFields, FieldsCache};
use self::invoices::Invoices;
use self::sessions::{MAX_BYTES, Placed, Session, Sessions};
use super::cart::{Carts, same_session};
use super::client::StoreApi;
use super::ids::{cart_id, cart_token};
use super::mapping;
use super::text::decode_entities;
use super::wire::{ErrorBody, StoreCart};
use crate::model::checkout::{
    Address, Buyer, CheckoutDraft, CheckoutSource, CheckoutState, CheckoutTotals, CodeOutcome,
    CodeRefusal, Destination, EscalationReason, FulfillmentGroup, FulfillmentMethod,
    FulfillmentOption, MethodKind, Order, OrderLine, PaymentHandler, Placement, RefusedCode, Stage,
};
use crate::model::{CartDraft, CartLineInput};
use crate::platform::cart::CartPort;
use crate::platform::checkout::{CheckoutOutcome, CheckoutPort, StoreField};
use crate::platform::port::PlatformError;

/// `[checkout]`, as WooCommerce reads it.
pub use crate::platform::checkout::CheckoutConfig;

#[derive(Debug, Deserialize, Default)]
#[serde(default)]
struct Rate {
    rate_id: String,
    name: String,
    description: String,
    price: String,
    method_id: String,
    selected: bool,
}

#[derive(Debug, Deserialize, Default)]
#[serde(default)]
struct Package {
    package_id: Value,
    shipping_rates: Vec<Rate>,
}

#[derive(Debug, Deserialize, Default)]
#[serde(default)]
struct Coupon {
    code: String,
    totals: CouponTotals,
}

#[derive(Debug, Deserialize, Default)]
#[serde(default)]
struct CouponTotals {
    total_discount: String,
}

#[derive(Debug, Deserialize, Default)]
#[serde(default)]
struct Totals {
    total_shipping: Option<String>,
    total_discount: String,
    total_price: String,
    total_tax: String,
    total_items: String,
    subtotal: String,
    currency_minor_unit: u32,
}

/// The parts of a cart (or an order) answer a checkout needs beyond `StoreCart`.
#[derive(Debug, Deserialize, Default)]
#[serde(default)]
struct Extra {
    shipping_rates: Vec<Package>,
    coupons: Vec<Coupon>,
    needs_shipping: bool,
    totals: Totals,
    status: String,
}

pub struct WooCheckout {
    api: Arc<StoreApi>,
    currency: Currency,
    base_url: Url,
    handlers: Vec<PaymentHandler>,
    pay_with: Option<String>,
    sessions: Sessions,
    /// The cart adapter: an open checkout is its cart, so its lines change as a cart's do.
    carts: Arc<Carts>,
    /// The store's extra checkout fields (CPF, house number…), read from its schema.
    fields: FieldsCache,
    /// Where orders' NF-e are read, when the merchant named the meta keys.
    invoices: Option<Invoices>,
    /// `[pix] store_gateway`: the gateway an order awaiting its Pix payment is placed with.
    unpaid_gateway: Option<String>,
    /// REST v3 with a write key: how an order awaiting its Pix payment is marked paid or
    /// cancelled (the Store API cannot).
    order_writes: Option<super::rest_v3::RestV3>,
}

fn upstream(what: &str, status: StatusCode, body: &Value) -> PlatformError {
    let error: ErrorBody = serde_json::from_value(body.clone()).unwrap_or_default();
    PlatformError::BadResponse(format!("{what}: HTTP {} {}", status.as_u16(), error.code))
}

fn woo_address(address: &Address, buyer: &Buyer) -> Value {
    let text = |value: &Option<String>| value.clone().unwrap_or_default();
    json!({
        "first_name": text(if address.first_name.is_some() { &address.first_name } else { &buyer.first_name }),
        "last_name": text(if address.last_name.is_some() { &address.last_name } else { &buyer.last_name }),
        // The street and complement alone: `shipping` puts the number and bairro in the
        // store's own fields, or joins them into these lines where it has none.
        "address_1": text(&address.street_address),
        "address_2": text(&address.extended_address),
        "city": text(&address.address_locality),
        "state": text(&address.address_region),
        "postcode": text(&address.postal_code),
        "country": text(&address.address_country),
        "phone": text(if address.phone_number.is_some() { &address.phone_number } else { &buyer.phone_number }),
    })
}

/// The shipping address with the store's own fields for the number and bairro filled.
fn shipping(fields: &CheckoutFields, address: &Address, buyer: &Buyer) -> Value {
    let mut value = woo_address(address, buyer);
    fields.fill_address(address, &mut value);
    value
}

fn billing(fields: &CheckoutFields, address: &Address, buyer: &Buyer) -> Value {
    let mut value = shipping(fields, address, buyer);
    value["email"] = json!(buyer.email.clone().unwrap_or_default());
    value
}

/// The buyer and address the store's cart holds (written by `cart/update-customer`, through
/// any replica), for a replica that did not receive them itself: the store, not one
/// replica's memory, is where they are shared. Blank fields are absent; an address without
/// street and country is none.
fn stored_customer(body: &Value, fields: &CheckoutFields) -> (Buyer, Option<Address>) {
    let field = |part: &str, name: &str| {
        body.get(part)
            .and_then(|part| part.get(name))
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|text| !text.is_empty())
            .map(decode_entities)
    };
    let buyer = Buyer {
        first_name: field("billing_address", "first_name"),
        last_name: field("billing_address", "last_name"),
        email: field("billing_address", "email"),
        phone_number: field("billing_address", "phone"),
        ..Buyer::default()
    };
    let address = Address {
        first_name: field("shipping_address", "first_name"),
        last_name: field("shipping_address", "last_name"),
        street_address: field("shipping_address", "address_1"),
        extended_address: field("shipping_address", "address_2"),
        address_locality: field("shipping_address", "city"),
        address_region: field("shipping_address", "state"),
        postal_code: field("shipping_address", "postcode"),
        address_country: field("shipping_address", "country"),
        phone_number: field("shipping_address", "phone"),
        ..Address::default()
    };
    let mut address = address;
    if let Some(held) = body.get("shipping_address") {
        fields.read_address(held, &mut address);
    }
    let given = address.street_address.is_some() && address.address_country.is_some();
    (buyer, given.then_some(address))
}

/// Whether the store's cart holds exactly what this replica last wrote for `address` and
/// `buyer` (then its own copy is echoed, as the agent spelled it).
fn holds(body: &Value, fields: &CheckoutFields, address: &Address, buyer: &Buyer) -> bool {
    // A plugin's fields (`namespace/key`, as Brazilian Market's `csbmw/number`) are echoed in
    // the cart's addresses like WooCommerce's own: all of them say whether it holds ours.
    let same = |part: &str, written: &Value| {
        written.as_object().is_some_and(|fields| {
            fields.iter().all(|(name, value)| {
                let held = body
                    .get(part)
                    .and_then(|part| part.get(name))
                    .and_then(Value::as_str)
                    .map(decode_entities)
                    .unwrap_or_default();
                value
                    .as_str()
                    .is_some_and(|value| value.trim() == held.trim())
            })
        })
    };
    same("shipping_address", &shipping(fields, address, buyer))
        && same("billing_address", &billing(fields, address, buyer))
}

/// The checkout's buyer and address: what the store's cart holds once an address was
/// written (by whichever replica wrote last), this replica's own copy when it is that one;
/// before any address, the buyer this replica was told.
fn customer(body: &Value, fields: &CheckoutFields, session: &Session) -> (Buyer, Option<Address>) {
    let (stored_buyer, stored_address) = stored_customer(body, fields);
    match (stored_address, &session.address) {
        (Some(_), Some(mine)) if holds(body, fields, mine, &session.buyer) => {
            (session.buyer.clone(), session.address.clone())
        }
        // The document never goes to the cart: it is the one this replica was given. The
        // house number and bairro are the store's own fields, as its address holds them.
        (Some(stored), _) => (
            Buyer {
                taxpayer_id: session.buyer.taxpayer_id.clone(),
                ..stored_buyer
            },
            Some(stored),
        ),
        (None, _) if session.buyer.is_empty() => (stored_buyer, session.address.clone()),
        (None, _) => (session.buyer.clone(), session.address.clone()),
    }
}

fn refusal(message: &str) -> CodeRefusal {
    if message.contains("expired") {
        CodeRefusal::Expired
    } else if message.contains("already applied") {
        CodeRefusal::AlreadyApplied
    } else if message.contains("individual use")
        || message.contains("cannot be used in conjunction")
    {
        CodeRefusal::CombinationDisallowed
    } else {
        CodeRefusal::Invalid
    }
}

impl WooCheckout {
    pub fn new(
        api: Arc<StoreApi>,
        currency: Currency,
        base_url: Url,
        config: &CheckoutConfig,
        carts: Arc<Carts>,
    ) -> Self {
        Self {
            carts,
            api,
            currency,
            base_url,
            handlers: config
                .place_with
                .iter()
                .map(|id| PaymentHandler {
                    id: id.clone(),
                    name: id.clone(),
                })
                .collect(),
            pay_with: config.pay_with.clone(),
            sessions: Sessions::new(MAX_BYTES),
            fields: FieldsCache::default(),
            invoices: None,
            unpaid_gateway: None,
            order_writes: None,
        }
    }

    /// Orders awaiting an outside payment (Pix) are placed with `gateway` and, through
    /// `writes` (REST v3, a read/write key), marked paid or cancelled. Without `writes` they
    /// are not taken, and `unpaid_refusal` says why.
    pub fn with_unpaid(
        mut self,
        gateway: Option<String>,
        writes: Option<super::rest_v3::RestV3>,
    ) -> Self {
        self.unpaid_gateway = gateway;
        self.order_writes = writes;
        self
    }

    /// The store's number of a bridge order id (`wc_order_<n>`).
    fn order_number(order_id: &str) -> Option<u64> {
        order_id.strip_prefix("wc_order_")?.parse().ok()
    }

    /// Placed orders' access shared through the replicas' Redis (`[redis]`).
    pub fn with_shared_orders(mut self, link: Option<Arc<crate::replicas::Link>>) -> Self {
        self.sessions = self.sessions.shared(link);
        self
    }

    /// Orders answer with their NF-e, read from these order meta keys.
    pub(super) fn with_invoices(mut self, invoices: Option<Invoices>) -> Self {
        self.invoices = invoices;
        self
    }

    fn page(&self, path: &str) -> Option<Url> {
        self.base_url.join(path).ok()
    }

    /// The cart answer as a checkout: lines and totals as the store computed them.
    fn state(
        &self,
        id: &str,
        body: &Value,
        session: &Session,
    ) -> Result<CheckoutState, PlatformError> {
        let cart: StoreCart = serde_json::from_value(body.clone())
            .map_err(|error| PlatformError::BadResponse(format!("cart: {error}")))?;
        let extra: Extra = serde_json::from_value(body.clone())
            .map_err(|error| PlatformError::BadResponse(format!("cart: {error}")))?;
        let token = cart_token(id).unwrap_or_default();
        let mut continue_url = self.page("checkout/");
        if let Some(url) = &mut continue_url {
            url.query_pairs_mut().append_pair("session", &token);
        }
        let base = mapping::cart(id.to_owned(), &cart, self.currency, None, None)?;
        let exponent = extra.totals.currency_minor_unit;
        let minor = |value: &str| mapping::minor(value, exponent, base.currency);
        let (buyer, address) = customer(body, &self.fields.current(), session);
        let line_ids: Vec<String> = base.lines.iter().map(|line| line.id.clone()).collect();
        let mut groups = Vec::new();
        for package in &extra.shipping_rates {
            let mut options = Vec::new();
            let mut selected = None;
            for rate in &package.shipping_rates {
                if rate.selected {
                    selected = Some(rate.rate_id.clone());
                }
                options.push(FulfillmentOption {
                    id: rate.rate_id.clone(),
                    title: decode_entities(&rate.name),
                    description: Some(decode_entities(&rate.description))
                        .filter(|text| !text.is_empty()),
                    carrier: None,
                    cost: minor(&rate.price)?,
                    earliest: None,
                    latest: None,
                });
            }
            groups.push(FulfillmentGroup {
                id: format!("package_{}", package.package_id),
                line_ids: line_ids.clone(),
                options,
                selected_option: selected,
            });
        }
        let fulfillment = match &address {
            Some(address) if extra.needs_shipping => vec![FulfillmentMethod {
                id: "shipping".to_owned(),
                kind: MethodKind::Shipping,
                line_ids,
                destinations: vec![Destination {
                    id: "address".to_owned(),
                    address: address.clone(),
                    name: None,
                }],
                selected_destination: Some("address".to_owned()),
                groups,
            }],
            _ => Vec::new(),
        };
        let codes: Vec<String> = extra
            .coupons
            .iter()
            .map(|coupon| coupon.code.clone())
            .collect();
        let discounts = extra
            .coupons
            .iter()
            .map(|coupon| {
                Ok(crate::model::checkout::AppliedDiscount {
                    code: Some(coupon.code.clone()),
                    title: coupon.code.clone(),
                    amount: minor(&coupon.totals.total_discount)?,
                    allocations: Vec::new(),
                })
            })
            .collect::<Result<Vec<_>, PlatformError>>()?;
        let totals = CheckoutTotals {
            subtotal: minor(&extra.totals.total_items)?,
            discount: minor(&extra.totals.total_discount)?,
            fulfillment: match (&extra.totals.total_shipping, &address) {
                (Some(shipping), Some(_)) => Some(minor(shipping)?),
                _ => None,
            },
            tax: Some(minor(&extra.totals.total_tax)?),
            total: minor(&extra.totals.total_price)?,
        };
        let escalation = self
            .handlers
            .is_empty()
            .then_some(EscalationReason::Payment);
        Ok(CheckoutState {
            id: id.to_owned(),
            lines: base.lines,
            currency: base.currency,
            buyer,
            needs_email: true,
            address,
            needs_fulfillment: extra.needs_shipping,
            fulfillment,
            codes,
            discounts,
            refused_codes: Vec::new(),
            totals,
            handlers: self.handlers.clone(),
            escalation,
            continue_url: continue_url.map(String::from),
            stage: Stage::Open,
            expires_at: None,
            requirements: self.fields.current().requirements(),
        })
    }

    /// A placed checkout: the cart session is empty now, the order holds what was bought.
    fn placed_state(&self, id: &str, session: &Session, placed: &Placed) -> CheckoutState {
        let order = &placed.order;
        CheckoutState {
            id: id.to_owned(),
            lines: placed.lines.clone(),
            currency: order.currency,
            buyer: session.buyer.clone(),
            needs_email: true,
            address: session.address.clone(),
            needs_fulfillment: false,
            fulfillment: Vec::new(),
            codes: order.codes.clone(),
            discounts: Vec::new(),
            refused_codes: Vec::new(),
            totals: order.totals,
            handlers: self.handlers.clone(),
            escalation: placed.pay_url.as_ref().map(|_| EscalationReason::Payment),
            continue_url: placed.pay_url.clone(),
            stage: Stage::Placed(order.reference()),
            expires_at: None,
            requirements: Vec::new(),
        }
    }

    /// One call on the checkout's session; `None` when the store does not know the session
    /// (it refused the token, or answered for a new session of its own: a forged or expired
    /// token). Only after `Some` may the bridge keep anything under `id`.
    async fn call(
        &self,
        id: &str,
        method: Method,
        path: &[&str],
        body: Option<&Value>,
    ) -> Result<Option<(StatusCode, Value)>, PlatformError> {
        let Some(token) = cart_token(id) else {
            return Ok(None);
        };
        // The schema is read beside the call (when stale), not in a round of its own.
        let (_, answer) = tokio::join!(
            self.fields.refresh(&self.api),
            self.api.session(method, path, &[], Some(&token), body)
        );
        let (status, value, answered) = answer?;
        if status == StatusCode::UNAUTHORIZED
            || status == StatusCode::FORBIDDEN
            || !same_session(&token, answered.as_deref())
        {
            return Ok(None);
        }
        Ok(Some((status, value)))
    }

    /// `POST /checkout` on a session `place` has just read: whatever token the answer
    /// carries, an order it reports was placed and must be kept.
    async fn submit(
        &self,
        id: &str,
        body: &Value,
    ) -> Result<Option<(StatusCode, Value)>, PlatformError> {
        let Some(token) = cart_token(id) else {
            return Ok(None);
        };
        let (status, value, _) = self
            .api
            .session(Method::POST, &["checkout"], &[], Some(&token), Some(body))
            .await?;
        if status == StatusCode::UNAUTHORIZED || status == StatusCode::FORBIDDEN {
            return Ok(None);
        }
        Ok(Some((status, value)))
    }

    /// The buyer and address written to the store's cart, then kept once the store took them.
    async fn write_customer(
        &self,
        id: &str,
        address: &Address,
        buyer: &Buyer,
    ) -> Result<Option<CheckoutState>, PlatformError> {
        // The body names the store's own fields: they must be known before it is built.
        let fields = self.fields.refresh(&self.api).await;
        let body = json!({
            "shipping_address": shipping(&fields, address, buyer),
            "billing_address": billing(&fields, address, buyer),
        });
        let path = ["cart", "update-customer"];
        let Some((status, value)) = self.call(id, Method::POST, &path, Some(&body)).await? else {
            return Ok(None);
        };
        if !status.is_success() {
            return Err(upstream(&path.join("/"), status, &value));
        }
        let session = self
            .sessions
            .update(id, |session| {
                session.buyer = buyer.clone();
                session.address = Some(address.clone());
            })
            .await;
        self.state(id, &value, &session).map(Some)
    }

    async fn write(
        &self,
        id: &str,
        path: &[&str],
        body: Value,
    ) -> Result<Option<CheckoutState>, PlatformError> {
        let Some((status, value)) = self.call(id, Method::POST, path, Some(&body)).await? else {
            return Ok(None);
        };
        if !status.is_success() {
            return Err(upstream(&path.join("/"), status, &value));
        }
        self.state(id, &value, &self.sessions.get(id).await)
            .map(Some)
    }

    /// The store's cart behind an open checkout. A cancelled checkout is an emptied cart the
    /// bridge forgot, as a cancelled cart is (cart.rs), and one never made holds nothing
    /// either: both are not found, rather than an empty open checkout.
    async fn open_cart(&self, id: &str) -> Result<Option<Value>, PlatformError> {
        let Some((status, value)) = self.call(id, Method::GET, &["cart"], None).await? else {
            return Ok(None);
        };
        if !status.is_success() {
            return Err(upstream("cart", status, &value));
        }
        let empty = value
            .get("items")
            .and_then(Value::as_array)
            .is_none_or(Vec::is_empty);
        if empty && !self.sessions.contains(id) {
            return Ok(None);
        }
        Ok(Some(value))
    }

    fn order_of(&self, id: &str, body: &Value, key: &str) -> Result<Order, PlatformError> {
        let cart: StoreCart = serde_json::from_value(body.clone())
            .map_err(|error| PlatformError::BadResponse(format!("order: {error}")))?;
        let extra: Extra = serde_json::from_value(body.clone())
            .map_err(|error| PlatformError::BadResponse(format!("order: {error}")))?;
        let order_id = body.get("id").and_then(Value::as_u64).unwrap_or_default();
        let base = mapping::cart(id.to_owned(), &cart, self.currency, None, None)?;
        let exponent = extra.totals.currency_minor_unit;
        let minor = |value: &str| mapping::minor(value, exponent, base.currency);
        let items = body
            .get("items")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let mut permalink = self
            .page(&format!("checkout/order-received/{order_id}/"))
            .ok_or_else(|| PlatformError::BadResponse("order: no store URL".into()))?;
        permalink.query_pairs_mut().append_pair("key", key);
        Ok(Order {
            id: format!("wc_order_{order_id}"),
            checkout_id: id.to_owned(),
            label: Some(format!("#{order_id}")),
            permalink_url: permalink.into(),
            paid: matches!(
                extra.status.as_str(),
                "processing" | "completed" | "on-hold"
            ),
            store_status: extra.status.clone(),
            lines: base
                .lines
                .iter()
                .zip(items.iter().chain(std::iter::repeat(&Value::Null)))
                .map(|(line, item)| OrderLine {
                    // Every item of an order read carries the order key as its `key`; its
                    // `id` is the order item's own.
                    id: item
                        .get("id")
                        .and_then(Value::as_u64)
                        .map_or_else(|| line.id.clone(), |item| item.to_string()),
                    variant_id: None,
                    sku: item.get("sku").and_then(Value::as_str).map(str::to_owned),
                    title: line.title.clone(),
                    quantity: line.quantity,
                    // WooCommerce tracks no shipping per item: the order's status says it.
                    active: match extra.status.as_str() {
                        "cancelled" | "refunded" | "failed" => 0,
                        _ => line.quantity,
                    },
                    fulfilled: if extra.status == "completed" {
                        line.quantity
                    } else {
                        0
                    },
                    unit_price: line.unit_price,
                    total: line.total,
                })
                .collect(),
            currency: base.currency,
            totals: CheckoutTotals {
                subtotal: minor(&extra.totals.subtotal)?,
                discount: minor(&extra.totals.total_discount)?,
                fulfillment: extra
                    .totals
                    .total_shipping
                    .as_deref()
                    .map(&minor)
                    .transpose()?,
                tax: Some(minor(&extra.totals.total_tax)?),
                total: minor(&extra.totals.total_price)?,
            },
            shipping_address: None,
            fulfillment_title: None,
            codes: extra
                .coupons
                .iter()
                .map(|coupon| coupon.code.clone())
                .collect(),
            placed_at: None,
            nfe: None,
        })
    }

    async fn read_order(
        &self,
        checkout: &str,
        order_id: u64,
        key: &str,
        email: &str,
    ) -> Result<Option<Value>, PlatformError> {
        let query = [("key", key.to_owned()), ("billing_email", email.to_owned())];
        let id = order_id.to_string();
        let (status, value, _) = self
            .api
            .session(
                Method::GET,
                &["order", &id],
                &query,
                cart_token(checkout).as_deref(),
                None,
            )
            .await?;
        match status {
            StatusCode::OK => Ok(Some(value)),
            StatusCode::NOT_FOUND | StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => Ok(None),
            _ => Err(upstream("order", status, &value)),
        }
    }
}

#[async_trait]
impl CheckoutPort for WooCheckout {
    fn handlers(&self) -> &[PaymentHandler] {
        &self.handlers
    }

    fn reads_orders(&self) -> bool {
        true
    }

    fn reads_invoices(&self) -> bool {
        self.invoices.is_some()
    }

    async fn checkout_fields(&self) -> Result<Vec<StoreField>, PlatformError> {
        self.fields.invalidate();
        let fields = self.fields.refresh(&self.api).await;
        Ok(fields
            .all()
            .map(|field| StoreField {
                key: field.key.clone(),
                label: field.label.clone(),
                required: field.required,
                filled_from: brazil::filled_from(&field.key),
            })
            .collect())
    }

    async fn create_checkout(
        &self,
        draft: &CheckoutDraft,
    ) -> Result<CheckoutOutcome, PlatformError> {
        let (token, problems) = match &draft.source {
            CheckoutSource::Cart(id) => (
                cart_token(id).ok_or_else(|| PlatformError::InvalidAt {
                    path: "$.cart_id".into(),
                    message: format!("no cart {id}"),
                })?,
                Vec::new(),
            ),
            CheckoutSource::Lines(lines) => {
                let (_, token) = self.api.cart(None).await?;
                let id = cart_id(&token);
                let mut problems = Vec::new();
                for line in lines {
                    let Some(product) = super::ids::WooId::parse(&line.item_id) else {
                        problems.push(crate::model::LineProblem {
                            item_id: line.item_id.clone(),
                            kind: crate::model::LineProblemKind::NotFound,
                            message: format!("Item not found: {}", line.item_id),
                        });
                        continue;
                    };
                    let body = json!({"id": product.0, "quantity": line.quantity});
                    if let Some((status, value)) = self
                        .call(&id, Method::POST, &["cart", "add-item"], Some(&body))
                        .await?
                        && !status.is_success()
                    {
                        let error: ErrorBody = serde_json::from_value(value).unwrap_or_default();
                        problems.push(crate::model::LineProblem {
                            item_id: line.item_id.clone(),
                            kind: crate::model::LineProblemKind::Invalid,
                            message: decode_entities(&error.message),
                        });
                    }
                }
                (token, problems)
            }
        };
        let id = cart_id(&token);
        // The session is kept only once the store answered for this very cart.
        let Some((status, value)) = self.call(&id, Method::GET, &["cart"], None).await? else {
            return Err(match &draft.source {
                CheckoutSource::Cart(cart) => PlatformError::InvalidAt {
                    path: "$.cart_id".into(),
                    message: format!("no cart {cart}"),
                },
                CheckoutSource::Lines(_) => {
                    PlatformError::BadResponse("the new cart session vanished".into())
                }
            });
        };
        if !status.is_success() {
            return Err(upstream("cart", status, &value));
        }
        let session = self
            .sessions
            .update(&id, |session| {
                *session = Session {
                    buyer: draft.buyer.clone(),
                    ..Session::default()
                };
            })
            .await;
        let checkout = self.state(&id, &value, &session)?;
        Ok(CheckoutOutcome { checkout, problems })
    }

    async fn get_checkout(&self, id: &str) -> Result<Option<CheckoutState>, PlatformError> {
        let session = self.sessions.get(id).await;
        if let Some(placed) = &session.placed {
            return Ok(Some(self.placed_state(id, &session, placed)));
        }
        let Some(value) = self.open_cart(id).await? else {
            return Ok(None);
        };
        self.state(id, &value, &session).map(Some)
    }

    /// The cart behind the checkout gets exactly these lines, as a cart replacement does (one
    /// batch), and the checkout is read back as the store then holds it. Emptying the store's
    /// cart drops its coupons and chosen rates: the brain puts back the ones the update keeps.
    async fn set_lines(
        &self,
        id: &str,
        lines: &[CartLineInput],
    ) -> Result<Option<CheckoutOutcome>, PlatformError> {
        // An emptied Store API cart reads as canceled (cart.rs), on every replica and after a
        // restart: a checkout is ended with cancel, not by removing its last line.
        if lines.is_empty() {
            return Err(PlatformError::InvalidAt {
                path: "$.line_items".into(),
                message: "a checkout keeps at least one line; cancel it to end it".into(),
            });
        }
        // A placed checkout's cart is empty, and replacing an empty cart writes nothing
        // (`Carts::replace`): it is not found.
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
        let session = self.sessions.get(id).await;
        // Replicas share a checkout through the store's cart: the address to write the buyer
        // with is the one the cart holds, which another replica may have changed.
        if !self.sessions.is_shared()
            && let Some(address) = &session.address
        {
            return self.write_customer(id, address, buyer).await;
        }
        // Naming a buyer does not bring a cancelled checkout back.
        let Some(value) = self.open_cart(id).await? else {
            return Ok(None);
        };
        if let (_, Some(address)) = customer(&value, &self.fields.current(), &session) {
            return self.write_customer(id, &address, buyer).await;
        }
        let session = self
            .sessions
            .update(id, |session| session.buyer = buyer.clone())
            .await;
        self.state(id, &value, &session).map(Some)
    }

    async fn set_destination(
        &self,
        id: &str,
        address: &Address,
    ) -> Result<Option<CheckoutState>, PlatformError> {
        let mut buyer = self.sessions.get(id).await.buyer;
        if buyer.is_empty() || self.sessions.is_shared() {
            // Named through another replica: kept in the store's cart, not here.
            let Some(current) = self.get_checkout(id).await? else {
                return Ok(None);
            };
            buyer = current.buyer;
        }
        self.write_customer(id, address, &buyer).await
    }

    async fn select_option(
        &self,
        id: &str,
        group_id: &str,
        option_id: &str,
    ) -> Result<Option<CheckoutState>, PlatformError> {
        let package = group_id
            .strip_prefix("package_")
            .and_then(|number| number.parse::<u64>().ok())
            .ok_or_else(|| PlatformError::InvalidAt {
                path: "$.fulfillment.methods[0].groups".into(),
                message: format!("no fulfillment group {group_id}"),
            })?;
        // The store answers 200 for a rate id it never offered (and selects nothing): the
        // option is checked against what it offered first.
        let Some(current) = self.get_checkout(id).await? else {
            return Ok(None);
        };
        let offered = current
            .fulfillment
            .iter()
            .flat_map(|method| &method.groups)
            .filter(|group| group.id == group_id)
            .any(|group| group.options.iter().any(|option| option.id == option_id));
        if !offered {
            return Err(PlatformError::InvalidAt {
                path: "$.fulfillment.methods[0].groups[0].selected_option_id".into(),
                message: format!("{option_id} is not one of group {group_id}'s options"),
            });
        }
        let Some((status, value)) = self
            .call(
                id,
                Method::POST,
                &["cart", "select-shipping-rate"],
                Some(&json!({"package_id": package, "rate_id": option_id})),
            )
            .await?
        else {
            return Ok(None);
        };
        if status == StatusCode::BAD_REQUEST {
            return Err(PlatformError::InvalidAt {
                path: "$.fulfillment.methods[0].groups[0].selected_option_id".into(),
                message: format!("{option_id} is not one of this group's options"),
            });
        }
        if !status.is_success() {
            return Err(upstream("select-shipping-rate", status, &value));
        }
        self.state(id, &value, &self.sessions.get(id).await)
            .map(Some)
    }

    async fn apply_code(&self, id: &str, code: &str) -> Result<Option<CodeOutcome>, PlatformError> {
        let Some((status, value)) = self
            .call(
                id,
                Method::POST,
                &["cart", "apply-coupon"],
                Some(&json!({"code": code})),
            )
            .await?
        else {
            return Ok(None);
        };
        if status.is_success() {
            let checkout = self.state(id, &value, &self.sessions.get(id).await)?;
            return Ok(Some(CodeOutcome {
                checkout,
                refused: None,
            }));
        }
        let error: ErrorBody = serde_json::from_value(value.clone()).unwrap_or_default();
        if status != StatusCode::BAD_REQUEST || error.code != "woocommerce_rest_cart_coupon_error" {
            return Err(upstream("apply-coupon", status, &value));
        }
        let reason = decode_entities(&error.message);
        let Some(checkout) = self.get_checkout(id).await? else {
            return Ok(None);
        };
        Ok(Some(CodeOutcome {
            checkout,
            refused: Some(RefusedCode {
                code: code.to_owned(),
                refusal: refusal(&reason),
                reason,
            }),
        }))
    }

    async fn remove_code(
        &self,
        id: &str,
        code: &str,
    ) -> Result<Option<CheckoutState>, PlatformError> {
        self.write(
            id,
            &["cart", "remove-coupon"],
            json!({"code": code.to_lowercase()}),
        )
        .await
    }

    async fn place(
        &self,
        id: &str,
        handler_id: Option<&str>,
    ) -> Result<Option<Placement>, PlatformError> {
        let session = self.sessions.get(id).await;
        // A placed checkout is never placed again, whatever the brain's ledger still holds.
        if session.placed.is_some() {
            return Err(PlatformError::InvalidAt {
                path: "$.id".into(),
                message: "the checkout already placed its order".into(),
            });
        }
        let gateway = match handler_id {
            Some(handler) => handler.to_owned(),
            None => self.pay_with.clone().ok_or(PlatformError::Unsupported(
                "placing an order the buyer pays on the store's page ([checkout] pay_with)",
            ))?,
        };
        // The lines as they are placed, under the ids the checkout gave them: once placed the
        // cart is empty and the order read names its items by SKU only.
        let Some(value) = self.open_cart(id).await? else {
            return Ok(None);
        };
        let before = self.state(id, &value, &session)?;
        // The store's cart holds the latest buyer and address whichever replica wrote them;
        // this replica's memory may be older. The document never goes to the cart, so it is
        // the one this replica was given.
        let mut buyer = before.buyer.clone();
        if buyer.taxpayer_id.is_none() {
            buyer.taxpayer_id = session.buyer.taxpayer_id.clone();
        }
        let address = before.address.clone().unwrap_or_default();
        let email = buyer.email.clone().unwrap_or_default();
        let fields = self.fields.refresh(&self.api).await;
        let mut body = json!({
            "billing_address": billing(&fields, &address, &buyer),
            "shipping_address": shipping(&fields, &address, &buyer),
            "payment_method": gateway,
        });
        let additional = fields.additional(&buyer);
        if !additional.is_empty() {
            body["additional_fields"] = Value::Object(additional);
        }
        let Some((status, value)) = self.submit(id, &body).await? else {
            return Ok(None);
        };
        if status == StatusCode::BAD_REQUEST {
            let error: ErrorBody = serde_json::from_value(value.clone()).unwrap_or_default();
            if error.code == "woocommerce_rest_checkout_process_payment_error" {
                return Ok(Some(Placement::Declined {
                    reason: decode_entities(&error.message),
                }));
            }
            // A field the store wants: its schema may have changed since it was read.
            if let Some(unmet) = refusals::unmet(&value, &fields) {
                self.fields.invalidate();
                return Ok(Some(Placement::Refused { unmet }));
            }
            return Err(PlatformError::InvalidInput(decode_entities(&error.message)));
        }
        if !status.is_success() {
            return Err(upstream("checkout", status, &value));
        }
        let order_id = value
            .get("order_id")
            .and_then(Value::as_u64)
            .ok_or_else(|| PlatformError::BadResponse("checkout: no order_id".into()))?;
        let key = value
            .get("order_key")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let redirect = value
            .pointer("/payment_result/redirect_url")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let read = self
            .read_order(id, order_id, &key, &email)
            .await?
            .ok_or_else(|| {
                PlatformError::BadResponse("the placed order cannot be read back".into())
            })?;
        let order = self.order_of(id, &read, &key)?;
        let pending = order.store_status == "pending";
        let pay_url = pending
            .then(|| {
                redirect
                    .filter(|url| url.contains("order-pay"))
                    .or_else(|| {
                        let mut url = self.page(&format!("checkout/order-pay/{order_id}/"))?;
                        url.query_pairs_mut()
                            .append_pair("pay_for_order", "true")
                            .append_pair("key", &key);
                        Some(url.into())
                    })
            })
            .flatten();
        let placed = Placed {
            order: order.clone(),
            lines: before.lines,
            key,
            email,
            pay_url: pay_url.clone(),
        };
        self.sessions
            .update(id, |session| session.placed = Some(placed))
            .await;
        Ok(Some(match pay_url {
            Some(url) => Placement::Escalated {
                order,
                url,
                reason: EscalationReason::Payment,
            },
            None => Placement::Placed(order),
        }))
    }

    fn takes_unpaid(&self) -> bool {
        self.unpaid_gateway.is_some() && self.order_writes.is_some()
    }

    fn unpaid_refusal(&self) -> Option<String> {
        (self.unpaid_gateway.is_some() && self.order_writes.is_none()).then(|| {
            "store.consumer_key / store.consumer_secret: Pix needs a REST API v3 key with read/write permission to mark orders paid and cancel expired ones; without it the Pix handler is not offered".to_owned()
        })
    }

    async fn check_unpaid_writes(&self) -> Result<String, PlatformError> {
        let writes = self
            .order_writes
            .as_ref()
            .ok_or(PlatformError::Unauthorized {
                key: "store.consumer_key",
            })?;
        writes.can_write_orders().await.map_err(|error| match error {
            PlatformError::Unauthorized { .. } => PlatformError::InvalidAt {
                path: "store.consumer_key".into(),
                message: "the REST API v3 key may not write orders: Pix needs a key with Read/Write permission to mark orders paid and cancel expired ones".into(),
            },
            other => other,
        })?;
        Ok(format!(
            "the REST API v3 key may write orders; unpaid orders are placed with {}",
            self.unpaid_gateway.as_deref().unwrap_or_default()
        ))
    }

    async fn place_unpaid(&self, id: &str) -> Result<Option<Placement>, PlatformError> {
        let gateway = self
            .unpaid_gateway
            .clone()
            .filter(|_| self.order_writes.is_some())
            .ok_or(PlatformError::Unsupported(
                "orders awaiting a Pix payment ([pix] store_gateway and a REST v3 write key)",
            ))?;
        Ok(self
            .place(id, Some(&gateway))
            .await?
            .map(|placed| match placed {
                // The gateway leaves it on-hold or pending: either way it awaits the Pix payment,
                // and the buyer pays it in the conversation, not on the store's page.
                Placement::Placed(mut order) | Placement::Escalated { mut order, .. } => {
                    order.paid = false;
                    Placement::Placed(order)
                }
                other => other,
            }))
    }

    async fn mark_paid(
        &self,
        order_id: &str,
        reference: &str,
    ) -> Result<Option<Order>, PlatformError> {
        let (Some(writes), Some(number)) = (&self.order_writes, Self::order_number(order_id))
        else {
            return Ok(None);
        };
        let Some(order) = self.order(order_id).await? else {
            return Ok(None);
        };
        if !matches!(order.store_status.as_str(), "processing" | "completed") {
            if !matches!(order.store_status.as_str(), "on-hold" | "pending") {
                return Err(PlatformError::InvalidAt {
                    path: "$.id".into(),
                    message: format!("the order is {}, not awaiting payment", order.store_status),
                });
            }
            // Not `set_paid`: WooCommerce completes a payment only for an order that "needs
            // payment" (pending or failed), so on the on-hold order an offline gateway leaves it
            // answers 200 and changes nothing but the transaction id (measured on 10.9.4).
            // Setting the status is what the merchant does by hand: WooCommerce records the
            // paid date, keeps the stock already reduced and notes the change.
            let now = writes
                .update_order(
                    number,
                    &json!({"status": "processing", "transaction_id": reference}),
                )
                .await?;
            if !matches!(now.as_str(), "processing" | "completed") {
                return Err(PlatformError::BadResponse(format!(
                    "REST v3 order update left the order {now}, not paid"
                )));
            }
        }
        self.order(order_id).await
    }

    async fn cancel_unpaid(&self, order_id: &str) -> Result<Option<Order>, PlatformError> {
        let (Some(writes), Some(number)) = (&self.order_writes, Self::order_number(order_id))
        else {
            return Ok(None);
        };
        let Some(mut order) = self.order(order_id).await? else {
            return Ok(None);
        };
        match order.store_status.as_str() {
            "cancelled" => {}
            "on-hold" | "pending" | "failed" => {
                // WooCommerce puts the stock back when an order it reduced stock for is
                // cancelled.
                order.store_status = writes
                    .update_order(number, &json!({"status": "cancelled"}))
                    .await?;
                if order.store_status != "cancelled" {
                    return Err(PlatformError::BadResponse(format!(
                        "REST v3 order update left the order {}, not cancelled",
                        order.store_status
                    )));
                }
            }
            _ => {
                return Err(PlatformError::InvalidAt {
                    path: "$.id".into(),
                    message: "a paid order is not cancelled".into(),
                });
            }
        }
        order.paid = false;
        Ok(Some(order))
    }

    async fn cancel_checkout(&self, id: &str) -> Result<Option<CheckoutState>, PlatformError> {
        let Some(before) = self.get_checkout(id).await? else {
            return Ok(None);
        };
        let Some((status, value)) = self
            .call(id, Method::DELETE, &["cart", "items"], None)
            .await?
        else {
            return Ok(None);
        };
        if !status.is_success() {
            return Err(upstream("cart/items", status, &value));
        }
        self.sessions.forget(id).await;
        Ok(Some(before))
    }

    async fn order(&self, id: &str) -> Result<Option<Order>, PlatformError> {
        let Some(access) = self.sessions.access(id).await? else {
            return Ok(None);
        };
        let number = id
            .trim_start_matches("wc_order_")
            .parse::<u64>()
            .unwrap_or_default();
        let Some(value) = self
            .read_order(&access.checkout, number, &access.key, &access.email)
            .await?
        else {
            return Ok(None);
        };
        let mut order = self.order_of(&access.checkout, &value, &access.key)?;
        if let Some(invoices) = &self.invoices {
            order.nfe = invoices.nfe(number).await;
        }
        Ok(Some(order))
    }
}
