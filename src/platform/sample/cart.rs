//! In-memory carts with an expiry, the way a real store keeps them server-side.

use std::collections::{BTreeSet, HashMap};
use std::sync::Mutex;
use std::time::Duration;

use iso_currency::Currency;
use time::OffsetDateTime;

use crate::model::{CartLine, CartState};
use async_trait::async_trait;

use super::{SampleStore, plausible_id};
use crate::model::{CartDraft, CartOutcome};
use crate::platform::cart::CartPort;
use crate::platform::port::PlatformError;

/// Beyond this many live carts (by default), creating one fails instead of growing without
/// bound.
pub const MAX_CARTS: usize = 100_000;
/// Expired carts removed by one write at most, so no call pays for a long sweep.
const EVICT_PER_CALL: usize = 8;

struct Entry {
    cart: CartState,
    next_line: u32,
}

/// The carts and, beside them, their expiries in order: at the bound the soonest expiry is
/// one look away, so a refused create costs O(log n) and says when space frees up.
#[derive(Default)]
struct Book {
    carts: HashMap<String, Entry>,
    expiries: BTreeSet<(OffsetDateTime, String)>,
}

impl Book {
    fn insert(&mut self, id: String, entry: Entry) {
        if let Some(expiry) = entry.cart.expires_at {
            self.expiries.insert((expiry, id.clone()));
        }
        if let Some(old) = self.carts.insert(id.clone(), entry) {
            self.forget_expiry(&id, &old);
        }
    }

    fn forget_expiry(&mut self, id: &str, entry: &Entry) {
        if let Some(expiry) = entry.cart.expires_at {
            self.expiries.remove(&(expiry, id.to_owned()));
        }
    }

    fn remove(&mut self, id: &str) -> Option<Entry> {
        let entry = self.carts.remove(id)?;
        self.forget_expiry(id, &entry);
        Some(entry)
    }

    /// Drops up to `EVICT_PER_CALL` expired carts, soonest first.
    fn evict_expired(&mut self, now: OffsetDateTime) {
        for _ in 0..EVICT_PER_CALL {
            match self.expiries.first() {
                Some((expiry, id)) if *expiry <= now => {
                    let id = id.clone();
                    self.remove(&id);
                }
                _ => break,
            }
        }
    }

    fn soonest_expiry(&self) -> Option<OffsetDateTime> {
        self.expiries.first().map(|(expiry, _)| *expiry)
    }
}

/// The cart store is at its bound until `frees_at`.
#[derive(Debug, Clone, Copy)]
pub struct Full {
    pub retry_after: Duration,
}

pub struct CartBook {
    book: Mutex<Book>,
    ttl: Duration,
    max_carts: usize,
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
    pub fn new(ttl: Duration, max_carts: usize) -> Self {
        Self {
            book: Mutex::new(Book::default()),
            ttl,
            max_carts,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Book> {
        // A panic while holding the lock cannot leave a cart half-written (every mutation
        // replaces whole values), so a poisoned map is still consistent.
        self.book
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// `Err` while the store is at its bound with no cart expired yet (for readiness).
    pub fn room(&self) -> Result<(), Full> {
        let mut book = self.lock();
        self.room_in(&mut book)
    }

    fn room_in(&self, book: &mut Book) -> Result<(), Full> {
        let now = OffsetDateTime::now_utc();
        book.evict_expired(now);
        if book.carts.len() < self.max_carts {
            return Ok(());
        }
        let wait = book.soonest_expiry().map_or(self.ttl, |expiry| {
            Duration::try_from(expiry - now).unwrap_or(Duration::ZERO)
        });
        Err(Full { retry_after: wait })
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
    ) -> Result<CartState, Full> {
        let mut book = self.lock();
        self.room_in(&mut book)?;
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
        book.insert(id, entry);
        Ok(cart)
    }

    pub fn get(&self, id: &str) -> Option<CartState> {
        let mut book = self.lock();
        match book.carts.get(id) {
            Some(entry) if Self::live(entry) => Some(entry.cart.clone()),
            Some(_) => {
                book.remove(id);
                None
            }
            None => None,
        }
    }

    pub fn replace(&self, id: &str, specs: Vec<LineSpec>) -> Option<CartState> {
        let mut book = self.lock();
        let mut entry = book.remove(id)?;
        if !Self::live(&entry) {
            return None;
        }
        Self::fill(&mut entry, specs);
        entry.cart.expires_at = Some(self.expiry());
        let cart = entry.cart.clone();
        book.insert(id.to_owned(), entry);
        Some(cart)
    }

    /// Removes the cart, returning it as it was.
    pub fn cancel(&self, id: &str) -> Option<CartState> {
        let mut book = self.lock();
        let entry = book.remove(id)?;
        Self::live(&entry).then_some(entry.cart)
    }
}

#[async_trait]
impl CartPort for SampleStore {
    async fn create(&self, draft: &CartDraft) -> Result<CartOutcome, PlatformError> {
        let (specs, problems) = self.price_lines(draft);
        let cart = self
            .carts
            .create(self.info.currency, &self.info.storefront_url, specs)
            .map_err(|full| PlatformError::Full {
                what: "cart store",
                retry_after: full.retry_after,
            })?;
        Ok(CartOutcome { cart, problems })
    }

    async fn get(&self, id: &str) -> Result<Option<CartState>, PlatformError> {
        if !plausible_id(id) {
            return Ok(None);
        }
        Ok(self.carts.get(id))
    }

    async fn replace(
        &self,
        id: &str,
        draft: &CartDraft,
    ) -> Result<Option<CartOutcome>, PlatformError> {
        if !plausible_id(id) {
            return Ok(None);
        }
        let (specs, problems) = self.price_lines(draft);
        Ok(self
            .carts
            .replace(id, specs)
            .map(|cart| CartOutcome { cart, problems }))
    }

    async fn cancel(&self, id: &str) -> Result<Option<CartState>, PlatformError> {
        if !plausible_id(id) {
            return Ok(None);
        }
        Ok(self.carts.cancel(id))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn create(book: &CartBook) -> Result<CartState, Full> {
        book.create(Currency::USD, "https://shop.example/", Vec::new())
    }

    #[test]
    fn at_the_bound_create_is_refused_with_the_soonest_expiry() {
        let book = CartBook::new(Duration::from_secs(3600), 50);
        for _ in 0..50 {
            create(&book).unwrap();
        }
        let full = create(&book).unwrap_err();
        assert!(full.retry_after > Duration::from_secs(3590), "{full:?}");
        assert!(full.retry_after <= Duration::from_secs(3600), "{full:?}");
        assert!(book.room().is_err());
    }

    #[test]
    fn a_cancelled_cart_makes_room_and_expired_ones_are_evicted() {
        let book = CartBook::new(Duration::from_millis(30), 3);
        let first = create(&book).unwrap();
        create(&book).unwrap();
        create(&book).unwrap();
        assert!(create(&book).is_err());
        book.cancel(&first.id).unwrap();
        create(&book).unwrap();
        std::thread::sleep(Duration::from_millis(50));
        // Every cart expired: room again, and the index emptied along with the map.
        create(&book).unwrap();
        let inner = book.lock();
        assert_eq!(inner.carts.len(), 1);
        assert_eq!(inner.expiries.len(), 1);
    }

    #[test]
    fn a_refused_create_leaves_the_full_book_as_it_was() {
        // What a refusal costs under load is measured by bench/throughput.sh ("The sample
        // store's cart bound" in BENCHMARKS.md), not timed here.
        let book = CartBook::new(Duration::from_secs(3600), 20_000);
        for _ in 0..20_000 {
            create(&book).unwrap();
        }
        for _ in 0..10_000 {
            assert!(create(&book).is_err());
        }
        let inner = book.lock();
        assert_eq!(inner.carts.len(), 20_000);
        assert_eq!(inner.expiries.len(), 20_000);
    }
}
