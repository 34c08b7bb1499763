//! A declared tool as a REST resource: where its request parts go in the tool's arguments,
//! and which headers it requires.

use serde_json::{Map, Value};

use crate::pipeline::tools::{BodyRole, Declaration};
use crate::protocol::Capability;

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

    /// The body path whose overlong array is `request_too_large`.
    pub fn batch(self) -> Option<&'static str> {
        self.0.rest.batch
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

    /// An argument path of the tool (`$.catalog.ids[3]`) as the REST request spells it: the
    /// body's own root (`$.ids[3]`); `None` when it names no part of the body (path, headers).
    pub fn body_path(self, path: &str) -> Option<String> {
        let member = self.body_role().member()?;
        let rest = path.strip_prefix("$.")?.strip_prefix(member)?;
        if rest.is_empty() {
            Some("$".to_owned())
        } else if rest.starts_with(['.', '[']) {
            Some(format!("${rest}"))
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::tools::{
        CANCEL_CART, CREATE_CART, DECLARED, GET_CART, LOOKUP_CATALOG, SEARCH_CATALOG, UPDATE_CART,
    };
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

    #[test]
    fn argument_paths_become_body_paths() {
        let lookup = Operation(&LOOKUP_CATALOG);
        assert_eq!(
            lookup.body_path("$.catalog.ids[3]").as_deref(),
            Some("$.ids[3]")
        );
        assert_eq!(lookup.body_path("$.catalog").as_deref(), Some("$"));
        assert_eq!(lookup.body_path("$.catalogue"), None);
        assert_eq!(lookup.body_path("$.meta['ucp-agent']"), None);
        assert_eq!(
            Operation(&CREATE_CART)
                .body_path("$.cart.line_items[0]")
                .as_deref(),
            Some("$.line_items[0]")
        );
        assert_eq!(Operation(&GET_CART).body_path("$.id"), None);
    }
}
