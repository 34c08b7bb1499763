//! The PSP's Pix notification (API Pix: `PUT /webhook/{chave}` registers `{base}/webhooks/pix`,
//! the PSP then posts `{"pix": [{"txid", "endToEndId", "valor", …}]}` to `{webhookUrl}/pix`).
//! The body is only a signal: nothing in it is believed. Each txid it names is handed to the
//! checkout rules, which read the charge back from the PSP and settle it only on what the PSP
//! answers there. Unsigned and unauthenticated by design (PSPs differ in how they would sign):
//! a forged body can only make the bridge ask the PSP about a charge.
//!
//! Answers say nothing about the charges: 200 once every named charge is verified (settled,
//! already settled, or refused as a mismatch), 503 when one could not be verified for now (the
//! PSP retries), and 400, with no body, for anything the bridge cannot verify (a txid it never
//! made, a charge not concluded, a body that is not a notification).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::StatusCode;
use axum::routing::post;
use serde::Deserialize;

/// What the rules made of one txid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Verified against the PSP (paid, already paid, or refused for good as a mismatch).
    Verified,
    /// Nothing the bridge can verify.
    Unverified,
    /// The PSP, the store or Redis could not be asked now.
    Retry,
}

pub type PixNotified =
    Arc<dyn Fn(String) -> Pin<Box<dyn Future<Output = Verdict> + Send>> + Send + Sync>;

/// A notification names a handful of payments; more is not one.
const MAX_NAMED: usize = 50;
/// A notification of `MAX_NAMED` payments fits well within this.
const MAX_BODY: usize = 64 * 1024;

#[derive(Deserialize)]
struct Notification {
    pix: Vec<Named>,
}

#[derive(Deserialize)]
struct Named {
    txid: Option<String>,
}

/// API Pix's txid: 26 to 35 of `[a-zA-Z0-9]` for a charge (`cob`).
fn well_formed(txid: &str) -> bool {
    (26..=35).contains(&txid.len()) && txid.bytes().all(|byte| byte.is_ascii_alphanumeric())
}

/// `POST /webhooks/pix/pix` (and `/webhooks/pix`, for a PSP that posts to the URL as
/// registered).
pub fn routes(notified: PixNotified) -> Router {
    Router::new()
        .route("/webhooks/pix", post(notification))
        .route("/webhooks/pix/pix", post(notification))
        .layer(DefaultBodyLimit::max(MAX_BODY))
        .with_state(notified)
}

async fn notification(State(notified): State<PixNotified>, body: Bytes) -> StatusCode {
    let Ok(notification) = serde_json::from_slice::<Notification>(&body) else {
        return StatusCode::BAD_REQUEST;
    };
    let mut txids: Vec<String> = notification
        .pix
        .into_iter()
        .filter_map(|named| named.txid)
        .collect();
    txids.sort();
    txids.dedup();
    if txids.is_empty() || txids.len() > MAX_NAMED || !txids.iter().all(|txid| well_formed(txid)) {
        return StatusCode::BAD_REQUEST;
    }
    let mut verdicts = Vec::with_capacity(txids.len());
    for txid in txids {
        verdicts.push(notified(txid).await);
    }
    if verdicts.contains(&Verdict::Retry) {
        StatusCode::SERVICE_UNAVAILABLE
    } else if verdicts.iter().all(|verdict| *verdict == Verdict::Verified) {
        StatusCode::OK
    } else {
        StatusCode::BAD_REQUEST
    }
}
