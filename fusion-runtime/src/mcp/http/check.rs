//! The HTTP side of [`jsonrpc`]: a step in front of rmcp's streamable
//! HTTP service, behind the [`door`](super::door) (it runs only with the door's [`Cleared`]),
//! called by the endpoint's [`steps`](super::steps) in order: [`check`] before the route,
//! [`Checked::finish`] on its answer.
//! A POST body is read once, bounded, and checked; what the framework answers
//! itself (a body that is not JSON, not a JSON-RPC message, a batch: `400`; a `tools/call`
//! with an unusable name or arguments: an `isError` result) never reaches rmcp. Every error
//! rmcp answers in plain text (`406`, `415`, `413`, `404`, `405`, …) keeps its status and gets
//! a JSON-RPC error body ([`rewrite`](super::rewrite)).

use axum::body::{Body, HttpBody};
use axum::extract::Request;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode};
use axum::response::Response;
use rmcp::model::{ErrorCode, ProtocolVersion, RequestId};
use serde_json::Value;

use super::door::Cleared;
use super::headers::{HEADER_PROTOCOL_VERSION, is_json};
use super::rewrite::{Read, answer_with_status, json_errors, reply, too_large};
use super::room::{Plain, PlainKind, RoomRoute, Taken, accepts_json_and_sse};
use crate::http::body::read_bounded;
use crate::mcp::facts::SESSION_HEADER;
use crate::mcp::jsonrpc::{self, Reply, request_id};
use crate::server::Server;

/// What the JSON-RPC step needs, made once per endpoint.
pub(crate) struct JsonRpcStep {
    pub(crate) server: Server,
    /// The body cap ([`HttpOptions::max_body_bytes`](super::HttpOptions::max_body_bytes)).
    pub(crate) max_body_bytes: usize,
    /// Which requests are the [`room`]'s: the room decides.
    pub(crate) room: RoomRoute,
    /// Whether the server has task actions ([`Server::has_tasks`], fixed when it is built),
    /// read once when the endpoint is assembled: only such a server answers 2025-11-25 task
    /// methods and edits a 2025-11-25 answer.
    pub(crate) tasks: bool,
}

/// Where the check sends a request it passed on: decided once, here.
pub(crate) enum Route {
    /// To rmcp.
    Rmcp,
    /// To the [`room`], which answers the plain call without rmcp (or, if its arguments do
    /// not parse, hands the request back for rmcp). Boxed: the steps' futures carry the route
    /// to the room (and they are moved on every request).
    Room(Box<Plain>),
}

/// What the check keeps for the way back: what it read of the request, and, on a server with
/// task actions, how a 2025-11-25 answer is to advertise them.
pub(crate) struct Checked {
    read: Read,
    advertise: Option<super::tasks_2025::Advertising>,
}

impl Checked {
    /// The route's `response` as the endpoint answers it: rmcp's plain-text refusals as
    /// JSON-RPC errors ([`json_errors`]), a 2025-11-25 answer advertising the tasks.
    pub(crate) async fn finish(self, response: Response, server: &Server) -> Response {
        // Only an error can be rmcp's plain text: a success goes back as it is.
        let status = response.status();
        let response = match status.is_client_error() || status.is_server_error() {
            true => json_errors(response, self.read, server).await,
            false => response,
        };
        match self.advertise {
            Some(advertise) => advertise.apply(response),
            None => response,
        }
    }
}

/// The JSON-RPC step of the HTTP endpoint: checks `request`, which the door `cleared`: the
/// request to pass on, the route it takes and what the way back needs; or the framework's
/// own answer.
pub(crate) async fn check(
    step: &JsonRpcStep,
    cleared: &Cleared,
    request: Request,
) -> Result<(Request, Route, Checked), Response> {
    let tasks = step.tasks;
    let (request, read, route) = read(step, cleared, request, tasks).await?;
    // (What was read is looked at again only on a server with task actions.)
    let advertise = match tasks {
        true => read
            .bytes()
            .and_then(|bytes| super::tasks_2025::advertising(&step.server, &request, bytes)),
        false => None,
    };
    Ok((request, route, Checked { read, advertise }))
}

/// The request to pass on, what the check read of it ([`Read`]) and its [`Route`]; or the
/// framework's own answer.
///
/// Only a JSON POST's body is read. The headers rmcp checks itself (`Accept`, `Host`) are
/// looked at only when the framework would answer: a request rmcp refuses for them goes on
/// to rmcp, which answers with the status the MCP transport asks for (`406`, `403`), as it
/// would had the framework never read the body. A request that passes needs no look at them.
async fn read(
    guard: &JsonRpcStep,
    cleared: &Cleared,
    request: Request,
    tasks: bool,
) -> Result<(Request, Read, Route), Response> {
    if request.method() != Method::POST || !is_json(request.headers()) {
        // rmcp refuses these (`415`) or reads no body.
        return pass_unread(request, &guard.server);
    }
    let rmcp_reads =
        // (Its `Host` passed the door, which checks it as rmcp does.)
        |headers: &HeaderMap| accepts_json_and_sse(headers);
    let max = guard.max_body_bytes;
    // The body's length as its `Content-Length` declared it (hyper parsed it).
    if request.body().size_hint().lower() > max as u64 {
        if !rmcp_reads(request.headers()) {
            return pass_unread(request, &guard.server);
        }
        return Err(too_large(max));
    }
    let (parts, body) = request.into_parts();
    let bytes = match read_bounded(body, max).await {
        Ok(bytes) => bytes,
        Err(_) if !rmcp_reads(&parts.headers) => {
            // rmcp refuses it for its headers before reading a body.
            return pass_unread(Request::from_parts(parts, Body::empty()), &guard.server);
        }
        Err(Some(())) => return Err(too_large(max)),
        Err(None) => {
            return Err(reply(
                StatusCode::BAD_REQUEST,
                &Reply::error(None, ErrorCode::INVALID_REQUEST, "the request body failed"),
            ));
        }
    };
    // The id is read (a second parse) only for the refusal.
    let id = || {
        if !rmcp_reads(&parts.headers) {
            return None;
        }
        serde_json::from_slice::<Value>(&bytes)
            .ok()
            .and_then(|m| m.get("id").and_then(request_id))
    };
    let version = parts.headers.get(&HEADER_PROTOCOL_VERSION);
    if let Some(refusal) = unsupported_version(version, &guard.server, id) {
        return Err(refusal);
    }
    let modern = version
        .and_then(|v| v.to_str().ok())
        .is_some_and(crate::mcp::handlers::era::is_modern_version);
    // A 2026-07-28 request has no session.
    let session_call =
        guard.room.sessions && parts.headers.contains_key(&SESSION_HEADER) && !modern;
    // The hot path: a plain `tools/call`, read by `serde`'s derive (`plain_call`); anything
    // else by the probe. Whatever the headers: a plain call is one the probe passes too (or
    // one `serde_json` refuses, which rmcp's parse does too, answered as the probe would),
    // and a body it passes goes on to rmcp, which checks its headers itself.
    // A 2026-07-28 request is not probed (see `Read::Unprobed`); a plain call of one, with
    // headers rmcp passes as they are, is the room's. Nor is a
    // session's call probed, unless its session may be live (see `room`): then its plain
    // call is answered without rmcp, and its `notifications/cancelled` reaches the calls
    // answered so.
    let checked = match (modern, session_call) {
        (false, false) => match jsonrpc::plain_call(&bytes) {
            Some((passed, call)) => {
                let call = passed.id.clone().map(|id| (id, call, PlainKind::Stateless));
                Ok(Taken {
                    passed: Some(passed),
                    call,
                    cancels: None,
                })
            }
            None => jsonrpc::check_body(&bytes, &guard.server).map(|passed| Taken {
                passed: Some(passed),
                ..Taken::default()
            }),
        },
        _ => Ok(guard
            .room
            .unprobed(modern, &parts.headers, &bytes, &guard.server)),
    };
    let (
        mut parts,
        Taken {
            passed,
            call,
            cancels,
        },
    ) = match checked {
        Ok(taken) => (parts, taken),
        Err(_) if !rmcp_reads(&parts.headers) => {
            let request = Request::from_parts(parts, Body::from(bytes));
            return Ok((request, Read::Unread, Route::Rmcp));
        }
        Err(answer) => return Err(answer_with_status(&answer)),
    };
    // 2025-11-25 experimental tasks, which rmcp does not speak (a server with task actions
    // only; the message is parsed again only for a 2025-11-25 request that names a task, or
    // any call when an action runs only as a task). They are the framework's to answer, so a
    // session's, left unprobed above, is checked first.
    let tasks = tasks
        && parts
            .headers
            .get(&HEADER_PROTOCOL_VERSION)
            .is_some_and(|v| v == "2025-11-25")
        && crate::mcp::handlers::tasks_2025::may_name_a_task(&bytes, &guard.server);
    if tasks
        && passed.is_none()
        && let Err(answer) = jsonrpc::check_body(&bytes, &guard.server)
    {
        return Err(answer_with_status(&answer));
    }
    if tasks
        && let Ok(message) = serde_json::from_slice::<Value>(&bytes)
        // Boxed: this step's future is moved on every request; the task path's stays out
        // of it.
        && let Some(answer) =
            Box::pin(super::tasks_2025::answer(&guard.server, cleared, &parts, &message)).await
    {
        return Err(answer);
    }
    if let Some(cancels) = cancels {
        parts.extensions.insert(cancels);
    }
    let read = match passed {
        Some(passed) => {
            let id = passed.id.clone();
            // The cancellation step reads what this one read instead of parsing the body again.
            parts.extensions.insert(passed);
            Read::Probed {
                id,
                bytes: bytes.clone(),
            }
        }
        None => Read::Unprobed {
            bytes: bytes.clone(),
        },
    };
    if call.is_none() && jsonrpc::cursor_not_a_string(&bytes) {
        // Answered by the list's handler, after rmcp's checks (see `CursorNotAString`).
        parts
            .extensions
            .insert(crate::mcp::handlers::CursorNotAString);
    }
    // A plain call that rmcp would take straight to its handler is the room's: a live
    // session's, a 2026-07-28 one (the room took them above), or a stateless endpoint's.
    let route = match call {
        Some((id, call, kind))
            if !matches!(kind, PlainKind::Stateless)
                || guard.room.takes_stateless(&parts.headers) =>
        {
            Route::Room(Box::new(Plain {
                bytes: bytes.clone(),
                call,
                id,
                kind,
            }))
        }
        _ => Route::Rmcp,
    };
    Ok((Request::from_parts(parts, Body::from(bytes)), read, route))
}

/// A `tools/call` that rmcp's parse could not read, in a body the check left to it (a
/// 2026-07-28 request's, a session's), answered as the check answers it in a body it probes
/// (the handler's `UnusableCalls`).
pub(crate) fn unusable_call(
    id: &RequestId,
    params: Option<&Value>,
    server: &Server,
) -> Option<Result<rmcp::model::CustomResult, rmcp::ErrorData>> {
    Some(match jsonrpc::unusable_call(id, params, server)? {
        Reply::ToolResult { result, .. } => serde_json::to_value(&*result)
            .map(rmcp::model::CustomResult)
            .map_err(|e| rmcp::ErrorData::internal_error(e.to_string(), None)),
        Reply::Error { error, .. } => Err(error),
    })
}

/// A request whose body the framework does not read: on to rmcp, unless its
/// `MCP-Protocol-Version` is one the server does not speak.
#[allow(clippy::result_large_err)]
fn pass_unread(request: Request, server: &Server) -> Result<(Request, Read, Route), Response> {
    let version = request.headers().get(&HEADER_PROTOCOL_VERSION);
    match unsupported_version(version, server, || None) {
        Some(refusal) => Err(refusal),
        None => Ok((request, Read::Unread, Route::Rmcp)),
    }
}

/// `400` with `-32022 {supported, requested}` for an `MCP-Protocol-Version` header
/// (`version`) naming a version the server does not speak (rmcp answers it in plain text,
/// without the list a 2026-07-28 client needs to retry).
fn unsupported_version(
    version: Option<&HeaderValue>,
    server: &Server,
    id: impl FnOnce() -> Option<RequestId>,
) -> Option<Response> {
    let requested = version?;
    // What `McpHandler` speaks: rmcp's default, every version rmcp knows, oldest first.
    let supported = ProtocolVersion::KNOWN_VERSIONS;
    let known = requested
        .to_str()
        .is_ok_and(|v| supported.iter().any(|s| s.as_str() == v));
    if known {
        return None;
    }
    let requested = String::from_utf8_lossy(requested.as_bytes()).into_owned();
    tracing::debug!(%requested, server = server.name(), "unsupported MCP-Protocol-Version");
    let data = serde_json::json!({ "requested": requested, "supported": supported });
    let answer = Reply::error_with_data(
        id(),
        ErrorCode::UNSUPPORTED_PROTOCOL_VERSION,
        "Unsupported protocol version",
        data,
    );
    Some(reply(StatusCode::BAD_REQUEST, &answer))
}
