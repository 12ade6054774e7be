//! One request through the endpoint, start to end, as one function: [`Steps::serve`]. Each
//! step is a call in order, and what a step does to the answer comes after the route, in the
//! reverse order — no step wraps another:
//!
//! | in | step | file |
//! |---|---|---|
//! | 1 | authentication (when configured): the principal and its client key, or `401` | `auth.rs` |
//! | 2 | who the client is (the key a layer or the accept loop put there, else its address), and whether its peer is a trusted proxy | `identity.rs` |
//! | 3 | a slot per forwarded client (through trusted proxies only) | `forwarded.rs` |
//! | 4 | **the door**: `Host`, `Origin`, the session, whether it may open one | `door.rs` |
//! | 5 | the request's facts, once, and the body's deadline | `facts.rs`, `body.rs` |
//! | 6 | the JSON-RPC check: the one bounded body read, the framework's own answers, the route | `check.rs` |
//! | 7 | cancellation, made from the facts where it reads: the request's exchange, a `notifications/cancelled` | `cancel.rs` |
//! | 8 | the route: the room, or rmcp ([`Routes`], which `endpoint.rs` implements: this file names neither) | `endpoint.rs` |
//!
//! Out: the exchange's guarded body (7), rmcp's plain-text refusals as JSON-RPC and the
//! 2025-11-25 tasks' advertising (6), a session the server could not open or a body that
//! came too late (4, 5), refusals counted (`metrics`), the forwarded slot held until the
//! answer's end (3).
//!
//! Reads: a request on the endpoint's path. Writes: its answer.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use axum::body::Body;
use axum::extract::Request;
use axum::http::{Method, StatusCode};
use axum::response::Response;

use super::auth::AuthLayer;
use super::cancel;
use super::check::{self, Route};
use super::door::Door;
use super::rewrite::body_timed_out;
use super::sessions;
use crate::http::body::DeadlineBody;
use crate::http::forwarded;
use crate::http::identity::Identity;
use crate::mcp::facts::{Calls, Exchange, RequestFacts};

/// Where the steps lead once the check decided the route: the room, or rmcp. The endpoint
/// implements it (`endpoint.rs`), so the steps name neither, and call it once.
pub(crate) trait Routes {
    /// The answer of the route the check decided to `request`.
    fn route(
        &self,
        request: Request,
        route: Route,
    ) -> impl Future<Output = Response> + Send + use<Self>;
}

/// The steps of one endpoint, made once.
pub(crate) struct Steps {
    pub(crate) auth: Option<AuthLayer>,
    /// Requests through a trusted proxy, capped per forwarded client.
    pub(crate) forwarded: forwarded::Forwarded,
    pub(crate) identity: Identity,
    pub(crate) door: Door,
    pub(crate) body_timeout: Duration,
    /// The endpoint's running calls, which each request's [`Exchange`] lists its calls in.
    pub(crate) calls: Arc<Calls>,
    pub(crate) check: check::JsonRpcStep,
}

impl Steps {
    /// `request` through every step, then `routes` (the room, or rmcp) with the route the
    /// check decided, then back out.
    pub(crate) async fn serve<R: Routes>(&self, mut request: Request, routes: &R) -> Response {
        // 1. Authentication: before anything reads the request.
        if let Some(auth) = &self.auth
            && let Err(refused) = auth.authenticate(&mut request).await
        {
            return refused;
        }
        // 2. Who: the client, and whether its peer is a trusted proxy.
        let client = self.identity.client(&mut request);
        let trusted = self.identity.peer_is_trusted_proxy(&request);
        // 3. The forwarded client's slot.
        let slot = match self.forwarded.admit(&request, trusted) {
            Ok(slot) => slot,
            Err(busy) => {
                crate::metrics::refused(crate::metrics::Refusal::Busy);
                return busy.response();
            }
        };
        let response = self.through(client, request, routes).await;
        if crate::metrics::enabled() {
            count_refusal(response.status());
        }
        forwarded::hold(slot, response)
    }

    /// Steps 4 to 8, and back.
    async fn through<R: Routes>(
        &self,
        client: crate::context::ClientKey,
        mut request: Request,
        routes: &R,
    ) -> Response {
        // 4. The door. Into `request` itself: a second `Request` in scope would take a place
        // of its own in this future, which is moved on every request.
        let cleared;
        (request, cleared) = match self.door.pass(&client, request) {
            Ok(passed) => passed,
            Err(later) => match later.await {
                Ok(passed) => passed,
                Err(refusal) => return refusal,
            },
        };
        let is_delete = request.method() == Method::DELETE;
        // 5. The facts, once, with the request's exchange (written here, the one writer: the
        // handler side reads them); the body's deadline.
        let facts = RequestFacts {
            client,
            principal: request
                .extensions()
                .get::<crate::auth::Principal>()
                .cloned()
                .map(Arc::new),
            session: cleared.session.clone(),
            post: request.method() == Method::POST,
            exchange: Some(Exchange::new(Arc::clone(&self.calls))),
        };
        request.extensions_mut().insert(facts);
        let timed_out = Arc::new(AtomicBool::new(false));
        let request = request.map(|body| {
            Body::new(DeadlineBody {
                inner: body,
                deadline: tokio::time::Instant::now() + self.body_timeout,
                sleep: None,
                timed_out: Arc::clone(&timed_out),
            })
        });
        let admission = cleared.admission.clone();
        // 6. The check, 7. cancellation, 8. the route; a request that may open a session runs
        // with its admission in scope (rmcp opens it inside).
        let answered = self.routed(request, &cleared, routes);
        let response = match &admission {
            Some(admission) => sessions::admit(Some(Arc::clone(admission)), answered).await,
            None => answered.await,
        };
        // Back through 5 and 4.
        if let Some(refused) = admission.and_then(|a| self.door.refused(&a)) {
            return refused;
        }
        if timed_out.load(Ordering::Relaxed) {
            return body_timed_out();
        }
        let mut response = response;
        if is_delete && response.status() == StatusCode::ACCEPTED {
            // Clients (the Python SDK) expect 200 or 204 for a closed session.
            *response.status_mut() = StatusCode::OK;
        }
        response
    }

    /// Steps 6 to 8, and back through 7 and 6.
    async fn routed<R: Routes>(
        &self,
        request: Request,
        cleared: &super::door::Cleared,
        routes: &R,
    ) -> Response {
        let (request, decided, checked) = match check::check(&self.check, cleared, request).await {
            Ok(passed) => passed,
            Err(answer) => return answer,
        };
        let (request, cancelling) = match cancel::Cancelling::read(request, &self.calls).await {
            Ok(read) => read,
            Err(answer) => return answer,
        };
        let response = cancelling.end(routes.route(request, decided).await);
        checked.finish(response, &self.check.server).await
    }
}

/// Counts a response that refused the request by a bound.
fn count_refusal(status: StatusCode) {
    use crate::metrics::{Refusal, refused};
    match status {
        StatusCode::PAYLOAD_TOO_LARGE => refused(Refusal::BodyTooLarge),
        StatusCode::TOO_MANY_REQUESTS => refused(Refusal::TooMany),
        StatusCode::SERVICE_UNAVAILABLE => refused(Refusal::Busy),
        _ => {}
    }
}
