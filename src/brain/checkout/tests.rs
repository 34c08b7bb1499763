//! The checkout rules over the sample store's checkout (a real, deterministic adapter).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;

use super::*;
use crate::model::BuyerContext;
use crate::model::checkout::{CheckoutSource, PaymentHandler};
use crate::platform::sample::checkout::{APPROVE, CODE, DECLINE, EXPIRED_CODE, SampleCheckout};
use crate::platform::sample::{self, SampleStore};
use crate::protocol::envelope::Extensions;
use crate::protocol::{Edition, Release, Severity, Ucp};

const SHOE: &str = "prod_cloud_stride_blu_39"; // R$ 349,90
const SANDAL: &str = "prod_chinelo_praia_azm_3334"; // R$ 34,90

fn store() -> Arc<SampleStore> {
    sample::open(&toml::Table::new()).unwrap()
}

fn brain() -> CheckoutBrain {
    CheckoutBrain::new(Arc::new(SampleCheckout::new(store())))
}

fn lines(items: &[(&str, u32)]) -> CheckoutDraft {
    CheckoutDraft {
        source: CheckoutSource::Lines(
            items
                .iter()
                .map(|(id, quantity)| CartLineInput {
                    item_id: (*id).to_owned(),
                    quantity: *quantity,
                })
                .collect(),
        ),
        context: BuyerContext::default(),
        buyer: Buyer::default(),
    }
}

fn ana() -> Buyer {
    Buyer {
        first_name: Some("Ana".into()),
        last_name: Some("Souza".into()),
        email: Some("ana@example.com".into()),
        phone_number: Some("+5511999990000".into()),
        taxpayer_id: None,
    }
}

fn sao_paulo() -> Address {
    Address {
        first_name: Some("Ana".into()),
        last_name: Some("Souza".into()),
        street_address: Some("Rua Augusta 100".into()),
        address_locality: Some("São Paulo".into()),
        address_region: Some("SP".into()),
        postal_code: Some("01305-000".into()),
        address_country: Some("BR".into()),
        ..Address::default()
    }
}

fn paths(judged: &Judged) -> Vec<String> {
    judged
        .messages
        .iter()
        .filter_map(|message| message.path.clone())
        .collect()
}

fn wire(judged: &Judged, edition: Edition) -> Value {
    let ucp = Ucp {
        version: "2026-08-25",
        status: None,
        capabilities: BTreeMap::new(),
        payment_handlers: None,
    };
    let release = Release {
        version: "2026-08-25",
        edition,
        extensions: Extensions::ALL,
    };
    serde_json::to_value(render::checkout(judged, release, ucp, Vec::new())).unwrap()
}

fn key(value: &str) -> Completion {
    Completion {
        idempotency_key: value.into(),
        handler_id: Some(APPROVE.into()),
    }
}

/// A checkout with everything but the shipping choice filled in.
async fn addressed(brain: &CheckoutBrain) -> Judged {
    let created = brain.create(&lines(&[(SANDAL, 2)])).await.unwrap().0;
    let update = CheckoutUpdate {
        buyer: Some(ana()),
        address: Some(sao_paulo()),
        ..CheckoutUpdate::default()
    };
    brain.update(&created.state.id, &update).await.unwrap()
}

async fn ready(brain: &CheckoutBrain) -> Judged {
    let addressed = addressed(brain).await;
    let update = CheckoutUpdate {
        selections: vec![("grp_1".into(), "sedex".into())],
        ..CheckoutUpdate::default()
    };
    brain.update(&addressed.state.id, &update).await.unwrap()
}

#[tokio::test]
async fn a_new_checkout_is_incomplete_and_names_what_is_missing_by_path() {
    // CHK-029, CHK-033: incomplete, with messages the platform resolves through Update.
    let judged = brain().create(&lines(&[(SANDAL, 1)])).await.unwrap().0;
    assert_eq!(judged.status, Status::Incomplete);
    // The sample store's test orders need no email.
    assert_eq!(paths(&judged), ["$.fulfillment.methods"]);
    // A store that needs it (every real one) is told so first, by path.
    let mut state = judged.state.clone();
    state.needs_email = true;
    assert_eq!(
        paths(&super::status::judge(state)),
        ["$.buyer.email", "$.fulfillment.methods"]
    );
    assert!(
        judged
            .messages
            .iter()
            .all(|message| message.severity == Some(Severity::Recoverable))
    );
}

#[tokio::test]
async fn an_address_brings_the_store_options_and_a_selection_changes_the_totals() {
    // FUL: options with cost and estimate come from the store for the destination; TOT:
    // the totals are the store's after each change.
    let brain = brain();
    let addressed = addressed(&brain).await;
    assert_eq!(addressed.status, Status::Incomplete);
    assert_eq!(
        paths(&addressed),
        ["$.fulfillment.methods[0].groups[0].selected_option_id"]
    );
    let group = &addressed.state.fulfillment[0].groups[0];
    let ids: Vec<&str> = group
        .options
        .iter()
        .map(|option| option.id.as_str())
        .collect();
    assert_eq!(ids, ["pac", "sedex", "pickup"]);
    assert!(group.options.iter().all(|option| option.earliest.is_some()));
    assert_eq!(addressed.state.totals.fulfillment, None);
    assert_eq!(addressed.state.totals.total, 6980);

    let ready = brain
        .update(
            &addressed.state.id,
            &CheckoutUpdate {
                selections: vec![("grp_1".into(), "sedex".into())],
                ..CheckoutUpdate::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(ready.status, Status::ReadyForComplete);
    assert!(ready.messages.is_empty(), "{:?}", ready.messages);
    assert_eq!(ready.state.totals.fulfillment, Some(2990));
    assert_eq!(ready.state.totals.total, 6980 + 2990);
}

#[tokio::test]
async fn an_unknown_option_is_refused_at_its_path() {
    let brain = brain();
    let addressed = addressed(&brain).await;
    // A recoverable message in the checkout, not a refusal of the whole update.
    let judged = brain
        .update(
            &addressed.state.id,
            &CheckoutUpdate {
                selections: vec![("grp_1".into(), "teleport".into())],
                ..CheckoutUpdate::default()
            },
        )
        .await
        .unwrap();
    let refusal = &judged.messages[0];
    assert_eq!(refusal.code, MessageCode::Invalid);
    assert_eq!(refusal.severity, Some(Severity::Recoverable));
    assert_eq!(
        refusal.path.as_deref(),
        Some("$.fulfillment.methods[0].groups[0].selected_option_id")
    );
    assert!(refusal.content.contains("teleport"), "{}", refusal.content);
    assert_eq!(judged.state.fulfillment[0].groups[0].selected_option, None);
}

#[tokio::test]
async fn codes_apply_or_are_refused_with_the_store_reason_and_are_echoed() {
    // DSC: rejected codes as warnings at their `discounts.codes[i]`, echoed in `codes`, not
    // in `applied`; applied ones with allocations; the total is the store's.
    let brain = brain();
    let ready = ready(&brain).await;
    let judged = brain
        .update(
            &ready.state.id,
            &CheckoutUpdate {
                codes: Some(vec!["bemvindo10".into(), EXPIRED_CODE.into()]),
                ..CheckoutUpdate::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(judged.state.codes, ["bemvindo10", EXPIRED_CODE]);
    assert_eq!(judged.state.totals.discount, 698);
    assert_eq!(judged.state.totals.total, 6980 - 698 + 2990);
    let warning = &judged.messages[0];
    assert_eq!(warning.code, MessageCode::DiscountCodeExpired);
    assert_eq!(warning.path.as_deref(), Some("$.discounts.codes[1]"));
    assert_eq!(warning.content, format!("O cupom {EXPIRED_CODE} expirou."));
    // A warning does not block completion.
    assert_eq!(judged.status, Status::ReadyForComplete);
    let out = wire(&judged, Edition::Ucp20260825);
    assert_eq!(out["discounts"]["applied"][0]["code"], CODE);
    assert_eq!(
        out["discounts"]["applied"][0]["allocations"][0]["path"],
        "$.line_items[0]"
    );
    let discount = out["totals"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["type"] == "discount");
    assert_eq!(discount.unwrap()["amount"], -698);

    // An empty list clears the codes.
    let cleared = brain
        .update(
            &ready.state.id,
            &CheckoutUpdate {
                codes: Some(Vec::new()),
                ..CheckoutUpdate::default()
            },
        )
        .await
        .unwrap();
    assert!(cleared.state.codes.is_empty());
    assert_eq!(cleared.state.totals.discount, 0);
}

#[tokio::test]
async fn free_shipping_is_an_automatic_discount_allocated_to_shipping() {
    let brain = brain();
    let created = brain.create(&lines(&[(SHOE, 1)])).await.unwrap().0;
    let judged = brain
        .update(
            &created.state.id,
            &CheckoutUpdate {
                buyer: Some(ana()),
                address: Some(sao_paulo()),
                selections: vec![("grp_1".into(), "pac".into())],
                ..CheckoutUpdate::default()
            },
        )
        .await
        .unwrap();
    let out = wire(&judged, Edition::Ucp20260408);
    let automatic = &out["discounts"]["applied"][0];
    assert_eq!(automatic["automatic"], true);
    assert!(automatic.get("code").is_none());
    assert_eq!(automatic["allocations"][0]["path"], "$.totals.fulfillment");
    assert_eq!(judged.state.totals.total, 34990);
}

#[tokio::test]
async fn the_releases_differ_in_how_a_destination_is_typed() {
    let brain = brain();
    let ready = ready(&brain).await;
    let new = wire(&ready, Edition::Ucp20260825);
    let old = wire(&ready, Edition::Ucp20260408);
    let new_destination = &new["fulfillment"]["methods"][0]["destinations"][0];
    assert_eq!(new_destination["type"], "shipping_address");
    assert_eq!(new_destination["postal_code"], "01305-000");
    assert!(
        old["fulfillment"]["methods"][0]["destinations"][0]
            .get("type")
            .is_none()
    );
    assert_eq!(new["status"], "ready_for_complete");
    // CHK-034: the required top-level fields.
    for field in [
        "ucp",
        "id",
        "line_items",
        "status",
        "currency",
        "totals",
        "links",
    ] {
        assert!(new.get(field).is_some(), "{field} missing");
    }
}

#[tokio::test]
async fn complete_places_once_replays_for_its_key_and_refuses_a_new_one() {
    // CHK-025, CHK-048, CHK-094: completed with `order`; the order is placed at most once.
    let brain = brain();
    let ready = ready(&brain).await;
    let id = ready.state.id.clone();
    let done = brain.complete(&id, &key("k1")).await.unwrap();
    assert_eq!(done.status, Status::Completed);
    let Stage::Placed(order) = &done.state.stage else {
        panic!("not placed: {:?}", done.state.stage)
    };
    let out = wire(&done, Edition::Ucp20260825);
    assert_eq!(out["order"]["id"], order.id.as_str());
    // CHK-003: no continue_url on a terminal status.
    assert!(out.get("continue_url").is_none());

    let replay = brain.complete(&id, &key("k1")).await.unwrap();
    assert_eq!(replay.status, Status::Completed);
    assert!(replay.messages.is_empty());
    let again = brain.complete(&id, &key("k2")).await.unwrap();
    assert_eq!(again.status, Status::Completed);
    assert_eq!(again.messages[0].code, MessageCode::CheckoutImmutable);
    let placed = brain.order(&order.id).await.unwrap();
    assert_eq!(placed.checkout_id, id);
    assert_eq!(placed.totals.total, 6980 + 2990);
    assert!(brain.order("ord_2").await.is_err(), "a second order exists");

    // CHK-017: a completed checkout is immutable.
    let update = brain
        .update(
            &id,
            &CheckoutUpdate {
                codes: Some(vec![CODE.into()]),
                ..CheckoutUpdate::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(update.messages[0].code, MessageCode::CheckoutImmutable);
    assert_eq!(update.state.totals.discount, 0);
    // CHK-027: nor can it be canceled.
    let cancel = brain.cancel(&id).await.unwrap();
    assert_eq!(cancel.status, Status::Completed);
    assert_eq!(cancel.messages[0].code, MessageCode::CheckoutImmutable);
}

#[tokio::test]
async fn complete_needs_a_key_and_one_of_the_checkouts_handlers() {
    let brain = brain();
    let ready = ready(&brain).await;
    let id = ready.state.id.clone();
    let no_key = brain.complete(&id, &key("  ")).await.unwrap_err();
    assert!(
        matches!(no_key, BrainError::InvalidParams { ref path, .. } if path == "$.meta.idempotency-key")
    );
    let unknown = Completion {
        idempotency_key: "k1".into(),
        handler_id: Some("visa_direct".into()),
    };
    let error = brain.complete(&id, &unknown).await.unwrap_err();
    assert!(
        matches!(error, BrainError::InvalidParams { ref path, .. } if path.ends_with("handler_id"))
    );
    let none = Completion {
        idempotency_key: "k2".into(),
        handler_id: None,
    };
    let judged = brain.complete(&id, &none).await.unwrap();
    assert_eq!(judged.status, Status::ReadyForComplete);
    assert_eq!(
        judged.messages[0].path.as_deref(),
        Some("$.payment.instruments")
    );
    // The refusals placed nothing, so a fresh key still can.
    assert_eq!(
        brain.complete(&id, &key("k3")).await.unwrap().status,
        Status::Completed
    );
}

#[tokio::test]
async fn a_declined_payment_leaves_the_checkout_open_for_a_fresh_key() {
    let brain = brain();
    let ready = ready(&brain).await;
    let id = ready.state.id.clone();
    let declined = Completion {
        idempotency_key: "k1".into(),
        handler_id: Some(DECLINE.into()),
    };
    let judged = brain.complete(&id, &declined).await.unwrap();
    assert_eq!(judged.status, Status::ReadyForComplete);
    assert_eq!(judged.messages[0].code, MessageCode::PaymentFailed);
    assert_eq!(judged.messages[0].severity, Some(Severity::Recoverable));
    assert_eq!(
        brain.complete(&id, &key("k2")).await.unwrap().status,
        Status::Completed
    );
}

#[tokio::test]
async fn a_store_without_handlers_escalates_with_continue_url() {
    // CHK-001, CHK-014, CHK-015: requires_escalation carries continue_url and a
    // requires_buyer_input message; completing creates the order pending on the store's page.
    struct NoHandlers(SampleCheckout);
    #[async_trait::async_trait]
    impl crate::platform::checkout::CheckoutPort for NoHandlers {
        fn handlers(&self) -> &[PaymentHandler] {
            &[]
        }
        fn reads_orders(&self) -> bool {
            true
        }
        async fn create_checkout(
            &self,
            d: &CheckoutDraft,
        ) -> Result<crate::platform::checkout::CheckoutOutcome, PlatformError> {
            let mut out = self.0.create_checkout(d).await?;
            out.checkout.handlers.clear();
            Ok(out)
        }
        async fn get_checkout(&self, id: &str) -> Result<Option<CheckoutState>, PlatformError> {
            Ok(self.0.get_checkout(id).await?.map(|mut s| {
                s.handlers.clear();
                s
            }))
        }
        async fn set_lines(
            &self,
            id: &str,
            l: &[CartLineInput],
        ) -> Result<Option<crate::platform::checkout::CheckoutOutcome>, PlatformError> {
            self.0.set_lines(id, l).await
        }
        async fn set_buyer(
            &self,
            id: &str,
            b: &Buyer,
        ) -> Result<Option<CheckoutState>, PlatformError> {
            Ok(self.0.set_buyer(id, b).await?.map(|mut s| {
                s.handlers.clear();
                s
            }))
        }
        async fn set_destination(
            &self,
            id: &str,
            a: &Address,
        ) -> Result<Option<CheckoutState>, PlatformError> {
            Ok(self.0.set_destination(id, a).await?.map(|mut s| {
                s.handlers.clear();
                s
            }))
        }
        async fn select_option(
            &self,
            id: &str,
            g: &str,
            o: &str,
        ) -> Result<Option<CheckoutState>, PlatformError> {
            Ok(self.0.select_option(id, g, o).await?.map(|mut s| {
                s.handlers.clear();
                s
            }))
        }
        async fn apply_code(
            &self,
            id: &str,
            c: &str,
        ) -> Result<Option<crate::model::checkout::CodeOutcome>, PlatformError> {
            self.0.apply_code(id, c).await
        }
        async fn remove_code(
            &self,
            id: &str,
            c: &str,
        ) -> Result<Option<CheckoutState>, PlatformError> {
            self.0.remove_code(id, c).await
        }
        async fn place(
            &self,
            id: &str,
            h: Option<&str>,
        ) -> Result<Option<Placement>, PlatformError> {
            assert_eq!(h, None, "escalation places without a handler");
            self.0.place(id, h).await
        }
        async fn cancel_checkout(&self, id: &str) -> Result<Option<CheckoutState>, PlatformError> {
            self.0.cancel_checkout(id).await
        }
        async fn order(&self, id: &str) -> Result<Option<Order>, PlatformError> {
            self.0.order(id).await
        }
    }
    let brain = CheckoutBrain::new(Arc::new(NoHandlers(SampleCheckout::new(store()))));
    let ready = ready(&brain).await;
    assert_eq!(ready.status, Status::RequiresEscalation);
    assert!(ready.state.continue_url.is_some());
    assert!(
        ready
            .messages
            .iter()
            .any(|message| message.severity == Some(Severity::RequiresBuyerInput))
    );
    let completion = Completion {
        idempotency_key: "k1".into(),
        handler_id: None,
    };
    let judged = brain.complete(&ready.state.id, &completion).await.unwrap();
    assert_eq!(judged.status, Status::RequiresEscalation);
    let out = wire(&judged, Edition::Ucp20260825);
    assert!(
        out["continue_url"]
            .as_str()
            .unwrap()
            .contains("pay?order=ord_")
    );
    assert!(out.get("order").is_none());
    // The pending order exists once; a new key does not make a second.
    brain
        .complete(
            &ready.state.id,
            &Completion {
                idempotency_key: "k2".into(),
                handler_id: None,
            },
        )
        .await
        .unwrap();
    assert!(brain.order("ord_1").await.is_ok());
    assert!(brain.order("ord_2").await.is_err());
}

#[tokio::test]
async fn a_checkout_from_a_cart_carries_its_lines_and_cancel_ends_it() {
    use crate::model::CartDraft;
    use crate::platform::CartPort;
    let store = store();
    let cart = store
        .create(&CartDraft {
            lines: vec![CartLineInput {
                item_id: SANDAL.into(),
                quantity: 3,
            }],
            ..CartDraft::default()
        })
        .await
        .unwrap()
        .cart;
    let brain = CheckoutBrain::new(Arc::new(SampleCheckout::new(store)));
    let draft = CheckoutDraft {
        source: CheckoutSource::Cart(cart.id.clone()),
        context: BuyerContext::default(),
        buyer: ana(),
    };
    let judged = brain.create(&draft).await.unwrap().0;
    assert_eq!(judged.state.lines[0].quantity, 3);
    assert_eq!(judged.state.totals.subtotal, cart.subtotal);
    assert_eq!(paths(&judged), ["$.fulfillment.methods"]);
    let canceled = brain.cancel(&judged.state.id).await.unwrap();
    assert_eq!(canceled.status, Status::Canceled);
    assert!(
        wire(&canceled, Edition::Ucp20260825)
            .get("continue_url")
            .is_none()
    );
    let again = brain.cancel(&judged.state.id).await.unwrap();
    assert_eq!(again.messages[0].code, MessageCode::CheckoutImmutable);
}

#[tokio::test]
async fn an_unknown_checkout_is_an_error_at_its_id() {
    let error = brain().get("chk_nope").await.unwrap_err();
    assert!(
        matches!(error, BrainError::Platform(PlatformError::InvalidAt { ref path, .. }) if path == "$.id")
    );
}

/// Issue 35 item 2: the conversion and hand-off maps stay within their bytes under a flood,
/// and the newest entry (a real buyer's) is kept, not refused.
#[tokio::test]
async fn conversions_and_handoffs_are_bounded_in_bytes_and_keep_the_newest() {
    let brain = brain();
    let long = "x".repeat(1_000);
    for n in 0..40_000 {
        brain
            .conversions
            .put(&format!("cart_{n}_{long}"), format!("chk_{n}"))
            .await
            .unwrap();
    }
    brain
        .conversions
        .put("cart_buyer", "chk_buyer".into())
        .await
        .unwrap();
    assert!(brain.conversions.local_bytes().await <= CONVERSION_BYTES);
    assert_eq!(
        brain
            .conversions
            .get("cart_buyer")
            .await
            .unwrap()
            .as_deref(),
        Some("chk_buyer")
    );
    let handed = |url: String| HandedOff {
        webhook_url: url,
        service: "dev.ucp.shopping".into(),
        version: "2026-04-08".into(),
        fulfillment: true,
        discount: true,
    };
    for n in 0..40_000 {
        brain
            .handed_off(
                &format!("chk_{n}"),
                handed(format!("https://agent.example/{n}/{long}")),
            )
            .await;
    }
    brain
        .handed_off("chk_buyer", handed("https://agent.example/hook".into()))
        .await;
    assert!(brain.handoffs.local_bytes().await <= HANDOFF_BYTES);
    assert!(brain.handoffs.get("chk_buyer").await.unwrap().is_some());
}
