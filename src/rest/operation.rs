//! Which tool each REST resource is, and where its request parts go in the tool's arguments.

use serde_json::{Map, Value};

use crate::protocol::ToolName;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    SearchCatalog,
    LookupCatalog,
    GetProduct,
    CreateCart,
    GetCart,
    UpdateCart,
    CancelCart,
    CreateCheckout,
    GetCheckout,
    UpdateCheckout,
    CompleteCheckout,
    CancelCheckout,
    GetOrder,
}

/// Where the REST body sits in the MCP arguments: the OpenAPI body is the object MCP nests
/// under `catalog` (`search_request`, `lookup_request`, `get_product_request`), `cart` or
/// `checkout`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyRole {
    Catalog,
    Cart,
    Checkout,
    /// GET and cancel carry no body the operation reads.
    None,
}

impl Operation {
    pub const ALL: [Operation; 13] = [
        Self::SearchCatalog,
        Self::LookupCatalog,
        Self::GetProduct,
        Self::CreateCart,
        Self::GetCart,
        Self::UpdateCart,
        Self::CancelCart,
        Self::CreateCheckout,
        Self::GetCheckout,
        Self::UpdateCheckout,
        Self::CompleteCheckout,
        Self::CancelCheckout,
        Self::GetOrder,
    ];

    pub fn tool(self) -> ToolName {
        match self {
            Self::SearchCatalog => ToolName::SearchCatalog,
            Self::LookupCatalog => ToolName::LookupCatalog,
            Self::GetProduct => ToolName::GetProduct,
            Self::CreateCart => ToolName::CreateCart,
            Self::GetCart => ToolName::GetCart,
            Self::UpdateCart => ToolName::UpdateCart,
            Self::CancelCart => ToolName::CancelCart,
            Self::CreateCheckout => ToolName::CreateCheckout,
            Self::GetCheckout => ToolName::GetCheckout,
            Self::UpdateCheckout => ToolName::UpdateCheckout,
            Self::CompleteCheckout => ToolName::CompleteCheckout,
            Self::CancelCheckout => ToolName::CancelCheckout,
            Self::GetOrder => ToolName::GetOrder,
        }
    }

    /// The resource path under the namespace's base path, in axum's syntax.
    pub fn path(self) -> &'static str {
        match self {
            Self::SearchCatalog => "/catalog/search",
            Self::LookupCatalog => "/catalog/lookup",
            Self::GetProduct => "/catalog/product",
            Self::CreateCart => "/carts",
            Self::GetCart | Self::UpdateCart => "/carts/{id}",
            Self::CancelCart => "/carts/{id}/cancel",
            Self::CreateCheckout => "/checkout-sessions",
            Self::GetCheckout | Self::UpdateCheckout => "/checkout-sessions/{id}",
            Self::CompleteCheckout => "/checkout-sessions/{id}/complete",
            Self::CancelCheckout => "/checkout-sessions/{id}/cancel",
            Self::GetOrder => "/orders/{id}",
        }
    }

    pub fn method(self) -> http::Method {
        match self {
            Self::GetCart | Self::GetCheckout | Self::GetOrder => http::Method::GET,
            Self::UpdateCart | Self::UpdateCheckout => http::Method::PUT,
            _ => http::Method::POST,
        }
    }

    pub fn body_role(self) -> BodyRole {
        match self {
            Self::SearchCatalog | Self::LookupCatalog | Self::GetProduct => BodyRole::Catalog,
            Self::CreateCart | Self::UpdateCart => BodyRole::Cart,
            Self::CreateCheckout | Self::UpdateCheckout | Self::CompleteCheckout => {
                BodyRole::Checkout
            }
            Self::GetCart
            | Self::CancelCart
            | Self::GetCheckout
            | Self::CancelCheckout
            | Self::GetOrder => BodyRole::None,
        }
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
        matches!(self, Self::CreateCart | Self::CreateCheckout)
    }

    /// What the path's `{id}` names, for refusals.
    pub fn resource(self) -> &'static str {
        match self.tool().capability() {
            crate::protocol::Capability::Checkout => "checkout",
            crate::protocol::Capability::Order => "order",
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
        let key = match self.body_role() {
            BodyRole::Catalog => Some("catalog"),
            BodyRole::Cart => Some("cart"),
            BodyRole::Checkout => Some("checkout"),
            BodyRole::None => None,
        };
        if let (Some(key), Some(body)) = (key, body) {
            arguments.insert(key.to_owned(), body);
        }
        Ok(arguments)
    }

    /// An argument path of the tool (`$.catalog.ids[3]`) as the REST request spells it: the
    /// body's own root (`$.ids[3]`); `None` when it names no part of the body (path, headers).
    pub fn body_path(self, path: &str) -> Option<String> {
        let prefix = match self.body_role() {
            BodyRole::Catalog => "$.catalog",
            BodyRole::Cart => "$.cart",
            BodyRole::Checkout => "$.checkout",
            BodyRole::None => return None,
        };
        let rest = path.strip_prefix(prefix)?;
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
    use serde_json::json;

    #[test]
    fn the_body_is_nested_where_the_tool_reads_it() {
        let search = Operation::SearchCatalog.arguments(Some(json!({"query": "x"})), None);
        assert_eq!(
            search.map(Value::Object),
            Ok(json!({"catalog": {"query": "x"}}))
        );
        let update =
            Operation::UpdateCart.arguments(Some(json!({"line_items": []})), Some("c1".into()));
        assert_eq!(
            update.map(Value::Object),
            Ok(json!({"id": "c1", "cart": {"line_items": []}}))
        );
        let cancel = Operation::CancelCart.arguments(Some(json!({"x": 1})), Some("c1".into()));
        assert_eq!(cancel.map(Value::Object), Ok(json!({"id": "c1"})));
    }

    #[test]
    fn a_put_of_the_entire_cart_names_the_path_cart() {
        // CART-017: the resource's own id is the path's.
        let same = Operation::UpdateCart.arguments(
            Some(json!({"id": "c1", "line_items": []})),
            Some("c1".into()),
        );
        assert_eq!(
            same.map(Value::Object),
            Ok(json!({"id": "c1", "cart": {"line_items": []}}))
        );
        let other = Operation::UpdateCart.arguments(
            Some(json!({"id": "c2", "line_items": []})),
            Some("c1".into()),
        );
        assert_eq!(other, Err("$.id"));
    }

    #[test]
    fn idempotency_key_is_required_on_mutations_only() {
        // Written out from the REST binding (cart-rest.md, checkout-rest.md: every operation
        // that changes a cart or a checkout), not read back from `Tool::mutates`.
        let keyed = [
            Operation::CreateCart,
            Operation::UpdateCart,
            Operation::CancelCart,
            Operation::CreateCheckout,
            Operation::UpdateCheckout,
            Operation::CompleteCheckout,
            Operation::CancelCheckout,
        ];
        for operation in Operation::ALL {
            let names: Vec<&str> = operation
                .required_headers()
                .iter()
                .map(|(name, _)| *name)
                .collect();
            assert!(names.contains(&"ucp-agent") && names.contains(&"request-id"));
            assert_eq!(
                names.contains(&"idempotency-key"),
                keyed.contains(&operation),
                "{operation:?}"
            );
        }
    }

    #[test]
    fn argument_paths_become_body_paths() {
        let lookup = Operation::LookupCatalog;
        assert_eq!(
            lookup.body_path("$.catalog.ids[3]").as_deref(),
            Some("$.ids[3]")
        );
        assert_eq!(lookup.body_path("$.catalog").as_deref(), Some("$"));
        assert_eq!(lookup.body_path("$.catalogue"), None);
        assert_eq!(lookup.body_path("$.meta['ucp-agent']"), None);
        assert_eq!(
            Operation::CreateCart
                .body_path("$.cart.line_items[0]")
                .as_deref(),
            Some("$.line_items[0]")
        );
        assert_eq!(Operation::GetCart.body_path("$.id"), None);
    }
}
