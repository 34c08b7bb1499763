//! Complete Checkout, in three steps: `admit` (the completion ledger's "placed at most once"
//! and the narrow retry of checkout.md), `place` (under the checkout's lease: the checkout
//! read once, then placed at most once), and one `settle` of the ledger entry with how the
//! placement ended; the answer is built from what the placement came to.

use std::sync::Arc;

use super::ledger::{Settled, Turn};
use super::pix::PixFlow;
use super::terminal::Terminal;
use super::{CheckoutBrain, Completion, Judged, Status, gone, with_message};
use crate::brain::BrainError;
use crate::model::checkout::{Order, OrderRef, Placement, Stage, Unmet};
use crate::platform::PlatformError;
use crate::protocol::{Message, MessageCode, Severity};

/// What the ledger lets a completion do.
enum Admitted {
    /// Place the order; `recheck`: the same key's earlier attempt may have placed it.
    Place { recheck: bool },
    /// Nothing is placed: the answer.
    Answered(Box<Judged>),
}

/// How a placement ended, and what its answer is made of.
enum Attempt {
    /// Nothing was placed: the checkout as read before placing.
    Unplaced(Judged),
    /// The same key's earlier attempt placed it: the checkout as read.
    PlacedBefore(Judged),
    /// The store holds the order (`escalated`: the buyer pays or reviews it on the store's
    /// page first).
    Placed {
        order: Order,
        before: Judged,
        escalated: bool,
    },
    /// The store holds the order unpaid, for a Pix charge.
    PlacedUnpaid {
        order: Order,
        before: Judged,
        flow: Arc<PixFlow>,
    },
    /// The store placed nothing, for a reason the agent can act on.
    Refused(Refusal),
    /// Nothing was placed, or (`unknown`: the store did not answer) the order may exist.
    Failed { error: BrainError, unknown: bool },
}

/// Why the store placed nothing, told on the checkout as it then is.
enum Refusal {
    /// The payment was declined.
    Declined(Message),
    /// Fields the buyer can still give or fix.
    Unmet(Vec<Unmet>),
    /// The store's refusal of the request, in its words.
    Store(Message),
}

impl Attempt {
    /// What the ledger keeps of it: only a placed order holds the checkout for good.
    fn settled(&self) -> Settled {
        match self {
            Self::PlacedBefore(_) | Self::Placed { .. } | Self::PlacedUnpaid { .. } => {
                Settled::Placed
            }
            Self::Failed { unknown: true, .. } => Settled::Unknown,
            Self::Unplaced(_) | Self::Refused(_) | Self::Failed { unknown: false, .. } => {
                Settled::Refused
            }
        }
    }

    /// The store's answer to a placement.
    fn of(id: &str, answer: Result<Option<Placement>, PlatformError>, before: Judged) -> Self {
        match answer {
            Ok(Some(Placement::Placed(order))) => Self::Placed {
                order,
                before,
                escalated: false,
            },
            Ok(Some(Placement::Escalated { order, .. })) => Self::Placed {
                order,
                before,
                escalated: true,
            },
            Ok(Some(Placement::Declined { reason })) => Self::Refused(Refusal::Declined(
                Message::error(
                    MessageCode::PaymentFailed,
                    crate::brain::untrusted::line(&reason, crate::brain::untrusted::MESSAGE_MAX),
                    Severity::Recoverable,
                )
                .at("$.payment".to_owned()),
            )),
            Ok(Some(Placement::Refused { unmet })) => Self::Refused(Refusal::Unmet(unmet)),
            // No order exists to place twice, so the key releases the checkout: another
            // completion hands off again, as the checkout read just before says.
            Ok(Some(Placement::HandedOff)) => Self::Unplaced(before),
            Ok(None) => Self::Failed {
                error: gone(id),
                unknown: false,
            },
            // The store refused to place it for want of something (a field it requires that
            // its checkout schema did not say): nothing was placed, and the agent is told what,
            // where, as a recoverable message on the checkout, not a protocol error (issue 37
            // item 3). An unknown checkout stays `not_found`.
            Err(PlatformError::InvalidAt { path, message }) if path != "$.id" => {
                Self::Refused(Refusal::Store(super::store_refusal(&message).at(path)))
            }
            Err(PlatformError::InvalidInput(message)) => {
                Self::Refused(Refusal::Store(super::store_refusal(&message)))
            }
            // The store's refusal of the request left nothing placed; anything else may have
            // placed the order before the answer was lost.
            Err(error @ PlatformError::InvalidAt { .. }) => Self::Failed {
                error: error.into(),
                unknown: false,
            },
            Err(error) => Self::Failed {
                error: error.into(),
                unknown: true,
            },
        }
    }
}

impl Refusal {
    fn told(self, judged: Judged) -> Judged {
        match self {
            Self::Declined(message) => with_message(judged, message),
            Self::Unmet(unmet) => super::refused::with_unmet(judged, &unmet),
            Self::Store(message) => super::refuse_placement(judged, message),
        }
    }
}

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
        let recheck = match self.admit(id, key, completion).await? {
            Admitted::Place { recheck } => recheck,
            Admitted::Answered(judged) => return Ok((*judged, None)),
        };
        // The placement is a write like any other: under the checkout's lease and fence. A
        // lease not taken placed nothing.
        let attempt = self
            .writes
            .run(
                id,
                Box::pin(async { Ok(self.place(id, completion, recheck).await) }),
            )
            .await
            .unwrap_or_else(|error| Attempt::Failed {
                error,
                unknown: false,
            });
        // Settled before anything reads the checkout again (until then it reads as in
        // progress). What follows, the answer's read and a Pix order's charge, writes no
        // checkout: it needs no lease.
        self.completions.settle(id, key, attempt.settled()).await;
        self.answer(id, attempt).await
    }

    /// Whose turn it is: a well-formed completion the ledger lets place, or the answer.
    async fn admit(
        &self,
        id: &str,
        key: &str,
        completion: &Completion,
    ) -> Result<Admitted, BrainError> {
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
        let turn = self.completions.admit(id, key).await?;
        let recheck = match turn {
            Turn::Place => false,
            Turn::Recheck => true,
            Turn::InProgress | Turn::Busy | Turn::Placed { .. } => {
                let judged = self.get(id).await?;
                return Ok(Admitted::Answered(Box::new(not_admitted(&turn, judged))));
            }
        };
        Ok(Admitted::Place { recheck })
    }

    /// One read of the store decides whether the same key's earlier attempt placed it
    /// (`recheck`) and whether the checkout may be placed now; only an open, placeable
    /// checkout reaches the store, once.
    async fn place(&self, id: &str, completion: &Completion, recheck: bool) -> Attempt {
        let state = match self.read(id).await {
            Ok(state) => state,
            // After an earlier attempt under this key the order may exist.
            Err(error) => {
                return Attempt::Failed {
                    error,
                    unknown: recheck,
                };
            }
        };
        if recheck && matches!(state.stage, Stage::Placed(_)) {
            return Attempt::PlacedBefore(self.judge(state));
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
            return Attempt::Unplaced(unplaceable(before));
        }
        // With the Pix handler the order is placed unpaid, and charged once settled.
        let pix = if before.status == Status::ReadyForComplete
            && self.is_pix(completion.handler_id.as_deref())
        {
            let Some(flow) = self.pix.clone() else {
                return Attempt::Failed {
                    error: BrainError::Platform(PlatformError::Unsupported("Pix")),
                    unknown: false,
                };
            };
            Some(flow)
        } else {
            None
        };
        // Escalated: the store's page takes the payment, not a handler of this checkout.
        let handler = if before.status == Status::RequiresEscalation {
            None
        } else {
            completion.handler_id.as_deref()
        };
        let answer = match &pix {
            Some(_) => self.port.place_unpaid(id).await,
            None => self.port.place(id, handler).await,
        };
        match (Attempt::of(id, answer, before), pix) {
            (Attempt::Placed { order, before, .. }, Some(flow)) => Attempt::PlacedUnpaid {
                order,
                before,
                flow,
            },
            (attempt, _) => attempt,
        }
    }

    /// The answer, once the ledger is settled: the checkout as the store now holds it where
    /// the placement changed it.
    async fn answer(
        &self,
        id: &str,
        attempt: Attempt,
    ) -> Result<(Judged, Option<Order>), BrainError> {
        let (refusal, order) = match attempt {
            Attempt::Unplaced(judged) | Attempt::PlacedBefore(judged) => return Ok((judged, None)),
            Attempt::Failed { error, .. } => return Err(error),
            Attempt::PlacedUnpaid {
                order,
                before,
                flow,
            } => return self.charge_placed(id, &flow, order, before).await,
            Attempt::Refused(refusal) => (Some(refusal), None),
            Attempt::Placed {
                escalated: true, ..
            } => (None, None),
            Attempt::Placed {
                order,
                before,
                escalated: false,
            } => {
                // Recorded before anything else can fail: every replica, and this one
                // restarted, answers it completed with its order even where the store or an
                // adapter's memory no longer holds it.
                let mut ended = before.state;
                ended.stage = Stage::Placed(OrderRef {
                    id: order.id.clone(),
                    label: order.label.clone(),
                    permalink_url: order.permalink_url.clone(),
                });
                ended.totals = order.totals;
                if let Some(ended) = Terminal::of(&ended, true) {
                    self.terminals.remember(id, ended).await;
                }
                (None, Some(order))
            }
        };
        let judged = self.get(id).await?;
        if let Some(refusal) = refusal {
            return Ok((refusal.told(judged), None));
        }
        // The event is the completed order's: one the buyer must still pay for on the
        // store's page (escalated) is not announced here.
        let placed = order.filter(|_| judged.status == Status::Completed);
        Ok((judged, placed))
    }
}

/// The answer to a completion the ledger did not let place, on the checkout as read.
fn not_admitted(turn: &Turn, judged: Judged) -> Judged {
    match turn {
        Turn::InProgress => Judged {
            status: Status::CompleteInProgress,
            ..judged
        },
        Turn::Busy => with_message(
            judged,
            Message::error(
                MessageCode::CheckoutCompleteInProgress,
                "Another Complete Checkout for this checkout is being processed",
                Severity::Recoverable,
            ),
        ),
        Turn::Placed { same_key: false } => with_message(
            judged,
            Message::error(
                MessageCode::CheckoutImmutable,
                "This checkout already placed its order",
                Severity::Unrecoverable,
            ),
        ),
        // A replay of the completion that placed it; the admitted turns are not answered here.
        Turn::Placed { same_key: true } | Turn::Place | Turn::Recheck => judged,
    }
}

/// A checkout that may not be placed, answered as it is read, with why.
fn unplaceable(mut judged: Judged) -> Judged {
    // Canceled, or completed where this bridge did not see the order placed (the store's
    // page, a restart): terminal, so immutable as any other write (CHK-017; a replay of the
    // completing call is the idempotency layer's recorded answer).
    if judged.status.is_terminal() {
        return with_message(
            judged,
            Message::error(
                MessageCode::CheckoutImmutable,
                "A completed or canceled checkout cannot be completed",
                Severity::Unrecoverable,
            ),
        );
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
    judged
}
