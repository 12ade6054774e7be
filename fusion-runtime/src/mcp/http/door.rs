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
//! - the session a 2025 request names, on an endpoint that keeps sessions: it must be live
//!   and opened by the same client (principal, or address without a token), else `404
//!   Not Found: Session not found` — the same answer whether the id is made up, closed,
//!   expired or another client's, so the answer tells nothing of other clients' sessions.
//!   A request naming no session, a 2026-07-28 request (that revision has no sessions) and
//!   any request to a stateless endpoint go on with no session: a session id is honoured only
//!   once the door has found it live and the caller's.
//!
//! The protocol version a request names is checked next, by the JSON-RPC step, still before
//! any route.
//!
//! Reads: the request's `Host`, `Origin`, `MCP-Protocol-Version`, `mcp-session-id`, the
//! client's key; for a refused session, the body (bounded), only for the id its answer
//! carries. Writes: [`Cleared`] (the session, if any), or the refusal.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderMap, Method, StatusCode, Uri, header};
use axum::response::Response;

use super::body::read_bounded;
use super::headers::{AllowedHosts, HEADER_PROTOCOL_VERSION, HostFault, is_json};
use super::rewrite::{Read, json_errors};
use super::sessions::CappedSessions;
use crate::context::ClientKey;
use crate::mcp::facts::SESSION_HEADER;
use crate::mcp::handlers::era::is_modern_version;
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

/// A request that passed the door, and the session it may act in: the only way to a route.
#[derive(Debug)]
pub(crate) struct Cleared {
    session: Option<Arc<str>>,
}

impl Cleared {
    /// The session the request acts in: live, and opened by the same client. `None` for a
    /// stateless endpoint, a 2026-07-28 request, or a request that names none.
    pub(crate) fn session(&self) -> Option<&Arc<str>> {
        self.session.as_ref()
    }

    /// A request cleared with no session, for the step tests of the routes behind the door.
    #[cfg(test)]
    pub(crate) fn sessionless() -> Self {
        Cleared { session: None }
    }
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
    /// Checks `request` from `client`: [`Cleared`], or the fault.
    pub(crate) fn inspect(&self, client: &ClientKey, request: &Request) -> Result<Cleared, Fault> {
        let headers = request.headers();
        self.hosts
            .verdict(request.uri(), headers)
            .map_err(Fault::Host)?;
        self.origins.verdict(headers).map_err(Fault::Origin)?;
        let session = self.session(client, request.method(), headers)?;
        Ok(Cleared { session })
    }

    /// The session a request acts in, checked: see the module's doc.
    fn session(
        &self,
        client: &ClientKey,
        method: &Method,
        headers: &HeaderMap,
    ) -> Result<Option<Arc<str>>, Fault> {
        let Some(sessions) = &self.sessions else {
            return Ok(None);
        };
        let Some(id) = headers.get(&SESSION_HEADER) else {
            return Ok(None);
        };
        // A 2026-07-28 request has no session (rmcp serves it without one); a `DELETE` ends
        // one whatever version it names.
        let modern = headers
            .get(&HEADER_PROTOCOL_VERSION)
            .and_then(|v| v.to_str().ok())
            .is_some_and(is_modern_version);
        if modern && method != Method::DELETE {
            return Ok(None);
        }
        // Exactly one id, text, live and this client's.
        let one = headers.get_all(&SESSION_HEADER).iter().count() == 1;
        match id.to_str() {
            Ok(id) if one && sessions.owned_by(id.as_bytes(), &client.0) => Ok(Some(id.into())),
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
        let Some(value) = headers.get(header::ORIGIN) else {
            return Ok(());
        };
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
        host: super::headers::normalize(authority.host()),
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
