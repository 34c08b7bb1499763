//! Checkouts handed to the store's own page, whose order the store reports later (Shopify's
//! order webhooks) and the bridge then announces to the agent that completed the checkout
//! (ORD-029, ORD-030). What is kept per checkout is data, not a closure, so any replica the
//! store's webhook reaches can announce it: the agent's webhook URL, the namespace and the
//! release the checkout was completed through. Each namespace's rules register how they
//! render and queue an event (`announce_through`) when the bridge starts.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::CheckoutBrain;
use crate::model::checkout::Order;

/// What a hand-off keeps: no buyer data, only where and how the agent hears of the order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HandedOff {
    /// The agent's order webhook, from its profile.
    pub webhook_url: String,
    /// The namespace the checkout was completed through (`Namespace::service`).
    pub service: String,
    /// The release the agent was answered in (`Release::version`) and the checkout
    /// extensions in force for it.
    pub version: String,
    pub fulfillment: bool,
    pub discount: bool,
}

impl HandedOff {
    /// Bytes held beyond the entry's own overhead, for the in-memory bound.
    pub fn held(&self) -> usize {
        self.webhook_url.len() + self.service.len() + self.version.len()
    }
}

/// Renders and queues one order's event, as the namespace that completed the checkout does;
/// the order carries its handle already.
pub type HandoffAnnouncer =
    Arc<dyn Fn(Order, HandedOff) -> Pin<Box<dyn Future<Output = ()> + Send>> + Send + Sync>;

impl CheckoutBrain {
    /// Orders of checkouts handed off through namespace `service` are announced by `announcer`.
    pub fn announce_through(&self, service: &'static str, announcer: HandoffAnnouncer) {
        let mut announcers = self
            .announcers
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        announcers.retain(|(registered, _)| *registered != service);
        announcers.push((service, announcer));
    }

    fn announcer(&self, service: &str) -> Option<HandoffAnnouncer> {
        self.announcers
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .iter()
            .find(|(registered, _)| *registered == service)
            .map(|(_, announcer)| announcer.clone())
    }

    /// A checkout was handed to the store's page: when the store reports its order, the
    /// agent's webhook hears of it as `handed` says.
    pub async fn handed_off(&self, id: &str, handed: HandedOff) {
        if self.handoffs.put(id, handed).await.is_err() {
            tracing::warn!(
                "a hand-off was not shared: its order will not be announced to the agent"
            );
        }
    }

    /// The store reported an order (created or changed) for a checkout the bridge handed
    /// off: its event goes to the agent that completed the checkout (ORD-029, ORD-030).
    pub async fn order_arrived(&self, order: &Order) {
        let handed = match self.handoffs.get(&order.checkout_id).await {
            Ok(Some(handed)) => handed,
            Ok(None) => return,
            Err(_) => {
                tracing::warn!("order event not sent: the shared Redis could not say where to");
                return;
            }
        };
        let Some(announce) = self.announcer(&handed.service) else {
            return;
        };
        let sealed = match self.handles.sealer().await {
            Ok(sealer) => sealer.seal(&order.id),
            Err(error) => Err(error),
        };
        match sealed {
            Ok(id) => {
                announce(
                    Order {
                        id,
                        ..order.clone()
                    },
                    handed,
                )
                .await
            }
            Err(_) => tracing::warn!("order event not sent: its handle could not be made"),
        }
    }
}
