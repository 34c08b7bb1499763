//! The call pipeline: every tool call, whatever front it came through (MCP or REST, src/rest),
//! passes the same steps here, in this order, and nowhere else:
//!
//! 1. **signatures** — the RFC 9421 check over what the front says the request covered
//!    ([`Covered`]: method, target URI, headers as sent, body as received, decoded body);
//! 2. **meta** — `meta` completed from the transport's metadata and the default profile;
//! 3. the inbound budget and deadline (per agent, per peer) around the rest;
//! 4. **tool** — an unknown tool is refused;
//! 5. **access** — the profile allow-list;
//! 6. **negotiation** — the agent profile fetched and agreed on; it picks the release;
//! 7. **validation** — the arguments against the tool's input schema;
//! 8. **idempotency** — a keyed mutation runs once, its replay is the recorded answer;
//! 9. **brain** — the arguments decoded into the tool's input type and handed to its brain
//!    entry (both declared in [`tools`]); a catalog read
//!    may be answered from the answer cache instead ([`answer_cache`]), the brain's work alone
//!    skipped;
//! 10. **activity** — metrics, the merchant page's counts, the log line.
//!
//! # For a front
//! Build one [`Pipeline`] per namespace (door) from [`Steps`]. For each call, read the wire
//! into a [`Call`] and `pipeline.call(call).await`:
//! - `Ok(Answer)`: the answer's JSON bytes (`answer.json()`), written once by the brain; a
//!   business error is an answer too (`answer.outcome()`);
//! - `Err(ProtocolError)`: a typed refusal; `http_status()` and `code()` (JSON-RPC) are its
//!   wire numbers, `data()` its registry data, `reason()` what may be shown.
//!
//! A front whose errors name a release (REST's error envelope, `ucp.version`) calls
//! [`Pipeline::call_with_release`] instead: the error comes with the release negotiation
//! picked, when the call got that far ([`WithRelease`]).
//!
//! A REST front maps `POST /catalog/search` to `tool: "search_catalog"` (and so on), puts the
//! body in `arguments`, the `UCP-Agent` profile and `Idempotency-Key` header into `meta`
//! (`{"ucp-agent": {"profile": …}, "idempotency-key": …}`), and fills `covered` from its
//! request so the signature step covers the REST request's own components. A message that
//! is not a tool call (MCP `initialize`, `tools/list`) is admitted with
//! [`Pipeline::admit`], the signature step alone.

pub mod activity;
pub mod agents;
pub mod answer_cache;
mod call;
mod checked;
pub mod protocol_error;
pub mod tool_table;
pub mod tools;

use std::net::IpAddr;
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use serde_json::{Map, Value};
use tracing::Instrument;

use self::agents::{AgentsConfig, MetaSource};
use self::answer_cache::AnswerCache;
pub use self::call::{Call, Covered, Passage};
pub use self::protocol_error::ProtocolError;
use self::tool_table::ToolTable;
use crate::access::Access;
use crate::brain::Brain;
use crate::idempotency::{Client, Idempotency};
use crate::inbound::limits::CallLimits;
use crate::negotiation::Negotiator;
use crate::pipeline::activity::Activity;
use crate::protocol::Message;
use crate::protocol::answer::{Answer, Label, Outcome};
use crate::signatures::{Mode, SignatureCheck, SignatureError};
use crate::telemetry;

/// The parts a pipeline runs, each built from its own config section.
pub struct Steps {
    pub signatures: Arc<SignatureCheck>,
    pub agents: AgentsConfig,
    pub limits: Arc<CallLimits>,
    pub tools: ToolTable,
    pub access: Access,
    pub negotiator: Negotiator,
    pub idempotency: Idempotency,
    /// Kept catalog-read answers (`[cache] answers`), shared by every namespace.
    pub answers: Option<Arc<AnswerCache>>,
    pub brain: Brain,
    /// Calls and refusals since start, for the merchant page.
    pub activity: Arc<Activity>,
}

pub struct Pipeline {
    steps: Steps,
}

/// Adds `message` to an answer's `messages[]` (the rare default-profile notice: the answer
/// is re-encoded through a tree).
fn add_message(answer: Answer, message: Message) -> Result<Answer, ProtocolError> {
    let mut value = answer.to_value().map_err(|_| ProtocolError::Internal)?;
    let Ok(message) = serde_json::to_value(message) else {
        return Ok(answer);
    };
    if let Some(object) = value.as_object_mut() {
        match object
            .entry("messages")
            .or_insert_with(|| Value::Array(Vec::new()))
        {
            Value::Array(messages) => messages.push(message),
            other => *other = Value::Array(vec![message]),
        }
    }
    let reason = answer.reason().map(str::to_owned);
    Answer::encode(&value, answer.outcome())
        .map(|encoded| encoded.with_reason(reason))
        .map_err(|_| ProtocolError::Internal)
}

/// An error and the release its call was agreed at: `None` when the call was refused before
/// negotiation picked one (signatures, budget, unknown tool, access, negotiation), and for a
/// front's own errors. The pipeline's carries a [`ProtocolError`]; a front's, its wire form.
#[derive(Debug)]
pub struct WithRelease<E = ProtocolError> {
    pub error: E,
    pub release: Option<&'static str>,
}

/// An error raised before any release was agreed.
impl<E> From<E> for WithRelease<E> {
    fn from(error: E) -> Self {
        Self {
            error,
            release: None,
        }
    }
}

/// Who made a call: its address (the per-peer budget) and the client its idempotency records
/// are charged to (that address, and the agent whose signature verified).
#[derive(Debug, Clone, Copy)]
struct Caller {
    peer: Option<IpAddr>,
    client: Client,
}

/// The metrics label of a call's outcome.
fn label(outcome: &Result<Answer, ProtocolError>) -> Label {
    match outcome {
        Ok(answer) => answer.outcome().label(),
        Err(error) => error.label(),
    }
}

impl Pipeline {
    pub fn new(steps: Steps) -> Self {
        Self { steps }
    }

    pub fn brain(&self) -> &Brain {
        &self.steps.brain
    }

    pub fn tools(&self) -> &ToolTable {
        &self.steps.tools
    }

    /// Whether the signature step reads requests at all; when it does not, a front need not
    /// keep the headers as sent.
    pub fn verifies_signatures(&self) -> bool {
        self.steps.signatures.mode() != Mode::Off
    }

    /// The signature step alone, for a message that is not a tool call (a retried signed
    /// one has no recorded answer to be given, so is refused).
    pub async fn admit(&self, covered: &Covered<'_>) -> Result<(), ProtocolError> {
        match self.passage(covered).await? {
            Passage::Serve { .. } => Ok(()),
            Passage::ReplayOnly => Err(SignatureError::nonce_reused().into()),
        }
    }

    /// The signature step alone, for a frame whose tool call a later reader hands back in
    /// [`Call::admitted`].
    pub async fn passage(&self, covered: &Covered<'_>) -> Result<Passage, ProtocolError> {
        self.steps
            .signatures
            .admit(covered)
            .await
            .map_err(Into::into)
    }

    /// One tool call through every step.
    pub async fn call(&self, call: Call<'_>) -> Result<Answer, ProtocolError> {
        self.call_with_release(call)
            .await
            .map_err(|refused| refused.error)
    }

    /// [`Pipeline::call`], its error carrying the release the call was agreed at.
    pub async fn call_with_release(&self, call: Call<'_>) -> Result<Answer, WithRelease> {
        let agreed = OnceLock::new();
        let (tool, transport, trace_headers) = (call.tool, call.transport, call.trace_headers);
        // Not started yet: a future runs when it is awaited, inside the span when there is one.
        let run = self.run(call, &agreed);
        if !telemetry::enabled() {
            return run.await;
        }
        // Only a tool the bridge knows is named in a trace, never the client's text.
        let known = self
            .steps
            .tools
            .get(tool)
            .map_or("unknown", |spec| spec.name.as_str());
        let span = telemetry::tool_call(known, transport, trace_headers);
        // Boxed: the traced call's future would otherwise sit, whole, inside its wrapper's.
        let outcome = span.within(Box::pin(run)).await;
        let label = match &outcome {
            Ok(answer) => answer.outcome().label().as_str(),
            Err(refused) => refused.error.label().as_str(),
        };
        span.finish(agreed.get().copied(), label, outcome.is_err());
        outcome
    }

    /// The signature step, then [`Pipeline::answer`]; `agreed` receives the release
    /// negotiation picks.
    async fn run(
        &self,
        call: Call<'_>,
        agreed: &OnceLock<&'static str>,
    ) -> Result<Answer, WithRelease> {
        let passage = match &call.covered {
            Some(covered) => self.passage(covered).await.map_err(WithRelease::from)?,
            None => call.admitted,
        };
        let replay_only = passage == Passage::ReplayOnly;
        let signer = match passage {
            Passage::Serve { signer } => signer,
            Passage::ReplayOnly => None,
        };
        self.answer(
            call.tool,
            call.arguments,
            call.meta,
            Caller {
                peer: call.peer,
                client: Client::new(signer, call.peer),
            },
            replay_only,
            agreed,
        )
        .await
        .map_err(|error| WithRelease {
            error,
            release: agreed.get().copied(),
        })
    }

    /// From the raw arguments to the encoded answer: meta completion, the inbound budget and
    /// deadline, the checked call, and the activity record.
    async fn answer(
        &self,
        tool: &str,
        mut arguments: Map<String, Value>,
        protocol_meta: Option<&Map<String, Value>>,
        caller: Caller,
        replay_only: bool,
        agreed: &OnceLock<&'static str>,
    ) -> Result<Answer, ProtocolError> {
        let steps = &self.steps;
        let started = Instant::now();
        let source = agents::complete_meta(&mut arguments, protocol_meta, &steps.agents);
        let meta = agents::read_meta(&arguments);
        let arguments = Value::Object(arguments);
        // At the default level (info) the per-call span and line are disabled callsites;
        // tracing evaluates field expressions only for enabled ones, so the hot path
        // formats and allocates nothing for them. Both fields are the client's words:
        // bounded before they reach any log line.
        let span = tracing::debug_span!(
            "tools/call",
            tool = %tool.chars().take(100).collect::<String>(),
            agent = meta
                .profile
                .as_deref()
                .map(|profile| profile.chars().take(200).collect::<String>())
                .as_deref()
                .unwrap_or("-")
        );
        // Built in place, not bound first: an async fn keeps a slot for every local, so a
        // future held in one and then wrapped would be carried (and moved) twice.
        let outcome = steps
            .limits
            .run(
                tool,
                meta.profile.as_deref(),
                caller.peer,
                checked::checked(
                    steps,
                    tool,
                    &meta,
                    arguments,
                    caller.client,
                    replay_only,
                    agreed,
                ),
            )
            .instrument(span.clone())
            .await;
        let label = label(&outcome);
        let known = steps.tools.declared(tool).unwrap_or("unknown");
        crate::prometheus::tool_call(known, label.as_str(), started.elapsed());
        steps.activity.record(tool, label);
        let elapsed_ms = started.elapsed().as_secs_f64() * 1000.0;
        let _entered = span.enter();
        match outcome {
            Ok(answer) => {
                let answer = match (source, meta.profile.as_deref()) {
                    (MetaSource::DefaultProfile, Some(profile)) => {
                        add_message(answer, agents::default_profile_notice(profile))?
                    }
                    _ => answer,
                };
                tracing::debug!(
                    outcome = answer.outcome().status(),
                    elapsed_ms,
                    "tool answered"
                );
                if answer.outcome() == Outcome::BusinessError {
                    // Message codes are the protocol's vocabulary, not the buyer's words.
                    let reason = answer.reason().unwrap_or("error");
                    steps.activity.record_error(tool, label, None, reason);
                }
                Ok(answer)
            }
            Err(error) => {
                tracing::info!(
                    outcome = "protocol_error",
                    code = error.code(),
                    elapsed_ms,
                    "tool refused"
                );
                steps
                    .activity
                    .record_error(tool, label, Some(error.code()), &error.reason());
                Err(error)
            }
        }
    }
}
