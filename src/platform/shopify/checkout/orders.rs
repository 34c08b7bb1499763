//! Orders Shopify reports by webhook. The Storefront API creates no order: the buyer places it
//! on Shopify's checkout page, where the bridge handed them (the cart's `checkoutUrl`). With
//! `orders_webhook_secret`, the shop's `orders/*` webhooks (`orders/create`, `orders/paid`,
//! `orders/fulfilled`, `orders/cancelled`, `orders/updated`) come to
//! `/webhooks/shopify/orders`; each one whose `cart_token` is a checkout this bridge created
//! or handed off (or whose id is an order already linked) is kept, so `get_checkout` answers
//! `completed` with the order and `get_order` reads it. Any other order of the shop is not
//! kept: an agent reads only orders of checkouts the bridge made. The placed checkout answers
//! only to its cart id with the `?key=` (`ids::same_cart`), as Shopify's cart does.
//!
//! Kept in memory for one process, bounded in bytes and by age (issue 35 item 2); with
//! `[redis]` in Redis instead (issue 36 item 4), so the replica the webhook reached and every
//! other one, or a restarted one, answer the order: per cart token the checkout the bridge
//! created (`bcp:shopify-created:<sha256>`) or handed off (`bcp:shopify-handoff:<sha256>`),
//! and the order (`bcp:shopify-order:<sha256 of the token>`, with its id's index
//! `bcp:shopify-order-cart:<sha256 of the order id>`). The order is kept as the fields of
//! Shopify's body the order entity is made from (`RawOrder`), which include the shipping
//! address and name the entity shows; nothing else of the body. What enters is
//! only what the bridge itself made: carts come in when the bridge creates a checkout or hands
//! one off (never on a read of some cart id), orders only by Shopify's signed webhook for such
//! a cart. Hand-offs (the checkouts whose orders are announced to an agent) are kept apart
//! from mere creations, so a flood of created checkouts cannot push a handed-off one out; at
//! a bound the least recently used entry of that kind goes.

use std::time::Duration;

use async_trait::async_trait;
use iso_currency::Currency;
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use crate::model::checkout::{Address, CheckoutTotals, Order, OrderLine};
use crate::money::{Money, parse_currency};
use crate::platform::checkout::{FeedRoute, OrderFeed, Version};
use crate::platform::port::PlatformError;
use crate::settings::Secret;

use crate::replicas::records::Records;
use crate::replicas::{Link, RedisDown};

use super::super::ids::{cart_token, same_cart, variant_gid};
use super::text;

/// Bytes of cart ids kept per kind (about 100,000 carts each: a token and a key of up to 128
/// characters, twice) and of orders (about 50,000 of a few lines).
const MAX_CART_BYTES: u64 = 32 << 20;
const MAX_ORDER_BYTES: u64 = 64 << 20;
/// A Storefront cart lives ten days after its last change: no order comes from it later.
const CART_KEPT: Duration = Duration::from_secs(10 * 24 * 3600);
/// An order is read (status, shipping) for weeks after it was placed.
const ORDER_KEPT: Duration = Duration::from_secs(20 * 24 * 3600);
/// A map row and moka's node.
const ENTRY_OVERHEAD: usize = 128;

#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(default)]
struct Amount {
    amount: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(default)]
struct AmountSet {
    presentment_money: Option<Amount>,
    shop_money: Option<Amount>,
}

#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(default)]
struct RawLine {
    id: Option<u64>,
    admin_graphql_api_id: Option<String>,
    variant_id: Option<u64>,
    sku: Option<String>,
    name: String,
    title: String,
    quantity: u32,
    /// After order edits and cancellations (absent on older API versions).
    current_quantity: Option<u32>,
    fulfillable_quantity: Option<u32>,
    fulfillment_status: Option<String>,
    price: String,
    price_set: Option<AmountSet>,
    total_discount: String,
    total_discount_set: Option<AmountSet>,
}

#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(default)]
struct RawAddress {
    first_name: Option<String>,
    last_name: Option<String>,
    address1: Option<String>,
    address2: Option<String>,
    city: Option<String>,
    province_code: Option<String>,
    zip: Option<String>,
    country_code: Option<String>,
    phone: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(default)]
struct RawShippingLine {
    title: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(default)]
struct RawCode {
    code: String,
}

/// The fields of Shopify's REST order (the webhook body) the order entity needs.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(default)]
struct RawOrder {
    id: Option<u64>,
    admin_graphql_api_id: Option<String>,
    name: Option<String>,
    cart_token: Option<String>,
    order_status_url: Option<String>,
    currency: Option<String>,
    presentment_currency: Option<String>,
    financial_status: Option<String>,
    fulfillment_status: Option<String>,
    cancelled_at: Option<String>,
    created_at: Option<String>,
    current_subtotal_price: Option<String>,
    current_subtotal_price_set: Option<AmountSet>,
    current_total_price: Option<String>,
    current_total_price_set: Option<AmountSet>,
    current_total_tax: Option<String>,
    current_total_tax_set: Option<AmountSet>,
    current_total_discounts: Option<String>,
    current_total_discounts_set: Option<AmountSet>,
    total_shipping_price_set: Option<AmountSet>,
    shipping_lines: Vec<RawShippingLine>,
    discount_codes: Vec<RawCode>,
    line_items: Vec<RawLine>,
    shipping_address: Option<RawAddress>,
}

fn bad(what: &str) -> PlatformError {
    PlatformError::InvalidInput(format!("not a Shopify order: {what}"))
}

/// The presentment amount (what the buyer saw, the checkout's currency), else the shop's.
fn amount(
    set: &Option<AmountSet>,
    plain: Option<&str>,
    currency: Currency,
) -> Result<i64, PlatformError> {
    let text = set
        .as_ref()
        .and_then(|set| set.presentment_money.as_ref().or(set.shop_money.as_ref()))
        .map(|amount| amount.amount.as_str())
        .or(plain)
        .unwrap_or("0");
    Money::from_major_str(text, currency)
        .map(|money| money.amount)
        .map_err(|_| bad("an amount is not a decimal"))
}

fn address(raw: &RawAddress) -> Address {
    super::brazil::split(Address {
        first_name: text(&raw.first_name),
        last_name: text(&raw.last_name),
        street_address: text(&raw.address1),
        extended_address: text(&raw.address2),
        address_locality: text(&raw.city),
        address_region: text(&raw.province_code),
        postal_code: text(&raw.zip),
        address_country: text(&raw.country_code),
        phone_number: text(&raw.phone),
        neighborhood: None,
        number: None,
    })
}

/// Shopify's financial statuses in which the order counts as paid (or secured).
fn paid(financial_status: Option<&str>) -> bool {
    matches!(
        financial_status,
        Some("paid" | "partially_paid" | "authorized" | "partially_refunded" | "refunded")
    )
}

/// The store's own word for where the order stands: cancelled, its fulfilment, else payment.
fn store_status(raw: &RawOrder) -> String {
    if raw.cancelled_at.is_some() {
        return "cancelled".to_owned();
    }
    match (&raw.fulfillment_status, &raw.financial_status) {
        (Some(fulfillment), _) => fulfillment.clone(),
        (None, Some(financial)) => financial.clone(),
        (None, None) => "pending".to_owned(),
    }
}

fn order(raw: &RawOrder, checkout_id: &str, shop: &str) -> Result<Order, PlatformError> {
    let number = raw.id.ok_or_else(|| bad("no id"))?;
    let code = raw
        .presentment_currency
        .as_deref()
        .or(raw.currency.as_deref())
        .ok_or_else(|| bad("no currency"))?;
    let currency = parse_currency(code).map_err(|_| bad("unknown currency"))?;
    let mut lines = Vec::with_capacity(raw.line_items.len());
    for (index, line) in raw.line_items.iter().enumerate() {
        let unit = amount(&line.price_set, Some(&line.price), currency)?;
        let off = amount(
            &line.total_discount_set,
            Some(&line.total_discount),
            currency,
        )?;
        let active = if raw.cancelled_at.is_some() {
            0
        } else {
            line.current_quantity.unwrap_or(line.quantity)
        };
        let fulfilled = match line.fulfillment_status.as_deref() {
            Some("fulfilled") => active,
            Some("partial") => active.saturating_sub(line.fulfillable_quantity.unwrap_or(active)),
            _ => 0,
        };
        lines.push(OrderLine {
            id: line
                .admin_graphql_api_id
                .clone()
                .or_else(|| line.id.map(|id| format!("gid://shopify/LineItem/{id}")))
                .unwrap_or_else(|| format!("li_{}", index + 1)),
            variant_id: line.variant_id.map(variant_gid),
            sku: text(&line.sku),
            title: if line.name.is_empty() {
                line.title.clone()
            } else {
                line.name.clone()
            },
            quantity: line.quantity,
            active,
            fulfilled,
            unit_price: unit,
            total: unit.saturating_mul(i64::from(line.quantity)) - off,
        });
    }
    let fulfillment = amount(&raw.total_shipping_price_set, None, currency)?;
    Ok(Order {
        id: raw
            .admin_graphql_api_id
            .clone()
            .unwrap_or_else(|| format!("gid://shopify/Order/{number}")),
        checkout_id: checkout_id.to_owned(),
        label: text(&raw.name),
        permalink_url: text(&raw.order_status_url)
            .unwrap_or_else(|| format!("https://{shop}/account/orders")),
        store_status: store_status(raw),
        paid: paid(raw.financial_status.as_deref()),
        lines,
        currency,
        totals: CheckoutTotals {
            subtotal: amount(
                &raw.current_subtotal_price_set,
                raw.current_subtotal_price.as_deref(),
                currency,
            )?,
            discount: amount(
                &raw.current_total_discounts_set,
                raw.current_total_discounts.as_deref(),
                currency,
            )?,
            fulfillment: Some(fulfillment),
            tax: Some(amount(
                &raw.current_total_tax_set,
                raw.current_total_tax.as_deref(),
                currency,
            )?),
            total: amount(
                &raw.current_total_price_set,
                raw.current_total_price.as_deref(),
                currency,
            )?,
        },
        shipping_address: raw.shipping_address.as_ref().map(address),
        fulfillment_title: raw
            .shipping_lines
            .first()
            .map(|line| line.title.clone())
            .filter(|title| !title.is_empty()),
        codes: raw
            .discount_codes
            .iter()
            .map(|code| code.code.clone())
            .filter(|code| !code.is_empty())
            .collect(),
        placed_at: raw
            .created_at
            .as_deref()
            .and_then(|at| OffsetDateTime::parse(at, &Rfc3339).ok()),
        nfe: None,
    })
}

/// The order's gid from the body: an `admin_graphql_api_id` naming anything but an order (a
/// product's or a customer's body sent here) names none.
fn order_gid(id: Option<u64>, admin_graphql_api_id: Option<&str>) -> Option<String> {
    match admin_graphql_api_id {
        Some(gid) if gid.starts_with("gid://shopify/Order/") => Some(gid.to_owned()),
        Some(_) => None,
        None => id.map(|id| format!("gid://shopify/Order/{id}")),
    }
}

/// What a body is ordered by: its order and `updated_at`.
#[derive(Debug, Deserialize, Default)]
#[serde(default)]
struct RawStamp {
    id: Option<u64>,
    admin_graphql_api_id: Option<String>,
    updated_at: Option<String>,
}

fn ids(prefix: &'static str, max_bytes: u64, kept: Duration) -> Records<String> {
    Records::local(prefix, kept, max_bytes, |token, checkout| {
        ENTRY_OVERHEAD + token.len() + checkout.len()
    })
}

/// An order as kept: the checkout it was placed from and the body's fields it is made of.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct KeptOrder {
    checkout: String,
    raw: RawOrder,
}

/// Near enough for the byte bound: the fields as text, twice over for the strings' own
/// overhead.
fn kept_weight(token: &str, kept: &KeptOrder) -> usize {
    let text = serde_json::to_vec(&kept.raw).map_or(0, |text| text.len());
    ENTRY_OVERHEAD + token.len() + kept.checkout.len() + 2 * text
}

fn unavailable(_: RedisDown) -> PlatformError {
    PlatformError::Unavailable {
        reason: "the shared state (Redis) is unreachable".into(),
        retry_after: Some(Duration::from_secs(2)),
    }
}

/// The orders of the checkouts this bridge handed to Shopify's page.
pub struct OrderBook {
    secret: Secret,
    shop: String,
    /// Cart token → checkout id, for the checkouts the bridge created.
    created: Records<String>,
    /// Cart token → checkout id, for the checkouts the bridge handed to Shopify's page.
    handed_off: Records<String>,
    /// Cart token → its order.
    by_checkout: Records<KeptOrder>,
    /// Order id → cart token.
    by_id: Records<String>,
}

impl OrderBook {
    pub fn new(secret: Secret, shop: String) -> Self {
        Self::bounded(secret, shop, MAX_CART_BYTES, MAX_ORDER_BYTES)
    }

    fn bounded(secret: Secret, shop: String, cart_bytes: u64, order_bytes: u64) -> Self {
        Self {
            secret,
            shop,
            created: ids("bcp:shopify-created", cart_bytes, CART_KEPT),
            handed_off: ids("bcp:shopify-handoff", cart_bytes, CART_KEPT),
            by_checkout: Records::local("bcp:shopify-order", ORDER_KEPT, order_bytes, kept_weight),
            by_id: ids("bcp:shopify-order-cart", order_bytes / 8, ORDER_KEPT),
        }
    }

    /// Kept in `link` (`[redis]`) for every replica, when there is one.
    pub fn shared(mut self, link: Option<std::sync::Arc<Link>>) -> Self {
        self.created = self.created.shared(link.clone());
        self.handed_off = self.handed_off.shared(link.clone());
        self.by_checkout = self.by_checkout.shared(link.clone());
        self.by_id = self.by_id.shared(link);
        self
    }

    /// A checkout the bridge created, by the id Shopify answered with: an order placed from
    /// its cart will be kept.
    pub async fn watch(&self, checkout_id: &str) {
        Self::remember(&self.created, checkout_id).await;
    }

    /// A checkout the bridge handed to Shopify's page (by the id Shopify answered with): its
    /// order will be kept and announced.
    pub async fn handed_off(&self, checkout_id: &str) {
        Self::remember(&self.handed_off, checkout_id).await;
    }

    async fn remember(carts: &Records<String>, checkout_id: &str) {
        let Some(token) = cart_token(checkout_id) else {
            return;
        };
        if matches!(carts.get(token).await, Ok(Some(ref held)) if held == checkout_id) {
            return;
        }
        if carts.put(token, checkout_id.to_owned()).await.is_err() {
            tracing::warn!(
                "a Shopify cart was not recorded in the shared Redis: its order will not be kept"
            );
        }
    }

    fn made(&self, kept: KeptOrder) -> Option<Order> {
        order(&kept.raw, &kept.checkout, &self.shop).ok()
    }

    /// The order placed from this checkout, once Shopify reported it; only for the cart id
    /// with its key. Redis away, none is known (the checkout answers as the store holds it).
    pub async fn of_checkout(&self, checkout_id: &str) -> Option<Order> {
        let kept = self
            .by_checkout
            .get(cart_token(checkout_id)?)
            .await
            .ok()
            .flatten()?;
        self.made(kept)
            .filter(|order| same_cart(&order.checkout_id, checkout_id))
    }

    pub async fn by_id(&self, id: &str) -> Result<Option<Order>, PlatformError> {
        let Some(token) = self.by_id.get(id).await.map_err(unavailable)? else {
            return Ok(None);
        };
        let kept = self.by_checkout.get(&token).await.map_err(unavailable)?;
        Ok(kept.and_then(|kept| self.made(kept)))
    }
}

#[async_trait]
impl OrderFeed for OrderBook {
    fn route(&self) -> FeedRoute {
        FeedRoute {
            platform: "shopify",
            signature_header: "x-shopify-hmac-sha256",
            topic_header: "x-shopify-topic",
            delivery_header: "x-shopify-webhook-id",
        }
    }

    fn secret(&self) -> &Secret {
        &self.secret
    }

    fn version(&self, body: &[u8]) -> Result<Option<Version>, PlatformError> {
        let raw: RawStamp = serde_json::from_slice(body).map_err(|_| bad("not JSON"))?;
        let Some(resource) = order_gid(raw.id, raw.admin_graphql_api_id.as_deref()) else {
            return Ok(None);
        };
        let Some(updated_at) = raw.updated_at else {
            return Ok(None);
        };
        let updated_at = OffsetDateTime::parse(&updated_at, &Rfc3339)
            .map_err(|_| bad("updated_at is not a time"))?;
        Ok(Some(Version {
            resource,
            updated_at,
        }))
    }

    /// The topic header is not signed: a signed body sent again under another topic is the
    /// same body, and only what the body says counts.
    async fn received(&self, _topic: &str, body: &[u8]) -> Result<Option<Order>, PlatformError> {
        let raw: RawOrder = serde_json::from_slice(body).map_err(|_| bad("not JSON"))?;
        if raw.id.is_none() && raw.admin_graphql_api_id.is_none() {
            return Err(bad("no id"));
        }
        let Some(id) = order_gid(raw.id, raw.admin_graphql_api_id.as_deref()) else {
            return Ok(None);
        };
        // A later event names the order; the first one (`orders/create`) names its cart.
        let token = match self.by_id.get(&id).await.map_err(unavailable)? {
            Some(token) => token,
            None => match raw.cart_token.as_deref().filter(|token| !token.is_empty()) {
                Some(token) => token.to_owned(),
                None => return Ok(None),
            },
        };
        let checkout_id = match self.handed_off.get(&token).await.map_err(unavailable)? {
            Some(checkout_id) => checkout_id,
            None => match self.created.get(&token).await.map_err(unavailable)? {
                Some(checkout_id) => checkout_id,
                None => return Ok(None),
            },
        };
        let order = order(&raw, &checkout_id, &self.shop)?;
        // Redis away: the webhook fails and Shopify delivers it again.
        self.by_id
            .put(&order.id, token.clone())
            .await
            .map_err(unavailable)?;
        let kept = KeptOrder {
            checkout: checkout_id,
            raw,
        };
        self.by_checkout
            .put(&token, kept)
            .await
            .map_err(unavailable)?;
        Ok(Some(order))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use secrecy::SecretString;
    use serde_json::json;

    use super::*;

    fn book() -> OrderBook {
        OrderBook::new(
            Secret(SecretString::from("s3cret")),
            "shop.example".to_owned(),
        )
    }

    fn created(cart_token: &str) -> Vec<u8> {
        json!({
            "id": 820982911946154500_u64,
            "admin_graphql_api_id": "gid://shopify/Order/820982911946154508",
            "name": "#1001",
            "cart_token": cart_token,
            "order_status_url": "https://shop.example/123/orders/abc/authenticate?key=k",
            "currency": "USD", "presentment_currency": "USD",
            "financial_status": "paid", "fulfillment_status": null, "cancelled_at": null,
            "created_at": "2026-12-01T10:00:00-05:00",
            "current_subtotal_price": "40.50", "current_total_discounts": "4.50",
            "current_total_tax": "0.00", "current_total_price": "51.50",
            "total_shipping_price_set": {"shop_money": {"amount": "15.50", "currency_code": "USD"},
                                         "presentment_money": {"amount": "15.50", "currency_code": "USD"}},
            "shipping_lines": [{"title": "Express", "price": "15.50"}],
            "discount_codes": [{"code": "SAVE10", "amount": "4.50", "type": "percentage"}],
            "line_items": [{"id": 466157049, "admin_graphql_api_id": "gid://shopify/LineItem/466157049",
                            "variant_id": 39072856, "sku": "MUG-1", "name": "Mug — Black",
                            "title": "Mug", "quantity": 3, "price": "15.00", "total_discount": "4.50"}],
            "shipping_address": {"first_name": "Ana", "address1": "350 5th Ave", "city": "New York",
                                 "province_code": "NY", "zip": "10118", "country_code": "US"}
        })
        .to_string()
        .into_bytes()
    }

    #[tokio::test]
    async fn an_order_of_a_watched_checkout_is_kept_and_read_by_its_id() {
        let book = book();
        let checkout = "gid://shopify/Cart/c1-abc?key=k1";
        book.watch(checkout).await;
        assert!(
            book.received("orders/create", &created("c1-abc"))
                .await
                .unwrap()
                .is_some()
        );
        let order = book.of_checkout(checkout).await.unwrap();
        assert_eq!(order.checkout_id, checkout);
        assert_eq!(order.id, "gid://shopify/Order/820982911946154508");
        assert_eq!(order.label.as_deref(), Some("#1001"));
        assert_eq!(order.totals.total, 5150);
        assert_eq!(order.totals.fulfillment, Some(1550));
        assert_eq!(order.totals.discount, 450);
        assert_eq!(
            order.lines[0].variant_id.as_deref(),
            Some("gid://shopify/ProductVariant/39072856")
        );
        assert_eq!(order.lines[0].total, 4050);
        assert!(order.paid);
        assert_eq!(order.codes, ["SAVE10"]);
        assert_eq!(book.by_id(&order.id).await.unwrap(), Some(order));
    }

    #[tokio::test]
    async fn orders_of_other_carts_and_bodies_of_other_resources_are_not_kept() {
        let book = book();
        book.watch("gid://shopify/Cart/c1-abc?key=k1").await;
        assert!(
            book.received("orders/create", &created("someone-else"))
                .await
                .unwrap()
                .is_none()
        );
        // Issue 35 item 4: the topic header is unsigned; a product's body is no order
        // whatever topic it comes under.
        let mut product: serde_json::Value = serde_json::from_slice(&created("c1-abc")).unwrap();
        product["admin_graphql_api_id"] = json!("gid://shopify/Product/632910392");
        let product = product.to_string().into_bytes();
        assert!(
            book.received("orders/create", &product)
                .await
                .unwrap()
                .is_none()
        );
        assert_eq!(book.version(&product).unwrap(), None);
        assert!(
            book.by_id("gid://shopify/Order/820982911946154508")
                .await
                .unwrap()
                .is_none()
        );
        assert!(book.received("orders/create", b"not json").await.is_err());
    }

    #[test]
    fn a_body_is_ordered_by_its_order_and_updated_at() {
        let book = book();
        let mut body: serde_json::Value = serde_json::from_slice(&created("c1-abc")).unwrap();
        assert_eq!(book.version(body.to_string().as_bytes()).unwrap(), None);
        body["updated_at"] = json!("2026-12-01T10:00:05-05:00");
        let version = book.version(body.to_string().as_bytes()).unwrap().unwrap();
        assert_eq!(version.resource, "gid://shopify/Order/820982911946154508");
        assert_eq!(version.updated_at.unix_timestamp(), 1_796_137_205);
        body["updated_at"] = json!("yesterday");
        assert!(book.version(body.to_string().as_bytes()).is_err());
        assert!(book.version(b"[").is_err());
    }

    #[tokio::test]
    async fn a_later_event_updates_the_order_it_names() {
        let book = book();
        let checkout = "gid://shopify/Cart/c1-abc?key=k1";
        book.watch(checkout).await;
        book.received("orders/create", &created("c1-abc"))
            .await
            .unwrap();
        let mut cancelled: serde_json::Value = serde_json::from_slice(&created("")).unwrap();
        cancelled["cancelled_at"] = json!("2026-12-02T10:00:00-05:00");
        let body = cancelled.to_string().into_bytes();
        assert!(
            book.received("orders/cancelled", &body)
                .await
                .unwrap()
                .is_some()
        );
        assert_eq!(
            book.of_checkout(checkout).await.unwrap().store_status,
            "cancelled"
        );
    }

    /// Issue 35: Shopify serves a cart only with its `?key=`; the placed order kept for it
    /// answers only to the same.
    #[tokio::test]
    async fn a_cart_id_without_its_key_reads_no_order() {
        let book = book();
        let checkout = "gid://shopify/Cart/c1-abc?key=k1";
        book.handed_off(checkout).await;
        book.received("orders/create", &created("c1-abc"))
            .await
            .unwrap();
        assert!(book.of_checkout(checkout).await.is_some());
        for other in [
            "gid://shopify/Cart/c1-abc",
            "gid://shopify/Cart/c1-abc?key=k2",
            "gid://shopify/Cart/c1-abc?key=",
        ] {
            assert!(book.of_checkout(other).await.is_none(), "{other}");
        }
    }

    /// Issue 35 item 2: a flood of created checkouts stays within its byte bound and does not
    /// push out a handed-off one: the real buyer's order is still kept (and so announced).
    #[tokio::test]
    async fn a_flood_of_created_checkouts_leaves_hand_offs_alone() {
        let bound = 64 * 1024;
        let book = OrderBook::bounded(
            Secret(SecretString::from("s3cret")),
            "shop.example".to_owned(),
            bound,
            bound,
        );
        let checkout = "gid://shopify/Cart/c1-abc?key=k1";
        book.handed_off(checkout).await;
        for index in 0..5000 {
            book.watch(&format!(
                "gid://shopify/Cart/flood{index}?key={}",
                "k".repeat(100)
            ))
            .await;
        }
        assert!(book.created.local_bytes().await <= bound);
        assert!(book.created.local_count().await > 0);
        let kept = book
            .received("orders/create", &created("c1-abc"))
            .await
            .unwrap();
        assert_eq!(kept.unwrap().checkout_id, checkout);
        assert!(book.of_checkout(checkout).await.is_some());
    }
}
