//! In-memory carts with an expiry, the way a real store keeps them server-side.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use iso_currency::Currency;
use time::OffsetDateTime;

use crate::model::{CartLine, CartState};

/// Beyond this many live carts, creating one fails instead of growing without bound.
pub const MAX_CARTS: usize = 100_000;

struct Entry {
    cart: CartState,
    next_line: u32,
}

pub struct CartBook {
    carts: Mutex<HashMap<String, Entry>>,
    ttl: Duration,
}

/// The fields of a line the store computes from the catalog.
pub struct LineSpec {
    pub variant_id: String,
    pub title: String,
    pub unit_price: i64,
    pub quantity: u32,
    pub image_url: Option<String>,
}

impl CartBook {
    pub fn new(ttl: Duration) -> Self {
        Self {
            carts: Mutex::new(HashMap::new()),
            ttl,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Entry>> {
        // A panic while holding the lock cannot leave a cart half-written (every mutation
        // replaces whole values), so a poisoned map is still consistent.
        self.carts
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn expiry(&self) -> OffsetDateTime {
        OffsetDateTime::now_utc() + self.ttl
    }

    fn live(entry: &Entry) -> bool {
        entry
            .cart
            .expires_at
            .is_none_or(|expiry| expiry > OffsetDateTime::now_utc())
    }

    fn fill(entry: &mut Entry, specs: Vec<LineSpec>) {
        let mut lines = Vec::with_capacity(specs.len());
        for spec in specs {
            // A variant already in the cart keeps its line id (an update, not a new line).
            let id = entry
                .cart
                .lines
                .iter()
                .find(|line| line.variant_id == spec.variant_id)
                .map(|line| line.id.clone())
                .unwrap_or_else(|| {
                    entry.next_line += 1;
                    format!("li_{}", entry.next_line)
                });
            let subtotal = spec.unit_price.saturating_mul(i64::from(spec.quantity));
            lines.push(CartLine {
                id,
                variant_id: spec.variant_id,
                title: spec.title,
                unit_price: spec.unit_price,
                quantity: spec.quantity,
                subtotal,
                total: subtotal,
                image_url: spec.image_url,
            });
        }
        let subtotal = lines.iter().map(|line| line.subtotal).sum();
        entry.cart.lines = lines;
        entry.cart.subtotal = subtotal;
        entry.cart.total = subtotal;
    }

    pub fn create(
        &self,
        currency: Currency,
        checkout_base: &str,
        specs: Vec<LineSpec>,
    ) -> Option<CartState> {
        let mut carts = self.lock();
        if carts.len() >= MAX_CARTS {
            carts.retain(|_, entry| Self::live(entry));
            if carts.len() >= MAX_CARTS {
                return None;
            }
        }
        let id = format!("cart_{}", uuid::Uuid::new_v4().simple());
        let mut entry = Entry {
            cart: CartState {
                id: id.clone(),
                lines: Vec::new(),
                currency,
                subtotal: 0,
                discount: 0,
                tax: None,
                total: 0,
                checkout_url: Some(format!("{checkout_base}checkout?cart={id}")),
                expires_at: Some(self.expiry()),
            },
            next_line: 0,
        };
        Self::fill(&mut entry, specs);
        let cart = entry.cart.clone();
        carts.insert(id, entry);
        Some(cart)
    }

    pub fn get(&self, id: &str) -> Option<CartState> {
        let mut carts = self.lock();
        match carts.get(id) {
            Some(entry) if Self::live(entry) => Some(entry.cart.clone()),
            Some(_) => {
                carts.remove(id);
                None
            }
            None => None,
        }
    }

    pub fn replace(&self, id: &str, specs: Vec<LineSpec>) -> Option<CartState> {
        let mut carts = self.lock();
        let entry = carts.get_mut(id).filter(|entry| Self::live(entry))?;
        Self::fill(entry, specs);
        entry.cart.expires_at = Some(self.expiry());
        Some(entry.cart.clone())
    }

    /// Removes the cart, returning it as it was.
    pub fn cancel(&self, id: &str) -> Option<CartState> {
        let mut carts = self.lock();
        let entry = carts.remove(id)?;
        Self::live(&entry).then_some(entry.cart)
    }
}
