//! The HTTP side: streamable HTTP, held against hostile clients. Every cost a client can
//! drive — open connections, slow requests, body size, live sessions — has a bound (see
//! [`HttpOptions`]), and who a client is never comes from something the client picks (see
//! [`ClientKey`](crate::context::ClientKey)).
//!
//! A request comes in through the listener of [`crate::http`] ([`spawn_http`]: connection
//! caps, the peer's `ClientKey`) or straight to [`HttpHandler`] (`front.rs`: a function
//! runtime, an axum app), which sends the endpoint's path to its steps, and nothing else: the
//! probes (`crate::http`'s) and the resource-metadata document answer only themselves, every
//! other path `404`. The steps are one linear function, `steps.rs`, calling each step's file
//! in order (`forwarded.rs`, `identity.rs` and `body.rs` are `crate::http`'s, which is not
//! MCP):
//!
//! | step | file | reads | writes |
//! |---|---|---|---|
//! | authentication (when configured) | `auth.rs` | the bearer token | `Principal`, its `ClientKey`, or `401`/`403` |
//! | forwarded caps | `forwarded.rs` | trusted proxies' headers | a slot per forwarded client |
//! | identity | `identity.rs` | `ClientKey`, the peer's address | the `ClientKey` |
//! | the door | `door.rs`, `sessions.rs` | `Host`, `Origin`, `mcp-session-id`, the client | a refusal (`rewrite.rs`), or the door's `Cleared` — the only way on to a route — with the session and its admission |
//! | facts, deadline | `steps.rs`, `body.rs` | the `Cleared` | the request's facts ([`facts`](super::facts)) with its exchange, the body's deadline |
//! | JSON-RPC check | `check.rs`, `headers.rs`, `tasks_2025.rs`, `room/route.rs` | the body, read once and bounded (`body.rs`) | the framework's own answers; the request's route (`check::Route`), rmcp or the room, which the room decides |
//! | cancellation | `cancel.rs` | the facts | a `notifications/cancelled` read; the answer's guarded body |
//! | the route | `endpoint.rs` (the steps' `Routes`), `room/` | the route | rmcp's answer, or the room's |
//!
//! Back out, in reverse: the guarded body, rmcp's plain errors as JSON-RPC (`rewrite.rs`), a
//! refused admission, a body too late, the forwarded slot held until the answer's end.
//!
//! Then rmcp, and the handler side (`mcp/handlers/`), which reads the facts — or, for a plain
//! `tools/call` the room took (a 2025 one, stateless or in a live session; a 2026-07-28 one),
//! the handler side straight from the room, the one part that answers without rmcp (`room/`: the
//! check's read of the body is its only parse; rmcp would parse it again, make a service for
//! it and spawn four tasks). `endpoint.rs` assembles the endpoint once from the options;
//! `keep_alive.rs` keeps the streams the framework writes itself alive as rmcp keeps its own.

mod auth;
mod cancel;
mod check;
mod door;
mod endpoint;
mod front;
mod headers;
mod keep_alive;
mod options;
mod rewrite;
mod room;
mod sessions;
#[cfg(test)]
mod step_tests;
mod steps;
mod tasks_2025;

// `tasks_2025.rs` reads a body through `super::body`.
use crate::http::body;

pub use front::{HttpHandler, HttpServer, http_router, spawn_http};
pub use options::HttpOptions;
pub use room::PlainCallsAnswered;
