//! Cancellation over streamable HTTP when the client goes away or cancels from another request.
//!
//! rmcp cancels a call on `notifications/cancelled` within a session, and a stateless call
//! whose connection closes before its answer. Left to itself it keeps running, holding its
//! guard slot, a call whose client:
//!
//! - closes the response stream of a session's call (the socket closes mid-call);
//! - deletes its session (`DELETE`): rmcp waits up to 5 s for running calls to finish;
//! - sends `notifications/cancelled` in a separate POST without a session (stateless mode,
//!   or a 2026-07-28 client): rmcp ignores notifications there.
//!
//! [`layer`] wraps the rmcp service: it gives each HTTP request an [`Exchange`] (found by the
//! handler in the request's `http::request::Parts`), cancels the calls attached to it when
//! the response is dropped before its end, and handles the two messages above. The handler
//! attaches each call with [`watch`]; the calls are listed by owner in [`Calls`], bounded per
//! client ([`MAX_TRACKED_PER_CLIENT`]) and overall ([`MAX_TRACKED`]).
//!
//! The [`Exchange`] also carries a 2025 session call's log messages onto the call's own
//! response stream: rmcp sends a session's `notifications/message` to the separate GET
//! stream, where a client reading only its POST answer never sees them. [`Exchange::inject`]
//! queues the event (bounded: [`MAX_INJECTED_EVENTS`], [`MAX_INJECTED_BYTES`]) and the
//! response body yields it before rmcp's next frame, so a call's logs come before its
//! result.

use std::borrow::Cow;
use std::collections::{HashMap, VecDeque};
use std::future::poll_fn;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll};

use axum::body::{Body, Bytes, HttpBody};
use axum::extract::Request;
use axum::http::request::Parts;
use axum::http::{HeaderName, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures::task::AtomicWaker;
use http_body::{Frame, SizeHint};
use rmcp::RoleServer;
use rmcp::model::RequestId;
use rmcp::service::RequestContext;
use serde::Deserialize;
use tokio_util::sync::CancellationToken;

use super::jsonrpc::Passed;
use crate::auth::Principal;
use crate::context::ClientKey;

/// Running calls one client (or one session) can have tracked for cancellation from another
/// request. Calls beyond it still run and are still cancelled when their connection closes,
/// but a `notifications/cancelled` or session `DELETE` does not reach them.
pub const MAX_TRACKED_PER_CLIENT: usize = 256;

/// Running calls tracked for cancellation, all clients together.
pub const MAX_TRACKED: usize = 16_384;

/// Larger POST bodies are not inspected for a session-less `notifications/cancelled` (a real
/// one is a few hundred bytes); neither are bodies of unknown length.
const MAX_INSPECTED_BODY: usize = 64 * 1024;

/// Log events one session call can have waiting for its response stream; past it (a client
/// that does not read its stream) `Context::log` reports the message as not sent.
pub const MAX_INJECTED_EVENTS: usize = 1024;

/// Bytes of waiting log events per call (see [`MAX_INJECTED_EVENTS`]).
pub const MAX_INJECTED_BYTES: usize = 1024 * 1024;

/// The header naming a request's session (a `HeaderName`: looked up without parsing a name).
pub(crate) const SESSION_HEADER: HeaderName = HeaderName::from_static("mcp-session-id");
const METHOD_HEADER: HeaderName = HeaderName::from_static("mcp-method");
const CANCELLED: &str = "notifications/cancelled";

/// Whose call it is: a session's, or a session-less client's.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Owner {
    Session(Arc<str>),
    Client(ClientKey),
}

struct Entry {
    serial: u64,
    id: RequestId,
    token: CancellationToken,
}

#[derive(Default)]
struct Table {
    owners: HashMap<Owner, Vec<Entry>>,
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
    fn with_limits(per_owner: usize, total: usize) -> Self {
        Calls {
            table: Mutex::new(Table::default()),
            per_owner,
            total,
        }
    }

    fn lock(&self) -> MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Lists a running call until the returned value is dropped; `None` when full.
    fn track(
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
    fn cancel(&self, owner: &Owner, id: Option<&RequestId>) -> usize {
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

    #[cfg(test)]
    fn len(&self) -> usize {
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
    inner: Arc<ExchangeInner>,
}

struct ExchangeInner {
    calls: Arc<Calls>,
    state: Mutex<ExchangeState>,
    /// Wakes the response body when an event is queued.
    waker: AtomicWaker,
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
    fn new(calls: Arc<Calls>) -> Self {
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
    fn attach(&self, token: &CancellationToken) {
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

    fn pop_event(&self) -> Option<Bytes> {
        let mut state = self.lock();
        let event = state.events.pop_front()?;
        state.event_bytes -= event.len();
        Some(event)
    }

    fn has_events(&self) -> bool {
        !self.lock().events.is_empty()
    }

    fn end(&self) {
        let mut state = self.lock();
        state.ended = true;
        state.events.clear();
        state.event_bytes = 0;
    }

    fn client_gone(&self) {
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

/// Cancels the exchange's calls when dropped, unless the response reached its end first.
struct GoneGuard {
    exchange: Option<Exchange>,
}

impl GoneGuard {
    fn disarm(&mut self) {
        self.exchange = None;
    }
}

impl Drop for GoneGuard {
    fn drop(&mut self) {
        if let Some(exchange) = self.exchange.take() {
            exchange.client_gone();
        }
    }
}

/// A response body that tells its exchange when it is dropped before its end and, for a
/// session call's SSE stream (`inject`), yields the events queued with
/// [`Exchange::inject`] before the inner body's next frame.
struct GuardedBody {
    body: Body,
    guard: GoneGuard,
    inject: Option<Exchange>,
    /// An inner frame held back while queued events go first.
    stashed: Option<Frame<Bytes>>,
    /// The inner body ended; queued events are still yielded.
    inner_done: bool,
}

impl GuardedBody {
    fn queued(&self) -> Option<Bytes> {
        self.inject.as_ref()?.pop_event()
    }

    fn finish(&mut self) {
        if let Some(exchange) = self.inject.take() {
            exchange.end();
        }
    }
}

impl HttpBody for GuardedBody {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let this = self.get_mut();
        if let Some(event) = this.queued() {
            return Poll::Ready(Some(Ok(Frame::data(event))));
        }
        if let Some(frame) = this.stashed.take() {
            return Poll::Ready(Some(Ok(frame)));
        }
        if this.inner_done {
            this.finish();
            return Poll::Ready(None);
        }
        if let Some(exchange) = &this.inject {
            exchange.inner.waker.register(cx.waker());
        }
        let polled = Pin::new(&mut this.body).poll_frame(cx);
        match &polled {
            Poll::Ready(None) => this.guard.disarm(),
            Poll::Ready(Some(Ok(_))) if this.body.is_end_stream() => this.guard.disarm(),
            _ => {}
        }
        match polled {
            // An event queued while the inner body was polled was queued before the frame
            // it produced was made (the handler logs before it answers): it goes first.
            Poll::Ready(Some(Ok(frame))) => match this.queued() {
                Some(event) => {
                    this.stashed = Some(frame);
                    Poll::Ready(Some(Ok(Frame::data(event))))
                }
                None => Poll::Ready(Some(Ok(frame))),
            },
            Poll::Ready(None) => match this.queued() {
                Some(event) => {
                    this.inner_done = true;
                    Poll::Ready(Some(Ok(Frame::data(event))))
                }
                None => {
                    this.finish();
                    Poll::Ready(None)
                }
            },
            Poll::Pending => match this.queued() {
                Some(event) => Poll::Ready(Some(Ok(Frame::data(event)))),
                None => Poll::Pending,
            },
            other => other,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.stashed.is_none()
            && (self.inner_done || self.body.is_end_stream())
            && self.inject.as_ref().is_none_or(|e| !e.has_events())
    }

    fn size_hint(&self) -> SizeHint {
        match self.inject {
            Some(_) => SizeHint::default(),
            None => self.body.size_hint(),
        }
    }
}

impl Drop for GuardedBody {
    fn drop(&mut self) {
        self.finish();
    }
}

/// The exchange a 2025 session call's log messages go to: its own POST's response stream.
/// `None` for anything else (stdio, stateless, a 2026-07-28 request, no [`layer`] step),
/// whose peer already sends them on the right stream.
pub(crate) fn session_stream(cx: &RequestContext<RoleServer>) -> Option<Exchange> {
    let parts = cx.extensions.get::<Parts>()?;
    if parts.method != Method::POST || !parts.headers.contains_key(&SESSION_HEADER) {
        return None;
    }
    parts.extensions.get::<Exchange>().cloned()
}

/// Ties a running call to its HTTP request: it is cancelled when the client goes away before
/// the response's end, and listed for a later `notifications/cancelled` (session-less) or
/// session `DELETE`. `None` when the request did not come through [`layer`] or the list is
/// full; keep the value until the call ends. A session-less call is listed under its
/// client's key, as [`ClientKey::of`] works it out: the principal's (the request's, else
/// `principal`, the session's), else the request's client.
pub(crate) fn watch(
    cx: &RequestContext<RoleServer>,
    principal: Option<&Principal>,
) -> Option<Tracked> {
    let parts = cx.extensions.get::<Parts>()?;
    let exchange = parts.extensions.get::<Exchange>()?;
    exchange.attach(&cx.ct);
    let owner = match parts
        .headers
        .get(&SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
    {
        Some(session) => Owner::Session(session.into()),
        None => Owner::Client(match parts.extensions.get::<Principal>().or(principal) {
            Some(principal) => ClientKey(principal.client_key()),
            None => super::scope::http_client_key(parts),
        }),
    };
    exchange
        .inner
        .calls
        .track(owner, cx.id.clone(), cx.ct.clone())
}

/// Runs `call`, [`watch`]ed from the first time it has to wait: a call that ends in its first
/// poll (most do) is never listed, and nothing after its end could cancel it anyway. A
/// `notifications/cancelled` that arrives while that first poll runs finds nothing, as one
/// that arrives after the call's end does.
///
/// `call` is pinned where the caller keeps it: moved in here, a call's future (the whole
/// pipeline's) would be held twice in the future rmcp spawns for the request, and copied
/// with it.
pub(crate) fn watched<'a, F: Future>(
    cx: &'a RequestContext<RoleServer>,
    principal: Option<&'a Principal>,
    mut call: Pin<&'a mut F>,
) -> impl Future<Output = F::Output> + 'a {
    // Held until the call ends (`Some(None)`: watched, but not listed).
    let mut tracked: Option<Option<Tracked>> = None;
    poll_fn(move |task| {
        let polled = call.as_mut().poll(task);
        if polled.is_pending() && tracked.is_none() {
            tracked = Some(watch(cx, principal));
        }
        polled
    })
}

/// The cancellation step of the HTTP endpoint (see the module's documentation): runs
/// `next` (rmcp) on `request`, after the steps that insert the `ClientKey` it reads.
pub(crate) async fn layer<F, Fut>(calls: &Arc<Calls>, request: Request, next: F) -> Response
where
    F: FnOnce(Request) -> Fut,
    Fut: Future<Output = Response>,
{
    let exchange = Exchange::new(calls.clone());
    let mut guard = GoneGuard {
        exchange: Some(exchange.clone()),
    };
    let (mut parts, body) = request.into_parts();
    parts.extensions.insert(exchange);
    let session = parts
        .headers
        .get(&SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(Arc::<str>::from);
    let is_session_post = parts.method == Method::POST && session.is_some();

    let mut after = None;
    let body = if parts.method == Method::POST && session.is_none() && may_cancel(&parts, &body) {
        let Ok(bytes) = axum::body::to_bytes(body, MAX_INSPECTED_BODY).await else {
            guard.disarm();
            return StatusCode::BAD_REQUEST.into_response();
        };
        if let Some(id) = cancelled_request(&bytes) {
            after = Some((
                Owner::Client(super::scope::http_client_key(&parts)),
                Some(id),
            ));
        }
        Body::from(bytes)
    } else {
        if parts.method == Method::DELETE
            && let Some(session) = session
        {
            after = Some((Owner::Session(session), None));
        }
        body
    };

    let response = next(Request::from_parts(parts, body)).await;
    if let Some((owner, id)) = after {
        let accepted = match id {
            Some(_) => response.status() == StatusCode::ACCEPTED,
            None => response.status().is_success(),
        };
        if accepted {
            let n = calls.cancel(&owner, id.as_ref());
            tracing::debug!(?owner, ?id, cancelled = n, "cancelled from another request");
        }
    }
    let is_sse = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"));
    let inject = match is_session_post && is_sse {
        true => guard.exchange.clone(),
        false => {
            if let Some(exchange) = &guard.exchange {
                exchange.end();
            }
            None
        }
    };
    response.map(|body| {
        Body::new(GuardedBody {
            body,
            guard,
            inject,
            stashed: None,
            inner_done: false,
        })
    })
}

/// Whether a session-less POST may be a `notifications/cancelled` worth reading first. A body
/// the JSON-RPC check has read says so itself ([`Passed`]); only one that did not pass there
/// (which rmcp then refuses) is sniffed here.
fn may_cancel(parts: &Parts, body: &Body) -> bool {
    let method_ok = match parts.extensions.get::<Passed>() {
        Some(passed) => passed.cancels,
        None => parts
            .headers
            .get(&METHOD_HEADER)
            .is_none_or(|m| m.as_bytes() == CANCELLED.as_bytes()),
    };
    method_ok
        && body
            .size_hint()
            .exact()
            .is_some_and(|n| n <= MAX_INSPECTED_BODY as u64)
}

/// The request a `notifications/cancelled` message names, if `body` is one.
fn cancelled_request(body: &[u8]) -> Option<RequestId> {
    #[derive(Deserialize)]
    struct Probe<'a> {
        #[serde(borrow)]
        method: Option<Cow<'a, str>>,
    }
    #[derive(Deserialize)]
    struct Cancelled {
        params: Params,
    }
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Params {
        request_id: RequestId,
    }
    let probe: Probe<'_> = serde_json::from_slice(body).ok()?;
    if probe.method.as_deref() != Some(CANCELLED) {
        return None;
    }
    let cancelled: Cancelled = serde_json::from_slice(body).ok()?;
    Some(cancelled.params.request_id)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn client(name: &str) -> Owner {
        Owner::Client(ClientKey::new(name))
    }

    fn id(n: i64) -> RequestId {
        RequestId::Number(n)
    }

    #[test]
    fn tracked_calls_are_bounded_per_client_and_overall_and_freed_when_they_end() {
        let calls = Arc::new(Calls::with_limits(2, 3));
        let a1 = calls.track(client("a"), id(1), CancellationToken::new());
        let a2 = calls.track(client("a"), id(2), CancellationToken::new());
        assert!(a1.is_some() && a2.is_some());
        assert!(
            calls
                .track(client("a"), id(3), CancellationToken::new())
                .is_none(),
            "a third call of one client is past the per-client bound"
        );
        let b1 = calls.track(client("b"), id(1), CancellationToken::new());
        assert!(b1.is_some());
        assert!(
            calls
                .track(client("c"), id(1), CancellationToken::new())
                .is_none(),
            "a fourth call is past the overall bound"
        );
        assert_eq!(calls.len(), 3);
        drop(a1);
        assert_eq!(calls.len(), 2);
        assert!(
            calls
                .track(client("c"), id(1), CancellationToken::new())
                .is_some(),
            "an ended call gives its place back"
        );
        drop((a2, b1));
        assert_eq!(calls.len(), 0);
        assert!(
            calls.lock().owners.is_empty(),
            "no empty owner is left behind"
        );
    }

    #[test]
    fn cancel_reaches_only_the_owner_and_the_request_named() {
        let calls = Arc::new(Calls::default());
        let (a1, a2, b1) = (
            CancellationToken::new(),
            CancellationToken::new(),
            CancellationToken::new(),
        );
        let s1 = CancellationToken::new();
        let _t = [
            calls.track(client("a"), id(1), a1.clone()),
            calls.track(client("a"), id(2), a2.clone()),
            calls.track(client("b"), id(1), b1.clone()),
            calls.track(Owner::Session("s".into()), id(1), s1.clone()),
        ];
        assert_eq!(calls.cancel(&client("a"), Some(&id(1))), 1);
        assert!(a1.is_cancelled());
        assert!(!a2.is_cancelled() && !b1.is_cancelled() && !s1.is_cancelled());
        assert_eq!(calls.cancel(&client("c"), Some(&id(2))), 0);
        assert_eq!(calls.cancel(&Owner::Session("s".into()), None), 1);
        assert!(s1.is_cancelled() && !b1.is_cancelled());
    }

    #[test]
    fn a_call_attached_after_its_client_left_is_cancelled_at_once() {
        let exchange = Exchange::new(Arc::new(Calls::default()));
        let before = CancellationToken::new();
        exchange.attach(&before);
        assert!(!before.is_cancelled());
        exchange.client_gone();
        assert!(before.is_cancelled());
        let after = CancellationToken::new();
        exchange.attach(&after);
        assert!(after.is_cancelled());
    }

    #[test]
    fn only_a_cancelled_notification_names_a_request() {
        let n = br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"x"}}"#;
        assert_eq!(cancelled_request(n), Some(id(7)));
        let s =
            br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"r"}}"#;
        assert_eq!(cancelled_request(s), Some(RequestId::String("r".into())));
        let call = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"notifications/cancelled"}}"#;
        assert_eq!(cancelled_request(call), None);
        assert_eq!(
            cancelled_request(br#"{"method":"notifications/cancelled"}"#),
            None
        );
        assert_eq!(cancelled_request(b"[1,2"), None);
    }
}

#[cfg(test)]
mod injection_tests {
    use super::*;

    #[test]
    fn injected_events_are_bounded_in_count_and_bytes_and_refused_after_the_end() {
        let exchange = Exchange::new(Arc::new(Calls::default()));
        let small = serde_json::json!({"jsonrpc": "2.0", "method": "notifications/message"});
        for _ in 0..MAX_INJECTED_EVENTS {
            assert!(exchange.inject(&small).is_ok());
        }
        assert!(exchange.inject(&small).is_err(), "one past the count");
        let first = exchange.pop_event().unwrap_or_default();
        assert!(first.starts_with(b"data: {") && first.ends_with(b"\n\n"));
        assert!(exchange.inject(&small).is_ok(), "room again once read");

        let exchange = Exchange::new(Arc::new(Calls::default()));
        let big = serde_json::Value::String("x".repeat(MAX_INJECTED_BYTES / 4));
        let mut sent = 0;
        while exchange.inject(&big).is_ok() {
            sent += 1;
            assert!(sent <= 4, "the byte bound holds");
        }
        assert_eq!(sent, 3);
        exchange.end();
        assert!(!exchange.has_events());
        assert!(exchange.inject(&small).is_err(), "nothing after the end");
    }
}
