//! What the JSON-RPC step and the plain call read of a request's headers: the ones rmcp
//! checks itself (`Content-Type`, `Accept`, `Host` against the allowed hosts, read as rmcp
//! reads them) and the protocol version's.

use axum::http::uri::Authority;
use axum::http::{HeaderMap, HeaderName, Uri, header};

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

/// The server's allowed hosts as rmcp reads its list (each entry an authority, its port
/// optional; blank entries allow nothing), parsed once rather than on every request.
#[derive(Debug)]
pub(crate) struct AllowedHosts {
    /// An empty list: rmcp allows any host.
    any: bool,
    /// Each entry's host, lowercase and without IPv6 brackets, and its port if it names one.
    entries: Vec<(String, Option<u16>)>,
}

impl AllowedHosts {
    pub(crate) fn new(list: &[String]) -> Self {
        let entries = list
            .iter()
            .map(|a| a.trim())
            .filter(|a| !a.is_empty())
            .map(|a| match Authority::try_from(a) {
                Ok(entry) => (normalize(entry.host()), entry.port_u16()),
                Err(_) => (normalize(a), None),
            })
            .collect();
        AllowedHosts {
            any: list.is_empty(),
            entries,
        }
    }

    /// Whether the `Host` header passes rmcp's DNS-rebinding check: a valid authority whose
    /// host (and port, where the allowed entry names one) an allowed entry names, or any
    /// authority when there is no list.
    pub(crate) fn allow(&self, headers: &HeaderMap) -> bool {
        let Some(authority) = headers
            .get(header::HOST)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| Authority::try_from(v).ok())
        else {
            return false;
        };
        self.names(&authority)
    }

    /// The DNS-rebinding check of a request's host, as rmcp checks its `Host` (text, an
    /// authority, and one the list names), held to RFC 9112 where rmcp is not: one `Host` at
    /// most (§3.2: two are `400`), and an absolute-form target's authority is the one read,
    /// whatever `Host` says (§3.2.2; HTTP/2 carries its authority there too).
    pub(crate) fn verdict(&self, uri: &Uri, headers: &HeaderMap) -> Result<(), HostFault> {
        let mut hosts = headers.get_all(header::HOST).iter();
        let host = hosts.next();
        if hosts.next().is_some() {
            return Err(HostFault::Repeated);
        }
        let authority = match (uri.authority(), host) {
            (Some(authority), _) => authority.clone(),
            (None, Some(value)) => {
                let text = value.to_str().map_err(|_| HostFault::Encoding)?;
                Authority::try_from(text).map_err(|_| HostFault::Malformed)?
            }
            (None, None) => return Err(HostFault::Missing),
        };
        if self.names(&authority) {
            Ok(())
        } else {
            Err(HostFault::NotAllowed)
        }
    }

    /// Whether the list allows `authority` (any, when there is no list).
    fn names(&self, authority: &Authority) -> bool {
        if self.any {
            return true;
        }
        let host = authority.host().trim_matches(['[', ']']);
        let port = authority.port_u16();
        self.entries
            .iter()
            .any(|(name, p)| name.eq_ignore_ascii_case(host) && p.is_none_or(|p| port == Some(p)))
    }
}

/// Why a request's `Host` was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum HostFault {
    /// Not text.
    Encoding,
    /// Not an authority.
    Malformed,
    /// No `Host`, and no authority in the URI.
    Missing,
    /// More than one `Host`.
    Repeated,
    /// Not one the allowed hosts name.
    NotAllowed,
}

/// A host as the allowed hosts and origins compare it: lowercase, without IPv6 brackets.
pub(super) fn normalize(host: &str) -> String {
    host.trim_matches(['[', ']']).to_ascii_lowercase()
}
