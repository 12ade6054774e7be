//! The listener: the connection caps (count, per IP, header size and time), draining on
//! shutdown, and a service of the caller's ([`Serve`]) answering each request of a
//! connection — the MCP endpoint's (`mcp/http/front.rs`, [`spawn_http`]), or any other.
//!
//! The drain cuts nothing: once the shutdown token is cancelled `/readyz` says so (`health.rs`), the
//! listener stops accepting (what the kernel already accepted is served), every answer says
//! `Connection: close`, and a connection is closed only between requests — once it began
//! none for [`DRAIN_QUIET`] — so a request a client wrote is answered, or its connection was
//! closed before it wrote it. A GET stream (a 2025 session's server-sent events) ends when
//! the drain starts, as 2026-07-28 listens do; calls in flight finish within the grace, and
//! past it the service is told to stop them ([`Serve::stop`]).
//!
//! Reads: the [`Listening`] bounds, a bound socket. Writes: connections served by the
//! service; refused ones answered `503` and closed.
//!
//! [`spawn_http`]: crate::mcp::spawn_http

use std::convert::Infallible;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::response::Response;

use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use super::forwarded;
use super::identity::{ForwardedHeader, Identity, ip_key};

/// What a listener serves: the answer to each request of a connection, and what stops the
/// calls still running once a drain's grace is over.
pub(crate) trait Serve: Clone + Send + Sync + 'static {
    /// The answer to `request`. Its future is not boxed by the listener: hyper keeps it in
    /// the connection's one request slot.
    fn serve(
        &self,
        request: hyper::Request<hyper::body::Incoming>,
    ) -> impl Future<Output = Result<Response, Infallible>> + Send + use<Self>;

    /// Stops every call still running (each answered on its own stream); returns how many.
    fn stop(&self) -> usize;
}

/// The listener's bounds.
#[derive(Clone, Debug)]
pub(crate) struct Listening {
    /// Connections open at once; past it a connection is answered `503` and closed.
    pub(crate) max_connections: usize,
    /// Connections open at once from one address (a trusted proxy's are not counted here).
    pub(crate) max_connections_per_ip: usize,
    /// How long a request's head may take.
    pub(crate) header_timeout: Duration,
    /// The proxies whose forwarding headers name the client.
    pub(crate) trusted_proxies: Vec<IpAddr>,
    pub(crate) forwarded_header: ForwardedHeader,
    /// How long calls in flight have to finish once draining.
    pub(crate) drain_grace: Duration,
    /// Cancelled to drain and stop.
    pub(crate) shutdown: CancellationToken,
}

/// The largest request head (request line and headers).
pub(crate) const MAX_HEADER_BYTES: usize = 64 * 1024;

/// How long the accept loop rests after a failed accept (e.g. out of file descriptors).
pub(crate) const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);

/// Serves `service` on `listener` in a background task, within `bounds`, until
/// `bounds.shutdown` is cancelled and the drain is over; then cancels `drained`.
pub(crate) fn spawn<S: Serve>(
    listener: tokio::net::TcpListener,
    service: S,
    bounds: Listening,
    drained: CancellationToken,
) -> tokio::task::JoinHandle<std::io::Result<()>> {
    tokio::spawn(accept_loop(listener, service, bounds, drained))
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

/// After the shutdown token, how long a connection must have begun no request before the
/// drain closes it: a client that just wrote its next request on a keep-alive connection
/// gets its answer (with `Connection: close`), not a closed socket.
pub(crate) const DRAIN_QUIET: Duration = Duration::from_millis(250);

/// Once the drain's grace is over and the calls still running are stopped, how long their
/// answers (`SERVER_BUSY`) have to be written before what is still open is cut.
pub(crate) const STOPPED_ANSWERS: Duration = Duration::from_secs(1);

/// What every connection of one listener shares.
struct Acceptor<S> {
    http: http1::Builder,
    service: S,
    slots: Arc<Semaphore>,
    max: usize,
    lingering: Arc<Semaphore>,
    identity: Identity,
    per_ip: Arc<forwarded::PerClient>,
    stop: CancellationToken,
    /// Cancelled when the drain grace is over: connections still open are dropped.
    expired: CancellationToken,
}

impl<S: Serve> Acceptor<S> {
    /// Serves `stream` from `peer` in a task of its own, or refuses it (`503`) past a bound.
    fn admit(&self, stream: tokio::net::TcpStream, peer: SocketAddr) {
        let Ok(slot) = Arc::clone(&self.slots).try_acquire_owned() else {
            tracing::warn!(%peer, max = self.max, "refused a connection: too many open");
            refuse(stream, &self.lingering);
            return;
        };
        let ip_slot = if self.identity.trusts(peer.ip()) {
            None
        } else {
            match forwarded::PerClient::take(&self.per_ip, ip_key(peer.ip()).0) {
                Some(s) => Some(s),
                None => {
                    tracing::warn!(%peer, max = self.per_ip.max, "refused a connection: too many open from its address");
                    refuse(stream, &self.lingering);
                    return;
                }
            }
        };
        let _ = stream.set_nodelay(true);
        let service = self.service.clone();
        // A peer that is not a trusted proxy is its own client: its key is made once here
        // rather than for every request (a trusted proxy's clients are named per request).
        let key = ip_slot.is_some().then(|| ip_key(peer.ip()));
        // Requests begun on this connection: the drain closes it once this stands still.
        let begun = Arc::new(AtomicU64::new(0));
        let counted = Arc::clone(&begun);
        let draining = self.stop.clone();
        let connection = self.http.serve_connection(
            TokioIo::new(stream),
            hyper::service::service_fn(
                move |mut request: hyper::Request<hyper::body::Incoming>| {
                    counted.fetch_add(1, Ordering::Relaxed);
                    let extensions = request.extensions_mut();
                    extensions.insert(ConnectInfo(peer));
                    if let Some(key) = &key {
                        extensions.insert(key.clone());
                    }
                    let listening = request.method() == axum::http::Method::GET;
                    let answer = service.serve(request);
                    let draining = draining.clone();
                    async move {
                        let response = answer.await?;
                        Ok::<_, std::convert::Infallible>(while_draining(
                            response, &draining, listening,
                        ))
                    }
                },
            ),
        );
        let stop = self.stop.clone();
        let expired = self.expired.clone();
        crate::metrics::open_delta(crate::metrics::Open::Connections, 1);
        tokio::spawn(async move {
            let _slots = (slot, ip_slot, Counted);
            let mut connection = std::pin::pin!(connection);
            tokio::select! {
                _ = connection.as_mut() => return,
                () = stop.cancelled() => {}
            }
            // Draining: every answer says `Connection: close` (hyper closes the connection
            // after it); a connection that begins no request for `DRAIN_QUIET` is closed
            // between requests (at once when idle, after its answer when busy).
            loop {
                let seen = begun.load(Ordering::Relaxed);
                tokio::select! {
                    _ = connection.as_mut() => return,
                    () = expired.cancelled() => return,
                    () = tokio::time::sleep(DRAIN_QUIET) => {}
                }
                if begun.load(Ordering::Relaxed) == seen {
                    break;
                }
            }
            connection.as_mut().graceful_shutdown();
            tokio::select! {
                _ = connection.as_mut() => {}
                () = expired.cancelled() => {}
            }
        });
    }
}

/// `response` as the drain wants it: with `Connection: close` once draining (the client
/// sends its next request elsewhere, never on a connection about to close), and, for a GET
/// stream (a 2025 session's server-sent events), a body that ends when the drain starts.
fn while_draining(
    mut response: Response,
    draining: &CancellationToken,
    listening: bool,
) -> Response {
    use futures::StreamExt as _;
    if draining.is_cancelled() {
        response.headers_mut().insert(
            axum::http::header::CONNECTION,
            axum::http::HeaderValue::from_static("close"),
        );
    }
    let streamed = response
        .headers()
        .get(axum::http::header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"text/event-stream"));
    if listening && streamed {
        let end = draining.clone().cancelled_owned();
        response = response.map(|body| Body::from_stream(body.into_data_stream().take_until(end)));
    }
    response
}

async fn accept_loop<S: Serve>(
    listener: tokio::net::TcpListener,
    service: S,
    options: Listening,
    drained: CancellationToken,
) -> std::io::Result<()> {
    let stop = options.shutdown.clone();
    let max = options.max_connections.clamp(1, u32::MAX as usize);
    let slots = Arc::new(Semaphore::new(max));
    let mut http = http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(options.header_timeout)
        .max_header_size(MAX_HEADER_BYTES);
    let acceptor = Acceptor {
        http,
        service: service.clone(),
        slots: Arc::clone(&slots),
        max,
        lingering: Arc::new(Semaphore::new(MAX_LINGERING)),
        identity: Identity::new(&options.trusted_proxies, options.forwarded_header),
        per_ip: forwarded::PerClient::new(options.max_connections_per_ip),
        stop: stop.clone(),
        expired: CancellationToken::new(),
    };
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = stop.cancelled() => break,
        };
        match accepted {
            Ok((stream, peer)) => acceptor.admit(stream, peer),
            Err(e) => {
                // Out of file descriptors and the like: rest, then go on accepting.
                tracing::warn!(error = %e, "accepting a connection failed");
                tokio::select! {
                    () = tokio::time::sleep(ACCEPT_BACKOFF) => continue,
                    () = stop.cancelled() => break,
                }
            }
        }
    }
    // Draining: the connections the kernel already accepted are served (their answers say
    // `Connection: close`) rather than reset; new ones are refused from here (a proxy moves
    // on to another instance); requests in flight finish, within the grace.
    while let Some(Ok((stream, peer))) = futures::FutureExt::now_or_never(listener.accept()) {
        acceptor.admit(stream, peer);
    }
    drop(listener);
    let all = u32::try_from(max).unwrap_or(u32::MAX);
    let grace = options.drain_grace;
    if tokio::time::timeout(grace, slots.acquire_many(all))
        .await
        .is_err()
    {
        // The calls still running are stopped, each answered on its own stream (a client
        // still waiting — for the user's answer to a question, say — reads why), before what
        // is still open is cut.
        let stopped = service.stop();
        if stopped > 0
            && tokio::time::timeout(STOPPED_ANSWERS, slots.acquire_many(all))
                .await
                .is_ok()
        {
            tracing::warn!(
                stopped,
                ?grace,
                "drain grace over: stopped the calls still running"
            );
        } else {
            let open = max - slots.available_permits();
            tracing::warn!(
                open,
                stopped,
                ?grace,
                "drain grace over: closing the connections still open"
            );
            acceptor.expired.cancel();
        }
    }
    drained.cancel();
    Ok(())
}
