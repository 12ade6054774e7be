//! The HTTP room: streamable HTTP, held against hostile clients. Every cost a client can
//! drive — open connections, slow requests, body size, live sessions — has a bound (see
//! [`HttpOptions`]), and who a client is never comes from something the client picks (see
//! [`ClientKey`](crate::context::ClientKey)).
//!
//! A request goes through these steps, each in its own file, in order:
//!
//! | step | file | reads | writes |
//! |---|---|---|---|
//! | connection caps | `listener.rs`, `forwarded.rs` | the socket, trusted proxies' headers | a connection slot, the peer's `ClientKey` |
//! | authentication (when configured) | `auth.rs` | the bearer token | `Principal`, its `ClientKey`, or `401`/`403` |
//! | identity, the door, deadline | `guard.rs`, `identity.rs`, `door.rs`, `sessions.rs` | `ClientKey`, `Principal`, `Host`, `Origin`, `mcp-session-id` | a refusal (`rewrite.rs`), or the door's `Cleared` — the only way on to a route — and the request's facts ([`facts`](super::facts)), the body's deadline (`body.rs`) |
//! | JSON-RPC check | `check.rs`, `headers.rs`, `tasks_2025.rs` | the body, read once and bounded (`body.rs`) | the framework's own answers; rmcp's plain errors as JSON-RPC; the request's route (`check::Route`): rmcp, or the room |
//! | cancellation | `cancel.rs` | the facts | the request's exchange, in its facts |
//!
//! Then rmcp, and the handler room (`mcp/handlers/`), which reads the facts — or, for a plain
//! `tools/call` the check routed there (a 2025 one, stateless or in a live session; a
//! 2026-07-28 one on a stateless endpoint), the handler room straight from the one room that
//! answers without rmcp (`room/`: the check's read of the body is its only parse; rmcp would
//! parse it again, make a service for it and spawn four tasks).
//! `health.rs` and `metrics.rs` are the listener's other routes and its metrics listener.

mod auth;
mod body;
mod cancel;
mod check;
mod door;
mod forwarded;
mod guard;
mod handler;
mod headers;
mod health;
mod identity;
mod listener;
#[cfg(feature = "metrics")]
mod metrics;
mod options;
mod rewrite;
mod room;
mod router;
mod sessions;
#[cfg(test)]
mod step_tests;
mod tasks_2025;

pub use handler::{HttpHandler, http_router};
pub use health::ReadyCheck;
pub use identity::ForwardedHeader;
/// The key of a client known by its address (a function runtime's event names it).
#[cfg(feature = "lambda")]
pub(crate) use identity::ip_key;
pub use listener::{HttpServer, spawn_http};
#[cfg(feature = "metrics")]
#[cfg_attr(docsrs, doc(cfg(feature = "metrics")))]
pub use metrics::{MetricsServer, spawn_metrics};
pub use options::HttpOptions;
pub use room::PlainCallsAnswered;
