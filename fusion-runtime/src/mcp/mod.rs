//! The bridge to MCP through `rmcp`: a hand-written `ServerHandler` (tools/list, tools/call
//! through the pipeline), and the stdio and streamable HTTP transports.
//!
//! Tool-level failures — bad arguments, an unknown tool — are always a `CallToolResult` with
//! `isError` and an envelope, never a JSON-RPC error the model cannot read.
//!
//! The server advertises the `logging` capability. What filters the messages handlers send
//! with [`Context::log`](crate::Context::log) depends on the request's protocol generation
//! ([`era`]):
//!
//! - 2025-x: the level the session set with `logging/setLevel` (one [`McpHandler`] per stdio
//!   connection or HTTP session), [`DEFAULT_LOG_LEVEL`](crate::server::DEFAULT_LOG_LEVEL)
//!   until it sets one. A stateless 2025 request is its own session.
//! - 2026-07-28: the level in the request's `_meta` (`io.modelcontextprotocol/logLevel`);
//!   without one nothing is sent, an unknown one is `-32602`, and `logging/setLevel` is
//!   `Method not found`.
//!
//! Progress and log messages travel on the request's own response stream in every mode:
//! stdio's one stream; over HTTP the call's SSE answer (a stateless answer is plain JSON
//! unless the call sends something first, then SSE). rmcp sends a 2025 session's logs to the
//! GET stream; the cancellation layer (`mcp/http/cancel.rs`) puts them on the call's POST stream.
//!
//! 2026-07-28 results also carry `serverInfo` in `_meta`, and the lists the builder's
//! `ttlMs` / `cacheScope` ([`ServerBuilder::list_cache`](crate::ServerBuilder::list_cache)).
//!
//! Change notifications from application code ([`Notifier`](crate::Notifier)) reach a 2025
//! session through `resources/subscribe` and the list-changed notifications, and a
//! 2026-07-28 client through `subscriptions/listen` (`mcp/handlers/notify.rs`).
//!
//! Between the bytes and rmcp sits a check ([`jsonrpc`]) that answers what rmcp would drop
//! or answer unreadably: over stdio ([`serve_io`]) and HTTP ([`http_router`]) alike, a
//! message that is not JSON gets `-32700`, one that is not a JSON-RPC request (or a batch)
//! `-32600` (over HTTP with status 400), and a `tools/call` with an unusable `name` or
//! `arguments` an `isError` result with its envelope.
//!
//! ## Two sides, one doorway
//!
//! - `http` (`mcp/http/`): the endpoint, on the crate's generic HTTP serving
//!   ([`crate::http`]: the listener and its caps, identity, the one bounded and timed body
//!   read): the request steps, the door, sessions, authentication, error rewriting. It works
//!   out a request's facts once.
//! - `handlers` (`mcp/handlers/`): [`McpHandler`], rmcp's `ServerHandler`, and what it needs.
//! - `facts` (`mcp/facts/`): the doorway — what the HTTP side wrote and the handler side
//!   reads ([`MAX_TRACKED`] and the other bounds of a request's exchange are there).
//! - [`jsonrpc`] (`mcp/jsonrpc/`): the check both transports run before rmcp; `stdio.rs` is
//!   the other transport, `upstream.rs` the client of mounted upstream servers.
//!
//! Imports go one way: `http → {facts, jsonrpc, handlers}`, `stdio → {jsonrpc, handlers}`,
//! `jsonrpc → handlers → facts`. `docs/architecture.md` walks one call through the files.

#[cfg(feature = "server-http")]
mod facts;
mod handlers;
#[cfg(feature = "server-http")]
mod http;
pub mod jsonrpc;
#[cfg(feature = "lambda")]
pub(crate) mod lambda;
#[cfg(feature = "server-stdio")]
mod stdio;
#[cfg(feature = "gateway")]
mod upstream;

pub use handlers::{
    MAX_CURSOR_BYTES, MAX_SUBSCRIPTIONS, MOUNT_META_KEY, McpHandler, Subscriptions, elicit, era,
    request_scope, to_call_tool_result,
};

#[cfg(feature = "server-http")]
#[cfg_attr(docsrs, doc(cfg(feature = "server-http")))]
pub use facts::{MAX_TRACKED, MAX_TRACKED_PER_CLIENT};
#[cfg(feature = "server-http")]
#[cfg_attr(docsrs, doc(cfg(feature = "server-http")))]
pub use http::{HttpHandler, HttpOptions, HttpServer, PlainCallsAnswered, http_router, spawn_http};

#[cfg(feature = "server-stdio")]
#[cfg_attr(docsrs, doc(cfg(feature = "server-stdio")))]
pub use stdio::{DEFAULT_MAX_LINE_BYTES, StdioOptions, serve_io, serve_stdio, serve_stdio_with};
