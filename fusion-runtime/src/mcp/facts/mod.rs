//! The doorway between the two sides of `mcp`: what the HTTP side (`mcp/http/`) works out
//! about one request, once, and the handler side (`mcp/handlers/`) reads — [`RequestFacts`] —
//! and the request's [`Exchange`]: the calls it carries, whether its client went away, and the
//! log events waiting for a 2025 session call's own response stream.
//!
//! The HTTP side writes: [`RequestFacts`] (with its [`Exchange`]) into the request's
//! extensions, once, in the endpoint's steps (`http/steps.rs`), after authentication, identity
//! and the door (the session they carry is the one the door cleared). The cancellation step
//! (`http/cancel.rs`) takes the exchange from them. A request that did not pass the steps (a
//! public [`McpHandler`](crate::mcp::McpHandler) under an rmcp service of the user's own) has
//! its facts read from its parts when the handler asks (`RequestFacts::read`).
//! The handler side reads: [`RequestFacts::of`] a `RequestContext` (this file, its one read
//! of the facts); [`watch`] / [`watched_request`] list a running call in the endpoint's
//! [`Calls`], bounded per client ([`MAX_TRACKED_PER_CLIENT`]) and overall ([`MAX_TRACKED`])
//! (`facts/watch.rs`); [`Exchange::inject`] queues a log event, bounded
//! (`facts/exchange.rs`, which holds the exchange and the calls).
//!
//! So a plain call enters each file once: the steps make its exchange (`exchange.rs`), the
//! handler side reads its facts (here) and watches its call (`watch.rs`).
//!
//! Neither side is imported here: both import this file.

use std::borrow::Cow;
use std::sync::Arc;

use axum::http::request::Parts;
use axum::http::{HeaderName, Method};
use rmcp::RoleServer;
use rmcp::service::RequestContext;

use crate::auth::Principal;
use crate::context::ClientKey;

mod exchange;
mod watch;

#[cfg(test)]
pub(crate) use exchange::Tracked;
pub(crate) use exchange::{Calls, Exchange, Owner};
pub use exchange::{MAX_TRACKED, MAX_TRACKED_PER_CLIENT};
pub(crate) use watch::{watch, watched_request};

/// The header naming a request's session (a `HeaderName`: looked up without parsing a name).
pub(crate) const SESSION_HEADER: HeaderName = HeaderName::from_static("mcp-session-id");
/// The id of the session an `initialize` opens, put in the message's extensions by the HTTP
/// room's session manager (rmcp tells the handler no session id until the next request).
#[derive(Clone, Debug)]
pub(crate) struct OpenedSession(pub(crate) Arc<str>);
/// The facts of one HTTP request, worked out once by the HTTP side (the cancellation step,
/// after identity and authentication) and read by the handler side: who the client is, who
/// the principal is, which session the request names, and the request's [`Exchange`].
///
/// It travels in the request's `http::request::Parts` extensions, which rmcp hands the
/// handler in its `RequestContext`; [`RequestFacts::of`] is the one reader.
#[derive(Clone)]
pub(crate) struct RequestFacts {
    /// The client's key: the identity step's ([`ClientKey`] in the extensions), or one key for
    /// every HTTP caller when the router is served without it.
    pub(crate) client: ClientKey,
    /// The principal the authentication step verified, if any.
    pub(crate) principal: Option<Arc<Principal>>,
    /// The session the request acts in: the `mcp-session-id` the door found live and the
    /// client's own (see `http/door.rs`); `None` on a stateless endpoint, for a 2026-07-28
    /// request, or without one.
    pub(crate) session: Option<Arc<str>>,
    /// Whether the request is a `POST`.
    pub(crate) post: bool,
    /// The request's exchange with the cancellation step; `None` when it did not pass there.
    pub(crate) exchange: Option<Exchange>,
}

impl RequestFacts {
    /// Reads the facts of the request `parts` (its `ClientKey` and `Principal` extensions and
    /// its `mcp-session-id` header): for a request that did not pass the HTTP side's first
    /// step, which makes them with [`RequestFacts::new`].
    pub(crate) fn read(parts: &Parts) -> Self {
        RequestFacts::new(
            parts
                .extensions
                .get::<ClientKey>()
                .cloned()
                .unwrap_or_else(|| ClientKey::new("http")),
            parts.extensions.get::<Principal>(),
            parts
                .headers
                .get(&SESSION_HEADER)
                .and_then(|v| v.to_str().ok())
                .map(Arc::<str>::from),
            &parts.method,
        )
    }

    /// The facts of a request from `client`, authenticated as `principal`, acting in
    /// `session`, sent with `method`; no exchange yet.
    pub(crate) fn new(
        client: ClientKey,
        principal: Option<&Principal>,
        session: Option<Arc<str>>,
        method: &Method,
    ) -> Self {
        RequestFacts {
            client,
            principal: principal.cloned().map(Arc::new),
            session,
            post: method == Method::POST,
            exchange: None,
        }
    }

    /// The facts of an rmcp request: those the HTTP side inserted, else (a public
    /// [`McpHandler`](crate::mcp::McpHandler) served by an rmcp service of its own, without
    /// the endpoint's steps) read from the request's parts now; `None` when `cx` is not an
    /// HTTP request (stdio, in-process).
    pub(crate) fn of(cx: &RequestContext<RoleServer>) -> Option<Cow<'_, RequestFacts>> {
        cx.extensions.get::<Parts>().map(RequestFacts::of_parts)
    }

    /// The facts of the request `parts`: those the HTTP side inserted, else read now.
    pub(crate) fn of_parts(parts: &Parts) -> Cow<'_, RequestFacts> {
        match parts.extensions.get::<RequestFacts>() {
            Some(facts) => Cow::Borrowed(facts),
            None => Cow::Owned(RequestFacts::read(parts)),
        }
    }

    /// Whether the request names no session (stateless HTTP, or a 2026-07-28 client).
    pub(crate) fn is_stateless(&self) -> bool {
        self.session.is_none()
    }

    /// The exchange a 2025 session call's log messages go to: its own POST's response stream.
    /// `None` for anything else (stateless, a 2026-07-28 request, no cancellation step), whose
    /// peer already sends them on the right stream.
    pub(crate) fn session_stream(&self) -> Option<Exchange> {
        if !self.post || self.session.is_none() {
            return None;
        }
        self.exchange.clone()
    }
}

#[cfg(test)]
mod tests;
