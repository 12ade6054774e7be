//! The listener of [`spawn_http`]: the connection caps (count, per IP, header size and time),
//! the health routes, draining on shutdown, and [`HttpServer`], the handle of a running one.
//!
//! Reads: the [`HttpOptions`]. Writes: connections served by the [`router`]; refused ones
//! answered `503` and closed.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::response::Response;
use futures::future::{BoxFuture, Either};
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use super::forwarded;
use super::health;
use super::identity::{Identity, ip_key};
use super::options::{ACCEPT_BACKOFF, HttpOptions, MAX_HEADER_BYTES};
use super::router::{Direct, endpoint};
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
    let (router, direct) = endpoint(server, &options, &drained);
    let router = Front::new(readiness, router, direct);
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

/// The probes' router in front of the MCP router: a request for `/healthz` or `/readyz`
/// goes to [`health::routes`] (which answers any method there: `405` but for `GET`), every other to
/// the MCP router — what `routes(..).fallback_service(mcp)` did, with one path compare per
/// request in place of a second router's route match and its fallback's clone.
pub(super) struct Front {
    probes: axum::Router,
    mcp: axum::Router,
    /// The MCP path served without the router, when it can be.
    direct: Option<Direct>,
}

impl Front {
    pub(super) fn new(
        readiness: health::Readiness,
        mcp: axum::Router,
        direct: Option<Direct>,
    ) -> Self {
        Front {
            probes: health::routes(readiness),
            mcp,
            direct,
        }
    }

    /// Serves `request` by its path, borrowing the front: the accept loop calls it for every
    /// request of a connection without cloning it (the routers are cloned, which is cheap,
    /// only for requests off the MCP path or when there is no [`Direct`]). Its future is not
    /// boxed: hyper keeps it in the connection's one request slot.
    pub(super) fn serve<B>(
        &self,
        request: axum::http::Request<B>,
    ) -> impl Future<Output = Result<Response, std::convert::Infallible>> + Send + use<B>
    where
        B: http_body::Body<Data = axum::body::Bytes> + Send + 'static,
        B::Error: Into<axum::BoxError>,
    {
        use tower_service::Service;
        match (request.uri().path(), &self.direct) {
            ("/healthz" | "/readyz", _) => Either::Left(self.probes.clone().call(request)),
            (path, Some(direct)) if direct.serves(path) => {
                Either::Right(direct.call(request.map(Body::new)))
            }
            _ => Either::Left(self.mcp.clone().call(request)),
        }
    }
}

/// [`Front::serve`] as a service (its future boxed), for callers that need one.
impl<B> tower_service::Service<axum::http::Request<B>> for Front
where
    B: http_body::Body<Data = axum::body::Bytes> + Send + 'static,
    B::Error: Into<axum::BoxError>,
{
    type Response = Response;
    type Error = std::convert::Infallible;
    type Future = BoxFuture<'static, Result<Response, std::convert::Infallible>>;

    fn poll_ready(
        &mut self,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Self::Error>> {
        // Both routers and the endpoint are always ready.
        std::task::Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: axum::http::Request<B>) -> Self::Future {
        Box::pin(self.serve(request))
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
    router: Front,
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
    let front = Arc::new(router);
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
        let front = Arc::clone(&front);
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
                    front.serve(request)
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
