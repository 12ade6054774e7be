//! The room: every request the framework answers without rmcp, and nothing else does. The
//! JSON-RPC check ([`check`](super::check)) decides the route once, from its one read of the
//! body ([`Route`]); a [`Plain`] call comes here, through its one entry, [`Room::answer`].
//! [`HttpOptions::answer_plain_calls`](super::HttpOptions::answer_plain_calls) off, the room
//! is never built and every request goes through rmcp.
//!
//! What comes here is only what rmcp would take straight to its handler with nothing to
//! refuse or negotiate, on a server that hands nothing off:
//! - a plain 2025 `tools/call` (a name, arguments, nothing else) naming no session, on a
//!   stateless endpoint, or naming a live one ([`LiveSessions`]: listed once initialized when
//!   its client declared neither `elicitation` nor `sampling`, and heard by rmcp's worker in
//!   the last half keep-alive);
//! - a plain 2026-07-28 `tools/call` (a name, arguments and a `_meta` whose required keys,
//!   version and log level pass rmcp's own checks, no progress token, a tool that never runs
//!   as a task), whose standard headers say what its body says, naming no session, on either
//!   endpoint: rmcp serves the revision statelessly on both, in JSON on a stateless one, in
//!   SSE on a stateful one.
//!
//! The headers such requests carry are [`headers`]'; anything they do not pass goes to rmcp as
//! before. That the room answers as rmcp would — status, headers, body, SSE events — is
//! `tests/differential.rs`'s to prove, with the room on and off.
//!
//! | file | holds |
//! |---|---|
//! | `headers.rs` | which headers rmcp passes with nothing to refuse (2025 and 2026-07-28) |
//! | `answering.rs` | [`Room`]: the call in a task of its own, its answer as JSON or SSE as rmcp writes it |
//! | `live.rs` | [`LiveSessions`]: the 2025 sessions whose plain calls skip rmcp's worker |
//! | `route.rs` | [`RoomRoute`]: which requests are the room's, decided here from what the check read |

mod answering;
mod headers;
mod live;
mod route;

pub use answering::PlainCallsAnswered;
pub(crate) use answering::{Answered, Plain, PlainKind, Room};
pub(crate) use headers::accepts_json_and_sse;
#[cfg(test)]
pub(crate) use headers::legacy_headers_pass;
pub(crate) use live::LiveSessions;
pub(crate) use route::{RoomRoute, Taken};
