//! The first request step: who the client is, whether the session it names is its own, how
//! long its body may take, whether a new session may open.
//!
//! Reads: the request's `ClientKey` (an authentication layer's) or its peer address and
//! forwarding headers, its `Principal`, its `mcp-session-id`. Writes: the `ClientKey` (when
//! none was there), the request's [`RequestFacts`] with its [`Exchange`] (once, for every
//! step after it and the handler), a foreign session id replaced by one no session has, the
//! body's deadline.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use axum::body::Body;
use axum::extract::{ConnectInfo, Request};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::response::Response;

use super::body::DeadlineBody;
use super::identity::Identity;
use super::sessions::{self, Admission, CappedSessions, Refusal};
use crate::auth::Principal;
use crate::context::ClientKey;
use crate::mcp::facts::{Calls, Exchange, RequestFacts, SESSION_HEADER};
use crate::mcp::jsonrpc::{Reply, SERVER_ERROR};

/// What the request guard needs.
pub(crate) struct Guard {
    pub(crate) identity: Identity,
    pub(crate) body_timeout: Duration,
    /// The live sessions and their owners; `None` when stateless (none to admit).
    pub(crate) sessions: Option<Arc<CappedSessions>>,
    /// The endpoint's running calls, which each request's [`Exchange`] lists its calls in.
    pub(crate) calls: Arc<Calls>,
}

/// Names the client, holds a session to its owner, bounds the body's time, admits new
/// sessions and answers a session `DELETE` with `200`; `next` is the rest of the endpoint.
///
/// A request naming a session another client opened (another principal, or without a token
/// the address) is sent on as one naming no live session: rmcp answers it exactly as an
/// unknown id (`404`), so the answer tells nothing of whether the id exists.
pub(crate) async fn guard_request<F, Fut>(guard: &Guard, mut request: Request, next: F) -> Response
where
    F: FnOnce(Request) -> Fut,
    Fut: Future<Output = Response>,
{
    // The accept loop puts in the key of a peer that is not a trusted proxy, once per
    // connection; an authentication layer, the principal's.
    let client = match request.extensions().get::<ClientKey>() {
        Some(key) => key.clone(),
        None => {
            let key = guard.identity.key(
                request.extensions().get::<ConnectInfo<SocketAddr>>(),
                request.headers(),
            );
            request.extensions_mut().insert(key.clone());
            key
        }
    };
    let is_delete = request.method() == Method::DELETE;
    let mut admission = None;
    if let Some(sessions) = &guard.sessions {
        let client = client.0.as_str();
        match request.headers().get(&SESSION_HEADER) {
            // rmcp answers a `DELETE` of any id `202`; an id that is not a live session of
            // this client gets the unknown session's `404` instead.
            Some(id) if is_delete && !sessions.owned_by(id.as_bytes(), client) => {
                return plain_status(StatusCode::NOT_FOUND, SESSION_NOT_FOUND);
            }
            Some(id) if sessions.owned_by_another(id.as_bytes(), client) => {
                tracing::warn!(client, "a request named a session another client owns");
                request
                    .headers_mut()
                    .insert(&SESSION_HEADER, HeaderValue::from_static(NO_SESSION));
            }
            Some(_) => {}
            // Only a POST without a session id can make rmcp create a session.
            None if request.method() == Method::POST => {
                admission = Some(Admission::new(client.to_owned()));
            }
            None => {}
        }
    }
    // The request's facts, once, with its exchange: the steps after this one and the
    // handler read them.
    let mut facts = RequestFacts::new(
        client,
        request.extensions().get::<Principal>(),
        request.headers(),
        request.method(),
    );
    facts.exchange = Some(Exchange::new(Arc::clone(&guard.calls)));
    request.extensions_mut().insert(facts);
    let timed_out = Arc::new(AtomicBool::new(false));
    let request = request.map(|body| {
        Body::new(DeadlineBody {
            inner: body,
            deadline: tokio::time::Instant::now() + guard.body_timeout,
            sleep: None,
            timed_out: Arc::clone(&timed_out),
        })
    });
    // Only a request that may open a session runs with its admission in scope.
    let mut response = match &admission {
        Some(admission) => sessions::admit(Some(Arc::clone(admission)), next(request)).await,
        None => next(request).await,
    };
    if let Some(refusal) = admission.and_then(|a| a.refusal()) {
        return refused(refusal);
    }
    if timed_out.load(Ordering::Relaxed) {
        return plain(
            StatusCode::REQUEST_TIMEOUT,
            "Request Timeout: the body was not received in time",
        );
    }
    if is_delete && response.status() == StatusCode::ACCEPTED {
        // Clients (the Python SDK) expect 200 or 204 for a closed session.
        *response.status_mut() = StatusCode::OK;
    }
    response
}

/// The session id a request on another client's session is sent on with: rmcp never makes
/// it (its ids are UUIDs), so it is unknown.
const NO_SESSION: &str = "not-a-live-session";

/// rmcp's answer to a request on an unknown session (its body, as rmcp writes it).
const SESSION_NOT_FOUND: &str = "Not Found: Session not found";

/// `status` with `text`, as rmcp writes its own refusals (no content type).
fn plain_status(status: StatusCode, text: &'static str) -> Response {
    let mut response = Response::new(Body::from(text));
    *response.status_mut() = status;
    response
}

fn plain(status: StatusCode, text: &'static str) -> Response {
    let mut response = Response::new(Body::from(text));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
        .headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    response
}

/// The answer to a refused session: HTTP 503 (server full) or 429 (this client holds its
/// maximum), a JSON-RPC error body and `Retry-After`.
fn refused(refusal: Refusal) -> Response {
    let (status, message) = match refusal {
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
        HeaderValue::from_static("application/json"),
    );
    headers.insert(header::RETRY_AFTER, HeaderValue::from_static("30"));
    response
}
