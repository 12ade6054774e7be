//! The request's exchange, and the endpoint's running calls: what a call carries between the
//! HTTP side and the handler side besides the facts — whether its client went away, the log
//! events waiting for a 2025 session call's own response stream ([`Exchange`]) — and the
//! calls another request may cancel, by owner ([`Calls`]).
//!
//! Written by the HTTP side (the steps make a request's exchange, the cancellation step ends
//! it and cancels the calls a `notifications/cancelled` or a session's `DELETE` names); the
//! handler side lists its calls here through [`watch`](super::watch).

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use axum::body::Bytes;
use futures::task::AtomicWaker;
use rmcp::model::RequestId;
use tokio_util::sync::CancellationToken;

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
    pub(crate) fn track(
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
    pub(super) calls: Arc<Calls>,
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
    pub(super) calls: Arc<Calls>,
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
