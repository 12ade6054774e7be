//! The HTTP framing of the experimental tasks of MCP 2025-11-25, which
//! [`handlers::tasks_2025`](crate::mcp::handlers::tasks_2025) answers for every transport:
//! which requests are its (a 2025-11-25 session's, the door found live and the caller's),
//! who sends them (from the facts the request steps worked out: the principal, the client's
//! key, what the session's client declared it can answer), and how the answer is sent: one
//! JSON answer, `202` for the client's answer to a task's question, or, for a `tasks/result`
//! of a task still running, an SSE stream of its messages with a comment at the endpoint's
//! keep-alive interval between them (a proxy cuts a silent stream). A request in no session
//! is left to rmcp. The session's `initialize` and `tools/list` answers are edited on their
//! way out ([`Advertising`]), event by event.

use axum::http::request::Parts;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::Value;
use sse_stream::{KeepAlive, Sse, SseBody};

use super::body::mentions;
use super::door::Cleared;
use super::keep_alive::{self, Tick};
use crate::context::ClientKey;
use crate::mcp::facts::RequestFacts;
use crate::mcp::handlers::tasks::Can;
use crate::mcp::handlers::tasks_2025::{self, Advertise, Answered, Caller};
use crate::server::Server;

/// The answer to a 2025-11-25 task message in `message`, in the session the door `cleared`
/// (live, and the caller's own): a JSON-RPC answer, the SSE stream of a `tasks/result` for a
/// task still running, or `202` for the client's answer to a task's question; `None` for
/// anything else, and for a request in no session (rmcp answers it).
pub(crate) async fn answer(
    server: &Server,
    cleared: &Cleared,
    parts: &Parts,
    message: &Value,
) -> Option<Response> {
    if !server.has_tasks() {
        return None;
    }
    let session = cleared.session.as_ref()?;
    let facts = RequestFacts::of_parts(parts);
    let version = parts.headers.get("mcp-protocol-version")?.to_str().ok()?;
    if version != "2025-11-25" {
        return None;
    }
    let principal = facts.principal.as_deref().cloned();
    let owner = ClientKey::owner(principal.as_ref(), &facts.client);
    let asks = server.session_asks().of(session);
    let caller = Caller {
        principal,
        owner,
        can: Can {
            elicit: asks.elicit,
            sample: asks.sample,
        },
    };
    Some(match tasks_2025::answer(server, caller, message).await? {
        Answered::Reply(message) => json_answer(&message),
        Answered::Stream(messages) => sse(messages),
        Answered::Taken => StatusCode::ACCEPTED.into_response(),
    })
}

fn json_answer(message: &Value) -> Response {
    (
        StatusCode::OK,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        message.to_string(),
    )
        .into_response()
}

/// The messages of a `tasks/result` stream as an SSE answer: one `message` event each, and
/// an SSE comment at the endpoint's keep-alive interval between them. Dropped when the
/// client goes, which ends the stream's look at its task.
fn sse(messages: futures::channel::mpsc::Receiver<Value>) -> Response {
    let events = futures::StreamExt::map(messages, |message| {
        Ok::<_, std::convert::Infallible>(Sse::default().event("message").data(message.to_string()))
    });
    let body = match keep_alive::interval() {
        Some(every) => axum::body::Body::new(
            SseBody::new(events).with_keep_alive::<Tick>(KeepAlive::new().interval(every)),
        ),
        None => axum::body::Body::new(SseBody::new(events)),
    };
    (
        StatusCode::OK,
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/event-stream"),
            ),
            (header::CACHE_CONTROL, HeaderValue::from_static("no-cache")),
        ],
        body,
    )
        .into_response()
}

/// The longest answer [`Advertising`] reads whole (an SSE event, or a plain JSON answer);
/// past it the answer passes unchanged.
const MAX_ADVERTISED_BYTES: usize = 8 << 20;

/// A 2025-11-25 session's `initialize` or `tools/list` answer, to be edited on its way out
/// ([`Advertise`]), event by event.
pub(crate) struct Advertising(Advertise);

/// The edit `bytes` (a request body the check passed) calls for, if any.
pub(crate) fn advertising(
    server: &Server,
    request: &axum::extract::Request,
    bytes: &[u8],
) -> Option<Advertising> {
    if !server.has_tasks() {
        return None;
    }
    let headers = request.headers();
    // Parsed again only when it may be one of the two.
    let wanted: &[u8] = match headers.get("mcp-protocol-version") {
        None => b"\"initialize\"",
        Some(v) if v == "2025-11-25" => b"\"tools/list\"",
        Some(_) => return None,
    };
    if !mentions(bytes, wanted) {
        return None;
    }
    let message: Value = serde_json::from_slice(bytes).ok()?;
    let tools_list = match message.get("method")?.as_str()? {
        "initialize" if message["params"]["protocolVersion"] == "2025-11-25" => false,
        "tools/list" if headers.get("mcp-protocol-version")? == "2025-11-25" => true,
        _ => return None,
    };
    let listable = request
        .extensions()
        .get::<RequestFacts>()
        .is_some_and(|facts| facts.principal.is_some());
    Some(Advertising(Advertise {
        server: server.clone(),
        tools_list,
        listable,
    }))
}

impl Advertising {
    /// `unit` (one SSE event, or a whole JSON answer) with its answer edited.
    fn edit_unit(&self, unit: &[u8], sse: bool) -> axum::body::Bytes {
        let Ok(text) = std::str::from_utf8(unit) else {
            return axum::body::Bytes::copy_from_slice(unit);
        };
        if !sse {
            return match serde_json::from_str::<Value>(text) {
                Ok(mut message) => {
                    self.0.edit(&mut message);
                    axum::body::Bytes::from(message.to_string())
                }
                Err(_) => axum::body::Bytes::copy_from_slice(unit),
            };
        }
        let lines: Vec<String> = text
            .split('\n')
            .map(|line| {
                let Some(data) = line.strip_prefix("data:") else {
                    return line.to_owned();
                };
                match serde_json::from_str::<Value>(data.trim()) {
                    Ok(mut message) if message.get("result").is_some() => {
                        self.0.edit(&mut message);
                        format!("data: {message}")
                    }
                    _ => line.to_owned(),
                }
            })
            .collect();
        axum::body::Bytes::from(lines.join("\n"))
    }

    /// `response` with its answer edited (a success only; anything else passes as it is).
    pub(crate) fn apply(self, response: axum::response::Response) -> axum::response::Response {
        use futures::StreamExt as _;
        if !response.status().is_success() {
            return response;
        }
        let (mut parts, body) = response.into_parts();
        parts.headers.remove(axum::http::header::CONTENT_LENGTH);
        let sse = parts
            .headers
            .get(axum::http::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        let state = (body.into_data_stream(), Vec::<u8>::new(), self, false);
        let edited =
            futures::stream::unfold(state, move |(mut stream, mut buf, me, done)| async move {
                if done {
                    return None;
                }
                loop {
                    if sse && let Some(end) = buf.windows(2).position(|w| w == b"\n\n") {
                        let unit: Vec<u8> = buf.drain(..end + 2).collect();
                        let out = me.edit_unit(&unit, true);
                        return Some((Ok(out), (stream, buf, me, false)));
                    }
                    match stream.next().await {
                        Some(Ok(chunk)) => {
                            buf.extend_from_slice(&chunk);
                            if buf.len() > MAX_ADVERTISED_BYTES {
                                let out = axum::body::Bytes::from(std::mem::take(&mut buf));
                                return Some((Ok(out), (stream, buf, me, false)));
                            }
                        }
                        Some(Err(e)) => return Some((Err(e), (stream, buf, me, true))),
                        None if buf.is_empty() => return None,
                        None => {
                            let out = me.edit_unit(&buf, sse);
                            return Some((Ok(out), (stream, Vec::new(), me, true)));
                        }
                    }
                }
            });
        axum::response::Response::from_parts(parts, axum::body::Body::from_stream(edited.boxed()))
    }
}
