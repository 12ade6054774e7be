//! The two checks, one per transport: [`read_line`] (stdio) and [`check_body`] (HTTP), each
//! one pass of the [`Probe`] over the message's bytes.
//!
//! Reads: the message's bytes and the server (which tools it has, for a malformed
//! `tools/call`'s envelope). Writes: the message for rmcp, or the framework's own answer.

#[cfg(feature = "server-stdio")]
use rmcp::model::{ClientJsonRpcMessage, ClientRequest, ErrorCode};

#[cfg(feature = "server-http")]
use super::probe::Passed;
use super::probe::Probe;
use super::reply::{Reply, parse_error};
#[cfg(feature = "server-stdio")]
use crate::mcp::handlers::CursorNotAString;
#[cfg(feature = "server-stdio")]
use crate::mcp::handlers::SERVED_METHODS;
use crate::server::Server;

#[cfg(feature = "server-stdio")]
/// What the framework does instead of handing a stdio line to rmcp.
#[derive(Debug)]
pub(crate) enum Refusal {
    /// Answer this.
    Reply(Reply),
    /// Nothing to answer (a response or notification rmcp cannot read).
    Ignore(&'static str),
}

#[cfg(feature = "server-stdio")]
/// Reads one stdio line (without its newline): rmcp's own parse first, so a valid message
/// costs exactly that; the check runs only when that parse fails or lands on a request
/// rmcp would answer with `Method not found`. A list request whose cursor is not a string
/// is marked [`CursorNotAString`] for its handler.
pub(crate) fn read_line(bytes: &[u8], server: &Server) -> Result<ClientJsonRpcMessage, Refusal> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    match serde_json::from_slice::<ClientJsonRpcMessage>(bytes) {
        Ok(mut message) if custom_method(&message).is_none() => {
            if let ClientJsonRpcMessage::Request(r) = &mut message
                && cursor_not_a_string(bytes)
            {
                use rmcp::model::GetExtensions as _;
                r.request.extensions_mut().insert(CursorNotAString);
            }
            Ok(message)
        }
        parsed => refuse(parsed.ok(), bytes, server),
    }
}

/// The list methods, whose `params.cursor` is a string.
const LISTS: [&str; 4] = [
    "tools/list",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
];

/// Whether `bytes` is a list request with a `params.cursor` that is not a string (the
/// transport then marks it [`CursorNotAString`](crate::mcp::handlers::CursorNotAString)).
/// Parsed only when the bytes name a `cursor` at all.
pub(crate) fn cursor_not_a_string(bytes: &[u8]) -> bool {
    const CURSOR: &[u8] = b"\"cursor\"";
    #[cfg(feature = "server-http")]
    let named = memchr::memmem::find(bytes, CURSOR).is_some();
    #[cfg(not(feature = "server-http"))]
    let named = bytes.windows(CURSOR.len()).any(|w| w == CURSOR);
    if !named {
        return false;
    }
    let Ok(message) = serde_json::from_slice::<serde_json::Value>(bytes) else {
        return false;
    };
    let listed = message
        .get("method")
        .and_then(serde_json::Value::as_str)
        .is_some_and(|m| LISTS.contains(&m));
    listed
        && message
            .get("params")
            .and_then(|p| p.get("cursor"))
            .is_some_and(|c| !c.is_string())
}

#[cfg(feature = "server-stdio")]
fn custom_method(message: &ClientJsonRpcMessage) -> Option<&str> {
    match message {
        ClientJsonRpcMessage::Request(r) => match &r.request {
            ClientRequest::CustomRequest(c) => Some(c.method.as_str()),
            _ => None,
        },
        _ => None,
    }
}

#[cfg(feature = "server-stdio")]
fn refuse(
    parsed: Option<ClientJsonRpcMessage>,
    bytes: &[u8],
    server: &Server,
) -> Result<ClientJsonRpcMessage, Refusal> {
    let probe = match Probe::of(bytes) {
        Ok(p) => p,
        Err(e) => return Err(Refusal::Reply(parse_error(&e))),
    };
    if let Some(reply) = probe.verdict(bytes, server) {
        return Err(Refusal::Reply(reply));
    }
    if let Some(message) = parsed {
        // A custom method is rmcp's to answer; a method this server serves, with params
        // rmcp cannot read, gets `Invalid params` rather than `Method not found`.
        if !custom_method(&message).is_some_and(|m| SERVED_METHODS.contains(&m)) {
            return Ok(message);
        }
    }
    if probe.method.is_none() {
        return Err(Refusal::Ignore("a response rmcp cannot read"));
    }
    match probe.readable_id() {
        Some(id) => Err(Refusal::Reply(Reply::error(
            Some(id),
            ErrorCode::INVALID_PARAMS,
            "Invalid params",
        ))),
        None => Err(Refusal::Ignore("a notification rmcp cannot read")),
    }
}

/// Checks an HTTP body, reading it once: `Err` with the framework's own answer, or what the
/// layers after the check need when rmcp should have it.
#[cfg(feature = "server-http")]
pub(crate) fn check_body(bytes: &[u8], server: &Server) -> Result<Passed, Reply> {
    let probe = Probe::of(bytes).map_err(|e| parse_error(&e))?;
    match probe.verdict(bytes, server) {
        Some(answer) => Err(answer),
        None => Ok(probe.passed()),
    }
}

/// The framework's answer to a `tools/call` whose params rmcp's parse could not read — it
/// reads such a message as a custom request (`method` and raw `params`), which reaches the
/// handler's `on_custom_request` — as the check answers the message: the `isError` result
/// with its envelope, or `Invalid params` for a retry's unusable state. `None` when the check
/// would pass it. A 2026-07-28 request's call, or a session's, is one: the HTTP check leaves
/// its body to rmcp's parse.
#[cfg(feature = "server-http")]
pub(crate) fn unusable_call(
    id: &rmcp::model::RequestId,
    params: Option<&serde_json::Value>,
    server: &Server,
) -> Option<Reply> {
    let message = match params {
        Some(params) => serde_json::json!({
            "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params,
        }),
        None => serde_json::json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call" }),
    };
    let bytes = serde_json::to_vec(&message).ok()?;
    Probe::of(&bytes).ok()?.verdict(&bytes, server)
}

/// The framework's answer to a body it passed and rmcp could not read: the probe's, when
/// `serde_json` refuses it (what a plain call's read lets through in its arguments: a lone
/// surrogate, a number out of range, nesting past `serde_json`'s limit).
#[cfg(feature = "server-http")]
pub(crate) fn refused_by_rmcp(bytes: &[u8]) -> Option<Reply> {
    Probe::of(bytes).err().map(|e| parse_error(&e))
}
