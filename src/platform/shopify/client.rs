//! One Storefront GraphQL call: build the body from a typed operation, send it through the
//! shared `UpstreamClient`, and turn HTTP statuses and GraphQL `errors` into `PlatformError`s.

use std::time::Duration;

use graphql_client::{GraphQLQuery, Response};
use reqwest::header::{CONTENT_TYPE, HeaderValue};
use secrecy::ExposeSecret;
use url::Url;

use super::settings::Token;
use crate::platform::port::PlatformError;
use crate::platform::upstream::{CallKind, UpstreamClient, UpstreamResponse, retry_after};

/// Shopify's throttle answer carries no `Retry-After`; its bucket refills within a second.
const THROTTLE_RETRY: Duration = Duration::from_secs(1);
/// Longest wait derived from a throttle answer's cost figures.
const THROTTLE_RETRY_MAX: Duration = Duration::from_secs(10);

pub struct Storefront {
    upstream: UpstreamClient,
    endpoint: Url,
    token_header: &'static str,
    token: HeaderValue,
    /// The configuration key of the token, named when Shopify refuses it.
    token_key: &'static str,
}

impl Storefront {
    /// Calls `endpoint` through `upstream`, the store's one client.
    pub fn new(upstream: UpstreamClient, endpoint: Url, token: &Token) -> Result<Self, String> {
        let (token_header, token_key, secret) = match token {
            Token::Public(secret) => (
                "X-Shopify-Storefront-Access-Token",
                "store.public_token",
                secret,
            ),
            Token::Private(secret) => (
                "Shopify-Storefront-Private-Token",
                "store.private_token",
                secret,
            ),
        };
        let mut token = HeaderValue::from_str(secret.0.expose_secret()).map_err(|_| {
            "the Storefront token holds characters a header cannot carry".to_owned()
        })?;
        // Keeps the value out of reqwest's and hyper's debug output.
        token.set_sensitive(true);
        Ok(Self {
            upstream,
            endpoint,
            token_header,
            token,
            token_key,
        })
    }

    pub async fn run<Q: GraphQLQuery>(
        &self,
        variables: Q::Variables,
        kind: CallKind,
    ) -> Result<Q::ResponseData, PlatformError> {
        let body = Q::build_query(variables);
        let operation = body.operation_name;
        let request = self
            .upstream
            .http()
            .post(self.endpoint.clone())
            .header(CONTENT_TYPE, "application/json")
            .header(self.token_header, self.token.clone())
            .json(&body);
        let response = self.upstream.send_judged(request, kind, throttled).await?;
        decode::<Q::ResponseData>(&response, operation).map_err(|error| match error {
            PlatformError::Unauthorized { .. } => PlatformError::Unauthorized {
                key: self.token_key,
            },
            other => other,
        })
    }
}

#[derive(serde::Deserialize)]
struct ThrottleReply {
    #[serde(default)]
    errors: Vec<ThrottleError>,
}

#[derive(serde::Deserialize)]
struct ThrottleError {
    #[serde(default)]
    extensions: Option<serde_json::Value>,
}

/// GraphQL `THROTTLED` (HTTP 200) as the shared upstream policy's `RateLimited`, so reads are
/// retried and the store is held exactly as after a 429. The wait honours the cost figures
/// when the answer has them (`cost.requestedQueryCost`, `throttleStatus.currentlyAvailable`
/// and `restoreRate`, points per second), otherwise Retry-After or a second.
fn throttled(response: &UpstreamResponse) -> Option<PlatformError> {
    let body = response.body.as_ref();
    if response.status.as_u16() != 200 || !body.windows(9).any(|window| window == b"THROTTLED") {
        return None;
    }
    let reply: ThrottleReply = serde_json::from_slice(body).ok()?;
    let extensions = reply
        .errors
        .iter()
        .filter_map(|error| error.extensions.as_ref())
        .find(|extensions| {
            extensions.get("code").and_then(|code| code.as_str()) == Some("THROTTLED")
        })?;
    let from_cost = extensions.get("cost").and_then(|cost| {
        let number = |value: Option<&serde_json::Value>| value.and_then(serde_json::Value::as_f64);
        let requested = number(cost.get("requestedQueryCost"))?;
        let status = cost.get("throttleStatus")?;
        let available = number(status.get("currentlyAvailable"))?;
        let restore = number(status.get("restoreRate")).filter(|rate| *rate > 0.0)?;
        let seconds =
            ((requested - available).max(0.0) / restore).min(THROTTLE_RETRY_MAX.as_secs_f64());
        Some(Duration::from_secs_f64(seconds.max(0.05)))
    });
    Some(PlatformError::RateLimited {
        retry_after: Some(
            from_cost
                .or_else(|| retry_after(&response.headers))
                .unwrap_or(THROTTLE_RETRY),
        ),
    })
}

fn decode<T: serde::de::DeserializeOwned>(
    response: &UpstreamResponse,
    operation: &str,
) -> Result<T, PlatformError> {
    match response.status.as_u16() {
        200 => {}
        401 | 403 => {
            tracing::error!(operation, "Shopify refused the Storefront token");
            return Err(PlatformError::Unauthorized {
                key: "store.public_token",
            });
        }
        402 | 423 => {
            return Err(PlatformError::Unavailable {
                reason: "the shop is frozen or locked".to_owned(),
                retry_after: None,
            });
        }
        404 => {
            return Err(PlatformError::Unavailable {
                reason: "the shop or API version does not exist".to_owned(),
                retry_after: None,
            });
        }
        status => {
            return Err(PlatformError::BadResponse(format!(
                "{operation}: HTTP {status}"
            )));
        }
    }
    let reply: Response<T> = response.json(operation)?;
    if let Some(errors) = reply.errors.filter(|errors| !errors.is_empty()) {
        let codes: Vec<String> = errors
            .iter()
            .filter_map(|error| {
                error
                    .extensions
                    .as_ref()
                    .and_then(|extensions| extensions.get("code"))
                    .and_then(|code| code.as_str())
                    .map(str::to_owned)
            })
            .collect();
        let has = |wanted: &str| codes.iter().any(|code| code == wanted);
        if has("THROTTLED") {
            return Err(PlatformError::RateLimited {
                retry_after: Some(retry_after(&response.headers).unwrap_or(THROTTLE_RETRY)),
            });
        }
        if has("ACCESS_DENIED") || has("SHOP_INACTIVE") {
            tracing::error!(operation, ?codes, "Shopify denied the request");
            return Err(PlatformError::Unavailable {
                reason: "the store denied access".to_owned(),
                retry_after: None,
            });
        }
        if has("INTERNAL_SERVER_ERROR") {
            return Err(PlatformError::Unavailable {
                reason: "the store had an internal error".to_owned(),
                retry_after: Some(Duration::from_secs(5)),
            });
        }
        if reply.data.is_none() {
            // Messages may echo ids; only their count and codes go to the log.
            tracing::warn!(operation, count = errors.len(), ?codes, "GraphQL errors");
            return Err(PlatformError::BadResponse(format!(
                "{operation}: the store answered with GraphQL errors"
            )));
        }
        tracing::warn!(operation, ?codes, "GraphQL errors next to data");
    }
    reply
        .data
        .ok_or_else(|| PlatformError::BadResponse(format!("{operation}: no data")))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]
    use super::*;
    use bytes::Bytes;
    use reqwest::StatusCode;
    use reqwest::header::HeaderMap;

    fn reply(status: u16, body: &str) -> UpstreamResponse {
        UpstreamResponse {
            status: StatusCode::from_u16(status).unwrap(),
            headers: HeaderMap::new(),
            body: Bytes::from(body.to_owned()),
        }
    }

    fn decoded(status: u16, body: &str) -> Result<serde_json::Value, PlatformError> {
        decode::<serde_json::Value>(&reply(status, body), "Test")
    }

    #[test]
    fn graphql_error_codes_map_to_platform_errors() {
        let throttled = r#"{"errors":[{"message":"Throttled","extensions":{"code":"THROTTLED"}}]}"#;
        assert!(matches!(
            decoded(200, throttled),
            Err(PlatformError::RateLimited {
                retry_after: Some(_)
            })
        ));
        for code in ["ACCESS_DENIED", "SHOP_INACTIVE"] {
            let body =
                format!(r#"{{"errors":[{{"message":"x","extensions":{{"code":"{code}"}}}}]}}"#);
            assert!(matches!(
                decoded(200, &body),
                Err(PlatformError::Unavailable {
                    retry_after: None,
                    ..
                })
            ));
        }
        let internal =
            r#"{"errors":[{"message":"x","extensions":{"code":"INTERNAL_SERVER_ERROR"}}]}"#;
        assert!(matches!(
            decoded(200, internal),
            Err(PlatformError::Unavailable {
                retry_after: Some(_),
                ..
            })
        ));
        let invalid = r#"{"errors":[{"message":"Variable input of type CartInput! was provided invalid value"}]}"#;
        assert!(matches!(
            decoded(200, invalid),
            Err(PlatformError::BadResponse(_))
        ));
    }

    #[test]
    fn statuses_and_bodies_map_without_echoing_content() {
        assert!(matches!(
            decoded(401, ""),
            Err(PlatformError::Unauthorized { .. })
        ));
        assert!(matches!(
            decoded(404, ""),
            Err(PlatformError::Unavailable { .. })
        ));
        match decoded(200, "<html>secret-ish page</html>") {
            Err(PlatformError::BadResponse(message)) => assert!(!message.contains("secret")),
            other => panic!("{other:?}"),
        }
        // Partial data next to errors is still used.
        let partial = r#"{"data":{"ok":1},"errors":[{"message":"x"}]}"#;
        assert_eq!(decoded(200, partial).unwrap()["ok"], 1);
    }
}
