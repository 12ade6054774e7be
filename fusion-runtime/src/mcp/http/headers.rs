//! What the door, the JSON-RPC step and the way back read of a request's (or an answer's)
//! headers in common: whether a body is JSON (`Content-Type`), and the header a protocol
//! version comes in. The `Host` is the door's (`door.rs`, checked once), the `Accept` the
//! room's (`room/headers.rs`, which reads it as rmcp does).

use axum::http::{HeaderMap, HeaderName, header};

/// The header every 2026-07-28 POST carries its version in.
pub(super) const HEADER_PROTOCOL_VERSION: HeaderName =
    HeaderName::from_static("mcp-protocol-version");

/// A `Content-Type` whose essence is JSON.
pub(super) fn is_json(headers: &HeaderMap) -> bool {
    let Some(value) = headers.get(header::CONTENT_TYPE) else {
        return false;
    };
    // What nearly every client sends, compared without reading it as text first.
    if value.as_bytes() == b"application/json" {
        return true;
    }
    value.to_str().ok().is_some_and(|v| {
        v.split(';')
            .next()
            .unwrap_or_default()
            .trim()
            .eq_ignore_ascii_case("application/json")
    })
}
