//! A 2025 `tools/call` answered without rmcp: a stateless one, or a live session's. The
//! check's one read of the body has read all of it (a [`PlainCall`]: a name, arguments and nothing
//! else), so rmcp's own parse of it, its per-request service (stateless) or its session worker
//! and service loop (a session), and the tasks they spawn would only redo what is known: the
//! call goes to the handler room from here, and its arguments are the only bytes parsed again.
//!
//! Only what rmcp would take straight to its handler, with nothing to refuse or negotiate: a
//! plain call ([`headers_pass`]: a 2025 version, an `Accept` rmcp reads as the check does, an
//! allowed `Host`, no `Origin`) on a server that hands nothing off (a 2025-11-25 task request
//! is the check's to answer before this; a plain call of a task action is a call), either
//! naming no session on a stateless endpoint, or naming a live one (listed
//! once initialized when its client declared neither `elicitation` nor `sampling`, and heard
//! by rmcp's worker in the last half keep-alive — see
//! [`live`](crate::mcp::handlers::live)). Anything else goes to rmcp as before.
//!
//! Reads: the check's [`Plain`] (the body, the call's spans, the live session) and
//! [`Passed`](crate::mcp::jsonrpc::Passed) (the id); the request's facts. Writes: a
//! stateless call's response as rmcp's stateless JSON mode writes it (`handle_post`) — JSON
//! when the result comes first, else an SSE stream of everything the call sends — and a live
//! session's as an SSE stream from the start, as rmcp's worker answers it (without the
//! worker's event ids: nothing here to resume), with the call in a task of its own, cancelled
//! if the client goes away before the answer's end (and, in a session, by its
//! `notifications/cancelled` or `DELETE`, through the cancellation step).

use std::convert::Infallible;
use std::future::{Future, ready};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode, header};
use axum::response::Response;
use futures::StreamExt;
use rmcp::model::{ServerJsonRpcMessage, ServerResult};
use sse_stream::{KeepAlive, Sse, SseBody};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::headers::{AllowedHosts, HEADER_PROTOCOL_VERSION, accepts_json_and_sse};
use crate::context::LogThreshold;
use crate::mcp::facts::SESSION_HEADER;
use crate::mcp::handlers::McpHandler;
use crate::mcp::jsonrpc::{Passed, PlainCall};

/// How many messages a call may send ahead of the client's reading them.
const NOTES: usize = 16;

/// The check's word that a request is a plain call this step may answer: its body, where
/// the call's name and arguments are in it, and for a live session's call the session's log
/// level.
#[derive(Clone, Debug)]
pub(crate) struct Plain {
    pub(crate) bytes: Bytes,
    pub(crate) call: PlainCall,
    pub(crate) session: Option<LogThreshold>,
}

/// Whether rmcp takes a request with these headers to its handler with nothing to refuse or
/// negotiate: on the stateless path (`session` false: the request names none), or a live
/// session's (`session` true: it names one, once). Conservative where rmcp's reading is
/// richer than the check's (`Accept` with parameters or quotes): `false` only sends the
/// request to rmcp.
pub(crate) fn headers_pass(
    headers: &HeaderMap,
    allowed_hosts: &AllowedHosts,
    session: bool,
) -> bool {
    plain_accept(headers)
        && !headers.contains_key(header::ORIGIN)
        && session_named(headers) == session
        && legacy_version(headers)
        && allowed_hosts.allow(headers)
}

/// Whether the request names one session (`false` for none, or more than one).
fn session_named(headers: &HeaderMap) -> bool {
    let mut ids = headers.get_all(&SESSION_HEADER).iter();
    ids.next().is_some() && ids.next().is_none()
}

/// Exactly one `MCP-Protocol-Version`, a 2025 one (the 2026-07-28 rules — standard headers,
/// per-request `_meta` — are rmcp's to check).
fn legacy_version(headers: &HeaderMap) -> bool {
    let mut values = headers.get_all(&HEADER_PROTOCOL_VERSION).iter();
    match (values.next(), values.next()) {
        (Some(v), None) => v == "2025-06-18" || v == "2025-11-25",
        _ => false,
    }
}

/// `Accept` naming JSON and SSE ([`accepts_json_and_sse`], as the check reads it), with no
/// parameter or quote in any value: rmcp weighs those (`q=0`), the check does not.
fn plain_accept(headers: &HeaderMap) -> bool {
    headers
        .get_all(header::ACCEPT)
        .iter()
        .all(|v| v.to_str().is_ok_and(|v| !v.contains([';', '"'])))
        && accepts_json_and_sse(headers)
}

/// What answers plain calls: the stateless handler the router keeps, rmcp's SSE keep-alive
/// and the token that ends the server's streams.
pub(crate) struct Answerer {
    handler: Arc<McpHandler>,
    keep_alive: Option<Duration>,
    streams_end: CancellationToken,
}

impl Answerer {
    pub(crate) fn new(
        handler: McpHandler,
        keep_alive: Option<Duration>,
        streams_end: CancellationToken,
    ) -> Self {
        Answerer {
            handler: Arc::new(handler),
            keep_alive,
            streams_end,
        }
    }

    /// The answer to `request` when the check found it a plain call whose arguments parse;
    /// else `request` back, for rmcp (arguments `serde_json` refuses, rmcp's parse refuses
    /// too, and the check rewrites that answer).
    // The request goes back by value, as it came: boxing it would cost the hot path an
    // allocation for the rare request this does not answer.
    #[allow(clippy::result_large_err)]
    pub(crate) fn answer(
        &self,
        mut request: Request,
    ) -> Result<impl Future<Output = Response> + Send + 'static, Request> {
        let Some(plain) = request.extensions_mut().remove::<Plain>() else {
            return Err(request);
        };
        let id = request
            .extensions()
            .get::<Passed>()
            .and_then(|p| p.id.clone());
        let name = plain
            .bytes
            .get(plain.call.name.clone())
            .and_then(|n| std::str::from_utf8(n).ok());
        let arguments = match &plain.call.arguments {
            None => Some(None),
            Some(span) => plain
                .bytes
                .get(span.clone())
                .and_then(|a| serde_json::from_slice(a).ok())
                .map(Some),
        };
        let (Some(id), Some(name), Some(arguments)) = (id, name, arguments) else {
            return Err(request);
        };
        let name = name.to_owned();
        let session = plain.session;
        let in_session = session.is_some();
        let (parts, _) = request.into_parts();
        let handler = Arc::clone(&self.handler);
        let keep_alive = self.keep_alive;
        let streams_end = self.streams_end.clone();
        Ok(async move {
            let (notes, mut heard) = mpsc::channel(NOTES);
            let cancellation = CancellationToken::new();
            let call_cancellation = cancellation.clone();
            tokio::spawn(async move {
                let result = handler
                    .answer_stateless_call(
                        &name,
                        arguments,
                        &parts,
                        &id,
                        call_cancellation,
                        notes.clone(),
                        session,
                    )
                    .await;
                // As rmcp's handler answers a 2025 peer: no `resultType`, object output only.
                let mut result = ServerResult::CallToolResult(result);
                result.strip_result_type_for_legacy_peer();
                result.strip_non_object_output_for_legacy_peer();
                let answer = ServerJsonRpcMessage::response(result, id);
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
                ) => json(&answer),
                Some(note) => sse(Some(note), heard, cancellation, keep_alive, streams_end),
            }
        })
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

/// The keep-alive's timer, on tokio.
struct Tick(Pin<Box<tokio::time::Sleep>>);

impl Future for Tick {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        self.0.as_mut().poll(cx)
    }
}

impl sse_stream::Timer for Tick {
    fn from_duration(duration: Duration) -> Self {
        Tick(Box::pin(tokio::time::sleep(duration)))
    }

    fn reset(mut self: Pin<&mut Self>, when: std::time::Instant) {
        self.0.as_mut().reset(tokio::time::Instant::from_std(when));
    }
}
