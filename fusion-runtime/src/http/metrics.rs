//! The metrics listener: `GET /metrics` answers [`metrics::render`](crate::metrics::render) in
//! the OpenMetrics text format, on an address of its own (never the MCP port), with its own
//! small bounds: a few connections kept at once, a header timeout (which also closes a
//! connection idle that long between requests), no body read.
//!
//! Neither idle connections nor slow ones keep a scrape waiting: the listener always accepts,
//! and when [`MAX_CONNECTIONS`] are open a new one closes one that is not writing an answer —
//! idle between requests, or still sending its request's headers (a client sending them a
//! byte at a time) — from the address that holds the most connections, the oldest of them;
//! it is closed at once. A scraper's connection sends its request at once and is then
//! answered; 200 clients trickling headers from one address do not delay it. Past
//! [`MAX_OPEN`] (connections all writing answers), new ones wait in the kernel's backlog.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

/// Connections the metrics listener keeps open: one more closes one that is not answering.
const MAX_CONNECTIONS: usize = 16;
/// Connections open at once, the ones being closed included; more wait in the kernel's
/// backlog.
const MAX_OPEN: usize = 2 * MAX_CONNECTIONS;
/// Time a scraper has to send its request's headers, and the longest a connection stays
/// idle between two requests.
const HEADER_TIMEOUT: Duration = Duration::from_secs(5);
/// The content type Prometheus reads the OpenMetrics text under.
const OPENMETRICS: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// A running metrics listener ([`spawn_metrics`]).
#[derive(Debug)]
pub struct MetricsServer {
    /// The address it listens on (the port the OS chose for `:0`).
    pub local_addr: SocketAddr,
    /// `http://ADDR/metrics`.
    pub url: String,
    stop: CancellationToken,
}

impl MetricsServer {
    /// Stops accepting; scrapes in flight finish.
    pub fn stop(&self) {
        self.stop.cancel();
    }
}

impl Drop for MetricsServer {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

/// Turns [`metrics`](crate::metrics) on and serves them at `http://addr/metrics` until the
/// returned handle is dropped or stopped.
pub async fn spawn_metrics(addr: SocketAddr) -> anyhow::Result<MetricsServer> {
    crate::metrics::enable();
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let local_addr = listener.local_addr()?;
    let router = axum::Router::new().route("/metrics", axum::routing::get(scrape));
    let service = TowerToHyperService::new(router);
    let stop = CancellationToken::new();
    let slots = Arc::new(Semaphore::new(MAX_OPEN));
    let kept = Kept::default();
    let stopped = stop.clone();
    tokio::spawn(async move {
        let mut http = http1::Builder::new();
        http.timer(TokioTimer::new())
            .header_read_timeout(HEADER_TIMEOUT);
        loop {
            // Accept first: room is made for the new connection (see the module's doc), so
            // a scraper never waits behind connections that are not being answered.
            let (stream, peer) = tokio::select! {
                accepted = listener.accept() => match accepted {
                    Ok(accepted) => accepted,
                    Err(e) => {
                        tracing::warn!(error = %e, "metrics listener: accepting failed");
                        tokio::time::sleep(Duration::from_millis(100)).await;
                        continue;
                    }
                },
                () = stopped.cancelled() => break,
            };
            let (id, close, busy) = kept.open(peer.ip());
            let slot = tokio::select! {
                slot = Arc::clone(&slots).acquire_owned() => slot,
                () = stopped.cancelled() => break,
            };
            let Ok(slot) = slot else { break };
            let answering = Answering(Arc::clone(&busy));
            let router = service.clone();
            let answered = hyper::service::service_fn(move |request| {
                answering.begin();
                let answering = answering.clone();
                let router = router.clone();
                async move {
                    let response = hyper::service::Service::call(&router, request).await?;
                    Ok::<_, std::convert::Infallible>(
                        response.map(|body| Tracked { body, answering }),
                    )
                }
            });
            let connection = http.serve_connection(TokioIo::new(stream), answered);
            let kept = kept.clone();
            tokio::spawn(async move {
                let _slot = slot;
                let mut connection = std::pin::pin!(connection);
                tokio::select! {
                    _ = connection.as_mut() => {}
                    () = close.cancelled() => {
                        // Writing an answer: closed once it is written. Otherwise (idle, or
                        // still sending its headers) dropped now.
                        if busy.load(Ordering::Acquire) {
                            connection.as_mut().graceful_shutdown();
                            let _ = connection.as_mut().await;
                        }
                    }
                }
                kept.closed(id);
            });
        }
    });
    let host = match local_addr {
        SocketAddr::V6(a) => format!("[{}]", a.ip()),
        SocketAddr::V4(a) => a.ip().to_string(),
    };
    Ok(MetricsServer {
        url: format!("http://{host}:{}/metrics", local_addr.port()),
        local_addr,
        stop,
    })
}

/// The connections kept open, oldest first: each one's address, whether it is answering a
/// request, and the token that closes it.
#[derive(Clone, Default)]
struct Kept(Arc<Mutex<Open>>);

/// The next connection's id, and the open ones, oldest first.
#[derive(Default)]
struct Open {
    next: u64,
    open: Vec<Conn>,
}

struct Conn {
    id: u64,
    ip: IpAddr,
    busy: Arc<AtomicBool>,
    close: CancellationToken,
}

impl Kept {
    /// Registers a new connection from `ip`: its id, its token and its answering flag. With
    /// [`MAX_CONNECTIONS`] open, one that is not answering is told to close: from the address
    /// holding the most connections, the oldest of them.
    fn open(&self, ip: IpAddr) -> (u64, CancellationToken, Arc<AtomicBool>) {
        let mut kept = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let id = kept.next;
        kept.next += 1;
        while kept.open.len() >= MAX_CONNECTIONS {
            let mut held = HashMap::<IpAddr, usize>::new();
            for conn in &kept.open {
                *held.entry(conn.ip).or_default() += 1;
            }
            let victim = kept
                .open
                .iter()
                .enumerate()
                .filter(|(_, c)| !c.busy.load(Ordering::Acquire))
                // The most held address; among its connections the oldest (first).
                .max_by_key(|(at, c)| (held[&c.ip], std::cmp::Reverse(*at)))
                .map(|(at, _)| at);
            let Some(at) = victim else { break };
            kept.open.remove(at).close.cancel();
        }
        let close = CancellationToken::new();
        let busy = Arc::new(AtomicBool::new(false));
        kept.open.push(Conn {
            id,
            ip,
            busy: Arc::clone(&busy),
            close: close.clone(),
        });
        (id, close, busy)
    }

    /// Forgets connection `id` (closed).
    fn closed(&self, id: u64) {
        let mut kept = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        kept.open.retain(|c| c.id != id);
    }
}

/// A connection's answering flag: set when a request's headers are in, cleared when its
/// answer's body is written (dropped).
#[derive(Clone)]
struct Answering(Arc<AtomicBool>);

impl Answering {
    fn begin(&self) {
        self.0.store(true, Ordering::Release);
    }
}

/// An answer's body, which clears its connection's answering flag once written.
struct Tracked<B> {
    body: B,
    answering: Answering,
}

impl<B> Drop for Tracked<B> {
    fn drop(&mut self) {
        self.answering.0.store(false, Ordering::Release);
    }
}

impl<B: http_body::Body + Unpin> http_body::Body for Tracked<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<B::Data>, B::Error>>> {
        std::pin::Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

async fn scrape() -> Response {
    match crate::metrics::render() {
        Some(text) => ([(header::CONTENT_TYPE, OPENMETRICS)], text).into_response(),
        None => (StatusCode::NOT_FOUND, "metrics are off").into_response(),
    }
}
