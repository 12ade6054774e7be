//! Which headers rmcp passes, on the way to its handler, with nothing to refuse or negotiate:
//! the room answers only requests that carry such headers. (Their `Host` is the door's to
//! check, once: a request that passed the door passes rmcp's `Host` check.) Conservative wherever rmcp's
//! reading is richer than a look at the bytes (`Accept` with parameters or quotes, a
//! Base64-wrapped standard header, `Mcp-Param-*`): `false` only sends the request to rmcp.

use axum::http::{HeaderMap, header};

use super::super::headers::HEADER_PROTOCOL_VERSION;
use crate::mcp::facts::SESSION_HEADER;

/// The standard header naming a 2026-07-28 request's method (SEP-2243).
const MCP_METHOD: &str = "mcp-method";
/// The standard header naming what a 2026-07-28 request acts on: a call's tool.
const MCP_NAME: &str = "mcp-name";
/// How a standard header's value starts when it is Base64-wrapped.
const BASE64_WRAPPED: &str = "=?base64?";
/// The prefix of the headers that repeat a call's arguments (`Mcp-Param-*`).
const MCP_PARAM: &str = "mcp-param-";

/// Whether rmcp takes a request with these headers to its handler with nothing to refuse or
/// negotiate: on the stateless path (`session` false: the request names none), or a live
/// session's (`session` true: it names one, once). Conservative where rmcp's reading is
/// richer than the check's (`Accept` with parameters or quotes): `false` only sends the
/// request to rmcp.
pub(crate) fn legacy_headers_pass(headers: &HeaderMap, session: bool) -> bool {
    plain_accept(headers)
        && !headers.contains_key(header::ORIGIN)
        && session_named(headers) == session
        && legacy_version(headers)
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

/// An `Accept` naming both JSON and SSE (the essence of each entry, its parameters unread).
pub(crate) fn accepts_json_and_sse(headers: &HeaderMap) -> bool {
    let (mut json, mut sse) = (false, false);
    let types = headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|t| t.split(';').next().unwrap_or_default().trim());
    for t in types {
        json |= t.eq_ignore_ascii_case("application/json");
        sse |= t.eq_ignore_ascii_case("text/event-stream");
    }
    json && sse
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

/// Whether rmcp passes a 2026-07-28 `tools/call` with these headers to its handler with
/// nothing to refuse, once its body names the tool this returns: `Accept` as for a 2025 call, no `Origin`, no session, `MCP-Protocol-Version: 2026-07-28` once, and the
/// standard headers once each — `Mcp-Method: tools/call`, and `Mcp-Name` bare (rmcp decodes
/// a Base64-wrapped one), the value returned for the caller to match against the body — and
/// no `Mcp-Param-*` (rmcp checks them against a tool's schema). `None`: rmcp's to answer,
/// and the body need not be read for the room.
pub(crate) fn modern_headers_pass(headers: &HeaderMap) -> Option<&str> {
    let pass = plain_accept(headers)
        && !headers.contains_key(header::ORIGIN)
        && !headers.contains_key(&SESSION_HEADER)
        && only(headers, HEADER_PROTOCOL_VERSION.as_str()) == Some("2026-07-28")
        && only(headers, MCP_METHOD) == Some("tools/call")
        && !headers.keys().any(|k| k.as_str().starts_with(MCP_PARAM));
    only(headers, MCP_NAME).filter(|name| pass && !name.starts_with(BASE64_WRAPPED))
}

/// The one value of `name`, as text; `None` when absent, repeated or not visible ASCII.
fn only<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    let mut values = headers.get_all(name).iter();
    let value = values.next()?;
    if values.next().is_some() {
        return None;
    }
    value.to_str().ok()
}
