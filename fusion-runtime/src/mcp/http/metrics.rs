//! The metrics listener: `GET /metrics` answers [`metrics::render`](crate::metrics::render) in
//! the OpenMetrics text format, on an address of its own (never the MCP port), with its own
//! small bounds: a few connections kept at once, a header timeout (which also closes a
//! connection idle that long between requests), no body read.
//!
//! Idle connections never keep a scrape waiting: when [`MAX_CONNECTIONS`] are open, a new
//! one closes the oldest (at once if it is between requests, else after its answer), so a
//! scraper's next connection is served at once however many idle ones are open. Past twice
//! that many (connections still finishing an answer, or sending headers within the
//! timeout), new ones wait in the kernel's backlog.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

/// Connections the metrics listener keeps open: one more closes the oldest.
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
            let slot = tokio::select! {
                slot = Arc::clone(&slots).acquire_owned() => slot,
                () = stopped.cancelled() => break,
            };
            let Ok(slot) = slot else { break };
            let stream = tokio::select! {
                accepted = listener.accept() => match accepted {
                    Ok((stream, _)) => stream,
                    Err(e) => {
                        tracing::warn!(error = %e, "metrics listener: accepting failed");
                        tokio::time::sleep(Duration::from_millis(100)).await;
                        continue;
                    }
                },
                () = stopped.cancelled() => break,
            };
            let connection = http.serve_connection(TokioIo::new(stream), service.clone());
            let (id, close) = kept.open();
            let kept = kept.clone();
            tokio::spawn(async move {
                let _slot = slot;
                let mut connection = std::pin::pin!(connection);
                tokio::select! {
                    _ = connection.as_mut() => {}
                    () = close.cancelled() => {
                        // Closed now if between requests, else once its answer is written.
                        connection.as_mut().graceful_shutdown();
                        let _ = connection.as_mut().await;
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

/// The connections kept open, oldest first, each with the token that closes it.
#[derive(Clone, Default)]
struct Kept(Arc<Mutex<Open>>);

/// The next connection's id, and the open ones by id, oldest first.
#[derive(Default)]
struct Open(u64, VecDeque<(u64, CancellationToken)>);

impl Kept {
    /// Registers a new connection: its id and its token. Past [`MAX_CONNECTIONS`], the
    /// oldest is told to close.
    fn open(&self) -> (u64, CancellationToken) {
        let mut kept = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let id = kept.0;
        kept.0 += 1;
        while kept.1.len() >= MAX_CONNECTIONS {
            if let Some((_, oldest)) = kept.1.pop_front() {
                oldest.cancel();
            }
        }
        let token = CancellationToken::new();
        kept.1.push_back((id, token.clone()));
        (id, token)
    }

    /// Forgets connection `id` (closed).
    fn closed(&self, id: u64) {
        let mut kept = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        kept.1.retain(|(i, _)| *i != id);
    }
}

async fn scrape() -> Response {
    match crate::metrics::render() {
        Some(text) => ([(header::CONTENT_TYPE, OPENMETRICS)], text).into_response(),
        None => (StatusCode::NOT_FOUND, "metrics are off").into_response(),
    }
}
