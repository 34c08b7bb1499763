//! A tool as the layers below the pipeline know it: its wire name, the capability it belongs
//! to, and what calling it does to the store. Each tool is declared once, with everything
//! else about it, in `pipeline::tools`; this is the part idempotency, the answer cache and
//! the counters read.

use super::Capability;

/// What a call does to the store, which decides how its `meta["idempotency-key"]` is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Effect {
    /// Reads only: safe to repeat, so a key is not kept.
    Reads,
    /// Changes the store: a keyed call runs once and its retry gets the recorded answer.
    Changes,
    /// Places an order: as `Changes`, and its answer is always kept (it may follow an order
    /// the store placed whatever it says), with a share of the store kept for it alone.
    Completes,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ToolName {
    name: &'static str,
    capability: Capability,
    effect: Effect,
}

impl ToolName {
    pub const fn new(name: &'static str, capability: Capability, effect: Effect) -> Self {
        Self {
            name,
            capability,
            effect,
        }
    }

    pub fn as_str(self) -> &'static str {
        self.name
    }

    pub fn capability(self) -> Capability {
        self.capability
    }

    pub fn effect(self) -> Effect {
        self.effect
    }

    /// Tools that change the store, and so honour `meta["idempotency-key"]`.
    pub fn mutates(self) -> bool {
        self.effect != Effect::Reads
    }
}
