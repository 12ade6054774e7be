//! What the JSON-RPC step and the plain call read of a request's headers: the ones rmcp
//! checks itself (`Content-Type`, `Accept`, `Host`) and the protocol version's.

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

/// An `Accept` naming both JSON and SSE (the essence of each entry, its parameters unread).
pub(super) fn accepts_json_and_sse(headers: &HeaderMap) -> bool {
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

/// A `Host` whose name (its port left out) an allowed entry names, or no list at all.
pub(super) fn host_allowed(headers: &HeaderMap, allowed: &[String]) -> bool {
    if allowed.is_empty() {
        return true;
    }
    let Some(host) = headers.get(header::HOST).and_then(|v| v.to_str().ok()) else {
        return false;
    };
    let name = match host.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or_default(),
        None => host.rsplit_once(':').map_or(host, |(name, _)| name),
    };
    allowed.iter().any(|a| a.eq_ignore_ascii_case(name))
}
