//! The streamable HTTP endpoint as an axum router: rmcp's service behind the request steps,
//! in order — [`guard_request`] (identity, the door — Host, Origin, session ownership — and
//! the body's deadline; it writes
//! the request's [`RequestFacts`](crate::mcp::facts::RequestFacts)), the JSON-RPC check ([`check`]: the one bounded body
//! read), the cancellation step ([`cancel`](super::cancel): the request's exchange) — and, when
//! configured, authentication around them all ([`auth`](super::auth)).
//!
//! Reads: the [`HttpOptions`]. Writes: the router; each request reaches rmcp with its facts in
//! its extensions.

use std::convert::Infallible;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::body::Body;
use axum::extract::Request;
use axum::http::StatusCode;
use axum::response::Response;
use futures::future::BoxFuture;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use super::auth::AuthLayer;
use super::check;
use super::door::{AllowedOrigins, Door};
use super::forwarded;
use super::guard::{Guard, guard_request};
use super::headers::AllowedHosts;
use super::identity::Identity;
use super::options::HttpOptions;
use super::room::{Answered, LiveSessions, Room};
use super::sessions::CappedSessions;
use crate::mcp::facts::{Calls, SESSION_HEADER};
use crate::mcp::handlers::{LiveList, McpHandler, notify};
use crate::server::Server;

/// The endpoint as [`endpoint`] assembles it: the router, the same endpoint served without
/// it when it can be ([`Direct`]), and the room's counts.
pub(crate) struct Assembled {
    pub(crate) router: axum::Router,
    pub(crate) direct: Option<Direct>,
    pub(crate) answered: Arc<Answered>,
    /// What stops the calls still running when a drain's grace is over.
    pub(crate) stopper: Stopper,
}

/// Stops an endpoint's running calls: each gets its answer (`SERVER_BUSY`: the server is
/// shutting down) on its own stream, rather than a stream cut with no answer.
pub(crate) struct Stopper {
    server: Server,
    calls: Arc<Calls>,
}

impl Stopper {
    /// Stops every running call this endpoint tracks; returns how many.
    pub(crate) fn stop(&self) -> usize {
        self.server.stop_calls();
        self.calls.cancel_all()
    }
}

/// The endpoint served at its path without a router in between: the steps straight on rmcp's
/// service, where the router reaches them through its route match, `nest_service`'s prefix
/// strip and two more service layers (≈ 6 k instructions of a ≈ 190 k stateless call).
/// Only without authentication (an axum middleware, which the router keeps).
pub(crate) struct Direct {
    path: String,
    endpoint: Endpoint<Shared>,
}

impl Direct {
    /// Whether a request for `path` is this endpoint's.
    pub(crate) fn serves(&self, path: &str) -> bool {
        path == self.path
    }

    /// [`Endpoint`]'s call, from a shared reference (rmcp's service is always ready), as a
    /// future of its own type rather than a box: hyper holds a connection's request future in
    /// one box it reuses for every request, so a request served here allocates no future of
    /// the steps' (a box of the steps' 5.5 KB future missed glibc's per-thread cache: ≈ 3 k
    /// instructions to allocate and free, on every request).
    pub(crate) fn call(
        &self,
        request: Request,
    ) -> impl Future<Output = Result<Response, Infallible>> + Send + use<> {
        self.endpoint
            .steps_then(self.endpoint.inner.clone(), request)
    }
}

/// [`router`], the same endpoint as a [`Direct`] when one can be served without it, and the
/// room's counts.
pub(crate) fn endpoint(
    server: Server,
    options: &HttpOptions,
    streams_end: &CancellationToken,
) -> Assembled {
    let auth_server = server.clone();
    let streams = streams_token(&server, streams_end);
    let mut config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(!options.stateless)
        .with_json_response(options.stateless)
        .with_allowed_hosts(options.allowed_hosts.clone())
        .with_allowed_origins(options.allowed_origins.clone())
        .with_max_request_body_bytes(options.max_body_bytes)
        .with_cancellation_token(streams.clone());
    if options.allowed_origins.is_empty() {
        config = config.enforce_origin_validation();
    }
    let mut local = LocalSessionManager::default();
    local.session_config.keep_alive = Some(options.session_idle_timeout);
    // A plain 2025 call skips rmcp (unless the options turn that off) only where rmcp would go
    // straight to the handler with it:
    // stateless, or in a live session (see `room`), on a server that hands nothing
    // off. (A 2025-11-25 task request is answered by the check before; rmcp's 2025 call path
    // runs no task: a task action's plain call is a call, either way.)
    let plain_calls = options.answer_plain_calls && server.tool_sources().is_empty();
    let live = (plain_calls && !options.stateless)
        .then(|| LiveSessions::new(options.session_idle_timeout));
    let mut capped =
        CappedSessions::new(local, options.max_sessions, options.max_sessions_per_client);
    if let Some(live) = &live {
        capped = capped.with_live(Arc::clone(live));
    }
    let sessions = Arc::new(capped);
    let identity = Identity::new(&options.trusted_proxies, options.forwarded_header);
    let stateless = options.stateless;
    let closing = options.shutdown.clone();
    // Stateless: a handler per request, made from one template (shared parts and the
    // cached `get_info`, see `McpHandler::per_request`); stateful: one per session.
    let template = McpHandler::new(server.clone())
        .sessionless(stateless)
        .closing(closing)
        .answering_unusable_calls(check::unusable_call);
    let keep_alive = config.sse_keep_alive;
    let room =
        plain_calls.then(|| Room::new(template.clone(), keep_alive, streams.clone(), stateless));
    let answered = room.as_ref().map(Room::answered).unwrap_or_default();
    let calls = Arc::new(Calls::default());
    let stopper = Stopper {
        server: server.clone(),
        calls: Arc::clone(&calls),
    };
    let steps = Steps(Arc::new(StepsInner {
        forwarded: forwarded::Forwarded::new(identity.clone(), options.max_connections_per_ip),
        guard: Guard {
            identity,
            body_timeout: options.body_timeout,
            calls: Arc::clone(&calls),
            door: Door {
                server: server.clone(),
                hosts: AllowedHosts::new(&options.allowed_hosts),
                origins: AllowedOrigins::new(&options.allowed_origins),
                sessions: (!options.stateless).then(|| Arc::clone(&sessions)),
                max_body_bytes: options.max_body_bytes,
                body_timeout: options.body_timeout,
            },
        },
        check: check::JsonRpcStep {
            server: server.clone(),
            allowed_hosts: AllowedHosts::new(&options.allowed_hosts),
            max_body_bytes: options.max_body_bytes,
            plain_calls,
            sessions: !options.stateless,
            live: live.clone(),
        },
        calls,
        room,
    }));
    let listed = live.clone();
    let rmcp = StreamableHttpService::new(
        move || {
            Ok(match stateless {
                true => template.per_request(),
                false => {
                    let handler = McpHandler::new(server.clone())
                        .closing(template.closing.clone())
                        .answering_unusable_calls(check::unusable_call);
                    match &listed {
                        Some(live) => handler.listed_in(Arc::clone(live) as Arc<dyn LiveList>),
                        None => handler,
                    }
                }
            })
        },
        sessions,
        config,
    );
    let service = Shared {
        rmcp: Arc::new(rmcp),
        live,
    };
    let auth = options.auth.clone().or_else(|| auth_server.auth().cloned());
    let declared_scopes = auth_server.declared_scopes();
    // The steps (the door, the check, the room) exist only as the endpoint's route: a request
    // for another path is the router's `not_served`, which holds none of them, so nothing
    // there can answer a call however its body or headers read.
    let endpoint = Endpoint::new(steps, service);
    let direct = Direct {
        path: options.path.clone(),
        endpoint: endpoint.clone(),
    };
    let router = axum::Router::new()
        .route_service(&options.path, endpoint)
        .fallback(not_served);
    match auth {
        // Outermost: a principal's `ClientKey` is there before the guard looks.
        Some(auth) => {
            let layer = AuthLayer::new(auth, &options.path, &declared_scopes);
            let router = router.layer(axum::middleware::from_fn_with_state(
                Arc::new(layer),
                super::auth::authenticate,
            ));
            Assembled {
                router,
                direct: None,
                answered,
                stopper,
            }
        }
        None => Assembled {
            router,
            direct: Some(direct),
            answered,
            stopper,
        },
    }
}

/// rmcp's service behind an `Arc`. axum clones a mounted service for every request, and
/// rmcp's `call` clones itself again: each clone copies its whole config (every allowed host
/// and origin, 9 strings with the defaults), 12 % of a stateless call's instructions.
#[derive(Clone)]
struct Shared {
    rmcp: Arc<StreamableHttpService<McpHandler, CappedSessions>>,
    /// The live sessions, told when rmcp's worker hears from one.
    live: Option<Arc<LiveSessions>>,
}

impl tower_service::Service<Request> for Shared {
    type Response = Response;
    type Error = std::convert::Infallible;
    type Future = BoxFuture<'static, Result<Response, std::convert::Infallible>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request) -> Self::Future {
        // rmcp's future (5.7 KB) in its own box: the steps' future, which awaits this one,
        // stays small (it is moved on every request: into hyper's request slot, or a box).
        let service = Arc::clone(&self.rmcp);
        // A listed session's request: its worker hears from it once rmcp took it.
        let hearing = self.live.as_ref().and_then(|live| {
            let id = request.headers().get(&SESSION_HEADER)?.to_str().ok()?;
            live.hearing(id)
        });
        Box::pin(async move {
            let response = service.handle(request).await;
            if let Some(hearing) = hearing
                && response.status().is_success()
            {
                hearing.heard();
            }
            Ok(response.map(Body::new))
        })
    }
}

/// The request guard ([`guard_request`]), the JSON-RPC check
/// (`check.rs`) and the cancellation step
/// ([`cancel`](super::cancel)) as one step, in front of the endpoint's route ([`Endpoint`]):
/// plain async functions called one inside the other — one future and one clone of the inner
/// route per request. Served through the router the future is boxed; served [`Direct`], it
/// is not (hyper keeps it in the connection's request slot).
#[derive(Clone)]
struct Steps(Arc<StepsInner>);

/// What the steps need, made once.
struct StepsInner {
    /// Requests through a trusted proxy, capped per forwarded client.
    forwarded: forwarded::Forwarded,
    guard: Guard,
    check: check::JsonRpcStep,
    calls: Arc<Calls>,
    /// What answers the calls the check routes to the room; `None` with the room off.
    room: Option<Room>,
}

/// The endpoint's route: rmcp's service behind the [`Steps`]. It is made only by
/// [`Endpoint::new`], for the route the endpoint's path matched ([`endpoint`], [`Direct`]):
/// the steps are not a layer that could wrap a router and its fallback.
#[derive(Clone)]
struct Endpoint<S> {
    steps: Arc<StepsInner>,
    inner: S,
}

impl<S> Endpoint<S> {
    fn new(steps: Steps, inner: S) -> Self {
        Endpoint {
            steps: steps.0,
            inner,
        }
    }
}

/// The answer at any path the endpoint does not serve, whatever the request: `404` with a
/// JSON-RPC error (no id: the body is not read), before the door and without the check or
/// the room. A front proxy that guards only the endpoint's path guards every call.
async fn not_served(request: Request) -> Response {
    tracing::debug!(path = request.uri().path(), "no MCP endpoint at this path");
    super::rewrite::reply(
        StatusCode::NOT_FOUND,
        &crate::mcp::jsonrpc::Reply::error(
            None,
            crate::mcp::jsonrpc::SERVER_ERROR,
            "Not Found: no MCP endpoint at this path",
        ),
    )
}

impl StepsInner {
    async fn serve<S>(&self, request: Request, mut inner: S) -> Response
    where
        S: tower_service::Service<Request, Response = Response, Error = std::convert::Infallible>,
    {
        let slot = match self.forwarded.admit(&request) {
            Ok(slot) => slot,
            Err(busy) => {
                crate::metrics::refused(crate::metrics::Refusal::Busy);
                return busy.response();
            }
        };
        let response = guard_request(&self.guard, request, move |request, cleared| {
            check::guard(&self.check, cleared, request, move |request, route| {
                super::cancel::layer(&self.calls, request, move |request| {
                    // Routed before the future is made: it holds one request or the room's
                    // boxed answer, not both (it is moved on every request).
                    let routed = match (route, &self.room) {
                        (check::Route::Room(plain), Some(room)) => room.answer(request, *plain),
                        _ => Err(request),
                    };
                    async move {
                        match routed {
                            Ok(answer) => answer.await,
                            Err(request) => match inner.call(request).await {
                                Ok(response) => response,
                                Err(never) => match never {},
                            },
                        }
                    }
                })
            })
        })
        .await;
        if crate::metrics::enabled() {
            count_refusal(response.status());
        }
        forwarded::hold(slot, response)
    }
}

impl<S> tower_service::Service<Request> for Endpoint<S>
where
    S: tower_service::Service<Request, Response = Response, Error = std::convert::Infallible>
        + Clone
        + Send
        + 'static,
    S::Future: Send,
{
    type Response = Response;
    type Error = std::convert::Infallible;
    type Future = BoxFuture<'static, Result<Response, std::convert::Infallible>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        // The ready service goes with the request; a clone stays for the next one.
        let inner = self.inner.clone();
        let inner = std::mem::replace(&mut self.inner, inner);
        self.serve(inner, request)
    }
}

impl<S> Endpoint<S>
where
    S: tower_service::Service<Request, Response = Response, Error = Infallible> + Send + 'static,
    S::Future: Send,
{
    /// The steps on `request`, then `inner`, a service ready to take it.
    fn serve(
        &self,
        inner: S,
        request: Request,
    ) -> BoxFuture<'static, Result<Response, Infallible>> {
        Box::pin(self.steps_then(inner, request))
    }

    /// [`serve`](Self::serve)'s future, unboxed.
    fn steps_then(
        &self,
        inner: S,
        request: Request,
    ) -> impl Future<Output = Result<Response, Infallible>> + Send + use<S> {
        let steps = Arc::clone(&self.steps);
        async move { Ok(steps.serve(request, inner).await) }
    }
}

/// rmcp's token: cancelled after `shutdown` (here: when streams end) once the open listens have sent their closing
/// results (outside a runtime, with `shutdown` itself).
fn streams_token(server: &Server, shutdown: &CancellationToken) -> CancellationToken {
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        return shutdown.child_token();
    };
    let streams = CancellationToken::new();
    runtime.spawn(notify::stop_after_listens(
        shutdown.clone(),
        server.notifier().clone(),
        streams.clone(),
    ));
    streams
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

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::super::identity::ForwardedHeader;
    use super::*;

    /// The steps' future is moved on every request (into hyper's request slot, or a box): it
    /// stays smaller than rmcp's own (which has its own box), rather than holding it inline
    /// (16 KB when it did).
    #[test]
    fn the_steps_future_does_not_hold_rmcps_inline() -> anyhow::Result<()> {
        let server = crate::Server::builder().build()?;
        let sessions = CappedSessions::new(LocalSessionManager::default(), 1, 1);
        let steps = StepsInner {
            forwarded: forwarded::Forwarded::new(Identity::new(&[], ForwardedHeader::default()), 1),
            guard: Guard {
                identity: Identity::new(&[], ForwardedHeader::default()),
                body_timeout: Duration::from_secs(1),
                calls: Arc::new(Calls::default()),
                door: Door {
                    server: server.clone(),
                    hosts: AllowedHosts::new(&[]),
                    origins: AllowedOrigins::new(&[]),
                    sessions: None,
                    max_body_bytes: 1024,
                    body_timeout: Duration::from_secs(1),
                },
            },
            check: check::JsonRpcStep {
                server: server.clone(),
                allowed_hosts: AllowedHosts::new(&[]),
                max_body_bytes: 1024,
                plain_calls: false,
                sessions: false,
                live: None,
            },
            calls: Arc::new(Calls::default()),
            room: None,
        };
        let rmcp = Shared {
            rmcp: Arc::new(StreamableHttpService::new(
                move || Ok(McpHandler::new(server.clone())),
                Arc::new(sessions),
                StreamableHttpServerConfig::default(),
            )),
            live: None,
        };
        let handle = rmcp.rmcp.handle(Request::new(Body::empty()));
        let serve = steps.serve(Request::new(Body::empty()), rmcp.clone());
        let (serve, rmcp) = (size_of_val(&serve), size_of_val(&handle));
        assert!(
            serve < rmcp,
            "the steps' future is {serve} bytes, rmcp's {rmcp}"
        );
        Ok(())
    }
}
