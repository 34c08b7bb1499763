//! Complete Checkout: admitted by the completion ledger ("placed at most once", the narrow
//! retry of checkout.md), then placed under the checkout's lease, and settled.

use super::ledger::{Admission, Settled};
use super::terminal::Terminal;
use super::{CheckoutBrain, Completion, Judged, Status, gone, with_message};
use crate::brain::BrainError;
use crate::model::checkout::{Order, OrderRef, Placement, Stage};
use crate::platform::PlatformError;
use crate::protocol::{Message, MessageCode, Severity};

impl CheckoutBrain {
    /// Places the order at most once. Only a checkout that is `ready_for_complete` (or that
    /// escalates for payment, where placing creates the order the buyer then pays on the
    /// store's page) reaches the store; every other status answers as it is.
    pub async fn complete(&self, id: &str, completion: &Completion) -> Result<Judged, BrainError> {
        self.complete_placing(id, completion)
            .await
            .map(|(judged, _)| judged)
    }

    /// `complete`, and the order when this call is the one that placed it (a replay, or an
    /// order placed earlier, gives `None`: its event was sent when it was placed).
    pub async fn complete_placing(
        &self,
        id: &str,
        completion: &Completion,
    ) -> Result<(Judged, Option<Order>), BrainError> {
        let key = completion.idempotency_key.trim();
        if key.is_empty() {
            return Err(BrainError::invalid(
                "$.meta.idempotency-key",
                "Complete Checkout requires an idempotency key",
            ));
        }
        if let Some(handler) = &completion.handler_id
            && !self.is_pix(Some(handler))
            && !self
                .port
                .handlers()
                .iter()
                .any(|known| known.id == *handler)
        {
            return Err(BrainError::invalid(
                "$.checkout.payment.instruments[0].handler_id",
                format!("{handler} is not one of this checkout's payment handlers"),
            ));
        }
        let recheck = match self.completions.admit(id, key).await? {
            Admission::Place => false,
            Admission::Recheck => true,
            Admission::InProgress => {
                let mut judged = self.get(id).await?;
                judged.status = Status::CompleteInProgress;
                return Ok((judged, None));
            }
            Admission::Busy => {
                let judged = self.get(id).await?;
                return Ok((
                    with_message(
                        judged,
                        Message::error(
                            MessageCode::CheckoutCompleteInProgress,
                            "Another Complete Checkout for this checkout is being processed",
                            Severity::Recoverable,
                        ),
                    ),
                    None,
                ));
            }
            Admission::Placed { same_key } => {
                let judged = self.get(id).await?;
                return Ok((
                    if same_key {
                        judged
                    } else {
                        with_message(
                            judged,
                            Message::error(
                                MessageCode::CheckoutImmutable,
                                "This checkout already placed its order",
                                Severity::Unrecoverable,
                            ),
                        )
                    },
                    None,
                ));
            }
        };
        // The placement is a write like any other: under the checkout's lease and fence. A
        // lease not taken placed nothing, so the key releases the checkout.
        let started = std::sync::atomic::AtomicBool::new(false);
        let placed = self
            .writes
            .run(
                id,
                Box::pin(async {
                    started.store(true, std::sync::atomic::Ordering::SeqCst);
                    self.place_admitted(id, key, completion, recheck).await
                }),
            )
            .await;
        if !started.load(std::sync::atomic::Ordering::SeqCst) {
            self.completions.settle(id, key, Settled::Refused).await;
        }
        placed
    }

    /// The placement a completion under `key` was admitted to: re-reads the store (only an
    /// open, placeable checkout reaches `place`) and settles the ledger entry.
    async fn place_admitted(
        &self,
        id: &str,
        key: &str,
        completion: &Completion,
        recheck: bool,
    ) -> Result<(Judged, Option<Order>), BrainError> {
        // One read decides: whether the same key's earlier attempt placed it (`recheck`),
        // and whether the checkout may be placed now.
        let state = match self.read(id).await {
            Ok(state) => state,
            Err(error) => {
                // After an earlier attempt under this key the order may exist.
                let how = if recheck {
                    Settled::Unknown
                } else {
                    Settled::Refused
                };
                self.completions.settle(id, key, how).await;
                return Err(error);
            }
        };
        if recheck && matches!(state.stage, Stage::Placed(_)) {
            self.completions.settle(id, key, Settled::Placed).await;
            return Ok((self.judge(state), None));
        }
        let before = self.judge(state);
        let placeable = match before.status {
            Status::ReadyForComplete => completion.handler_id.is_some(),
            // Escalated for payment: placing makes the order the buyer pays on the store's
            // page. Escalated for a field only that page collects: nothing to place here.
            Status::RequiresEscalation => {
                super::requirements::escalations(&before.state).is_empty()
            }
            _ => false,
        };
        if !placeable {
            self.completions.settle(id, key, Settled::Refused).await;
            let mut judged = before;
            // Canceled, or completed where this bridge did not see the order placed (the
            // store's page, a restart): terminal, so immutable as any other write (CHK-017;
            // a replay of the completing call is the idempotency layer's recorded answer).
            if judged.status.is_terminal() {
                return Ok((
                    with_message(
                        judged,
                        Message::error(
                            MessageCode::CheckoutImmutable,
                            "A completed or canceled checkout cannot be completed",
                            Severity::Unrecoverable,
                        ),
                    ),
                    None,
                ));
            }
            if judged.status == Status::ReadyForComplete {
                judged.messages.insert(
                    0,
                    Message::error(
                        MessageCode::Missing,
                        "Choose one of the checkout's payment handlers",
                        Severity::Recoverable,
                    )
                    .at("$.payment.instruments".to_owned()),
                );
            }
            return Ok((judged, None));
        }
        if before.status == Status::ReadyForComplete
            && self.is_pix(completion.handler_id.as_deref())
        {
            return self.place_pix(id, key, before).await;
        }
        let handler = if before.status == Status::RequiresEscalation {
            None
        } else {
            completion.handler_id.as_deref()
        };
        match self.port.place(id, handler).await {
            Ok(Some(Placement::Declined { reason })) => {
                self.completions.settle(id, key, Settled::Refused).await;
                let judged = self.get(id).await?;
                Ok((
                    with_message(
                        judged,
                        Message::error(
                            MessageCode::PaymentFailed,
                            crate::brain::untrusted::line(
                                &reason,
                                crate::brain::untrusted::MESSAGE_MAX,
                            ),
                            Severity::Recoverable,
                        )
                        .at("$.payment".to_owned()),
                    ),
                    None,
                ))
            }
            Ok(Some(Placement::Refused { unmet })) => {
                self.completions.settle(id, key, Settled::Refused).await;
                let judged = self.get(id).await?;
                Ok((super::refused::with_unmet(judged, &unmet), None))
            }
            // No order exists to place twice, so the key releases the checkout: another
            // completion hands off again, as the checkout read just before says.
            Ok(Some(Placement::HandedOff)) => {
                self.completions.settle(id, key, Settled::Refused).await;
                Ok((before, None))
            }
            Ok(Some(Placement::Placed(order))) => {
                self.completions.settle(id, key, Settled::Placed).await;
                // Recorded before anything else can fail: every replica, and this one
                // restarted, answers it completed with its order even where the store or an
                // adapter's memory no longer holds it.
                let mut ended = before.state.clone();
                ended.stage = Stage::Placed(OrderRef {
                    id: order.id.clone(),
                    label: order.label.clone(),
                    permalink_url: order.permalink_url.clone(),
                });
                ended.totals = order.totals;
                if let Some(ended) = Terminal::of(&ended, true) {
                    self.terminals.remember(id, ended).await;
                }
                let judged = self.get(id).await?;
                // The event is the completed order's: one the buyer must still pay for on the
                // store's page is not announced here.
                let placed = (judged.status == Status::Completed).then_some(order);
                Ok((judged, placed))
            }
            Ok(Some(Placement::Escalated { .. })) => {
                self.completions.settle(id, key, Settled::Placed).await;
                self.get(id).await.map(|judged| (judged, None))
            }
            Ok(None) => {
                self.completions.settle(id, key, Settled::Refused).await;
                Err(gone(id))
            }
            // The store refused to place it for want of something (a field it requires that
            // its checkout schema did not say): nothing was placed, and the agent is told what,
            // where, as a recoverable message on the checkout, not a protocol error (issue 37
            // item 3). An unknown checkout stays `not_found`.
            Err(PlatformError::InvalidAt { path, message }) if path != "$.id" => {
                self.completions.settle(id, key, Settled::Refused).await;
                let refused = super::store_refusal(&message).at(path);
                Ok((super::refuse_placement(self.get(id).await?, refused), None))
            }
            Err(PlatformError::InvalidInput(message)) => {
                self.completions.settle(id, key, Settled::Refused).await;
                let refused = super::store_refusal(&message);
                Ok((super::refuse_placement(self.get(id).await?, refused), None))
            }
            // The store's refusal of the request left nothing placed; anything else may have
            // placed the order before the answer was lost.
            Err(error @ PlatformError::InvalidAt { .. }) => {
                self.completions.settle(id, key, Settled::Refused).await;
                Err(error.into())
            }
            Err(error) => {
                self.completions.settle(id, key, Settled::Unknown).await;
                Err(error.into())
            }
        }
    }
}
