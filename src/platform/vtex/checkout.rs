//! Checkout over the same orderForm the cart is: the checkout id IS the orderFormId (as a
//! WooCommerce checkout id is its cart's), so converting a cart checks that orderForm out and
//! nothing is copied. The buyer goes in `attachments/clientProfileData`, the address in
//! `attachments/shippingData` (the answer carries each item's SLAs), an option is
//! `shippingData.logisticsInfo[].selectedSla` for the group's items, codes are `coupons`.
//! Every number is the orderForm's own.
//!
//! VTEX takes payment only on its own checkout page, and the public API has no way to place
//! an order without a payment: complete hands the buyer to that page's payment step for this
//! orderForm and places nothing. The order comes to exist when the buyer pays there.

mod address;
mod brazil;
mod invoices;
mod orders;
mod state;

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use moka::future::Cache;
use reqwest::Method;
use serde_json::{Value, json};
use url::Url;

use self::orders::Placements;
use self::state::{Kept, PICKUP_CHANNEL, channel, info_of};
use super::cart::Carts;
use super::client::VtexApi;
use super::wire::OrderForm;
use crate::model::CartLineInput;
use crate::model::checkout::MethodKind;
use crate::model::checkout::{
    Address, Buyer, CheckoutDraft, CheckoutSource, CheckoutState, CodeOutcome, CodeRefusal, Order,
    Placement, RefusedCode,
};
use crate::platform::checkout::{CheckoutOutcome, CheckoutPort, StoreField};
use crate::platform::port::PlatformError;

/// The buyers and addresses kept, one per checkout, for as long as the cart's ownership
/// cookie is kept; past it they are read back from the orderForm.
const MAX_CHECKOUTS: u64 = 200_000;

/// `messages[].code`s the coupon route answers a refused code with, in the spec's words.
fn refusal(code: &str) -> CodeRefusal {
    match code {
        "couponExpired" => CodeRefusal::Expired,
        "couponNotApplicable" | "couponNotEligible" => CodeRefusal::Ineligible,
        _ => CodeRefusal::Invalid,
    }
}

pub struct VtexCheckout {
    carts: Arc<Carts>,
    kept: Cache<String, Arc<Kept>>,
    /// The Orders API and the store's postal-code route.
    api: Arc<VtexApi>,
    /// Where a buyer sees their orders on the store.
    storefront: Url,
    /// App keys are configured: the Orders API (and its invoices) can be read.
    keyed: bool,
    /// The orders buyers placed on the store's page (read only when `keyed`).
    placements: Placements,
}

fn held(codes: &[String], code: &str) -> bool {
    codes.iter().any(|held| held.eq_ignore_ascii_case(code))
}

impl VtexCheckout {
    pub fn new(
        carts: Arc<Carts>,
        ttl: Duration,
        api: Arc<VtexApi>,
        storefront: Url,
        keyed: bool,
    ) -> Self {
        Self {
            carts,
            kept: Cache::builder()
                .max_capacity(MAX_CHECKOUTS)
                .time_to_idle(ttl)
                .build(),
            placements: Placements::new(api.clone()),
            api,
            storefront,
            keyed,
        }
    }

    fn permalink(&self, order_id: &str) -> String {
        let mut permalink = self.storefront.clone();
        permalink.set_path("/account");
        permalink.set_fragment(Some(&format!("/orders/{order_id}")));
        permalink.to_string()
    }

    /// The checkout as its placed order, once the buyer handed off by complete paid on the
    /// store's page (Orders API, app key); `None` while there is no such order.
    async fn placed(
        &self,
        id: &str,
        form: Option<&OrderForm>,
    ) -> Result<Option<CheckoutState>, PlatformError> {
        let kept = self.kept(id).await;
        if !self.keyed || !kept.handed_off {
            return Ok(None);
        }
        let open = match form {
            Some(form) => Some(self.state(form).await?),
            None => None,
        };
        let email = open
            .as_ref()
            .and_then(|state| state.buyer.email.clone())
            .or_else(|| kept.buyer.as_ref().and_then(|buyer| buyer.email.clone()));
        let Some(raw) = self.placements.order_of(id, email.as_deref()).await? else {
            return Ok(None);
        };
        let order = invoices::order(&raw, self.carts.currency(), self.permalink(raw.id()))?;
        let buyer = match (&open, &kept.buyer) {
            (Some(_), _) => None,
            (None, Some(buyer)) => Some(buyer.clone()),
            (None, None) => Some(raw.buyer()),
        };
        Ok(Some(orders::state(id, &order, open, buyer)))
    }

    async fn kept(&self, id: &str) -> Arc<Kept> {
        self.kept.get(id).await.unwrap_or_default()
    }

    async fn keep(&self, id: &str, change: impl FnOnce(&mut Kept)) {
        let mut kept = (*self.kept(id).await).clone();
        change(&mut kept);
        self.kept.insert(id.to_owned(), Arc::new(kept)).await;
    }

    /// The store's checkout page at the payment step for this orderForm; VTEX's checkout
    /// opens the first step still missing data instead when there is one.
    fn payment_url(&self, id: &str) -> Option<String> {
        self.carts.checkout_step(id, "/payment")
    }

    async fn state(&self, form: &OrderForm) -> Result<CheckoutState, PlatformError> {
        let id = &form.order_form_id;
        state::state(
            form,
            self.carts.currency(),
            self.payment_url(id),
            &*self.kept(id).await,
        )
    }

    /// The checkout as the store holds it; `None` for an id that names no orderForm, or an
    /// emptied (cancelled) one.
    async fn fetch(&self, id: &str) -> Result<Option<OrderForm>, PlatformError> {
        Ok(self.carts.fetch(id).await?.map(|(form, _)| form))
    }

    /// One write to an orderForm the store holds (checked by `fetch` first); the full
    /// orderForm it answers.
    async fn send(
        &self,
        id: &str,
        tail: &[&str],
        body: Value,
        what: &str,
    ) -> Result<OrderForm, PlatformError> {
        let cookie = self.carts.cookie(id).await;
        self.carts
            .write(Method::POST, id, tail, body, cookie.as_deref(), what)
            .await
    }

    /// The buyer into `clientProfileData`, and the buyer as the store then holds it. Only
    /// what the agent gave: VTEX keeps what a field left out already holds, and no document
    /// is ever made up. A document the store refuses is not an error the agent cannot act
    /// on: the profile goes without it, the checkout shows none, and the store's requirement
    /// of one asks again (issue 37 item 3).
    async fn attach_buyer(
        &self,
        id: &str,
        buyer: &Buyer,
    ) -> Result<(OrderForm, Buyer), PlatformError> {
        let mut profile = serde_json::Map::new();
        for (key, value) in [
            ("email", &buyer.email),
            ("firstName", &buyer.first_name),
            ("lastName", &buyer.last_name),
            ("phone", &buyer.phone_number),
        ] {
            if let Some(value) = value {
                profile.insert(key.to_owned(), json!(value));
            }
        }
        let without_document = profile.clone();
        brazil::document_fields(buyer, &mut profile);
        let documented = profile.len() > without_document.len();
        let what = "attaching the buyer";
        let tail = &["attachments", "clientProfileData"];
        match self.send(id, tail, Value::Object(profile), what).await {
            Ok(form) => Ok((form, buyer.clone())),
            Err(PlatformError::BadResponse(reason)) if documented => {
                tracing::info!(
                    %reason,
                    "the store refused the buyer's document; the checkout asks for another"
                );
                let form = self
                    .send(id, tail, Value::Object(without_document), what)
                    .await?;
                Ok((
                    form,
                    Buyer {
                        taxpayer_id: None,
                        ..buyer.clone()
                    },
                ))
            }
            Err(error) => Err(error),
        }
    }
}

#[async_trait]
impl CheckoutPort for VtexCheckout {
    async fn create_checkout(
        &self,
        draft: &CheckoutDraft,
    ) -> Result<CheckoutOutcome, PlatformError> {
        let (mut form, problems) = match &draft.source {
            CheckoutSource::Cart(cart) => {
                let form = self
                    .fetch(cart)
                    .await?
                    .ok_or_else(|| PlatformError::InvalidAt {
                        path: "$.cart_id".into(),
                        message: format!("no cart {cart}"),
                    })?;
                (form, Vec::new())
            }
            CheckoutSource::Lines(lines) => self.carts.new_form(lines).await?,
        };
        let id = form.order_form_id.clone();
        // A cart checked out again starts from what the orderForm holds, not a stale buyer.
        self.kept.invalidate(&id).await;
        if !draft.buyer.is_empty() {
            let (attached, buyer) = self.attach_buyer(&id, &draft.buyer).await?;
            form = attached;
            self.keep(&id, |kept| kept.buyer = Some(buyer)).await;
        }
        Ok(CheckoutOutcome {
            checkout: self.state(&form).await?,
            problems,
        })
    }

    async fn get_checkout(&self, id: &str) -> Result<Option<CheckoutState>, PlatformError> {
        let form = self.fetch(id).await?;
        if let Some(placed) = self.placed(id, form.as_ref()).await? {
            return Ok(Some(placed));
        }
        match form {
            Some(form) => self.state(&form).await.map(Some),
            None => Ok(None),
        }
    }

    async fn set_lines(
        &self,
        id: &str,
        lines: &[CartLineInput],
    ) -> Result<Option<CheckoutOutcome>, PlatformError> {
        // An emptied orderForm reads as gone (that is how a cancel sticks): a checkout is
        // ended with cancel, not by removing its last line.
        if lines.is_empty() {
            return Err(PlatformError::InvalidAt {
                path: "$.checkout.line_items".into(),
                message: "a checkout keeps at least one line; cancel it to end it".into(),
            });
        }
        let Some((form, problems)) = self.carts.replace_form(id, lines).await? else {
            return Ok(None);
        };
        Ok(Some(CheckoutOutcome {
            checkout: self.state(&form).await?,
            problems,
        }))
    }

    async fn set_buyer(
        &self,
        id: &str,
        buyer: &Buyer,
    ) -> Result<Option<CheckoutState>, PlatformError> {
        if self.fetch(id).await?.is_none() {
            return Ok(None);
        }
        let (form, buyer) = self.attach_buyer(id, buyer).await?;
        self.keep(id, |kept| kept.buyer = Some(buyer)).await;
        self.state(&form).await.map(Some)
    }

    async fn set_destination(
        &self,
        id: &str,
        address: &Address,
    ) -> Result<Option<CheckoutState>, PlatformError> {
        let Some(form) = self.fetch(id).await? else {
            return Ok(None);
        };
        let kept = self.kept(id).await;
        // The address the store already holds (the checkout shows it completed from the CEP,
        // so it reads as a change): sending it again would reset the selected options.
        if kept.address.as_ref() == Some(address) {
            return self.state(&form).await.map(Some);
        }
        let buyer = kept.buyer.clone().unwrap_or_default();
        let sent = brazil::completed(&self.api, address).await;
        // No `logisticsInfo`: VTEX then selects the best delivery SLA itself (never a
        // pickup point), which the agent may change.
        let body = json!({
            "clearAddressIfPostalCodeNotFound": false,
            "selectedAddresses": [address::to_vtex(&sent, &buyer)?],
        });
        let form = self
            .send(
                id,
                &["attachments", "shippingData"],
                body,
                "attaching the address",
            )
            .await?;
        self.keep(id, |kept| {
            kept.address = Some(address.clone());
            kept.sent = Some(sent);
        })
        .await;
        self.state(&form).await.map(Some)
    }

    async fn select_option(
        &self,
        id: &str,
        group_id: &str,
        option_id: &str,
    ) -> Result<Option<CheckoutState>, PlatformError> {
        let Some(form) = self.fetch(id).await? else {
            return Ok(None);
        };
        let current = self.state(&form).await?;
        let Some(group) = current
            .fulfillment
            .iter()
            .flat_map(|method| &method.groups)
            .find(|group| group.id == group_id)
        else {
            return Err(PlatformError::InvalidAt {
                path: "$.fulfillment.methods[0].groups".into(),
                message: format!("no fulfillment group {group_id}"),
            });
        };
        if !group.options.iter().any(|option| option.id == option_id) {
            return Err(PlatformError::InvalidAt {
                path: "$.fulfillment.methods[0].groups[0].selected_option_id".into(),
                message: format!("{option_id} is not one of group {group_id}'s options"),
            });
        }
        let mut logistics = Vec::new();
        for (index, item) in form.items.iter().enumerate() {
            if !group.line_ids.contains(&item.unique_id) {
                continue;
            }
            let sla = info_of(&form, index)
                .and_then(|info| info.slas.iter().find(|sla| sla.id == option_id));
            let delivery_channel = match sla.map(channel) {
                Some(MethodKind::Pickup) => PICKUP_CHANNEL,
                _ => "delivery",
            };
            logistics.push(json!({
                "itemIndex": index,
                "selectedSla": option_id,
                "selectedDeliveryChannel": delivery_channel,
            }));
        }
        // The address goes back as the orderForm holds it: a shipping attachment without it
        // would clear it.
        let addresses = form
            .shipping_data
            .as_ref()
            .map(|data| data.selected_addresses.clone())
            .unwrap_or_default();
        let body = json!({
            "clearAddressIfPostalCodeNotFound": false,
            "selectedAddresses": addresses,
            "logisticsInfo": logistics,
        });
        let form = self
            .send(
                id,
                &["attachments", "shippingData"],
                body,
                "selecting an SLA",
            )
            .await?;
        self.state(&form).await.map(Some)
    }

    async fn apply_code(&self, id: &str, code: &str) -> Result<Option<CodeOutcome>, PlatformError> {
        if self.fetch(id).await?.is_none() {
            return Ok(None);
        }
        let form = self
            .send(id, &["coupons"], json!({"text": code}), "applying a coupon")
            .await?;
        let checkout = self.state(&form).await?;
        // Whether the orderForm now holds the code decides: VTEX answers a refused coupon with
        // HTTP 200 and a message, and messages can outlive the call that raised them.
        if held(&checkout.codes, code) {
            return Ok(Some(CodeOutcome {
                checkout,
                refused: None,
            }));
        }
        let about_coupons = |message: &&super::wire::CartMessage| {
            message
                .code
                .as_deref()
                .is_some_and(|code| code.starts_with("coupon"))
        };
        let lowered = code.to_lowercase();
        let message = form
            .messages
            .iter()
            .filter(about_coupons)
            .find(|message| message.text.to_lowercase().contains(&lowered))
            .or_else(|| form.messages.iter().rfind(about_coupons));
        let refused = Some(match message {
            Some(message) => RefusedCode {
                code: code.to_owned(),
                refusal: refusal(message.code.as_deref().unwrap_or_default()),
                reason: message.text.clone(),
            },
            None => RefusedCode {
                code: code.to_owned(),
                refusal: CodeRefusal::Invalid,
                reason: format!("The store did not apply code {code}"),
            },
        });
        Ok(Some(CodeOutcome { checkout, refused }))
    }

    async fn remove_code(
        &self,
        id: &str,
        code: &str,
    ) -> Result<Option<CheckoutState>, PlatformError> {
        let Some(form) = self.fetch(id).await? else {
            return Ok(None);
        };
        let codes = state::codes(&form);
        if !held(&codes, code) {
            return self.state(&form).await.map(Some);
        }
        // The coupon route replaces what the orderForm holds: the codes that stay, or none.
        let rest: Vec<&str> = codes
            .iter()
            .filter(|held| !held.eq_ignore_ascii_case(code))
            .map(String::as_str)
            .collect();
        let form = self
            .send(
                id,
                &["coupons"],
                json!({"text": rest.join(",")}),
                "removing a coupon",
            )
            .await?;
        self.state(&form).await.map(Some)
    }

    /// VTEX creates the order when the buyer pays on its checkout's payment step: nothing is
    /// placed here, and the checkout keeps escalating there.
    async fn place(
        &self,
        id: &str,
        _handler_id: Option<&str>,
    ) -> Result<Option<Placement>, PlatformError> {
        self.keep(id, |kept| kept.handed_off = true).await;
        Ok(Some(Placement::HandedOff))
    }

    /// What the store's checkout requires by the rules of its country, read from a new
    /// (empty) orderForm, as VTEX's checkout page applies them.
    async fn checkout_fields(&self) -> Result<Vec<StoreField>, PlatformError> {
        let (form, _) = self.carts.new_form(&[]).await?;
        Ok(brazil::store_fields(&form))
    }

    /// Orders (and their invoices) are read from the Orders API, which needs the app key.
    fn reads_orders(&self) -> bool {
        self.keyed
    }

    fn reads_invoices(&self) -> bool {
        self.keyed
    }

    /// An order by its VTEX id (`GET /api/oms/pvt/orders/{orderId}`, app key required), with
    /// the NF-e its packages were invoiced with.
    async fn order(&self, id: &str) -> Result<Option<Order>, PlatformError> {
        if !self.keyed {
            return Ok(None);
        }
        let Some(raw) = self.placements.read(id).await? else {
            return Ok(None);
        };
        invoices::order(&raw, self.carts.currency(), self.permalink(id)).map(Some)
    }

    async fn cancel_checkout(&self, id: &str) -> Result<Option<CheckoutState>, PlatformError> {
        // An orderForm cannot be deleted: emptying it is what ends it (an empty orderForm
        // reads as gone, for the cart of the same id too), so the store's payment page can
        // no longer buy what the agent cancelled. Buyer data stays in VTEX's orderForm,
        // which VTEX expires on its own; the bridge forgets its copy.
        let Some(form) = self.carts.empty_form(id).await? else {
            return Ok(None);
        };
        let before = self.state(&form).await?;
        self.kept.invalidate(id).await;
        Ok(Some(before))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coupon_messages_map_to_the_spec_refusals() {
        assert_eq!(refusal("couponExpired"), CodeRefusal::Expired);
        assert_eq!(refusal("couponNotFound"), CodeRefusal::Invalid);
    }
}
