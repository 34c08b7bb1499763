//! `[pix]` put together at start-up: the API Pix client as the checkout rules' PSP, charges
//! kept where every replica reads them, the sweeper of expired charges, the webhook the PSP
//! is told to notify (`PUT /webhook/{chave}`) and the route that hears it.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;

use super::StartError;
use super::configure::BridgeConfig;
use crate::brain::checkout::CheckoutBrain;
use crate::brain::checkout::pix::{PixFlow, Settlement};
use crate::brain::checkout::pix_book::PixBook;
use crate::inbound_webhooks::pix::{PixNotified, Verdict};
use crate::pix::ApiPix;
use crate::replicas::Shared;
use crate::settings::ConfigProblem;

/// How often expired charges are looked for: a charge outlives its expiry by at most this.
const SWEEP_EVERY: Duration = Duration::from_secs(30);

/// The Pix flow `[pix]` describes and its client, or `None` without `[pix]`.
pub fn flow(
    config: &BridgeConfig,
    shared: Option<&Shared>,
) -> Result<Option<(PixFlow, Arc<ApiPix>)>, StartError> {
    let Some(pix) = &config.pix else {
        return Ok(None);
    };
    let api = ApiPix::new(pix, Duration::from_millis(config.upstream.timeout_ms))
        .map_err(|error| StartError::Store(vec![ConfigProblem::new("pix", error)]))?;
    let api = Arc::new(api);
    // The same store gives the same txid on every replica and after a restart: the store's
    // own address, not the one this replica listens on (replicas and a restarted one may
    // listen elsewhere and still settle each other's charges).
    let store = config.store_identity_of_config();
    let keyed = pix.clone();
    let mut flow = PixFlow::new(api.clone(), pix.handler_id.clone(), pix.expires_secs).with_txids(
        Arc::new(move |reference: &str| crate::pix::txid::derive_for(&keyed, &store, reference)),
    );
    if pix.qr_code {
        flow = flow.with_qr(Arc::new(|payload: &str| {
            crate::pix::qr::png_base64(payload).ok()
        }));
    }
    if let Some(shared) = shared {
        flow = flow.with_book(PixBook::shared(shared.link.clone()));
    }
    Ok(Some((flow, api)))
}

/// Where the PSP notifies settlements: `{base}/webhooks/pix` (it posts to `…/pix` under it).
pub fn webhook_url(base_url: &str) -> String {
    format!("{}/webhooks/pix", base_url.trim_end_matches('/'))
}

/// Starts what runs beside the requests: the sweeper, and the webhook registration (a PSP
/// that refuses it is logged; settlement still happens on reads and sweeps).
pub fn start(checkouts: &Arc<CheckoutBrain>, api: Arc<ApiPix>, base_url: &str) {
    if tokio::runtime::Handle::try_current().is_err() {
        return;
    }
    if checkouts.pix().is_none() {
        match checkouts.port().unpaid_refusal() {
            Some(why) => tracing::warn!("[pix] is set but Pix is not offered: {why}"),
            None => tracing::warn!(
                "[pix] is set but Pix is not offered: this store cannot take an order awaiting an outside payment (WooCommerce with pix.store_gateway, or the sample store)"
            ),
        }
        return;
    }
    checkouts.spawn_pix_sweeper(SWEEP_EVERY);
    let url = webhook_url(base_url);
    tokio::spawn(async move {
        match api.register_webhook(&url).await {
            Ok(()) => tracing::info!("Pix webhook registered with the PSP"),
            Err(error) => tracing::warn!(%error, "the PSP refused the Pix webhook registration"),
        }
    });
}

/// The PSP's notification route, when Pix is offered.
pub fn routes(checkouts: Option<&Arc<CheckoutBrain>>) -> Router {
    let Some(checkouts) = checkouts.filter(|checkouts| checkouts.pix().is_some()) else {
        return Router::new();
    };
    let rules = checkouts.clone();
    let notified: PixNotified = Arc::new(move |txid| {
        let rules = rules.clone();
        Box::pin(async move {
            match rules.pix_notified(&txid).await {
                Settlement::Settled | Settlement::AlreadySettled | Settlement::Mismatch => {
                    Verdict::Verified
                }
                Settlement::Unverified => Verdict::Unverified,
                Settlement::Unavailable => Verdict::Retry,
            }
        })
    });
    crate::inbound_webhooks::pix::routes(notified)
}
