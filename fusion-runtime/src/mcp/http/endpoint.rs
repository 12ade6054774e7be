//! The endpoint, assembled once from the [`HttpOptions`]: the steps every request takes
//! ([`Steps`](super::steps::Steps), in `steps.rs`), and the two routes they lead to — the
//! room that answers plain calls without rmcp, and rmcp's streamable HTTP service.
//!
//! Reads: the [`HttpOptions`], the server. Writes: the [`Endpoint`], its counts and its
//! [`Stopper`].

use std::sync::Arc;

use axum::body::Body;
use axum::extract::Request;
use axum::http::StatusCode;
use axum::response::Response;
use futures::future::BoxFuture;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use super::auth::AuthLayer;
use super::check::{self, Route};
use super::door::{AllowedHosts, AllowedOrigins, Door};
use super::options::HttpOptions;
use super::room::{Answered, LiveSessions, Room, RoomRoute};
use super::sessions::CappedSessions;
use super::steps::{Routes, Steps};
use crate::http::forwarded;
use crate::http::identity::Identity;
use crate::mcp::facts::{Calls, SESSION_HEADER};
use crate::mcp::handlers::{LiveList, McpHandler, notify};
use crate::server::Server;

/// The endpoint at its path: the steps, then the room or rmcp.
pub(crate) struct Endpoint {
    pub(crate) steps: Steps,
    /// Where the steps lead.
    pub(crate) routes: EndpointRoutes,
    /// The path it serves.
    pub(crate) path: String,
}

/// The two routes the steps lead to: the room, and rmcp.
pub(crate) struct EndpointRoutes {
    /// What answers the calls the check routes to the room; `None` with the room off.
    room: Option<Room>,
    rmcp: Shared,
}

impl Routes for EndpointRoutes {
    /// The route the check decided: the room (unless it hands the request back), or rmcp.
    fn route(
        &self,
        request: Request,
        route: Route,
    ) -> impl Future<Output = Response> + Send + use<> {
        // Routed before the future is made: it holds one request or the room's boxed answer,
        // not both.
        let routed = match (route, &self.room) {
            (Route::Room(plain), Some(room)) => room.answer(request, *plain),
            _ => Err(request),
        };
        let rmcp = self.rmcp.clone();
        async move {
            match routed {
                Ok(answer) => answer.await,
                Err(request) => rmcp.call(request).await,
            }
        }
    }
}

/// The endpoint as [`endpoint`] assembles it: the endpoint, the room's counts, and what
/// stops its calls.
pub(crate) struct Assembled {
    pub(crate) endpoint: Arc<Endpoint>,
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

/// The endpoint `server` serves with `options`. rmcp ends every stream it serves (calls in
/// flight included) once `streams_end` is cancelled and the open listens have answered.
pub(crate) fn endpoint(
    server: Server,
    options: &HttpOptions,
    streams_end: &CancellationToken,
) -> Assembled {
    warn_unshared_state_key(&server);
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
    let auth = options
        .auth
        .clone()
        .or_else(|| server.auth().cloned())
        .map(|auth| AuthLayer::new(auth, &options.path, &server.declared_scopes()));
    let steps = Steps {
        auth,
        forwarded: forwarded::Forwarded::new(identity.clone(), options.max_connections_per_ip),
        identity,
        door: Door {
            server: server.clone(),
            hosts: AllowedHosts::new(&options.allowed_hosts),
            origins: AllowedOrigins::new(&options.allowed_origins),
            sessions: (!options.stateless).then(|| Arc::clone(&sessions)),
            max_body_bytes: options.max_body_bytes,
            body_timeout: options.body_timeout,
        },
        body_timeout: options.body_timeout,
        calls,
        check: check::JsonRpcStep {
            server: server.clone(),
            max_body_bytes: options.max_body_bytes,
            room: RoomRoute {
                on: plain_calls,
                sessions: !options.stateless,
                live: live.clone(),
            },
            tasks: server.has_tasks(),
        },
    };
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
    let endpoint = Endpoint {
        steps,
        routes: EndpointRoutes {
            room,
            rmcp: Shared {
                rmcp: Arc::new(rmcp),
                live,
            },
        },
        path: options.path.clone(),
    };
    Assembled {
        endpoint: Arc::new(endpoint),
        answered,
        stopper,
    }
}

/// rmcp's service behind an `Arc`: rmcp's `call` clones itself, and each clone copies its
/// whole config (every allowed host and origin, 9 strings with the defaults), 12 % of a
/// stateless call's instructions.
#[derive(Clone)]
pub(crate) struct Shared {
    rmcp: Arc<StreamableHttpService<McpHandler, CappedSessions>>,
    /// The live sessions, told when rmcp's worker hears from one.
    live: Option<Arc<LiveSessions>>,
}

impl Shared {
    /// rmcp's answer to `request`, its future (5.7 KB) in its own box: the steps' future,
    /// which awaits this one, stays small (it is moved on every request: into hyper's request
    /// slot, or a box).
    pub(crate) fn call(&self, request: Request) -> BoxFuture<'static, Response> {
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
            response.map(Body::new)
        })
    }
}

/// The answer at any path the endpoint does not serve, whatever the request: `404` with a
/// JSON-RPC error (no id: the body is not read), without the steps. A front proxy that guards
/// only the endpoint's path guards every call.
pub(crate) fn not_served(path: &str) -> Response {
    tracing::debug!(path, "no MCP endpoint at this path");
    super::rewrite::reply(
        StatusCode::NOT_FOUND,
        &crate::mcp::jsonrpc::Reply::error(
            None,
            crate::mcp::jsonrpc::SERVER_ERROR,
            "Not Found: no MCP endpoint at this path",
        ),
    )
}

/// Warns, once per endpoint, when the server's tasks are shared with other instances (a
/// store with a lease, such as Redis's) but sealed with a key of this instance's own: no key
/// set on the builder and no `FUSION_REQUEST_STATE_KEY` of 32 bytes or more. A `tasks/list`
/// cursor (and a `requestState`) one instance issued is then refused by the next. Returns
/// whether it warned.
fn warn_unshared_state_key(server: &Server) -> bool {
    let env = crate::mcp::elicit::REQUEST_STATE_KEY_ENV;
    if !server.has_tasks()
        || server.task_store().lease().is_none()
        || server.request_state_key().is_some()
        || std::env::var(env).is_ok_and(|key| key.len() >= 32)
    {
        return false;
    }
    tracing::warn!(
        store = server.task_store().name(),
        "tasks are shared with other instances, but {env} is not set (32 bytes or more): each instance seals tasks/list cursors and requestState with a key of its own, so a cursor one instance issued is refused by another; give every instance the same {env}"
    );
    true
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

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::http::ForwardedHeader;

    /// The endpoint's future is moved on every request (into hyper's request slot): it
    /// stays smaller than rmcp's own (which has its own box), rather than holding it inline
    /// (16 KB when it did).
    #[test]
    fn the_endpoints_future_does_not_hold_rmcps_inline() -> anyhow::Result<()> {
        let server = crate::Server::builder().build()?;
        let options = HttpOptions::default()
            .max_body_bytes(1024)
            .body_timeout(Duration::from_secs(1))
            .forwarded_header(ForwardedHeader::default());
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let _entered = runtime.enter();
        let assembled = endpoint(server.clone(), &options, &CancellationToken::new());
        let sessions = CappedSessions::new(LocalSessionManager::default(), 1, 1);
        let rmcp: StreamableHttpService<McpHandler, CappedSessions> = StreamableHttpService::new(
            move || Ok(McpHandler::new(server.clone())),
            Arc::new(sessions),
            StreamableHttpServerConfig::default(),
        );
        let handle = rmcp.handle(Request::new(Body::empty()));
        let endpoint = Arc::clone(&assembled.endpoint);
        let serve = async move {
            endpoint
                .steps
                .serve(Request::new(Body::empty()), &endpoint.routes)
                .await
        };
        let (serve, rmcp) = (size_of_val(&serve), size_of_val(&handle));
        assert!(
            serve < rmcp,
            "the endpoint's future is {serve} bytes, rmcp's {rmcp}"
        );
        Ok(())
    }
}
