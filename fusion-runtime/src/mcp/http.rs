//! Streamable HTTP, held against hostile clients: every cost a client can drive — open
//! connections, slow requests, body size, live sessions — has a bound, and who a client is
//! never comes from something the client picks (see [`ClientKey`]).
//!
//! The bounds and their defaults are documented on [`HttpOptions`].

use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes, HttpBody};
use axum::extract::{ConnectInfo, Request};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::response::Response;
use futures::future::BoxFuture;
use http_body::{Frame, SizeHint};
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

mod forwarded;
mod health;
#[cfg(feature = "metrics")]
mod metrics;

pub use health::ReadyCheck;
#[cfg(feature = "metrics")]
#[cfg_attr(docsrs, doc(cfg(feature = "metrics")))]
pub use metrics::{MetricsServer, spawn_metrics};

use super::McpHandler;
use super::auth::AuthLayer;
use super::cancel::SESSION_HEADER;
pub use super::identity::ForwardedHeader;
use super::identity::{Identity, ip_key};
use super::sessions::{self, Admission, CappedSessions, Refusal};
use crate::auth::Auth;
use crate::context::ClientKey;
use crate::server::Server;

/// Options of the streamable HTTP transport. The defaults are safe to face the internet:
///
/// | bound | default | [`HttpOptions`] | `serve --http` flag |
/// |---|---|---|---|
/// | open connections; beyond: `503` and closed at once | 512 | [`max_connections`](HttpOptions::max_connections) | `--max-connections` |
/// | open connections from one IP address (an IPv6 /64); through a trusted proxy, requests in flight (SSE streams until they end) per forwarded address; beyond: `503` | 256 | [`max_connections_per_ip`](HttpOptions::max_connections_per_ip) | `--max-connections-per-ip` |
/// | waiting for a request's headers, idle keep-alive included | 10 s | [`header_timeout`](HttpOptions::header_timeout) | `--header-timeout` |
/// | reading a request's body; beyond: `408` | 30 s | [`body_timeout`](HttpOptions::body_timeout) | `--body-timeout` |
/// | request body size; beyond: `413` | 1 MiB | [`max_body_bytes`](HttpOptions::max_body_bytes) | `--max-body-bytes` |
/// | request header size; beyond: `431` | 64 KiB | | |
/// | live sessions; beyond: `503` | 1,024 | [`max_sessions`](HttpOptions::max_sessions) | `--max-sessions` |
/// | live sessions per client; beyond: `429` | 32 | [`max_sessions_per_client`](HttpOptions::max_sessions_per_client) | `--max-sessions-per-client` |
/// | idle session; then `404` (start a new one) | 5 min | [`session_idle_timeout`](HttpOptions::session_idle_timeout) | `--session-idle-timeout` |
/// | in-flight requests after shutdown (draining); then closed | 10 s | [`drain_grace`](HttpOptions::drain_grace) | `--drain-grace` |
///
/// A refused session is answered with a JSON-RPC error body (`id` null, code `-32000`) and a
/// `Retry-After` header. Requests whose `Origin` is not allowed get `403` (loopback origins
/// and requests without `Origin` by default; `Origin: null` is refused); requests whose
/// `Host` is not allowed get `403` too (DNS-rebinding protection). A session `DELETE` answers
/// `200`.
///
/// [`spawn_http`] also answers `GET /healthz` (`200 ok` while it serves) and `GET /readyz`
/// (`200 ready`; `503` and a one-line reason while draining or while a
/// [`ready_check`](HttpOptions::ready_check) fails), outside [`path`](HttpOptions::path),
/// without authentication. On the shutdown token it drains, in the order a load balancer
/// needs: not ready at once, the listener closed (new connections are refused), requests in
/// flight finished within [`drain_grace`](HttpOptions::drain_grace), then it stops. Open
/// `subscriptions/listen` calls are answered with their closing result at once; a stateful
/// session's standalone SSE stream stays open until the grace is over.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct HttpOptions {
    /// No sessions: every request stands alone, so instances can sit behind any load
    /// balancer. An answer is plain JSON, or an SSE stream when the call sends progress or
    /// log messages before it (they travel on the request's own stream).
    pub stateless: bool,
    /// Hosts accepted in the `Host` header (DNS-rebinding protection). Loopback names by
    /// default; add the public host names when serving beyond this machine.
    pub allowed_hosts: Vec<String>,
    /// Origins accepted in the `Origin` header, as `scheme://host:port` (`:*` for any port).
    /// Loopback origins by default; a request without `Origin` is always accepted.
    pub allowed_origins: Vec<String>,
    /// The path the endpoint is mounted at (`/mcp`).
    pub path: String,
    /// Stops the server when cancelled.
    pub shutdown: CancellationToken,
    /// Reverse proxies whose forwarding header names the client (none by default).
    pub trusted_proxies: Vec<IpAddr>,
    /// The header trusted proxies write the client's address in.
    pub forwarded_header: ForwardedHeader,
    /// Open connections at most.
    pub max_connections: usize,
    /// Open connections from one IP address (an IPv6 /64) at most. A trusted proxy's
    /// connections are exempt: its clients are held to as many requests in flight each, by
    /// forwarded address.
    pub max_connections_per_ip: usize,
    /// How long a connection may take to send a request's headers, counted from when it
    /// starts waiting for one: also how long an idle keep-alive connection stays open.
    pub header_timeout: Duration,
    /// How long a request may take to send its body, counted from its headers.
    pub body_timeout: Duration,
    /// The largest request body.
    pub max_body_bytes: usize,
    /// Live sessions at most (stateful mode).
    pub max_sessions: usize,
    /// Live sessions one client may hold (stateful mode).
    pub max_sessions_per_client: usize,
    /// A session nobody used for this long is closed; its id then answers `404`.
    pub session_idle_timeout: Duration,
    /// Bearer-token authentication (see [`auth`](crate::auth)); when `None`, the server's
    /// own ([`ServerBuilder::auth`](crate::ServerBuilder::auth)), if any.
    pub auth: Option<Arc<Auth>>,
    /// After the shutdown token, how long requests in flight may take to finish; then their
    /// connections are closed.
    pub drain_grace: Duration,
    /// What `/readyz` requires beyond not draining (a Redis that answers, …).
    pub ready_checks: Vec<ReadyCheck>,
}

/// Origins a local client (a browser page on this machine, an inspector) sends.
const LOOPBACK_ORIGINS: [&str; 6] = [
    "http://localhost:*",
    "https://localhost:*",
    "http://127.0.0.1:*",
    "https://127.0.0.1:*",
    "http://[::1]:*",
    "https://[::1]:*",
];

/// The largest request head (request line and headers).
const MAX_HEADER_BYTES: usize = 64 * 1024;

/// How long the accept loop rests after a failed accept (e.g. out of file descriptors).
const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            stateless: false,
            allowed_hosts: vec!["localhost".into(), "127.0.0.1".into(), "::1".into()],
            allowed_origins: LOOPBACK_ORIGINS.iter().map(|o| (*o).to_owned()).collect(),
            path: "/mcp".into(),
            shutdown: CancellationToken::new(),
            trusted_proxies: Vec::new(),
            forwarded_header: ForwardedHeader::default(),
            max_connections: 512,
            max_connections_per_ip: 256,
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(30),
            max_body_bytes: 1024 * 1024,
            max_sessions: 1024,
            max_sessions_per_client: 32,
            session_idle_timeout: Duration::from_secs(300),
            auth: None,
            drain_grace: Duration::from_secs(10),
            ready_checks: Vec::new(),
        }
    }
}

impl HttpOptions {
    /// Stateless or not.
    pub fn stateless(mut self, stateless: bool) -> Self {
        self.stateless = stateless;
        self
    }

    /// Adds accepted host names.
    pub fn allow_hosts(mut self, hosts: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.allowed_hosts.extend(hosts.into_iter().map(Into::into));
        self
    }

    /// Adds accepted origins, as `scheme://host:port` or `scheme://host:*`
    /// (`https://app.example.com:443`).
    pub fn allow_origins(mut self, origins: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.allowed_origins
            .extend(origins.into_iter().map(Into::into));
        self
    }

    /// A shutdown token.
    pub fn shutdown(mut self, token: CancellationToken) -> Self {
        self.shutdown = token;
        self
    }

    /// Trusts the reverse proxy at `ip`: a request whose TCP peer it is counts against the
    /// right-most address of its [`forwarded_header`](Self::forwarded_header) that is not
    /// itself a trusted proxy.
    pub fn trust_proxy(mut self, ip: IpAddr) -> Self {
        self.trusted_proxies.push(ip);
        self
    }

    /// The header trusted proxies write (`X-Forwarded-For` by default). Only the header the
    /// proxy appends to is safe to read: a client can send the other one as it likes.
    pub fn forwarded_header(mut self, header: ForwardedHeader) -> Self {
        self.forwarded_header = header;
        self
    }

    /// Open connections at most (at least 1).
    pub fn max_connections(mut self, n: usize) -> Self {
        self.max_connections = n.max(1);
        self
    }

    /// Open connections from one IP address at most (at least 1).
    pub fn max_connections_per_ip(mut self, n: usize) -> Self {
        self.max_connections_per_ip = n.max(1);
        self
    }

    /// The request header timeout, also the idle keep-alive timeout.
    pub fn header_timeout(mut self, timeout: Duration) -> Self {
        self.header_timeout = timeout;
        self
    }

    /// The request body timeout.
    pub fn body_timeout(mut self, timeout: Duration) -> Self {
        self.body_timeout = timeout;
        self
    }

    /// The largest request body, in bytes.
    pub fn max_body_bytes(mut self, bytes: usize) -> Self {
        self.max_body_bytes = bytes;
        self
    }

    /// Live sessions at most.
    pub fn max_sessions(mut self, n: usize) -> Self {
        self.max_sessions = n;
        self
    }

    /// Live sessions per client at most.
    pub fn max_sessions_per_client(mut self, n: usize) -> Self {
        self.max_sessions_per_client = n;
        self
    }

    /// How long an unused session lives.
    pub fn session_idle_timeout(mut self, timeout: Duration) -> Self {
        self.session_idle_timeout = timeout;
        self
    }

    /// Authenticates requests with `auth` (bearer tokens, `401`, Protected Resource
    /// Metadata), instead of the server's own. [`spawn_http`] refuses to start when it
    /// requires tokens but names no issuer ([`Auth::check`]).
    pub fn auth(mut self, auth: Auth) -> Self {
        self.auth = Some(Arc::new(auth));
        self
    }

    /// How long requests in flight may take to finish after the shutdown token.
    pub fn drain_grace(mut self, grace: Duration) -> Self {
        self.drain_grace = grace;
        self
    }

    /// Adds a condition `/readyz` requires.
    pub fn ready_check(mut self, check: ReadyCheck) -> Self {
        self.ready_checks.push(check);
        self
    }
}

/// The streamable HTTP endpoint as an axum router (mount it in a larger app, or serve it).
///
/// Serve it with connect info (`into_make_service_with_connect_info::<SocketAddr>()`) so
/// clients are told apart by address, or put a [`ClientKey`] in each request's extensions
/// from a layer around it (an authentication layer that knows the principal). The connection
/// bounds (count, header timeout) are [`spawn_http`]'s; the rest apply here.
///
/// It cannot fail: authentication in [`HttpOptions::auth`] that [`Auth::check`] refuses is
/// logged as an error here, where [`spawn_http`] refuses to start.
pub fn http_router(server: Server, options: &HttpOptions) -> axum::Router {
    if let Some(Err(e)) = options.auth.as_deref().map(Auth::check) {
        tracing::error!("{e}");
    }
    router(server, options, &options.shutdown)
}

/// [`http_router`] once its options are checked. rmcp ends every stream it serves (calls in
/// flight included) once `streams_end` is cancelled and the open listens have answered.
fn router(server: Server, options: &HttpOptions, streams_end: &CancellationToken) -> axum::Router {
    let auth_server = server.clone();
    let mut config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(!options.stateless)
        .with_json_response(options.stateless)
        .with_allowed_hosts(options.allowed_hosts.clone())
        .with_allowed_origins(options.allowed_origins.clone())
        .with_max_request_body_bytes(options.max_body_bytes)
        .with_cancellation_token(streams_token(&server, streams_end));
    if options.allowed_origins.is_empty() {
        config = config.enforce_origin_validation();
    }
    let mut local = LocalSessionManager::default();
    local.session_config.keep_alive = Some(options.session_idle_timeout);
    let sessions = Arc::new(CappedSessions::new(
        local,
        options.max_sessions,
        options.max_sessions_per_client,
    ));
    let identity = Identity::new(&options.trusted_proxies, options.forwarded_header);
    let steps = Steps(Arc::new(StepsInner {
        forwarded: forwarded::Forwarded::new(identity.clone(), options.max_connections_per_ip),
        guard: Guard {
            identity,
            body_timeout: options.body_timeout,
            sessions: (!options.stateless).then(|| Arc::clone(&sessions)),
        },
        check: super::http_jsonrpc::Guard {
            server: server.clone(),
            allowed_hosts: options.allowed_hosts.clone().into(),
            max_body_bytes: options.max_body_bytes,
        },
        calls: Arc::new(super::cancel::Calls::default()),
    }));
    let stateless = options.stateless;
    let closing = options.shutdown.clone();
    let service = Shared(Arc::new(StreamableHttpService::new(
        move || {
            let handler = McpHandler::new(server.clone()).sessionless(stateless);
            Ok(handler.closing(closing.clone()))
        },
        sessions,
        config,
    )));
    let auth = options.auth.clone().or_else(|| auth_server.auth().cloned());
    let declared_scopes = auth_server.declared_scopes();
    // One layer for the three steps; it wraps the router's default fallback (`404`) too, as
    // the layers it replaces did.
    let router = axum::Router::new()
        .nest_service(&options.path, service)
        .layer(steps);
    match auth {
        // Outermost: a principal's `ClientKey` is there before the guard looks.
        Some(auth) => {
            let layer = AuthLayer::new(auth, &options.path, &declared_scopes);
            router.layer(axum::middleware::from_fn_with_state(
                Arc::new(layer),
                super::auth::authenticate,
            ))
        }
        None => router,
    }
}

/// rmcp's service behind an `Arc`. axum clones a mounted service for every request, and
/// rmcp's `call` clones itself again: each clone copies its whole config (every allowed host
/// and origin, 9 strings with the defaults), 12 % of a stateless call's instructions.
struct Shared(Arc<StreamableHttpService<McpHandler, CappedSessions>>);

impl Clone for Shared {
    fn clone(&self) -> Self {
        Shared(Arc::clone(&self.0))
    }
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
        // stays small (it is moved into its own box for every request).
        let service = Arc::clone(&self.0);
        Box::pin(async move { Ok(service.handle(request).await.map(Body::new)) })
    }
}

/// The request guard ([`guard_request`]), the JSON-RPC check
/// ([`http_jsonrpc`](super::http_jsonrpc)) and the cancellation step
/// ([`cancel`](super::cancel)) as one layer: plain async functions called one inside the
/// other — one boxed future and one clone of the inner route per request, where three
/// `from_fn` layers boxed a future and cloned the route each.
#[derive(Clone)]
struct Steps(Arc<StepsInner>);

/// What the steps need, made once.
struct StepsInner {
    /// Requests through a trusted proxy, capped per forwarded client.
    forwarded: forwarded::Forwarded,
    guard: Guard,
    check: super::http_jsonrpc::Guard,
    calls: Arc<super::cancel::Calls>,
}

impl<S> tower_layer::Layer<S> for Steps {
    type Service = Endpoint<S>;

    fn layer(&self, inner: S) -> Endpoint<S> {
        Endpoint {
            steps: Arc::clone(&self.0),
            inner,
        }
    }
}

/// A route (rmcp's, or the router's fallback) behind the [`Steps`].
#[derive(Clone)]
struct Endpoint<S> {
    steps: Arc<StepsInner>,
    inner: S,
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
        let response = guard_request(&self.guard, request, move |request| {
            super::http_jsonrpc::guard(&self.check, request, move |request| {
                super::cancel::layer(&self.calls, request, move |request| async move {
                    match inner.call(request).await {
                        Ok(response) => response,
                        Err(never) => match never {},
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
        let steps = Arc::clone(&self.steps);
        Box::pin(async move { Ok(steps.serve(request, inner).await) })
    }
}

/// What the request guard needs.
struct Guard {
    identity: Identity,
    body_timeout: Duration,
    /// The live sessions and their owners; `None` when stateless (none to admit).
    sessions: Option<Arc<CappedSessions>>,
}

/// Names the client, holds a session to its owner, bounds the body's time, admits new
/// sessions and answers a session `DELETE` with `200`; `next` is the rest of the endpoint.
///
/// A request naming a session another client opened (another principal, or without a token
/// the address) is sent on as one naming no live session: rmcp answers it exactly as an
/// unknown id (`404`), so the answer tells nothing of whether the id exists.
async fn guard_request<F, Fut>(guard: &Guard, mut request: Request, next: F) -> Response
where
    F: FnOnce(Request) -> Fut,
    Fut: Future<Output = Response>,
{
    // The accept loop puts in the key of a peer that is not a trusted proxy, once per
    // connection; an authentication layer, the principal's.
    if request.extensions().get::<ClientKey>().is_none() {
        let key = guard.identity.key(
            request.extensions().get::<ConnectInfo<SocketAddr>>(),
            request.headers(),
        );
        request.extensions_mut().insert(key);
    }
    let is_delete = request.method() == Method::DELETE;
    let mut admission = None;
    if let Some(sessions) = &guard.sessions {
        let client = request
            .extensions()
            .get::<ClientKey>()
            .map_or("", |k| k.0.as_str());
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
    let timed_out = Arc::new(AtomicBool::new(false));
    let request = request.map(|body| {
        Body::new(DeadlineBody {
            inner: body,
            deadline: tokio::time::Instant::now() + guard.body_timeout,
            sleep: None,
            timed_out: Arc::clone(&timed_out),
        })
    });
    let mut response = sessions::admit(admission.clone(), next(request)).await;
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
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": { "code": -32000, "message": message },
    });
    let mut response = Response::new(Body::from(body.to_string()));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    headers.insert(header::RETRY_AFTER, HeaderValue::from_static("30"));
    response
}

/// A request body that fails once its deadline passes.
struct DeadlineBody {
    inner: Body,
    deadline: tokio::time::Instant,
    sleep: Option<Pin<Box<tokio::time::Sleep>>>,
    timed_out: Arc<AtomicBool>,
}

impl HttpBody for DeadlineBody {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let this = &mut *self;
        if let Poll::Ready(frame) = Pin::new(&mut this.inner).poll_frame(cx) {
            return Poll::Ready(frame);
        }
        let deadline = this.deadline;
        let sleep = this
            .sleep
            .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline)));
        if sleep.as_mut().poll(cx).is_ready() {
            this.timed_out.store(true, Ordering::Relaxed);
            return Poll::Ready(Some(Err(axum::Error::new("request body timeout"))));
        }
        Poll::Pending
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// A running HTTP server.
#[derive(Debug)]
pub struct HttpServer {
    /// The address it listens on (the real port when asked for port 0).
    pub local_addr: SocketAddr,
    /// The endpoint URL (`http://127.0.0.1:PORT/mcp`).
    pub url: String,
    shutdown: CancellationToken,
    task: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl HttpServer {
    /// Stops accepting connections and waits for the server task.
    pub async fn shutdown(self) -> anyhow::Result<()> {
        self.shutdown.cancel();
        self.task.await??;
        Ok(())
    }

    /// Waits until the server stops (on its shutdown token).
    pub async fn wait(self) -> anyhow::Result<()> {
        self.task.await??;
        Ok(())
    }
}

/// rmcp's token: cancelled after `shutdown` (here: when streams end) once the open listens have sent their closing
/// results (outside a runtime, with `shutdown` itself).
fn streams_token(server: &Server, shutdown: &CancellationToken) -> CancellationToken {
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        return shutdown.child_token();
    };
    let streams = CancellationToken::new();
    runtime.spawn(super::notify::stop_after_listens(
        shutdown.clone(),
        server.notifier().clone(),
        streams.clone(),
    ));
    streams
}

/// Binds `addr` and serves `server` over streamable HTTP in a background task, within the
/// bounds of `options`. Fails before binding when [`HttpOptions::auth`] does not pass
/// [`Auth::check`].
pub async fn spawn_http(
    server: Server,
    addr: SocketAddr,
    options: HttpOptions,
) -> anyhow::Result<HttpServer> {
    if let Some(auth) = &options.auth {
        auth.check()?;
    }
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let local_addr = listener.local_addr()?;
    let readiness = health::Readiness {
        draining: options.shutdown.clone(),
        checks: options.ready_checks.clone().into(),
    };
    // The probes first, outside the MCP path and its steps (no authentication, no session).
    // rmcp's streams end when the drain does (calls in flight finish first); listens are
    // answered on the shutdown token itself.
    let drained = CancellationToken::new();
    let router = health::routes(readiness).fallback_service(router(server, &options, &drained));
    let shutdown = options.shutdown.clone();
    let path = options.path.clone();
    let task = tokio::spawn(accept_loop(listener, router, options, drained));
    let host = match local_addr {
        SocketAddr::V6(a) => format!("[{}]", a.ip()),
        SocketAddr::V4(a) => a.ip().to_string(),
    };
    Ok(HttpServer {
        url: format!("http://{host}:{}{path}", local_addr.port()),
        local_addr,
        shutdown,
        task,
    })
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

/// Refused connections get this, written without waiting, then are closed.
const BUSY: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain\r\n\
content-length: 43\r\nretry-after: 5\r\nconnection: close\r\n\r\n\
Service Unavailable: too many connections\r\n";

/// Refused connections closed gently at once, at most; beyond, they are dropped as they are.
const MAX_LINGERING: usize = 64;
/// How long a refused connection is drained before it is dropped.
const LINGER: Duration = Duration::from_secs(2);

/// Refuses a connection with [`BUSY`]. Dropping a socket whose request was not read makes the
/// kernel reset it, and a reset can destroy the answer before the client reads it; so the
/// write side is shut and what the client sends is drained (bounded in time and in how many
/// at once) until it closes.
fn refuse(stream: tokio::net::TcpStream, lingering: &Arc<Semaphore>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    crate::metrics::refused(crate::metrics::Refusal::Connection);
    let _ = stream.try_write(BUSY);
    let Ok(permit) = Arc::clone(lingering).try_acquire_owned() else {
        return;
    };
    tokio::spawn(async move {
        let _permit = permit;
        let mut stream = stream;
        let drain = async {
            let _ = stream.shutdown().await;
            let mut sink = [0u8; 1024];
            while let Ok(1..) = stream.read(&mut sink).await {}
        };
        let _ = tokio::time::timeout(LINGER, drain).await;
    });
}

/// An open connection, counted in [`metrics`](crate::metrics) until dropped.
struct Counted;

impl Drop for Counted {
    fn drop(&mut self) {
        crate::metrics::open_delta(crate::metrics::Open::Connections, -1);
    }
}

async fn accept_loop(
    listener: tokio::net::TcpListener,
    router: axum::Router,
    options: HttpOptions,
    drained: CancellationToken,
) -> std::io::Result<()> {
    let stop = options.shutdown.clone();
    let max = options.max_connections.clamp(1, u32::MAX as usize);
    let slots = Arc::new(Semaphore::new(max));
    let lingering = Arc::new(Semaphore::new(MAX_LINGERING));
    let mut http = http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(options.header_timeout)
        .max_header_size(MAX_HEADER_BYTES);
    let service = TowerToHyperService::new(router);
    let identity = Identity::new(&options.trusted_proxies, options.forwarded_header);
    let per_ip = forwarded::PerClient::new(options.max_connections_per_ip);
    // Cancelled when the drain grace is over: connections still open are dropped.
    let expired = CancellationToken::new();
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = stop.cancelled() => break,
        };
        let (stream, peer) = match accepted {
            Ok(accepted) => accepted,
            Err(e) => {
                // Out of file descriptors and the like: rest, then go on accepting.
                tracing::warn!(error = %e, "accepting a connection failed");
                tokio::select! {
                    () = tokio::time::sleep(ACCEPT_BACKOFF) => continue,
                    () = stop.cancelled() => break,
                }
            }
        };
        let Ok(slot) = Arc::clone(&slots).try_acquire_owned() else {
            tracing::warn!(%peer, max, "refused a connection: too many open");
            refuse(stream, &lingering);
            continue;
        };
        let ip_slot = if identity.trusts(peer.ip()) {
            None
        } else {
            match forwarded::PerClient::take(&per_ip, ip_key(peer.ip()).0) {
                Some(s) => Some(s),
                None => {
                    tracing::warn!(%peer, max = per_ip.max, "refused a connection: too many open from its address");
                    refuse(stream, &lingering);
                    continue;
                }
            }
        };
        let _ = stream.set_nodelay(true);
        let service = service.clone();
        // A peer that is not a trusted proxy is its own client: its key is made once here
        // rather than for every request (a trusted proxy's clients are named per request).
        let key = ip_slot.is_some().then(|| ip_key(peer.ip()));
        let connection = http.serve_connection(
            TokioIo::new(stream),
            hyper::service::service_fn(
                move |mut request: hyper::Request<hyper::body::Incoming>| {
                    let extensions = request.extensions_mut();
                    extensions.insert(ConnectInfo(peer));
                    if let Some(key) = &key {
                        extensions.insert(key.clone());
                    }
                    hyper::service::Service::call(&service, request)
                },
            ),
        );
        let stop = stop.clone();
        let expired = expired.clone();
        crate::metrics::open_delta(crate::metrics::Open::Connections, 1);
        tokio::spawn(async move {
            let _slots = (slot, ip_slot, Counted);
            let mut connection = std::pin::pin!(connection);
            tokio::select! {
                _ = connection.as_mut() => {}
                () = stop.cancelled() => {
                    // Idle connections close now; busy ones after their response.
                    connection.as_mut().graceful_shutdown();
                    tokio::select! {
                        _ = connection.as_mut() => {}
                        () = expired.cancelled() => {}
                    }
                }
            }
        });
    }
    // Draining: new connections are refused from here (a proxy moves on to another
    // instance); requests in flight finish, within the grace.
    drop(listener);
    let all = u32::try_from(max).unwrap_or(u32::MAX);
    let grace = options.drain_grace;
    if tokio::time::timeout(grace, slots.acquire_many(all))
        .await
        .is_err()
    {
        let open = max - slots.available_permits();
        tracing::warn!(
            open,
            ?grace,
            "drain grace over: closing the connections still open"
        );
        expired.cancel();
    }
    drained.cancel();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The steps' future is moved into its box for every request: it stays smaller than
    /// rmcp's own (which has its own box), rather than holding it inline (16 KB when it did).
    #[test]
    fn the_steps_future_does_not_hold_rmcps_inline() -> anyhow::Result<()> {
        let server = crate::Server::builder().build()?;
        let sessions = CappedSessions::new(LocalSessionManager::default(), 1, 1);
        let steps = StepsInner {
            forwarded: forwarded::Forwarded::new(Identity::new(&[], ForwardedHeader::default()), 1),
            guard: Guard {
                identity: Identity::new(&[], ForwardedHeader::default()),
                body_timeout: Duration::from_secs(1),
                sessions: None,
            },
            check: super::super::http_jsonrpc::Guard {
                server: server.clone(),
                allowed_hosts: Vec::new().into(),
                max_body_bytes: 1024,
            },
            calls: Arc::new(super::super::cancel::Calls::default()),
        };
        let rmcp = Shared(Arc::new(StreamableHttpService::new(
            move || Ok(McpHandler::new(server.clone())),
            Arc::new(sessions),
            StreamableHttpServerConfig::default(),
        )));
        let handle = rmcp.0.handle(Request::new(Body::empty()));
        let serve = steps.serve(Request::new(Body::empty()), rmcp.clone());
        let (serve, rmcp) = (size_of_val(&serve), size_of_val(&handle));
        assert!(
            serve < rmcp,
            "the steps' future is {serve} bytes, rmcp's {rmcp}"
        );
        Ok(())
    }
}
