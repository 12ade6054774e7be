//! What the door, the JSON-RPC step and the plain call read of a request's headers: the ones
//! rmcp checks itself (`Content-Type`, `Accept`, `Host` against the allowed hosts — the
//! door's, once) and the protocol version's.

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

    /// The DNS-rebinding check of a request's host, as rmcp checks its `Host` (text, an
    /// authority, and one the list names), held to RFC 9112 where rmcp is not: one `Host` at
    /// most (§3.2: two are `400`), and an absolute-form target's authority checked whatever
    /// `Host` says (§3.2.2; HTTP/2 carries its authority there too). Both are checked when both
    /// are there — the target's by the RFC, the `Host` because rmcp reads it — so a request
    /// that passes here passes rmcp's check too, and no step after the door checks the host
    /// again.
    pub(crate) fn verdict(&self, uri: &Uri, headers: &HeaderMap) -> Result<(), HostFault> {
        let mut hosts = headers.get_all(header::HOST).iter();
        let host = hosts.next();
        if hosts.next().is_some() {
            return Err(HostFault::Repeated);
        }
        let host = match host {
            Some(value) => {
                let text = value.to_str().map_err(|_| HostFault::Encoding)?;
                Some(Authority::try_from(text).map_err(|_| HostFault::Malformed)?)
            }
            None => None,
        };
        let target = uri.authority();
        if target.is_none() && host.is_none() {
            return Err(HostFault::Missing);
        }
        let allowed = target.is_none_or(|a| self.names(a)) && host.is_none_or(|a| self.names(&a));
        if allowed {
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

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;

    use super::*;

    fn allowed(hosts: &[&str]) -> AllowedHosts {
        AllowedHosts::new(&hosts.iter().map(|h| (*h).to_owned()).collect::<Vec<_>>())
    }

    fn host(value: &'static str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(header::HOST, HeaderValue::from_static(value));
        headers
    }

    /// The door's one host check: as rmcp reads its list and a `Host` (an entry's port must
    /// match when it names one), and as RFC 9112 asks where rmcp does not.
    #[test]
    fn the_host_is_checked_once_as_rmcp_reads_it_and_as_rfc_9112_asks() {
        let origin_form = Uri::from_static("/mcp");
        let verdict =
            |hosts: &[&str], uri: &Uri, headers: &HeaderMap| allowed(hosts).verdict(uri, headers);
        let localhost = host("localhost:8080");
        for hosts in [
            &[][..],
            &["localhost"],
            &["LOCALHOST"],
            &["localhost:8080"],
            &["example.com", " localhost "],
        ] {
            assert_eq!(
                verdict(hosts, &origin_form, &localhost),
                Ok(()),
                "{hosts:?}"
            );
        }
        assert_eq!(
            verdict(&["::1"], &origin_form, &host("[::1]:80")),
            Ok(()),
            "IPv6"
        );
        for (hosts, what) in [
            (&["example.com"][..], "another host"),
            (&["localhost:9"], "another port"),
            (&[""], "an empty entry"),
        ] {
            assert_eq!(
                verdict(hosts, &origin_form, &localhost),
                Err(HostFault::NotAllowed),
                "{what}"
            );
        }
        let any: &[&str] = &[];
        assert_eq!(
            verdict(any, &origin_form, &HeaderMap::new()),
            Err(HostFault::Missing)
        );
        assert_eq!(
            verdict(any, &origin_form, &host("local host")),
            Err(HostFault::Malformed)
        );
        let mut two = host("localhost");
        two.append(header::HOST, HeaderValue::from_static("localhost"));
        assert_eq!(verdict(any, &origin_form, &two), Err(HostFault::Repeated));
        // An absolute-form target and a `Host`: both are checked (the target by the RFC, the
        // `Host` because rmcp reads it), and the target alone where there is no `Host`.
        let evil_target = Uri::from_static("http://evil.example/mcp");
        let local_target = Uri::from_static("http://localhost/mcp");
        let local = &["localhost"][..];
        assert_eq!(
            verdict(local, &evil_target, &host("localhost")),
            Err(HostFault::NotAllowed)
        );
        assert_eq!(
            verdict(local, &local_target, &host("evil.example")),
            Err(HostFault::NotAllowed)
        );
        assert_eq!(verdict(local, &local_target, &host("localhost")), Ok(()));
        assert_eq!(verdict(local, &local_target, &HeaderMap::new()), Ok(()));
    }
}
