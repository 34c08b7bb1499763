//! The REST side of `doctor`: the sample product asked of the REST binding as an agent asks
//! it (`POST {rest base}/catalog/product` over loopback HTTP), through the bridge the
//! configuration builds, so the routes, headers, pipeline and answer bytes are the ones an
//! agent will meet.

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::signatures::Mode;
use crate::startup::BridgeConfig;
use crate::startup::server_config::Transport;

/// The profile the check sends in `UCP-Agent`; negotiation is off for the check, so it is
/// never fetched.
const DOCTOR_PROFILE: &str = "https://doctor.bcp-bridge.invalid/.well-known/ucp";

/// What the REST check found: `Ok` with the line to show, `Err` with what failed.
pub async fn sample_product(config: &BridgeConfig, product_id: &str) -> Result<String, String> {
    if !config.server.serves(Transport::Rest) {
        return Ok("not served (server.transports has no \"rest\")".to_owned());
    }
    // The doctor is no agent: it holds no bearer token, signing key or fetchable profile,
    // so its copy of the configuration lets it past those doors; everything else is as
    // configured.
    let mut config = config.clone();
    config.access.bearer_token_sha256.clear();
    config.access.allowed_profiles.clear();
    config.negotiation.enabled = false;
    config.signatures.mode = Mode::Off;
    // A loopback bridge that lives for one check must not tell the PSP to notify it instead
    // of the merchant's (start-up registers the webhook), nor sweep the merchant's charges.
    config.pix = None;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(|error| format!("cannot listen on loopback: {error}"))?;
    let bound = listener
        .local_addr()
        .map_err(|error| format!("cannot listen on loopback: {error}"))?;
    let stop = CancellationToken::new();
    let bridge = crate::startup::build(&config, bound, stop.clone())
        .await
        .map_err(|error| format!("the bridge does not build: {error}"))?;
    let rest_base = bridge
        .endpoints
        .first()
        .and_then(|endpoint| endpoint.rest_url.clone())
        .ok_or("no REST base URL was built")?;
    let path = rest_base
        .strip_prefix(&bridge.base_url)
        .unwrap_or("")
        .to_owned();
    let router = bridge.router;
    let serving = stop.clone();
    tokio::spawn(async move {
        let _ = axum::serve(listener, router)
            .with_graceful_shutdown(async move { serving.cancelled().await })
            .await;
    });
    let asked = ask(&format!("http://{bound}{path}/catalog/product"), product_id).await;
    stop.cancel();
    let body = asked?;
    match body.pointer("/product/id").and_then(Value::as_str) {
        Some(_) => Ok(format!(
            "POST {rest_base}/catalog/product answers the sample product"
        )),
        None => Err(format!("{rest_base}/catalog/product answered {body}")),
    }
}

async fn ask(url: &str, product_id: &str) -> Result<Value, String> {
    let client = reqwest::Client::new();
    let response = client
        .post(url)
        .header("content-type", "application/json")
        .header("request-id", uuid::Uuid::new_v4().to_string())
        .header("ucp-agent", format!("profile=\"{DOCTOR_PROFILE}\""))
        .body(json!({ "id": product_id }).to_string())
        .send()
        .await
        .map_err(|error| format!("the REST endpoint did not answer: {error}"))?;
    let status = response.status();
    let body: Value = response
        .json()
        .await
        .map_err(|error| format!("the REST endpoint answered {status}, not JSON: {error}"))?;
    if !status.is_success() {
        let content = body
            .pointer("/messages/0/content")
            .or(body.get("content"))
            .cloned()
            .unwrap_or(body);
        return Err(format!("the REST endpoint answered {status}: {content}"));
    }
    Ok(body)
}
