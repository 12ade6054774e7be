//! The door: the checks every request passes before any route is chosen — the one that
//! answers a plain call without rmcp, the 2025-11-25 task methods, rmcp's own, or whatever
//! comes next. Each route is reached only with the door's [`Cleared`], which nothing else
//! makes, so a route added later cannot answer before these checks.
//!
//! In order, as rmcp checks them (its answers, word for word, rewritten as every refusal of
//! rmcp's is, see [`rewrite`](super::rewrite)):
//! - `Host` (DNS rebinding): a `Host` that is not valid text or not an authority is `400`; one
//!   the allowed hosts do not name is `403 Forbidden: Host header is not allowed`;
//! - `Origin`: present and not an allowed origin (or malformed) is `403`;
//! - `Host` and `Origin` each at most once (RFC 9112 §3.2: two `Host` headers are `400`); the
//!   host of an absolute-form target (`POST http://host/mcp`) is checked too, and both it and
//!   `Host` must be allowed (RFC 9112 §3.2.2 has a server read the target's);
//! - the session a request names, on an endpoint that keeps sessions, whenever rmcp would
//!   route the request into that session: it must be live and opened by the same client
//!   (principal, or address without a token), else `404 Not Found: Session not found` — the
//!   same answer whether the id is made up, closed, expired or another client's, so the
//!   answer tells nothing of other clients' sessions. A request naming no session, one rmcp
//!   serves without a session whatever id it names, and any request to a stateless endpoint
//!   go on with no session: a session id is honoured only once the door has found it live
//!   and the caller's.
//!
//! Which requests rmcp 3.11 routes into the session `mcp-session-id` names (its
//! `is_legacy_request`, on an endpoint with sessions; `tests/tests/door_vs_rmcp.rs` holds the door
//! to this table against rmcp's own `StreamableHttpService`):
//!
//! | method | `MCP-Protocol-Version` | message | into the session |
//! |---|---|---|---|
//! | `POST` | none, or before 2026-07-28 | any | yes (`initialize` too: it re-initializes it) |
//! | `POST` | 2026-07-28 or later | `initialize` | **yes**: an `initialize` is legacy whatever version it names |
//! | `POST` | 2026-07-28 or later | anything else | no: served statelessly, the id ignored |
//! | `GET`, `DELETE` | none, or before 2026-07-28 | — | yes (its stream; its end) |
//! | `GET`, `DELETE` | 2026-07-28 or later | — | no (`405`, or a stateless replay) |
//! | any other | any | — | no (`405`) |
//!
//! So a `POST` with a 2026-07-28 header that names a session is the one request whose body
//! the door reads (bounded in size and time, parsed as rmcp parses it): only there does the
//! body decide.
//!
//! The protocol version a request names is checked next, by the JSON-RPC step, still before
//! any route.
//!
//! Reads: the request's target, `Host`, `Origin`, `MCP-Protocol-Version`, `mcp-session-id`,
//! the client's key; the body (bounded) of a 2026-07-28 `POST` naming a session, and of a
//! refused session's, for the id its answer carries. Writes: [`Cleared`] (the session, if
//! any), or the refusal.

use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;

use axum::body::Body;
use axum::extract::Request;
use axum::http::uri::Authority;
use axum::http::{HeaderMap, Method, StatusCode, Uri, header};
use axum::response::Response;

use super::headers::{HEADER_PROTOCOL_VERSION, is_json};
use super::rewrite::{Read, body_timed_out, json_errors, too_large};
use super::sessions::{Admission, CappedSessions, Refusal};
use crate::context::ClientKey;
use crate::http::body::read_bounded;
use crate::mcp::facts::SESSION_HEADER;
use crate::mcp::handlers::era::is_modern_version;
use crate::mcp::jsonrpc::{Reply, SERVER_ERROR};
use crate::server::Server;

/// What the door needs, made once per endpoint.
pub(crate) struct Door {
    pub(crate) server: Server,
    pub(crate) hosts: AllowedHosts,
    pub(crate) origins: AllowedOrigins,
    /// The live sessions and their owners; `None` when stateless (a session id means nothing).
    pub(crate) sessions: Option<Arc<CappedSessions>>,
    /// The body cap, for the one read a refused session's answer makes (its id).
    pub(crate) max_body_bytes: usize,
    /// How long that read may take.
    pub(crate) body_timeout: Duration,
}

/// A request through the door, with its [`Cleared`].
pub(crate) type Passed = (Request, Cleared);

/// A request that passed the door, and the session it may act in: the only way to a route.
#[derive(Debug)]
pub(crate) struct Cleared {
    /// The session the request acts in: live, and opened by the same client; `None` for a
    /// request that names none (or on an endpoint that keeps none).
    pub(crate) session: Option<Arc<str>>,
    /// A request that may open a session (a `POST` naming none, on an endpoint that keeps
    /// sessions): its admission, which the session caps answer while rmcp opens it.
    pub(crate) admission: Option<Arc<Admission>>,
}

impl Cleared {
    /// A request cleared with no session, for the step tests of the routes behind the door.
    #[cfg(test)]
    pub(crate) fn sessionless() -> Self {
        Cleared {
            session: None,
            admission: None,
        }
    }
}

/// What decides whether a request acts in the session it names (see the module's table).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SessionRule {
    /// None to check: no session named, a stateless endpoint, or one rmcp serves without it.
    None,
    /// rmcp routes it into the session: it must be the caller's.
    Check,
    /// A 2026-07-28 `POST` naming a session: its body decides (an `initialize` goes in).
    ByBody,
}

/// Whether rmcp reads `bytes` as an `initialize` request (its own parse of a message).
fn rmcp_reads_initialize(bytes: &[u8]) -> bool {
    use rmcp::model::{ClientJsonRpcMessage, ClientRequest};
    matches!(
        serde_json::from_slice::<ClientJsonRpcMessage>(bytes),
        Ok(ClientJsonRpcMessage::Request(request))
            if matches!(request.request, ClientRequest::InitializeRequest(_))
    )
}

/// Why the door refused a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fault {
    Host(HostFault),
    Origin(OriginFault),
    /// The session named is not a live one of this client's.
    Session,
}

impl Fault {
    /// rmcp's answer to the same fault: its status and plain text.
    fn rmcp_answer(self) -> (StatusCode, &'static str) {
        match self {
            Fault::Host(HostFault::Encoding) => (
                StatusCode::BAD_REQUEST,
                "Bad Request: Invalid Host header encoding",
            ),
            Fault::Host(HostFault::Malformed) => {
                (StatusCode::BAD_REQUEST, "Bad Request: Invalid Host header")
            }
            Fault::Host(HostFault::Missing) => {
                (StatusCode::BAD_REQUEST, "Bad Request: missing Host header")
            }
            // Not rmcp's: it reads the first of several (RFC 9112 §3.2 asks for 400).
            Fault::Host(HostFault::Repeated) => (
                StatusCode::BAD_REQUEST,
                "Bad Request: more than one Host header",
            ),
            Fault::Origin(OriginFault::Repeated) => (
                StatusCode::BAD_REQUEST,
                "Bad Request: more than one Origin header",
            ),
            Fault::Host(HostFault::NotAllowed) => (
                StatusCode::FORBIDDEN,
                "Forbidden: Host header is not allowed",
            ),
            Fault::Origin(OriginFault::Encoding) => (
                StatusCode::FORBIDDEN,
                "Forbidden: Invalid Origin header encoding",
            ),
            Fault::Origin(OriginFault::Malformed) => {
                (StatusCode::FORBIDDEN, "Forbidden: Invalid Origin header")
            }
            Fault::Origin(OriginFault::NotAllowed) => (
                StatusCode::FORBIDDEN,
                "Forbidden: Origin header is not allowed",
            ),
            Fault::Session => (StatusCode::NOT_FOUND, "Not Found: Session not found"),
        }
    }
}

impl Door {
    /// Passes `request` from `client` through the door: the request and its [`Cleared`]
    /// at once, or (to refuse it, or to read the body of the one request whose body decides)
    /// the future of either that or the answer that refuses it — boxed: the steps' future,
    /// moved on every request, holds none of the rare paths' state.
    pub(crate) fn pass<'a>(
        &'a self,
        client: &'a ClientKey,
        request: Request,
    ) -> Result<Passed, BoxFuture<'a, Result<Passed, Response>>> {
        let fault = match self.inspect(&request) {
            Ok(SessionRule::None) => {
                let admission = self.admission(client, &request);
                let cleared = Cleared {
                    session: None,
                    admission,
                };
                return Ok((request, cleared));
            }
            Ok(SessionRule::Check) => match self.owned(client, request.headers()) {
                Ok(session) => {
                    let cleared = Cleared {
                        session: Some(session),
                        admission: None,
                    };
                    return Ok((request, cleared));
                }
                Err(fault) => fault,
            },
            Ok(SessionRule::ByBody) => return Err(Box::pin(self.by_body(client, request))),
            Err(fault) => fault,
        };
        Err(Box::pin(
            async move { Err(self.refuse(fault, request).await) },
        ))
    }

    /// A 2026-07-28 `POST` naming a session: read (bounded), then into the session's check
    /// when rmcp reads an `initialize`.
    async fn by_body(&self, client: &ClientKey, request: Request) -> Result<Passed, Response> {
        let (parts, body) = request.into_parts();
        let read =
            tokio::time::timeout(self.body_timeout, read_bounded(body, self.max_body_bytes)).await;
        let bytes = match read {
            Ok(Ok(bytes)) => bytes,
            Ok(Err(Some(()))) => return Err(too_large(self.max_body_bytes)),
            Ok(Err(None)) | Err(_) => return Err(body_timed_out()),
        };
        let initialize = rmcp_reads_initialize(&bytes);
        let request = Request::from_parts(parts, Body::from(bytes));
        let session = match initialize {
            false => None,
            true => match self.owned(client, request.headers()) {
                Ok(session) => Some(session),
                Err(fault) => return Err(self.refuse(fault, request).await),
            },
        };
        let cleared = Cleared {
            session,
            admission: None,
        };
        Ok((request, cleared))
    }

    /// The admission of a request that may open a session: only a `POST` naming none, on an
    /// endpoint that keeps sessions, can make rmcp open one.
    fn admission(&self, client: &ClientKey, request: &Request) -> Option<Arc<Admission>> {
        (self.sessions.is_some()
            && request.method() == Method::POST
            && !request.headers().contains_key(&SESSION_HEADER))
        .then(|| Admission::new(client.0.clone()))
    }

    /// The answer to a request whose session the caps refused to open (once rmcp tried),
    /// in place of rmcp's: HTTP 503 (server full) or 429 (this client holds its maximum), a
    /// JSON-RPC error body and `Retry-After`.
    pub(crate) fn refused(&self, admission: &Admission) -> Option<Response> {
        let (status, message) = match admission.refusal()? {
            Refusal::ServerFull(n) => (
                StatusCode::SERVICE_UNAVAILABLE,
                format!(
                    "The server holds its maximum of {n} live MCP sessions; retry later, or close \
                     sessions you no longer use (HTTP DELETE with their mcp-session-id)"
                ),
            ),
            Refusal::ClientFull(n) => (
                StatusCode::TOO_MANY_REQUESTS,
                format!(
                    "This client already holds {n} live MCP sessions, the most one client may; \
                     reuse one, or close one you no longer use (HTTP DELETE with its mcp-session-id)"
                ),
            ),
        };
        let body = Reply::error(None, SERVER_ERROR, message).to_json();
        let mut response = Response::new(Body::from(body));
        *response.status_mut() = status;
        let headers = response.headers_mut();
        headers.insert(
            header::CONTENT_TYPE,
            header::HeaderValue::from_static("application/json"),
        );
        headers.insert(header::RETRY_AFTER, header::HeaderValue::from_static("30"));
        Some(response)
    }

    /// The door's checks that need no body: the fault, or what decides the session.
    fn inspect(&self, request: &Request) -> Result<SessionRule, Fault> {
        let headers = request.headers();
        self.hosts
            .verdict(request.uri(), headers)
            .map_err(Fault::Host)?;
        self.origins.verdict(headers).map_err(Fault::Origin)?;
        Ok(self.session_rule(request.method(), headers))
    }

    /// Whether rmcp routes a request into the session it names: see the module's table.
    fn session_rule(&self, method: &Method, headers: &HeaderMap) -> SessionRule {
        if self.sessions.is_none() || !headers.contains_key(&SESSION_HEADER) {
            return SessionRule::None;
        }
        let modern = headers
            .get(&HEADER_PROTOCOL_VERSION)
            .and_then(|v| v.to_str().ok())
            .is_some_and(is_modern_version);
        match *method {
            Method::POST if modern => SessionRule::ByBody,
            Method::POST | Method::GET | Method::DELETE if !modern => SessionRule::Check,
            _ => SessionRule::None,
        }
    }

    /// The session `headers` name: exactly one id, text, live and `client`'s.
    fn owned(&self, client: &ClientKey, headers: &HeaderMap) -> Result<Arc<str>, Fault> {
        let Some(sessions) = &self.sessions else {
            return Err(Fault::Session);
        };
        let mut ids = headers.get_all(&SESSION_HEADER).iter();
        match (ids.next().map(|id| id.to_str()), ids.next()) {
            (Some(Ok(id)), None) if sessions.owned_by(id.as_bytes(), &client.0) => Ok(id.into()),
            _ => {
                tracing::warn!(
                    client = client.0.as_str(),
                    "a request named a session that is not a live one of its own"
                );
                Err(Fault::Session)
            }
        }
    }

    /// The answer to `fault`, found in `request`: rmcp's, rewritten as the endpoint rewrites
    /// rmcp's own; a refused session's carries the request's id when its body is a JSON
    /// message (read once, bounded in size and time), as rmcp's answer to it would.
    pub(crate) async fn refuse(&self, fault: Fault, request: Request) -> Response {
        let (status, text) = fault.rmcp_answer();
        let read = match fault {
            Fault::Session if request.method() == Method::POST && is_json(request.headers()) => {
                let body = request.into_body();
                let bytes = tokio::time::timeout(
                    self.body_timeout,
                    read_bounded(body, self.max_body_bytes),
                )
                .await;
                match bytes {
                    Ok(Ok(bytes)) => Read::Unprobed { bytes },
                    _ => Read::Unread,
                }
            }
            _ => Read::Unread,
        };
        let mut response = Response::new(Body::from(text));
        *response.status_mut() = status;
        if status == StatusCode::BAD_REQUEST {
            response.headers_mut().insert(
                header::CONTENT_TYPE,
                header::HeaderValue::from_static("text/plain; charset=utf-8"),
            );
        }
        json_errors(response, read, &self.server).await
    }
}

/// Why an `Origin` was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum OriginFault {
    /// More than one `Origin` (RFC 6454 §7.2: one origin, or `null`).
    Repeated,
    Encoding,
    Malformed,
    NotAllowed,
}

/// An origin as a request sends it: `null`, or scheme, host and port.
#[derive(Debug, PartialEq, Eq)]
enum Origin {
    Null,
    Tuple {
        scheme: String,
        host: String,
        port: Option<u16>,
    },
}

/// The port an allowed origin names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Port {
    /// `:*`.
    Any,
    /// No port: any (rmcp's reading, until it deprecates it).
    Unspecified,
    Exact(u16),
}

/// The allowed origins, parsed once as rmcp parses its list on every request. Every present
/// `Origin` is checked (the endpoint enforces the list even when it is empty); a request
/// without one passes.
#[derive(Debug)]
pub(crate) struct AllowedOrigins {
    entries: Vec<Allowed>,
}

#[derive(Debug)]
enum Allowed {
    Null,
    Tuple {
        scheme: String,
        host: String,
        port: Port,
    },
}

impl AllowedOrigins {
    pub(crate) fn new(list: &[String]) -> Self {
        AllowedOrigins {
            entries: list.iter().filter_map(|o| allowed(o)).collect(),
        }
    }

    fn verdict(&self, headers: &HeaderMap) -> Result<(), OriginFault> {
        let mut origins = headers.get_all(header::ORIGIN).iter();
        let Some(value) = origins.next() else {
            return Ok(());
        };
        if origins.next().is_some() {
            return Err(OriginFault::Repeated);
        }
        let text = value.to_str().map_err(|_| OriginFault::Encoding)?;
        let origin = origin(text).ok_or(OriginFault::Malformed)?;
        let allowed = self.entries.iter().any(|entry| match (entry, &origin) {
            (Allowed::Null, Origin::Null) => true,
            (
                Allowed::Tuple { scheme, host, port },
                Origin::Tuple {
                    scheme: s,
                    host: h,
                    port: p,
                },
            ) => scheme == s && host == h && port_matches(*port, s, *p),
            _ => false,
        });
        if allowed {
            Ok(())
        } else {
            Err(OriginFault::NotAllowed)
        }
    }
}

fn port_matches(allowed: Port, scheme: &str, port: Option<u16>) -> bool {
    match allowed {
        Port::Any | Port::Unspecified => true,
        // An origin leaves out its scheme's default port (RFC 6454 §6.2).
        Port::Exact(p) => port.or(default_port(scheme)) == Some(p),
    }
}

fn default_port(scheme: &str) -> Option<u16> {
    match scheme {
        "http" => Some(80),
        "https" => Some(443),
        _ => None,
    }
}

fn origin(value: &str) -> Option<Origin> {
    let value = value.trim();
    if value.is_empty() {
        return None;
    }
    if value.eq_ignore_ascii_case("null") {
        return Some(Origin::Null);
    }
    let uri = Uri::try_from(value).ok()?;
    let scheme = uri.scheme_str()?.to_ascii_lowercase();
    let authority = uri.authority()?;
    Some(Origin::Tuple {
        scheme,
        host: normalize(authority.host()),
        port: authority.port_u16(),
    })
}

fn allowed(value: &str) -> Option<Allowed> {
    let value = value.trim();
    if let Some(base) = value.strip_suffix(":*") {
        let Origin::Tuple {
            scheme,
            host,
            port: None,
        } = origin(base)?
        else {
            return None;
        };
        return Some(Allowed::Tuple {
            scheme,
            host,
            port: Port::Any,
        });
    }
    Some(match origin(value)? {
        Origin::Null => Allowed::Null,
        Origin::Tuple { scheme, host, port } => Allowed::Tuple {
            scheme,
            host,
            port: port.map_or(Port::Unspecified, Port::Exact),
        },
    })
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
fn normalize(host: &str) -> String {
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
