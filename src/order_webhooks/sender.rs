//! The sender the brain calls: it hands each order event to the shared queue (`[redis]`) or
//! to this process's own (without Redis, or for an event Redis could not take), and returns
//! once it is queued. The attempts themselves are `deliver`'s, whichever queue an event waited in.

use std::sync::Arc;

use serde_json::Value;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc};

use super::OrderWebhooksConfig;
use super::deliver::{Deliverer, Event};
use super::queue::SharedQueue;
use crate::brain::checkout::OrderEvents;
use crate::negotiation::NegotiationConfig;
use crate::replicas::Shared;
use crate::signatures::SigningKey;

/// The sender the brain calls; cheap to share.
pub struct OrderWebhooks {
    base_url: String,
    local: LocalQueue,
    /// `[redis]`'s queue, which every replica drains.
    shared: Option<Arc<SharedQueue>>,
}

/// This process's own queue: without `[redis]`, or for an event Redis could not take.
#[derive(Clone)]
struct LocalQueue {
    queue: mpsc::UnboundedSender<(Event, OwnedSemaphorePermit)>,
    /// Places for events held (queued, under way or waiting to retry).
    places: Arc<Semaphore>,
}

impl LocalQueue {
    fn hand_over(&self, event: Event) {
        let id = event.id.clone();
        let Ok(place) = self.places.clone().try_acquire_owned() else {
            tracing::warn!(
                event_id = id,
                "order event dropped: the delivery queue is full (order_webhooks.queue_capacity)"
            );
            return;
        };
        match self.queue.send((event, place)) {
            Ok(()) => tracing::info!(event_id = id, "order event queued"),
            Err(_) => tracing::warn!(event_id = id, "order event dropped: the sender stopped"),
        }
    }
}

impl OrderWebhooks {
    /// Starts the worker (needs a runtime).
    pub(super) fn start(
        config: &OrderWebhooksConfig,
        negotiation: &NegotiationConfig,
        key: SigningKey,
        base_url: &str,
        shared: Option<&Shared>,
    ) -> Arc<Self> {
        // Unbounded only in type: nothing is sent without one of the `places`.
        let (queue, mut events) = mpsc::unbounded_channel::<(Event, OwnedSemaphorePermit)>();
        let deliverer = Arc::new(Deliverer::new(config, negotiation, key));
        let shared = shared.map(|shared| SharedQueue::start(shared, config, deliverer.clone()));
        tokio::spawn(async move {
            while let Some((event, place)) = events.recv().await {
                let deliverer = deliverer.clone();
                tokio::spawn(async move {
                    deliverer.deliver(event).await;
                    drop(place);
                });
            }
        });
        Arc::new(Self {
            base_url: base_url.trim_end_matches('/').to_owned(),
            local: LocalQueue {
                queue,
                places: Arc::new(Semaphore::new(config.queue_capacity.max(1))),
            },
            shared,
        })
    }
}

#[async_trait::async_trait]
impl OrderEvents for OrderWebhooks {
    /// ORD-029: the "order created" event carries the full order entity, as Get Order renders
    /// it, with the event's id and time (order.md's example body). With `[redis]` it is in the
    /// shared queue when this returns (issue 36 item 4), so a replica that dies after
    /// answering the completion loses no event; without Redis, or when Redis cannot take it,
    /// it waits in this process's queue.
    async fn placed(&self, webhook_url: &str, profile_path: &str, order: Value) {
        let id = uuid::Uuid::new_v4().to_string();
        let at = OffsetDateTime::now_utc();
        let mut body = order;
        if let Some(object) = body.as_object_mut() {
            object.insert("event_id".into(), Value::from(id.clone()));
            if let Ok(created) = at.format(&Rfc3339) {
                object.insert("created_time".into(), Value::from(created));
            }
        }
        let Ok(body) = serde_json::to_string(&body) else {
            return;
        };
        let event = Event {
            id,
            timestamp: at.unix_timestamp(),
            url: webhook_url.to_owned(),
            profile: format!("{}{profile_path}", self.base_url),
            body,
            attempts: 0,
        };
        let Some(shared) = &self.shared else {
            self.local.hand_over(event);
            return;
        };
        if let Err(event) = shared.enqueue(event).await {
            tracing::warn!(
                event_id = event.id,
                "order event kept in this replica's memory: redis unavailable"
            );
            self.local.hand_over(event);
        }
    }
}
