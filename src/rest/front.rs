//! One namespace's REST routes and the translation of one request into a pipeline `Call`:
//! a declared tool as a REST resource (`Operation`: where the request's parts go in the
//! tool's arguments, which headers it requires), and its answer as a REST response.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::rejection::PathRejection;
use axum::extract::{ConnectInfo, Path, Request};
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodRouter, on};
use http::header::{ALLOW, CONTENT_TYPE};
use http::{HeaderValue, StatusCode, request::Parts};
use serde_json::{Map, Value};

use super::body;
use super::error::RestError;
use super::headers;
use super::token::TokenCheck;
use crate::access::Access;
use crate::access::hosts::Hosts;
use crate::pipeline::tools::BodyRole;
use crate::pipeline::tools::Declaration;
use crate::pipeline::{Call, Covered, Passage, Pipeline, WithRelease};
use crate::protocol::answer::{Answer, Outcome};
use crate::protocol::{Capability, MessageCode};

/// What the REST routes of one namespace share.
#[derive(Clone)]
pub struct RestFront {
    pub pipeline: Arc<Pipeline>,
    pub access: Access,
    /// The Host and Origin rules every agent endpoint shares.
    pub hosts: Arc<Hosts>,
    pub body_limit: usize,
    /// Whether `[agents] default_profile` is set: it then stands in for a missing
    /// `UCP-Agent`, as it stands in for a missing `meta` over MCP.
    pub default_profile: bool,
    /// `ucp.version` of a refusal's envelope when the call was refused before negotiation
    /// picked a release (otherwise the envelope names the agreed one).
    pub version: &'static str,
}

/// The REST routes under `base` (no trailing slash), for the tools the store serves (each
/// where its declaration places it), behind the bearer check.
pub fn routes(front: RestFront, base: &str) -> Router {
    let mut router = Router::new();
    let mut paths: Vec<(&'static str, MethodRouter, Vec<http::Method>)> = Vec::new();
    let served: Vec<Operation> = front
        .pipeline
        .tools()
        .declarations()
        .map(Operation)
        .collect();
    for operation in served {
        let handler = {
            let front = front.clone();
            // A rejected path (an id that is not UTF-8 once decoded) is answered by `handle`
            // as a REST refusal, not axum's plain-text one.
            move |path: Result<Path<String>, PathRejection>, request: Request| async move {
                front
                    .handle(operation, path.ok().map(|Path(id)| id), request)
                    .await
            }
        };
        let filter = axum::routing::MethodFilter::try_from(operation.method())
            .unwrap_or(axum::routing::MethodFilter::POST);
        match paths
            .iter_mut()
            .find(|(path, ..)| *path == operation.path())
        {
            Some((_, existing, allowed)) => {
                *existing = existing.clone().on(filter, handler);
                allowed.push(operation.method());
            }
            None => paths.push((
                operation.path(),
                on(filter, handler),
                vec![operation.method()],
            )),
        }
    }
    for (path, methods, allowed) in paths {
        let allow = allow_header(&allowed);
        let version = front.version;
        // axum's own 405 is an empty text answer; an agent reads the REST error envelope.
        let methods = methods.fallback(move || async move {
            let mut response = RestError::method_not_allowed().response(version);
            response.headers_mut().insert(ALLOW, allow);
            response
        });
        router = router.route(&format!("{base}{path}"), methods);
    }
    let tokens = TokenCheck {
        access: front.access.clone(),
        version: front.version,
    };
    router.layer(axum::middleware::from_fn_with_state(
        tokens,
        super::token::require_token,
    ))
}

impl RestFront {
    async fn handle(&self, operation: Operation, id: Option<String>, request: Request) -> Response {
        let request_id = headers::request_id(request.headers());
        let mut response = match self.answer(operation, id, request).await {
            Ok(response) => response,
            Err(refused) => refused
                .error
                .response(refused.release.unwrap_or(self.version)),
        };
        if let Ok(value) = HeaderValue::from_str(&request_id) {
            response.headers_mut().insert("request-id", value);
        }
        response
    }

    async fn answer(
        &self,
        operation: Operation,
        id: Option<String>,
        request: Request,
    ) -> Result<Response, WithRelease<RestError>> {
        if operation.path().contains("{id}") && id.is_none() {
            return Err(RestError::bad_request(
                format!(
                    "the {} id in the path is not valid UTF-8",
                    operation.resource()
                ),
                None,
            )
            .into());
        }
        let (parts, body) = request.into_parts();
        front_door(&self.hosts, &parts)?;
        if !headers::accepts_json(&parts.headers) {
            return Err(RestError::not_acceptable().into());
        }
        required_headers(operation, &parts.headers, self.default_profile)?;
        let received = body::read(&parts.headers, body, self.body_limit).await?;
        let document = self.document(operation, &parts, &received.decoded)?;
        let profile =
            headers::agent_profile(&parts.headers).map_err(|bad| RestError::bad_agent(bad.0))?;
        let meta = headers::meta(profile, &parts.headers);
        let call = Call {
            tool: operation.tool().as_str(),
            arguments: operation.arguments(document, id).map_err(|path| {
                let resource = operation.resource();
                RestError::bad_request(
                    format!(
                        "{path}: the body's {resource} id differs from the {resource} in the path"
                    ),
                    Some(path.to_owned()),
                )
            })?,
            meta: Some(&meta),
            admitted: Passage::UNSIGNED,
            covered: Some(Covered {
                method: &parts.method,
                uri: &parts.uri,
                headers: &parts.headers,
                raw_body: &received.raw,
                frame: &received.decoded,
            }),
            peer: parts
                .extensions
                .get::<ConnectInfo<SocketAddr>>()
                .map(|info| info.0.ip()),
            transport: "rest",
            trace_headers: Some(&parts.headers),
        };
        match self.pipeline.call_with_release(call).await {
            Ok(answer) => Ok(answered(operation, &answer)),
            Err(refused) => Err(WithRelease {
                error: RestError::from_protocol(Some(operation.0), &refused.error),
                release: refused.release,
            }),
        }
    }

    /// The JSON object an operation with a body reads; `None` for GET and cancel, whose
    /// bodies (if any) only the signature step looks at.
    fn document(
        &self,
        operation: Operation,
        parts: &Parts,
        decoded: &[u8],
    ) -> Result<Option<Value>, RestError> {
        if operation.body_role() == BodyRole::None {
            return Ok(None);
        }
        if !headers::content_is_json(&parts.headers) {
            return Err(RestError::unsupported_media_type(
                "the body must be sent as Content-Type: application/json",
            ));
        }
        let value: Value = serde_json::from_slice(decoded).map_err(|error| {
            RestError::bad_request(
                format!("the body is not valid JSON ({error})"),
                Some("$".to_owned()),
            )
        })?;
        if !value.is_object() {
            return Err(RestError::bad_request(
                "the body must be a JSON object",
                Some("$".to_owned()),
            ));
        }
        Ok(Some(value))
    }
}

/// An answer's bytes as the brain wrote them: the same bytes MCP puts in
/// `structuredContent`. A business outcome (not found, out of stock…) is 200 with its
/// `messages`; only a created cart is 201. A write to a completed or canceled checkout
/// conflicts with the resource's state (CHK-017: it is immutable; checkout.md asks for an
/// error saying the operation is not allowed): 409, with the checkout as it stands.
fn answered(operation: Operation, answer: &Answer) -> Response {
    let status = if answer.reason() == Some(MessageCode::CheckoutImmutable.as_str()) {
        StatusCode::CONFLICT
    } else if operation.creates() && answer.outcome() == Outcome::Success && !answer.resumed() {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    (
        status,
        [(CONTENT_TYPE, HeaderValue::from_static("application/json"))],
        Body::from(answer.json().to_owned()),
    )
        .into_response()
}

/// The headers the OpenAPI requires on `operation`, named when one is missing. A missing
/// `UCP-Agent` is NEG-005's `invalid_profile_url`, unless the merchant configured
/// `[agents] default_profile`: then, as over MCP, the call is served as that profile (with
/// an info message saying so).
fn required_headers(
    operation: Operation,
    sent: &http::HeaderMap,
    default_profile: bool,
) -> Result<(), RestError> {
    let required: Vec<(&'static str, &'static str)> = operation
        .required_headers()
        .iter()
        .copied()
        .filter(|(name, _)| !(default_profile && *name == "ucp-agent"))
        .collect();
    match headers::first_missing(sent, &required) {
        None => Ok(()),
        Some("UCP-Agent") => Err(RestError::bad_agent(
            "the UCP-Agent header is required: UCP-Agent: profile=\"https://agent.example/.well-known/ucp\"",
        )),
        Some(name) => Err(RestError::bad_request(
            format!("the {name} header is required on this operation"),
            None,
        )),
    }
}

/// The `Allow` value of a resource: its methods, and HEAD beside GET (axum answers it).
fn allow_header(methods: &[http::Method]) -> HeaderValue {
    let mut names: Vec<&str> = methods.iter().map(http::Method::as_str).collect();
    if methods.contains(&http::Method::GET) {
        names.push("HEAD");
    }
    HeaderValue::from_str(&names.join(", ")).unwrap_or(HeaderValue::from_static("POST"))
}

fn front_door(hosts: &Hosts, parts: &Parts) -> Result<(), RestError> {
    hosts.check(parts).map_err(|foreign| {
        tracing::info!(outcome = "forbidden", %foreign, "REST request refused");
        RestError::forbidden(foreign)
    })
}

/// A tool the REST binding serves, as its declaration places it.
#[derive(Clone, Copy)]
pub struct Operation(pub &'static Declaration);

impl Operation {
    pub fn tool(self) -> crate::protocol::ToolName {
        self.0.name
    }

    /// The resource path under the namespace's base path, in axum's syntax.
    pub fn path(self) -> &'static str {
        self.0.rest.path
    }

    pub fn method(self) -> http::Method {
        self.0.rest.method.http()
    }

    pub fn body_role(self) -> BodyRole {
        self.0.rest.body
    }

    /// The request headers both releases' OpenAPI mark `required: true` on this operation,
    /// as (lower-case name, name as the OpenAPI spells it): `UCP-Agent` and `Request-Id` on
    /// every operation, `Idempotency-Key` on every mutation (cart and checkout).
    pub fn required_headers(self) -> &'static [(&'static str, &'static str)] {
        const EVERY: [(&str, &str); 2] = [("ucp-agent", "UCP-Agent"), ("request-id", "Request-Id")];
        const MUTATION: [(&str, &str); 3] = [
            ("ucp-agent", "UCP-Agent"),
            ("request-id", "Request-Id"),
            ("idempotency-key", "Idempotency-Key"),
        ];
        if self.tool().mutates() {
            &MUTATION
        } else {
            &EVERY
        }
    }

    /// The create resources answer a created cart or checkout with 201 (OpenAPI
    /// `create_cart`, `create_checkout`).
    pub fn creates(self) -> bool {
        self.0.rest.creates
    }

    /// What the path's `{id}` names, for refusals.
    pub fn resource(self) -> &'static str {
        match self.tool().capability() {
            Capability::Checkout => "checkout",
            Capability::Order => "order",
            _ => "cart",
        }
    }

    /// The tool's arguments from the REST body and the path's id. A PUT carries the entire
    /// resource (CART-017, CHK-023), its `id` included: the path names the cart or checkout,
    /// so a body `id` equal to it is dropped and a different one refused (`Err` with its path).
    pub fn arguments(
        self,
        mut body: Option<Value>,
        id: Option<String>,
    ) -> Result<Map<String, Value>, &'static str> {
        if let (Some(Value::Object(cart)), Some(path_id)) = (body.as_mut(), id.as_deref())
            && matches!(self.body_role(), BodyRole::Cart | BodyRole::Checkout)
            && let Some(body_id) = cart.get("id")
        {
            if body_id.as_str() != Some(path_id) {
                return Err("$.id");
            }
            cart.remove("id");
        }
        let mut arguments = Map::new();
        if let Some(id) = id {
            arguments.insert("id".to_owned(), Value::String(id));
        }
        if let (Some(key), Some(body)) = (self.body_role().member(), body) {
            arguments.insert(key.to_owned(), body);
        }
        Ok(arguments)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::tools::{CANCEL_CART, DECLARED, SEARCH_CATALOG, UPDATE_CART};
    use serde_json::json;

    #[test]
    fn the_body_is_nested_where_the_tool_reads_it() {
        let search = Operation(&SEARCH_CATALOG).arguments(Some(json!({"query": "x"})), None);
        assert_eq!(
            search.map(Value::Object),
            Ok(json!({"catalog": {"query": "x"}}))
        );
        let update =
            Operation(&UPDATE_CART).arguments(Some(json!({"line_items": []})), Some("c1".into()));
        assert_eq!(
            update.map(Value::Object),
            Ok(json!({"id": "c1", "cart": {"line_items": []}}))
        );
        let cancel = Operation(&CANCEL_CART).arguments(Some(json!({"x": 1})), Some("c1".into()));
        assert_eq!(cancel.map(Value::Object), Ok(json!({"id": "c1"})));
    }

    #[test]
    fn a_put_of_the_entire_cart_names_the_path_cart() {
        // CART-017: the resource's own id is the path's.
        let same = Operation(&UPDATE_CART).arguments(
            Some(json!({"id": "c1", "line_items": []})),
            Some("c1".into()),
        );
        assert_eq!(
            same.map(Value::Object),
            Ok(json!({"id": "c1", "cart": {"line_items": []}}))
        );
        let other = Operation(&UPDATE_CART).arguments(
            Some(json!({"id": "c2", "line_items": []})),
            Some("c1".into()),
        );
        assert_eq!(other, Err("$.id"));
    }

    #[test]
    fn idempotency_key_is_required_on_mutations_only() {
        // Written out from the REST binding (cart-rest.md, checkout-rest.md: every operation
        // that changes a cart or a checkout), not read back from the declarations.
        let keyed = [
            "create_cart",
            "update_cart",
            "cancel_cart",
            "create_checkout",
            "update_checkout",
            "complete_checkout",
            "cancel_checkout",
        ];
        for operation in DECLARED.map(Operation) {
            let names: Vec<&str> = operation
                .required_headers()
                .iter()
                .map(|(name, _)| *name)
                .collect();
            assert!(names.contains(&"ucp-agent") && names.contains(&"request-id"));
            assert_eq!(
                names.contains(&"idempotency-key"),
                keyed.contains(&operation.tool().as_str()),
                "{}",
                operation.tool().as_str()
            );
        }
    }
}
