//! One request in, one answer out: [`HttpHandler`], the streamable HTTP endpoint with no
//! listener of its own. Every way the endpoint is served goes through it: [`spawn_http`] serves
//! it on the listener of [`crate::http`] ([`HttpServer`] is the running one), whose accept
//! loop calls it for each request of a connection, [`http_router`] routes the
//! endpoint's paths to it in an axum app, and a function runtime (AWS Lambda through
//! `lambda_http`, or anything that hands over an `http::Request`) calls it as a
//! `tower::Service`. So each gets the same door, bounds, authentication, room and envelopes.
//!
//! It dispatches by path, once: the probes (`/healthz`, `/readyz`; only when a listener
//! serves them), the resource-metadata document (with authentication), the endpoint's path
//! to its steps ([`Endpoint`]), and `404` for every other path, which reaches no step.
//!
//! Reads: a request (its peer from `ConnectInfo<SocketAddr>` or a [`ClientKey`] in its
//! extensions). Writes: its answer.
//!
//! [`ClientKey`]: crate::context::ClientKey

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;

use axum::body::Body;
use axum::response::Response;
use futures::future::{BoxFuture, Either, Ready, ready};
use tokio_util::sync::CancellationToken;

use super::endpoint::{Endpoint, Stopper, endpoint, not_served};
use super::options::HttpOptions;
use super::room::{Answered, PlainCallsAnswered};
use crate::auth::{Auth, METADATA_PATH};
use crate::http::{health, listener};
use crate::server::Server;

/// A running HTTP server.
#[derive(Debug)]
pub struct HttpServer {
    /// The address it listens on (the real port when asked for port 0).
    pub local_addr: SocketAddr,
    /// The endpoint URL (`http://127.0.0.1:PORT/mcp`).
    pub url: String,
    shutdown: CancellationToken,
    task: tokio::task::JoinHandle<std::io::Result<()>>,
    handler: HttpHandler,
}

impl HttpServer {
    /// Stops accepting connections and waits for the server task.
    pub async fn shutdown(self) -> anyhow::Result<()> {
        self.shutdown.cancel();
        self.task.await??;
        Ok(())
    }

    /// How many plain calls the endpoint answered without rmcp so far, by kind.
    pub fn plain_calls_answered(&self) -> PlainCallsAnswered {
        self.handler.plain_calls_answered()
    }

    /// Waits until the server stops (on its shutdown token).
    pub async fn wait(self) -> anyhow::Result<()> {
        self.task.await??;
        Ok(())
    }
}

/// Binds `addr` and serves `server` over streamable HTTP in a background task, within the
/// bounds of `options`. Fails before binding when [`HttpOptions::auth`] does not pass
/// [`Auth::check`](crate::auth::Auth::check).
pub async fn spawn_http(
    server: Server,
    addr: SocketAddr,
    options: HttpOptions,
) -> anyhow::Result<HttpServer> {
    if let Some(auth) = &options.auth {
        auth.check()?;
    }
    let bound = tokio::net::TcpListener::bind(addr).await?;
    let local_addr = bound.local_addr()?;
    let readiness = health::Readiness {
        draining: options.shutdown.clone(),
        checks: options.ready_checks.clone().into(),
    };
    // The probes first, outside the MCP path and its steps (no authentication, no session).
    // rmcp's streams end when the drain does (calls in flight finish first); listens are
    // answered on the shutdown token itself.
    let drained = CancellationToken::new();
    let handler = HttpHandler::listening(server, &options, &drained, readiness);
    let task = listener::spawn(bound, handler.clone(), options.listening(), drained);
    let host = match local_addr {
        SocketAddr::V6(a) => format!("[{}]", a.ip()),
        SocketAddr::V4(a) => a.ip().to_string(),
    };
    Ok(HttpServer {
        url: format!("http://{host}:{}{}", local_addr.port(), options.path),
        local_addr,
        shutdown: options.shutdown.clone(),
        task,
        handler,
    })
}

/// The streamable HTTP endpoint as one handler of single requests: a
/// `tower::Service<axum::http::Request<B>>` (any body of `Bytes`) that answers `http::Response`s
/// and never fails (`Infallible`), cheap to clone. What `serve --http` does to a request —
/// `Host` and `Origin`, the body cap, authentication, limits, the room, the envelopes, metrics
/// where they are on — it does, with no listener: hand it requests from wherever they come.
///
/// The connection bounds (count, per address, header timeout) belong to whatever accepts the
/// connections ([`spawn_http`](crate::mcp::spawn_http), your server, the function runtime's
/// front). Clients are told apart by the peer address in the request's
/// `ConnectInfo<SocketAddr>` extension (axum's), or by a
/// [`ClientKey`](crate::context::ClientKey) an authentication layer of yours put there;
/// without either, every client is one.
///
/// Its work runs on the tokio runtime that calls it, current-thread or multi-thread: it
/// spawns tasks (a call, a stream) but never blocks a thread, and starts nothing outside a
/// request but one task per handler that ends the streams on shutdown.
///
/// ```no_run
/// # async fn run(server: fusion_runtime::Server) -> anyhow::Result<()> {
/// use axum::http::Request;
/// use fusion_runtime::mcp::{HttpHandler, HttpOptions};
///
/// let handler = HttpHandler::new(server, &HttpOptions::default().stateless(true))?;
/// let request = Request::post("/mcp")
///     .header("content-type", "application/json")
///     .header("accept", "application/json, text/event-stream")
///     .header("mcp-protocol-version", "2025-06-18")
///     .body(axum::body::Body::from(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#))?;
/// let answer = handler.handle(request).await;
/// assert_eq!(answer.status(), 200);
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct HttpHandler {
    inner: Arc<Inner>,
}

struct Inner {
    /// The probes, when a listener serves them.
    probes: Option<axum::Router>,
    endpoint: Arc<Endpoint>,
    answered: Arc<Answered>,
    stopper: Stopper,
    /// Where the endpoint answers, for [`http_router`]'s routes.
    paths: Vec<String>,
}

impl std::fmt::Debug for HttpHandler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpHandler")
            .field("paths", &self.inner.paths)
            .finish_non_exhaustive()
    }
}

impl HttpHandler {
    /// The endpoint `server` serves with `options`, as a handler. Fails when
    /// [`HttpOptions::auth`] does not pass [`Auth::check`]. The endpoint's streams end when
    /// [`HttpOptions::shutdown`] is cancelled.
    pub fn new(server: Server, options: &HttpOptions) -> anyhow::Result<HttpHandler> {
        if let Some(auth) = &options.auth {
            auth.check()?;
        }
        Ok(Self::assemble(server, options, &options.shutdown, None))
    }

    /// The handler a listener serves: with its probes, its streams ended by `streams_end`.
    pub(crate) fn listening(
        server: Server,
        options: &HttpOptions,
        streams_end: &CancellationToken,
        readiness: health::Readiness,
    ) -> HttpHandler {
        Self::assemble(server, options, streams_end, Some(readiness))
    }

    fn assemble(
        server: Server,
        options: &HttpOptions,
        streams_end: &CancellationToken,
        readiness: Option<health::Readiness>,
    ) -> HttpHandler {
        let authenticated = options.auth.is_some() || server.auth().is_some();
        let assembled = endpoint(server, options, streams_end);
        let mut paths = vec![options.path.clone()];
        if authenticated {
            let path = options.path.trim_end_matches('/');
            for metadata in [METADATA_PATH.to_owned(), format!("{METADATA_PATH}{path}")] {
                if !paths.contains(&metadata) {
                    paths.push(metadata);
                }
            }
        }
        HttpHandler {
            inner: Arc::new(Inner {
                probes: readiness.map(health::routes),
                endpoint: assembled.endpoint,
                answered: assembled.answered,
                stopper: assembled.stopper,
                paths,
            }),
        }
    }

    /// The answer to `request`.
    pub async fn handle<B>(&self, request: axum::http::Request<B>) -> Response
    where
        B: http_body::Body<Data = axum::body::Bytes> + Send + 'static,
        B::Error: Into<axum::BoxError>,
    {
        match self.serve(request).await {
            Ok(response) => response,
            Err(never) => match never {},
        }
    }

    /// How many plain calls the endpoint answered without rmcp so far, by kind.
    pub fn plain_calls_answered(&self) -> PlainCallsAnswered {
        self.inner.answered.read()
    }

    /// Serves `request` by its path, borrowing the handler: the accept loop calls it for
    /// every request of a connection without cloning it. Its future is not boxed: hyper keeps
    /// it in the connection's one request slot.
    pub(crate) fn serve<B>(
        &self,
        request: axum::http::Request<B>,
    ) -> impl Future<Output = Result<Response, Infallible>> + Send + use<B>
    where
        B: http_body::Body<Data = axum::body::Bytes> + Send + 'static,
        B::Error: Into<axum::BoxError>,
    {
        use futures::FutureExt as _;
        use tower_service::Service;
        let inner = &*self.inner;
        let endpoint = &inner.endpoint;
        let path = request.uri().path();
        let answer: Either<_, Ready<Response>> = match (path, &inner.probes, &endpoint.steps.auth) {
            ("/healthz" | "/readyz", Some(probes), _) => {
                return Either::Left(probes.clone().call(request));
            }
            (path, _, Some(auth)) if auth.serves_metadata(path) => {
                Either::Right(ready(auth.metadata(request.method())))
            }
            (path, _, _) if path == endpoint.path => {
                // A future of its own type that holds the endpoint: hyper keeps it in the
                // connection's one request slot, unboxed.
                let endpoint = Arc::clone(endpoint);
                let request = request.map(Body::new);
                Either::Left(async move { endpoint.steps.serve(request, &endpoint.routes).await })
            }
            (path, _, _) => Either::Right(ready(not_served(path))),
        };
        Either::Right(answer.map(Ok))
    }
}

/// What the listener serves: each request by its path ([`HttpHandler::serve`]); past a
/// drain's grace, the endpoint's running calls stopped.
impl listener::Serve for HttpHandler {
    fn serve(
        &self,
        request: hyper::Request<hyper::body::Incoming>,
    ) -> impl Future<Output = Result<Response, Infallible>> + Send + use<> {
        HttpHandler::serve(self, request)
    }

    fn stop(&self) -> usize {
        self.inner.stopper.stop()
    }
}

/// [`HttpHandler::handle`] as a `tower::Service` (its future boxed): always ready.
impl<B> tower_service::Service<axum::http::Request<B>> for HttpHandler
where
    B: http_body::Body<Data = axum::body::Bytes> + Send + 'static,
    B::Error: Into<axum::BoxError>,
{
    type Response = Response;
    type Error = Infallible;
    type Future = BoxFuture<'static, Result<Response, Infallible>>;

    fn poll_ready(
        &mut self,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Self::Error>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: axum::http::Request<B>) -> Self::Future {
        Box::pin(self.serve(request))
    }
}

/// The streamable HTTP endpoint as an axum `Router`, to merge into a larger app: the
/// endpoint's path (and, with authentication, the resource-metadata paths) routed to an
/// [`HttpHandler`]; no fallback of its own, so it merges beside yours.
///
/// Serve it with connect info (`into_make_service_with_connect_info::<SocketAddr>()`) so
/// clients are told apart by address, or put a [`ClientKey`](crate::context::ClientKey) in each request's extensions
/// from a layer around it (an authentication layer that knows the principal). The connection
/// bounds (count, header timeout) are [`spawn_http`](crate::mcp::spawn_http)'s; the rest apply here.
///
/// It cannot fail: authentication in [`HttpOptions::auth`] that [`Auth::check`] refuses is
/// logged as an error here, where [`spawn_http`](crate::mcp::spawn_http) and
/// [`HttpHandler::new`] refuse to start.
pub fn http_router(server: Server, options: &HttpOptions) -> axum::Router {
    if let Some(Err(e)) = options.auth.as_deref().map(Auth::check) {
        tracing::error!("{e}");
    }
    let handler = HttpHandler::assemble(server, options, &options.shutdown, None);
    let mut router = axum::Router::new();
    for path in &handler.inner.paths {
        router = router.route_service(path, handler.clone());
    }
    router
}
