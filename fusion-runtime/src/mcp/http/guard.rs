//! The first request step: who the client is, then the [`door`](super::door) (Host, Origin,
//! whether the session it names is its own), how long its body may take, whether a new
//! session may open.
//!
//! Reads: the request's `ClientKey` (an authentication layer's) or its peer address and
//! forwarding headers, its `Principal`, the door's [`Cleared`]. Writes: the `ClientKey` (when
//! none was there), the request's [`RequestFacts`] with its [`Exchange`] and the session the
//! door cleared (once, for every step after it and the handler), the body's deadline.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use axum::body::Body;
use axum::extract::{ConnectInfo, Request};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::response::Response;

use super::body::DeadlineBody;
use super::door::{Cleared, Door};
use super::identity::Identity;
use super::rewrite::body_timed_out;
use super::sessions::{self, Admission, Refusal};
use crate::auth::Principal;
use crate::context::ClientKey;
use crate::mcp::facts::{Calls, Exchange, RequestFacts, SESSION_HEADER};
use crate::mcp::jsonrpc::{Reply, SERVER_ERROR};

/// What the request guard needs.
pub(crate) struct Guard {
    pub(crate) identity: Identity,
    pub(crate) body_timeout: Duration,
    /// The endpoint's running calls, which each request's [`Exchange`] lists its calls in.
    pub(crate) calls: Arc<Calls>,
    /// The checks before any route.
    pub(crate) door: Door,
}

/// Names the client, passes the request through the [`Door`] (Host, Origin, the session:
/// refused there, it goes no further), bounds the body's time, admits new sessions and
/// answers a session `DELETE` with `200`; `next` is the rest of the endpoint, given the
/// door's [`Cleared`].
pub(crate) async fn guard_request<F, Fut>(guard: &Guard, mut request: Request, next: F) -> Response
where
    F: FnOnce(Request, Cleared) -> Fut,
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
    // Into `request` itself: a second `Request` in scope would take a place of its own in
    // this future, which is moved on every request.
    let cleared;
    (request, cleared) = match guard.door.pass(&client, request) {
        Ok(passed) => passed,
        Err(later) => match later.await {
            Ok(passed) => passed,
            Err(refusal) => return refusal,
        },
    };
    let is_delete = request.method() == Method::DELETE;
    // Only a POST naming no session can make rmcp create one.
    // The door's sessions: `None` when stateless (none to admit).
    let admission = (guard.door.sessions.is_some()
        && request.method() == Method::POST
        && !request.headers().contains_key(&SESSION_HEADER))
    .then(|| Admission::new(client.0.clone()));
    // The request's facts, once, with its exchange: the steps after this one and the
    // handler read them.
    let mut facts = RequestFacts::new(
        client,
        request.extensions().get::<Principal>(),
        cleared.session().cloned(),
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
        Some(admission) => {
            sessions::admit(Some(Arc::clone(admission)), next(request, cleared)).await
        }
        None => next(request, cleared).await,
    };
    if let Some(refusal) = admission.and_then(|a| a.refusal()) {
        return refused(refusal);
    }
    if timed_out.load(Ordering::Relaxed) {
        return body_timed_out();
    }
    if is_delete && response.status() == StatusCode::ACCEPTED {
        // Clients (the Python SDK) expect 200 or 204 for a closed session.
        *response.status_mut() = StatusCode::OK;
    }
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
