//! The domain a 2025 session was handed off to (see [`gateway`](crate::gateway)): one slot
//! per session, which the MCP bridge puts in each request's scope.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// A session's handoff: the domain it went to, why, and the state carried over.
#[derive(Clone, Debug, PartialEq)]
pub struct ActiveHandoff {
    /// The domain (a mount's prefix).
    pub domain: String,
    /// Why, as the handler said.
    pub reason: String,
    /// The carry-over state, sent to the upstream in each call's delegation token.
    pub carry: serde_json::Value,
}

/// Where a session keeps its handoff. Cheap to share; every change bumps a generation the
/// bridge compares to tell the client its tools changed.
#[derive(Debug, Default)]
pub struct HandoffSlot {
    active: Mutex<Option<ActiveHandoff>>,
    generation: AtomicU64,
    stateless: bool,
}

impl HandoffSlot {
    /// The slot of a request with no session (MCP 2026-07-28): a handoff answers with a
    /// handle instead of changing what the caller sees.
    pub fn stateless() -> Self {
        HandoffSlot {
            stateless: true,
            ..HandoffSlot::default()
        }
    }

    /// Whether the request has no session (see [`HandoffSlot::stateless`]).
    pub fn is_stateless(&self) -> bool {
        self.stateless
    }

    /// The session's handoff now, if any.
    pub fn get(&self) -> Option<ActiveHandoff> {
        self.active
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Hands the session off (`Some`) or back (`None`).
    pub fn set(&self, handoff: Option<ActiveHandoff>) {
        *self.active.lock().unwrap_or_else(|p| p.into_inner()) = handoff;
        self.generation.fetch_add(1, Ordering::AcqRel);
    }

    /// How many times it changed.
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }
}
