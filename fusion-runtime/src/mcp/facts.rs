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
//! The handler side reads: [`RequestFacts::of`] a `RequestContext`; [`watch`] / [`watched`]
//! list a running call in the endpoint's [`Calls`], bounded per client
//! ([`MAX_TRACKED_PER_CLIENT`]) and overall ([`MAX_TRACKED`]); [`Exchange::inject`] queues a
//! log event (bounded: [`MAX_INJECTED_EVENTS`], [`MAX_INJECTED_BYTES`]).
//!
//! Neither side is imported here: both import this file.

use std::borrow::Cow;
use std::collections::{HashMap, VecDeque};
use std::future::poll_fn;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use axum::body::Bytes;
use axum::http::request::Parts;
use axum::http::{HeaderName, Method};
use futures::task::AtomicWaker;
use rmcp::RoleServer;
use rmcp::model::RequestId;
use rmcp::service::RequestContext;
use tokio_util::sync::CancellationToken;

use crate::auth::Principal;
use crate::context::ClientKey;

/// Running calls one client (or one session) can have tracked for cancellation from another
/// request. Calls beyond it still run and are still cancelled when their connection closes,
/// but a `notifications/cancelled` or session `DELETE` does not reach them.
pub const MAX_TRACKED_PER_CLIENT: usize = 256;

/// Running calls tracked for cancellation, all clients together.
pub const MAX_TRACKED: usize = 16_384;

/// Log events one session call can have waiting for its response stream; past it (a client
/// that does not read its stream) `Context::log` reports the message as not sent.
pub const MAX_INJECTED_EVENTS: usize = 1024;

/// Bytes of waiting log events per call (see [`MAX_INJECTED_EVENTS`]).
pub const MAX_INJECTED_BYTES: usize = 1024 * 1024;

/// The header naming a request's session (a `HeaderName`: looked up without parsing a name).
pub(crate) const SESSION_HEADER: HeaderName = HeaderName::from_static("mcp-session-id");

/// The id of the session an `initialize` opens, put in the message's extensions by the HTTP
/// room's session manager (rmcp tells the handler no session id until the next request).
#[derive(Clone, Debug)]
pub(crate) struct OpenedSession(pub(crate) Arc<str>);

/// Whose call it is: a session's, or a session-less client's.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Owner {
    Session(Arc<str>),
    Client(ClientKey),
}

pub(crate) struct Entry {
    serial: u64,
    id: RequestId,
    token: CancellationToken,
}

#[derive(Default)]
pub(crate) struct Table {
    /// The running calls, by owner.
    pub(crate) owners: HashMap<Owner, Vec<Entry>>,
    len: usize,
    next_serial: u64,
}

/// The running calls of one HTTP endpoint that another request may cancel, by owner.
pub(crate) struct Calls {
    table: Mutex<Table>,
    per_owner: usize,
    total: usize,
}

impl Default for Calls {
    fn default() -> Self {
        Calls::with_limits(MAX_TRACKED_PER_CLIENT, MAX_TRACKED)
    }
}

impl Calls {
    pub(crate) fn with_limits(per_owner: usize, total: usize) -> Self {
        Calls {
            table: Mutex::new(Table::default()),
            per_owner,
            total,
        }
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Lists a running call until the returned value is dropped; `None` when full.
    pub(super) fn track(
        self: &Arc<Self>,
        owner: Owner,
        id: RequestId,
        token: CancellationToken,
    ) -> Option<Tracked> {
        let mut table = self.lock();
        if table.len >= self.total {
            tracing::debug!(?owner, "too many running calls to track their cancellation");
            return None;
        }
        let serial = table.next_serial;
        let entries = table.owners.entry(owner.clone()).or_default();
        if entries.len() >= self.per_owner {
            tracing::debug!(?owner, "too many running calls of one client to track");
            return None;
        }
        entries.push(Entry { serial, id, token });
        table.len += 1;
        table.next_serial = serial.wrapping_add(1);
        Some(Tracked {
            calls: self.clone(),
            owner,
            serial,
        })
    }

    fn untrack(&self, owner: &Owner, serial: u64) {
        let mut table = self.lock();
        let Some(entries) = table.owners.get_mut(owner) else {
            return;
        };
        let Some(at) = entries.iter().position(|e| e.serial == serial) else {
            return;
        };
        entries.swap_remove(at);
        if entries.is_empty() {
            table.owners.remove(owner);
        }
        table.len -= 1;
    }

    /// Cancels `owner`'s running calls with request id `id` (all of them when `None`); returns
    /// how many.
    pub(crate) fn cancel(&self, owner: &Owner, id: Option<&RequestId>) -> usize {
        let table = self.lock();
        let Some(entries) = table.owners.get(owner) else {
            return 0;
        };
        let mut cancelled = 0;
        for entry in entries.iter().filter(|e| id.is_none_or(|id| *id == e.id)) {
            entry.token.cancel();
            cancelled += 1;
        }
        cancelled
    }

    /// Cancels every running call (the drain's grace is over); returns how many.
    pub(crate) fn cancel_all(&self) -> usize {
        let table = self.lock();
        for entry in table.owners.values().flatten() {
            entry.token.cancel();
        }
        table.len
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.lock().len
    }
}

/// A call listed in [`Calls`]; dropping it (the call ended) removes the entry.
pub(crate) struct Tracked {
    calls: Arc<Calls>,
    owner: Owner,
    serial: u64,
}

impl Drop for Tracked {
    fn drop(&mut self) {
        self.calls.untrack(&self.owner, self.serial);
    }
}

/// What a handler and the layer share about one HTTP request: the calls it carries, and
/// whether its client went away before the response's end.
#[derive(Clone)]
pub(crate) struct Exchange {
    pub(crate) inner: Arc<ExchangeInner>,
}

pub(crate) struct ExchangeInner {
    calls: Arc<Calls>,
    state: Mutex<ExchangeState>,
    /// Wakes the response body when an event is queued.
    pub(crate) waker: AtomicWaker,
}

#[derive(Default)]
struct ExchangeState {
    gone: bool,
    tokens: Vec<CancellationToken>,
    /// SSE events waiting for the response stream, and their bytes.
    events: VecDeque<Bytes>,
    event_bytes: usize,
    /// The response ended: nothing more can be sent on it.
    ended: bool,
}

impl Exchange {
    pub(crate) fn new(calls: Arc<Calls>) -> Self {
        Exchange {
            inner: Arc::new(ExchangeInner {
                calls,
                state: Mutex::new(ExchangeState::default()),
                waker: AtomicWaker::new(),
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, ExchangeState> {
        self.inner
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Cancels `token` when the client goes away (at once if it already has).
    pub(crate) fn attach(&self, token: &CancellationToken) {
        let mut state = self.lock();
        if state.gone {
            token.cancel();
        } else {
            state.tokens.push(token.clone());
        }
    }

    /// Queues a JSON-RPC notification for this exchange's response stream, as one SSE
    /// event. `Err` when the response has ended, the client went away, or the queue is full.
    pub(crate) fn inject(&self, message: &serde_json::Value) -> Result<(), String> {
        let json = serde_json::to_string(message).map_err(|e| e.to_string())?;
        let event = Bytes::from(format!("data: {json}\n\n"));
        {
            let mut state = self.lock();
            if state.ended || state.gone {
                return Err("the call's response stream has ended".to_owned());
            }
            if state.events.len() >= MAX_INJECTED_EVENTS
                || state.event_bytes + event.len() > MAX_INJECTED_BYTES
            {
                return Err("the client is not reading the call's response stream".to_owned());
            }
            state.event_bytes += event.len();
            state.events.push_back(event);
        }
        self.inner.waker.wake();
        Ok(())
    }

    pub(crate) fn pop_event(&self) -> Option<Bytes> {
        let mut state = self.lock();
        let event = state.events.pop_front()?;
        state.event_bytes -= event.len();
        Some(event)
    }

    pub(crate) fn has_events(&self) -> bool {
        !self.lock().events.is_empty()
    }

    pub(crate) fn end(&self) {
        let mut state = self.lock();
        state.ended = true;
        state.events.clear();
        state.event_bytes = 0;
    }

    pub(crate) fn client_gone(&self) {
        let tokens = {
            let mut state = self.lock();
            state.gone = true;
            std::mem::take(&mut state.tokens)
        };
        if !tokens.is_empty() {
            tracing::debug!(
                calls = tokens.len(),
                "client went away: cancelling its calls"
            );
        }
        for token in tokens {
            token.cancel();
        }
    }
}

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

/// Ties a running call to its HTTP request: it is cancelled when the client goes away before
/// the response's end, and listed for a later `notifications/cancelled` (session-less) or
/// session `DELETE`. `None` when the request did not come through the cancellation step or
/// the list is full; keep the value until the call ends. A session-less call is listed under
/// its client's key, as [`ClientKey::of`] works it out: the principal's (the request's, else
/// `principal`, the session's), else the request's client.
pub(crate) fn watch(
    cx: &RequestContext<RoleServer>,
    principal: Option<&Principal>,
) -> Option<Tracked> {
    watch_request(cx.extensions.get::<Parts>()?, &cx.id, &cx.ct, principal)
}

/// [`watch`] of the request `parts`, whose JSON-RPC id is `id` and cancellation `ct`.
pub(crate) fn watch_request(
    parts: &Parts,
    id: &RequestId,
    ct: &CancellationToken,
    principal: Option<&Principal>,
) -> Option<Tracked> {
    let facts = RequestFacts::of_parts(parts);
    let exchange = facts.exchange.as_ref()?;
    exchange.attach(ct);
    let owner = match &facts.session {
        Some(session) => Owner::Session(session.clone()),
        None => Owner::Client(ClientKey::owner(
            facts.principal.as_deref().or(principal),
            &facts.client,
        )),
    };
    exchange.inner.calls.track(owner, id.clone(), ct.clone())
}

/// Runs `call`, [`watch`]ed from the first time it has to wait: a call that ends in its first
/// poll (most do) is never listed, and nothing after its end could cancel it anyway. A
/// `notifications/cancelled` that arrives while that first poll runs finds nothing, as one
/// that arrives after the call's end does. For the request `parts` (none: not an HTTP
/// request, never watched), whose JSON-RPC id is `id` and cancellation `ct`.
///
/// `call` is pinned where the caller keeps it: moved in here, a call's future (the whole
/// pipeline's) would be held twice in the future rmcp spawns for the request, and copied
/// with it.
pub(crate) fn watched_request<'a, F: Future>(
    parts: Option<&'a Parts>,
    id: &'a RequestId,
    ct: &'a CancellationToken,
    principal: Option<&'a Principal>,
    mut call: Pin<&'a mut F>,
) -> impl Future<Output = F::Output> + 'a {
    // Held until the call ends (`Some(None)`: watched, but not listed).
    let mut tracked: Option<Option<Tracked>> = None;
    poll_fn(move |task| {
        let polled = call.as_mut().poll(task);
        if polled.is_pending() && tracked.is_none() {
            tracked = Some(parts.and_then(|parts| watch_request(parts, id, ct, principal)));
        }
        polled
    })
}

#[cfg(test)]
mod tests;
