//! A call the room answers ([`Room::answer`]). The check's one read of the body has read all
//! of it (a [`PlainCall`]: a name, arguments, a 2026-07-28 call's `_meta`, nothing else), so
//! rmcp's own parse of it, its per-request service (stateless) or its session worker and
//! service loop (a session), and the tasks they spawn would only redo what is known: the call
//! goes to the handler from here, and its arguments (and `_meta`) are the only bytes parsed
//! again.
//!
//! Reads: the check's [`Plain`] (the body, the call's spans, its id, which call it is); the
//! request's facts. Writes: a stateless call's response as rmcp's stateless JSON mode writes it
//! (`handle_post`; `serve_negotiated_request_directly` for 2026-07-28) — JSON when the result
//! comes first, else an SSE stream of everything the call sends — and a live session's as an
//! SSE stream from the start, as rmcp's worker answers it (without the worker's event ids:
//! nothing here to resume), with the call in a task of its own, cancelled if the client goes
//! away before the answer's end (and, in a session, by its `notifications/cancelled` or
//! `DELETE`, through the cancellation step).

use std::convert::Infallible;
use std::future::ready;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::http::{HeaderName, HeaderValue, StatusCode, header};
use axum::response::Response;
use futures::StreamExt;
use futures::future::BoxFuture;
use rmcp::model::{ProtocolVersion, RequestId, RequestMetaObject, ServerJsonRpcMessage};
use sse_stream::{KeepAlive, Sse, SseBody};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::super::keep_alive::Tick;
use crate::context::LogThreshold;
use crate::mcp::handlers::era;
use crate::mcp::handlers::{McpHandler, RoomCall, RoomCallKind};
use crate::mcp::jsonrpc::PlainCall;

/// How many messages a call may send ahead of the client's reading them.
const NOTES: usize = 16;

/// The check's route to the room: a plain call, its body, where the call's parts are in it,
/// its id, and which call it is.
#[derive(Clone, Debug)]
pub(crate) struct Plain {
    pub(crate) bytes: Bytes,
    pub(crate) call: PlainCall,
    pub(crate) id: RequestId,
    pub(crate) kind: PlainKind,
}

/// Which plain call.
#[derive(Clone, Debug)]
pub(crate) enum PlainKind {
    /// A 2025 call naming no session, on a stateless endpoint.
    Stateless,
    /// A live 2025 session's call, at the session's log level.
    Session(LogThreshold),
    /// A 2026-07-28 call (its `_meta` is in [`PlainCall::meta`]), on any endpoint: the
    /// revision has no session, and rmcp serves it statelessly on either.
    Modern,
}

/// What answers plain calls: the stateless handler the router keeps, rmcp's SSE keep-alive,
/// the token that ends the server's streams, and whether the endpoint answers a call whose
/// result comes first in JSON (rmcp's `json_response`: a stateless endpoint) or in SSE (a
/// stateful one, where only 2026-07-28 calls, which have no session, come here that way).
pub(crate) struct Room {
    handler: Arc<McpHandler>,
    keep_alive: Option<Duration>,
    streams_end: CancellationToken,
    json_response: bool,
    answered: Arc<Answered>,
}

/// The calls the room took, by kind, counted as it takes them.
#[derive(Debug, Default)]
pub(crate) struct Answered {
    stateless_2025: AtomicU64,
    stateless_2026: AtomicU64,
    stateful_2026: AtomicU64,
    live_session: AtomicU64,
}

impl Answered {
    /// The counts so far.
    pub(crate) fn read(&self) -> PlainCallsAnswered {
        PlainCallsAnswered {
            stateless_2025: self.stateless_2025.load(Ordering::Relaxed),
            stateless_2026: self.stateless_2026.load(Ordering::Relaxed),
            stateful_2026: self.stateful_2026.load(Ordering::Relaxed),
            live_session: self.live_session.load(Ordering::Relaxed),
        }
    }
}

/// How many plain `tools/call`s an HTTP endpoint answered without rmcp, by kind, since it
/// started ([`HttpServer::plain_calls_answered`](crate::mcp::HttpServer::plain_calls_answered)):
/// what the differential suite asserts in every run, so the calls it compares with rmcp's
/// answers are known to have been the framework's. All zero with
/// [`HttpOptions::answer_plain_calls`](crate::mcp::HttpOptions::answer_plain_calls) off, or on
/// a server that mounts upstreams.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct PlainCallsAnswered {
    /// 2025 calls naming no session, on a stateless endpoint.
    pub stateless_2025: u64,
    /// 2026-07-28 calls on a stateless endpoint (answered in JSON).
    pub stateless_2026: u64,
    /// 2026-07-28 calls on a stateful endpoint (answered in SSE).
    pub stateful_2026: u64,
    /// Calls in a live 2025 session.
    pub live_session: u64,
}

impl Room {
    pub(crate) fn new(
        handler: McpHandler,
        keep_alive: Option<Duration>,
        streams_end: CancellationToken,
        json_response: bool,
    ) -> Self {
        Room {
            handler: Arc::new(handler),
            keep_alive,
            streams_end,
            json_response,
            answered: Arc::default(),
        }
    }

    /// The room's counts, read where the endpoint is served.
    pub(crate) fn answered(&self) -> Arc<Answered> {
        Arc::clone(&self.answered)
    }

    /// The room's one entry: the answer to `request`, which the check routed here as `plain`,
    /// when its arguments parse (and a 2026-07-28 call's `_meta` passes rmcp's checks); else
    /// `request` back, for rmcp (arguments `serde_json` refuses, rmcp's parse refuses too,
    /// and the check rewrites that answer; a `_meta` rmcp refuses or negotiates, rmcp
    /// answers).
    // The request goes back by value, as it came: boxing it would cost the hot path an
    // allocation for the rare request this does not answer. The answer is boxed: the steps'
    // future, which awaits it, stays small (it is moved on every request).
    #[allow(clippy::result_large_err)]
    pub(crate) fn answer(
        &self,
        request: Request,
        plain: Plain,
    ) -> Result<BoxFuture<'static, Response>, Request> {
        let Plain {
            bytes,
            call,
            id,
            kind,
        } = plain;
        let name = bytes
            .get(call.name.clone())
            .and_then(|n| std::str::from_utf8(n).ok());
        let arguments = match &call.arguments {
            None => Some(None),
            Some(span) => bytes
                .get(span.clone())
                .and_then(|a| serde_json::from_slice(a).ok())
                .map(Some),
        };
        let (Some(name), Some(arguments)) = (name, arguments) else {
            return Err(request);
        };
        let in_session = matches!(kind, PlainKind::Session(_));
        let kind = match kind {
            PlainKind::Stateless => RoomCallKind::Stateless,
            PlainKind::Session(threshold) => RoomCallKind::Session(threshold),
            PlainKind::Modern => {
                let meta = call.meta.as_ref().and_then(|span| bytes.get(span.clone()));
                match meta.and_then(|meta| self.modern(name, meta)) {
                    Some((meta, threshold)) => RoomCallKind::Modern { meta, threshold },
                    None => return Err(request),
                }
            }
        };
        let counter = match (&kind, self.json_response) {
            (RoomCallKind::Stateless, _) => &self.answered.stateless_2025,
            (RoomCallKind::Session(_), _) => &self.answered.live_session,
            (RoomCallKind::Modern { .. }, true) => &self.answered.stateless_2026,
            (RoomCallKind::Modern { .. }, false) => &self.answered.stateful_2026,
        };
        counter.fetch_add(1, Ordering::Relaxed);
        let name = name.to_owned();
        let (parts, _) = request.into_parts();
        let handler = Arc::clone(&self.handler);
        let keep_alive = self.keep_alive;
        let streams_end = self.streams_end.clone();
        let json_response = self.json_response;
        Ok(Box::pin(async move {
            let (notes, mut heard) = mpsc::channel(NOTES);
            let cancellation = CancellationToken::new();
            let call_cancellation = cancellation.clone();
            tokio::spawn(async move {
                let sent_arguments = call.arguments.and_then(|span| bytes.get(span));
                let result = handler
                    .answer_room_call(RoomCall {
                        name: &name,
                        arguments,
                        sent_arguments,
                        parts: &parts,
                        id: &id,
                        cancellation: call_cancellation,
                        notes: notes.clone(),
                        kind,
                    })
                    .await;
                let answer = match result {
                    Ok(result) => ServerJsonRpcMessage::response(result, id),
                    Err(error) => ServerJsonRpcMessage::error(error, Some(id)),
                };
                // The client went away: nothing to send it to.
                let _ = notes.send(answer).await;
            });
            // A session's call: its stream at once, as rmcp's worker answers every call (the
            // head goes out before the call ends, with keep-alive comments while it runs, so
            // no proxy's read timeout or client's wait for the head cuts a long call).
            if in_session {
                return sse(None, heard, cancellation, keep_alive, streams_end);
            }
            // As rmcp: the call is cancelled if the client goes before its first message.
            let mut disconnect = Some(cancellation.clone().drop_guard());
            let first = tokio::select! {
                first = heard.recv() => {
                    if let Some(guard) = disconnect.take() {
                        guard.disarm();
                    }
                    first
                }
                () = streams_end.cancelled() => None,
            };
            match first {
                None => internal_error(
                    "empty response",
                    "no response message received from handler",
                ),
                Some(
                    answer @ (ServerJsonRpcMessage::Response(_) | ServerJsonRpcMessage::Error(_)),
                ) if json_response => json(&answer),
                // As rmcp's stateless SSE answer (`stateless_sse_response`): the first message,
                // then the rest.
                Some(first) => sse(Some(first), heard, cancellation, keep_alive, streams_end),
            }
        }))
    }

    /// A 2026-07-28 call's `_meta` (`bytes`) read as rmcp reads it, with the log level it
    /// names, when rmcp's handler would take the call of `name` with nothing to refuse or
    /// negotiate: its version 2026-07-28 (the header's, which the check matched), its required
    /// keys there and well formed, an MCP log level or none, no progress token (its
    /// notifications are rmcp's to send), and a tool that never runs as a task.
    fn modern(&self, name: &str, bytes: &[u8]) -> Option<(RequestMetaObject, LogThreshold)> {
        let meta: RequestMetaObject = serde_json::from_slice(bytes).ok()?;
        let version = ProtocolVersion::V_2026_07_28;
        let passes = meta.protocol_version().as_ref() == Some(&version)
            && meta.missing_required_keys(&version).is_empty()
            && meta.get_progress_token().is_none()
            && !self.handler.server.task_support(name).allows_task();
        if !passes {
            return None;
        }
        let threshold = era::modern_threshold(&meta).ok()?;
        Some((meta, threshold))
    }
}

/// rmcp's `500` for a call that ended without an answer (the check rewrites it as JSON-RPC).
fn internal_error(context: &str, error: &str) -> Response {
    let mut response = Response::new(Body::from(format!(
        "Encounter an error when {context}: {error}"
    )));
    *response.status_mut() = StatusCode::INTERNAL_SERVER_ERROR;
    response
}

/// The answer as one JSON body.
fn json(answer: &ServerJsonRpcMessage) -> Response {
    match serde_json::to_vec(answer) {
        Ok(body) => {
            let mut response = Response::new(Body::from(body));
            response.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            );
            response
        }
        Err(e) => internal_error("serialize json response", &e.to_string()),
    }
}

/// The call's messages as an SSE stream, `first` (if any) first: the call is cancelled if
/// the stream is dropped before its end, and the stream ends with the server's streams.
fn sse(
    first: Option<ServerJsonRpcMessage>,
    heard: mpsc::Receiver<ServerJsonRpcMessage>,
    cancellation: CancellationToken,
    keep_alive: Option<Duration>,
    streams_end: CancellationToken,
) -> Response {
    let state = (first, heard, Some(cancellation.drop_guard()));
    let messages = futures::stream::unfold(state, |(first, mut heard, mut guard)| async move {
        let message = match first {
            Some(first) => Some(first),
            None => heard.recv().await,
        };
        match message {
            Some(message) => Some((message, (None, heard, guard))),
            None => {
                // The call ended and said everything: nothing to cancel.
                if let Some(guard) = guard.take() {
                    guard.disarm();
                }
                None
            }
        }
    });
    let events = messages
        .filter_map(|message| {
            let data = serde_json::to_string(&message).ok();
            ready(data.map(|data| Ok::<_, Infallible>(Sse::default().data(data))))
        })
        .take_until(streams_end.cancelled_owned());
    let body = match keep_alive {
        Some(every) => Body::new(
            SseBody::new(events).with_keep_alive::<Tick>(KeepAlive::new().interval(every)),
        ),
        None => Body::new(SseBody::new(events)),
    };
    let mut response = Response::new(body);
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert(
        HeaderName::from_static("x-accel-buffering"),
        HeaderValue::from_static("no"),
    );
    response
}
