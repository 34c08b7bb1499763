//! The checked call: tool, access, negotiation, validation and idempotency, in that order,
//! around the brain step (or the answer cache, for a catalog read).

use std::sync::OnceLock;

use serde_json::Value;

use super::Steps;
use super::answer_cache::AnswerCache;
use super::protocol_error::ProtocolError;
use super::tools::Context;
use crate::idempotency::{Client, Scope};
use crate::protocol::answer::Answer;
use crate::protocol::request::CallMeta;

/// Tool, access, negotiation, validation, idempotency and brain, in that order. Once
/// negotiation has picked the release, its version is written to `agreed`, so a refusal
/// after that point can be written in the release the agent agreed on. `replay_only`: the
/// signature step found a reused nonce, so only a recorded idempotent answer may be given.
/// `client`: who a keyed mutation's record is charged to.
pub async fn checked(
    steps: &Steps,
    name: &str,
    meta: &CallMeta,
    arguments: Value,
    client: Client,
    replay_only: bool,
    agreed: &OnceLock<&'static str>,
) -> Result<Answer, ProtocolError> {
    let spec = steps
        .tools
        .get(name)
        .ok_or_else(|| ProtocolError::UnknownTool(name.to_owned()))?;
    steps.access.check_profile(meta)?;
    // Boxed, as the brain below: fetching a profile is a large future few calls run.
    let agreement = Box::pin(steps.negotiator.check(meta)).await?;
    let brain = &steps.brain;
    let mut release = brain
        .namespace()
        .release(agreement.as_ref().map(|agreed| agreed.version));
    if let Some(agreed) = &agreement {
        release = release.agreed(|capability| agreed.covers(capability));
    }
    let _ = agreed.set(release.version);
    spec.validate(&arguments)?;
    let capability = spec.name.capability();
    if agreement
        .as_ref()
        .is_some_and(|agreed| !agreed.covers(capability))
    {
        return Ok(brain.capabilities_incompatible(release, capability)?);
    }
    let tool = spec.name;
    // Only a mutation's key is kept: reads are safe to repeat.
    let scope = meta
        .idempotency_key
        .as_deref()
        .filter(|_| tool.mutates())
        .map(|key| Scope {
            profile: meta.profile.as_deref().unwrap_or(""),
            tool,
            key,
            client,
        });
    let webhook_url = agreement
        .as_ref()
        .and_then(|agreed| agreed.webhook_url.as_deref());
    let declaration = spec.declaration;
    let context = Context {
        release,
        webhook_url,
    };
    let run = |arguments| declaration.run(brain, arguments, context);
    // The brain's future is large (every store call it may await) and this one is moved
    // through the limits, the deadline and the span: boxed, a kept answer moves none of it.
    // SIG-030: a byte-identical retry of a signed mutation (same nonce, same key, same
    // payload) gets the answer the first one got (`replay_only`: from the idempotency
    // record, never from kept answers); anything else reusing a nonce is refused.
    match &steps.answers {
        Some(answers) if AnswerCache::keeps(tool) && !replay_only => {
            let namespace = brain.namespace().service;
            match answers.lookup(namespace, release, tool, &arguments).await {
                Ok(kept) => Ok(kept),
                Err(miss) => Box::pin(answers.build(miss, arguments, run)).await,
            }
        }
        _ => Box::pin(steps.idempotency.once(scope, arguments, replay_only, run)).await,
    }
}
