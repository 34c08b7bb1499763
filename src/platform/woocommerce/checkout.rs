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
mod orders;
mod refusals;
mod sessions;
mod state;

use std::sync::Arc;

use async_trait::async_trait;
use iso_currency::Currency;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use url::Url;

use self::brazil::{CheckoutFields, FieldsCache};
use self::invoices::Invoices;
use self::sessions::{MAX_BYTES, Placed, Session, Sessions};
use super::cart::{Carts, same_session};
use super::client::StoreApi;
use super::ids::{cart_id, cart_token};
use super::text::decode_entities;
use super::wire::ErrorBody;
use crate::model::checkout::{
    Address, Buyer, CheckoutDraft, CheckoutSource, CheckoutState, CodeOutcome, EscalationReason,
    Order, PaymentHandler, Placement, RefusedCode,
};
use crate::model::{CartDraft, CartLineInput};
use crate::platform::cart::CartPort;
use crate::platform::checkout::{CheckoutOutcome, CheckoutPort, StoreField};
use crate::platform::port::PlatformError;

/// `[checkout]`, as WooCommerce reads it.
pub use crate::platform::checkout::CheckoutConfig;

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
        if let (_, Some(address)) = self.buyer_and_address(&value, &session) {
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
                refusal: refusals::code_refusal(&reason),
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
