//! The `CheckoutOrderFormOwnership` cookie of every cart this bridge created, by orderFormId.
//! VTEX hands it out with a new orderForm; without it the cart's personal data is masked and
//! edits may be refused. Kept in memory, bounded, for as long as VTEX keeps a cart.

use std::time::Duration;

use moka::future::Cache;
use secrecy::{ExposeSecret, SecretString};

const MAX_CARTS: u64 = 200_000;

pub struct Owners {
    cookies: Cache<String, std::sync::Arc<SecretString>>,
}

impl Owners {
    pub fn new(ttl: Duration) -> Self {
        Self {
            cookies: Cache::builder()
                .max_capacity(MAX_CARTS)
                .time_to_idle(ttl)
                .build(),
        }
    }

    pub async fn keep(&self, order_form_id: &str, cookie: String) {
        self.cookies
            .insert(
                order_form_id.to_owned(),
                std::sync::Arc::new(SecretString::from(cookie)),
            )
            .await;
    }

    pub async fn cookie(&self, order_form_id: &str) -> Option<String> {
        self.cookies
            .get(order_form_id)
            .await
            .map(|cookie| cookie.expose_secret().to_owned())
    }
}
