//! `[pix]` in `doctor`: the PSP issues the bridge a token (client certificate and OAuth2
//! credentials work) and says which webhook is registered for the merchant's key. Nothing
//! secret is printed: not the credentials, not the token, not the key itself.

use std::time::Duration;

use super::Report;
use crate::pix::ApiPix;
use crate::pix::port::PixError;
use crate::pix::settings::PixConfig;
use crate::platform::PlatformError;
use crate::platform::checkout::CheckoutPort;

pub(super) async fn check(config: &PixConfig, timeout: Duration, report: &mut Report) {
    let client = match ApiPix::new(config, timeout) {
        Ok(client) => client,
        Err(problem) => {
            report.fail("pix", problem);
            return;
        }
    };
    if let Err(error) = client.check_credentials().await {
        report.fail("pix token", explain(&error));
        return;
    }
    report.pass(
        "pix token",
        "the PSP issued a token over mutual TLS (pix.client_id, pix.client_cert)",
    );
    match client.webhook().await {
        Ok(Some(url)) => report.pass(
            "pix webhook",
            format!("the PSP notifies settlements to {url}/pix"),
        ),
        Ok(None) => report.pass(
            "pix webhook",
            "none registered for pix.key yet; the bridge registers its own when it starts",
        ),
        Err(error) => report.fail("pix webhook", explain(&error)),
    }
}

fn explain(error: &PixError) -> String {
    match error {
        PixError::Unavailable(reason) => format!("{reason}: check pix.api_url / pix.token_url"),
        other => other.to_string(),
    }
}

/// The store's side of Pix: it takes orders awaiting payment, and the bridge may mark them paid
/// and cancel them (WooCommerce: a REST API v3 key with Read/Write permission), asked without
/// changing any order.
pub(super) async fn store_side(checkout: &dyn CheckoutPort, report: &mut Report) {
    if let Some(why) = checkout.unpaid_refusal() {
        report.fail("pix orders", why);
        return;
    }
    if !checkout.takes_unpaid() {
        report.fail(
            "pix orders",
            "this store cannot take an order awaiting a Pix payment: Pix is not offered",
        );
        return;
    }
    match checkout.check_unpaid_writes().await {
        Ok(detail) => report.pass("pix orders", detail),
        Err(PlatformError::InvalidAt { message, .. }) => report.fail("pix orders", message),
        Err(error) => report.fail("pix orders", error.to_string()),
    }
}
