//! Every tool, each declared once: its name and what it does to the store, how MCP clients
//! show it, where it sits in the REST binding, its input and output types (the schemas
//! `tools/list` publishes are derived from them), its idempotency rule and its brain entry.
//! The MCP tool list, the REST router and the brain step all read these declarations, so a
//! new tool is its declaration, its brain function and its tests.

mod cart;
mod catalog;
mod checkout;
pub mod schema;

use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;

use schemars::{JsonSchema, Schema};
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::protocol_error::ProtocolError;
use crate::brain::{Brain, BrainError, LimitsConfig};
use crate::protocol::answer::Answer;
pub use crate::protocol::tool::{Effect, ToolName};
use crate::protocol::{Capability, Release};

pub use cart::{CANCEL_CART, CREATE_CART, GET_CART, UPDATE_CART};
pub use catalog::{GET_PRODUCT, LOOKUP_CATALOG, SEARCH_CATALOG};
pub use checkout::{
    CANCEL_CHECKOUT, COMPLETE_CHECKOUT, CREATE_CHECKOUT, GET_CHECKOUT, GET_ORDER, UPDATE_CHECKOUT,
};

/// The bridge's tools, in the order `tools/list` publishes them.
pub static DECLARED: [&Declaration; 13] = [
    &SEARCH_CATALOG,
    &LOOKUP_CATALOG,
    &GET_PRODUCT,
    &CREATE_CART,
    &GET_CART,
    &UPDATE_CART,
    &CANCEL_CART,
    &CREATE_CHECKOUT,
    &GET_CHECKOUT,
    &UPDATE_CHECKOUT,
    &COMPLETE_CHECKOUT,
    &CANCEL_CHECKOUT,
    &GET_ORDER,
];

pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What a brain entry knows of the call besides its arguments.
#[derive(Debug, Clone, Copy)]
pub struct Context<'a> {
    /// The release the answer is written in.
    pub release: Release,
    /// The agent's order webhook, from the profile negotiation read.
    pub webhook_url: Option<&'a str>,
}

/// One tool.
pub struct Declaration {
    pub name: ToolName,
    /// How MCP clients show the tool to a person.
    pub title: &'static str,
    /// What the model reads to choose the tool.
    pub what: &'static str,
    /// One complete call's arguments, shown after `what`.
    pub example: &'static str,
    /// MCP's annotations beyond what `name` says (a read is read-only and idempotent).
    pub destructive: bool,
    pub idempotent: bool,
    /// Whether the input schema requires `meta.idempotency-key`, so a retried call is
    /// recognised as the same one.
    pub requires_key: bool,
    /// The member whose `id` must not be sent: the resource is named by `arguments.id`.
    pub refuses_payload_id: Option<&'static str>,
    pub rest: Rest,
    /// The configured limits written into the derived input schema.
    pub limits: fn(&mut Schema, &LimitsConfig) -> Result<(), String>,
    /// The input and output types and the brain entry between them.
    pub entry: &'static (dyn Entry + Sync),
}

/// Where a tool sits in the REST binding.
#[derive(Debug, Clone, Copy)]
pub struct Rest {
    pub method: RestMethod,
    /// The resource path under the namespace's base path, in axum's syntax.
    pub path: &'static str,
    pub body: BodyRole,
    /// A created resource is answered with 201.
    pub creates: bool,
    /// The body path whose overlong array is refused as `request_too_large` (catalog/rest.md
    /// conformance 5) rather than as an invalid request.
    pub batch: Option<&'static str>,
}

impl Rest {
    pub const fn new(method: RestMethod, path: &'static str, body: BodyRole) -> Self {
        Self {
            method,
            path,
            body,
            creates: false,
            batch: None,
        }
    }

    /// Answered with 201 when it creates its resource.
    pub const fn creating(self) -> Self {
        Self {
            creates: true,
            ..self
        }
    }

    /// `path` of the body is a batch whose overlong array is `request_too_large`.
    pub const fn batch(self, path: &'static str) -> Self {
        Self {
            batch: Some(path),
            ..self
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RestMethod {
    Get,
    Post,
    Put,
}

impl RestMethod {
    pub fn http(self) -> http::Method {
        match self {
            Self::Get => http::Method::GET,
            Self::Post => http::Method::POST,
            Self::Put => http::Method::PUT,
        }
    }
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

impl BodyRole {
    /// The argument the body is put under.
    pub fn member(self) -> Option<&'static str> {
        match self {
            Self::Catalog => Some("catalog"),
            Self::Cart => Some("cart"),
            Self::Checkout => Some("checkout"),
            Self::None => None,
        }
    }
}

impl Declaration {
    pub fn read_only(&self) -> bool {
        !self.name.mutates()
    }

    pub fn capability(&self) -> Capability {
        self.name.capability()
    }

    /// The arguments decoded into the tool's input type and handed to its brain entry.
    pub fn run<'a>(
        &self,
        brain: &'a Brain,
        arguments: Value,
        context: Context<'a>,
    ) -> BoxFuture<'a, Result<Answer, ProtocolError>> {
        if let Some(payload) = self.refuses_payload_id
            && let Err(error) = reject_payload_id(&arguments, payload)
        {
            return refused(error);
        }
        self.entry.run(brain, arguments, context)
    }
}

/// A tool's types and brain entry, behind one object so declarations of different types
/// share one list.
pub trait Entry {
    fn input(&self) -> Schema;
    fn output(&self) -> Schema;
    fn run<'a>(
        &self,
        brain: &'a Brain,
        arguments: Value,
        context: Context<'a>,
    ) -> BoxFuture<'a, Result<Answer, ProtocolError>>;
}

/// The brain entry of a tool taking `In` and answering `Out`.
pub type BrainEntry<In> =
    for<'a> fn(&'a Brain, In, Context<'a>) -> BoxFuture<'a, Result<Answer, ProtocolError>>;

pub struct Typed<In, Out> {
    brain: BrainEntry<In>,
    types: PhantomData<fn() -> (In, Out)>,
}

impl<In, Out> Typed<In, Out> {
    pub const fn new(brain: BrainEntry<In>) -> Self {
        Self {
            brain,
            types: PhantomData,
        }
    }
}

impl<In, Out> Entry for Typed<In, Out>
where
    In: DeserializeOwned + JsonSchema,
    Out: JsonSchema,
{
    fn input(&self) -> Schema {
        schema::input::<In>()
    }

    fn output(&self) -> Schema {
        schema::output::<Out>()
    }

    fn run<'a>(
        &self,
        brain: &'a Brain,
        arguments: Value,
        context: Context<'a>,
    ) -> BoxFuture<'a, Result<Answer, ProtocolError>> {
        match decode::<In>(arguments) {
            Ok(arguments) => (self.brain)(brain, arguments, context),
            Err(error) => refused(error),
        }
    }
}

/// A brain method's answer as an entry's.
pub fn answer<'a>(
    future: impl Future<Output = Result<Answer, BrainError>> + Send + 'a,
) -> BoxFuture<'a, Result<Answer, ProtocolError>> {
    Box::pin(async move { future.await.map_err(ProtocolError::from) })
}

/// A refusal before the brain is asked.
pub fn refused<'a>(error: ProtocolError) -> BoxFuture<'a, Result<Answer, ProtocolError>> {
    Box::pin(std::future::ready(Err(error)))
}

fn decode<T: DeserializeOwned>(arguments: Value) -> Result<T, ProtocolError> {
    // Arguments already passed the JSON Schema; what serde can still refuse (e.g. a number
    // past u32) is reported the same way.
    serde_path_to_error::deserialize(arguments).map_err(|error| {
        let path = format!("$.{}", error.path());
        ProtocolError::invalid_at(&path, error.inner().to_string())
    })
}

fn reject_payload_id(arguments: &Value, payload: &str) -> Result<(), ProtocolError> {
    if arguments
        .get(payload)
        .and_then(Value::as_object)
        .is_some_and(|object| object.contains_key("id"))
    {
        return Err(ProtocolError::invalid_at(
            &format!("$.{payload}.id"),
            format!(
                "must not be present: the {payload} is identified by the top-level `id` argument"
            ),
        ));
    }
    Ok(())
}

/// No configured limit applies to the tool's input.
pub fn no_limits(_: &mut Schema, _: &LimitsConfig) -> Result<(), String> {
    Ok(())
}
