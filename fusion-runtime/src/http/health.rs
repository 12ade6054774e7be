//! `/healthz` and `/readyz`, for load balancers and orchestrators: outside the MCP path, no
//! authentication, no session, cheap.
//!
//! `/healthz` answers `200 ok` while the process serves. `/readyz` answers `200 ready`, or
//! `503` with a one-line reason while draining (after the shutdown token) or while a
//! [`ReadyCheck`] fails. A check runs at most once per its interval; in between, its last
//! result is answered, so probes cannot drive load onto what they check.

use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use futures::future::BoxFuture;
use tokio_util::sync::CancellationToken;

/// A probe's outcome: `Err` carries the reason, one line.
type Probe = dyn Fn() -> BoxFuture<'static, Result<(), String>> + Send + Sync;

/// A probe's last outcome and when it came.
type Outcome = (Instant, Result<(), String>);

/// A condition `/readyz` requires (a dependency answers), run at most once per
/// [`every`](Self::every) and bounded by [`timeout`](Self::timeout).
#[derive(Clone)]
pub struct ReadyCheck {
    name: String,
    probe: Arc<Probe>,
    timeout: Duration,
    every: Duration,
    last: Arc<tokio::sync::Mutex<Option<Outcome>>>,
}

impl fmt::Debug for ReadyCheck {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReadyCheck")
            .field("name", &self.name)
            .field("timeout", &self.timeout)
            .field("every", &self.every)
            .finish_non_exhaustive()
    }
}

/// How long a check's result is reused by default.
const DEFAULT_EVERY: Duration = Duration::from_secs(1);
/// A check's default bound.
const DEFAULT_TIMEOUT: Duration = Duration::from_millis(500);

impl ReadyCheck {
    /// A check named `name` (it prefixes the reason `/readyz` gives) running `probe`; `Err`
    /// is the reason it fails. Bounded by 500 ms, run at most once a second by default.
    pub fn new<F, Fut>(name: impl Into<String>, probe: F) -> Self
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<(), String>> + Send + 'static,
    {
        ReadyCheck {
            name: name.into(),
            probe: Arc::new(move || Box::pin(probe())),
            timeout: DEFAULT_TIMEOUT,
            every: DEFAULT_EVERY,
            last: Arc::default(),
        }
    }

    /// Redis at `url` answers a `PING` within `timeout`, through the connection helper the
    /// Redis stores use (made on first use, reconnecting by itself).
    #[cfg(feature = "redis")]
    #[cfg_attr(docsrs, doc(cfg(feature = "redis")))]
    pub fn redis_ping(url: &str, timeout: Duration) -> anyhow::Result<Self> {
        let connection = crate::store::managed_connection(url)?;
        let check = ReadyCheck::new("redis", move || {
            let mut connection = connection.clone();
            async move {
                redis::cmd("PING")
                    .query_async::<String>(&mut connection)
                    .await
                    .map(drop)
                    .map_err(|e| e.to_string())
            }
        });
        Ok(check.timeout(timeout))
    }

    /// The bound on one run; past it, the check fails.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// How long a result is reused before the probe runs again.
    pub fn every(mut self, interval: Duration) -> Self {
        self.every = interval;
        self
    }

    /// The last result if fresh, else a new run. One run at a time: concurrent callers wait
    /// for it and share its result.
    async fn run(&self) -> Result<(), String> {
        let mut last = self.last.lock().await;
        if let Some((at, result)) = &*last
            && at.elapsed() < self.every
        {
            return result.clone();
        }
        let result = match tokio::time::timeout(self.timeout, (self.probe)()).await {
            Ok(result) => result,
            Err(_) => Err(format!("no answer within {} ms", self.timeout.as_millis())),
        };
        *last = Some((Instant::now(), result.clone()));
        result
    }
}

/// What `/readyz` looks at.
#[derive(Clone, Debug)]
pub(crate) struct Readiness {
    pub(crate) draining: CancellationToken,
    pub(crate) checks: Arc<[ReadyCheck]>,
}

impl Readiness {
    /// `Ok`, or why not ready (one line).
    pub(crate) async fn check(&self) -> Result<(), String> {
        if self.draining.is_cancelled() {
            return Err("draining: shutting down".into());
        }
        for check in self.checks.iter() {
            if let Err(e) = check.run().await {
                let line = e.lines().next().unwrap_or_default();
                return Err(format!("{}: {line}", check.name));
            }
        }
        Ok(())
    }
}

/// The two routes.
pub(crate) fn routes(readiness: Readiness) -> axum::Router {
    axum::Router::new()
        .route(
            "/healthz",
            axum::routing::get(|| async { text(StatusCode::OK, "ok".into()) }),
        )
        .route(
            "/readyz",
            axum::routing::get(move || {
                let readiness = readiness.clone();
                async move {
                    match readiness.check().await {
                        Ok(()) => text(StatusCode::OK, "ready".into()),
                        Err(reason) => text(StatusCode::SERVICE_UNAVAILABLE, reason),
                    }
                }
            }),
        )
}

fn text(status: StatusCode, body: String) -> Response {
    let mut response = Response::new(Body::from(body + "\n"));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[tokio::test]
    async fn draining_is_not_ready_and_checks_are_cached_and_bounded() {
        let runs = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&runs);
        let slow = ReadyCheck::new("slow", move || {
            counted.fetch_add(1, Ordering::Relaxed);
            async {
                tokio::time::sleep(Duration::from_secs(5)).await;
                Ok(())
            }
        })
        .timeout(Duration::from_millis(50))
        .every(Duration::from_secs(60));
        let readiness = Readiness {
            draining: CancellationToken::new(),
            checks: Arc::from(vec![slow]),
        };
        let started = Instant::now();
        for _ in 0..5 {
            let reason = readiness.check().await.err().unwrap_or_default();
            assert_eq!(reason, "slow: no answer within 50 ms");
        }
        assert!(started.elapsed() < Duration::from_secs(1));
        assert_eq!(runs.load(Ordering::Relaxed), 1, "cached between runs");

        let ok = Readiness {
            draining: CancellationToken::new(),
            checks: Arc::from(Vec::new()),
        };
        assert_eq!(ok.check().await, Ok(()));
        ok.draining.cancel();
        assert_eq!(ok.check().await, Err("draining: shutting down".into()));
    }
}
