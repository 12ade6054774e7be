//! Runtime guards: the concurrency guard (`SERVER_BUSY`), the rate limit (`RATE_LIMITED`)
//! and the timeout (`TIMEOUT`).
//!
//! Each guard answers with a [`ToolError`] the model can act on. Permits are RAII values: a
//! call that ends in any way — success, error, panic, timeout or cancellation (its future
//! dropped) — frees its place.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::envelope::{ErrorCode, ToolError, error};
use crate::store::Buckets;

mod shared;

pub use shared::{OnStoreFailure, STORE_RETRY_AFTER, SharedLimits};
// The rate-limit store lives in `store`, with the other stores.
#[cfg(feature = "redis")]
#[cfg_attr(docsrs, doc(cfg(feature = "redis")))]
pub use crate::store::DEFAULT_REDIS_TIMEOUT;
/// The old path of [`store::RedisStore`](crate::store::RedisStore).
#[cfg(feature = "redis")]
#[cfg_attr(docsrs, doc(cfg(feature = "redis")))]
#[deprecated(since = "0.1.0", note = "use `store::RedisStore`; removed in 0.2.0")]
pub type RedisStore = crate::store::RedisStore;
pub use crate::store::{GovernorStore, RateLimit, RateLimitStore, StoreError, TokioClock, Verdict};

/// Limits on how many calls of an action run at once and wait in line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConcurrencyLimit {
    /// Calls that may run at once (at least 1).
    pub max_active: usize,
    /// Calls that may wait for a slot, in arrival order; beyond this, calls are shed.
    pub max_queue: usize,
}

impl ConcurrencyLimit {
    /// `max_active` running at once (at least 1), `max_queue` waiting.
    pub fn new(max_active: usize, max_queue: usize) -> Self {
        ConcurrencyLimit {
            max_active: max_active.max(1),
            max_queue,
        }
    }
}

/// A snapshot of a concurrency guard: calls running and waiting, and its limits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GuardState {
    /// Calls running now.
    pub active: usize,
    /// Calls waiting for a slot now.
    pub queued: usize,
    /// Calls that may run at once.
    pub max_active: usize,
    /// Calls that may wait.
    pub max_queue: usize,
}

/// A concurrency guard: at most `max_active` calls run, at most `max_queue` wait (FIFO), and
/// any further call is refused at once with `SERVER_BUSY`.
#[derive(Debug)]
pub struct ConcurrencyGuard {
    name: String,
    limit: ConcurrencyLimit,
    slots: Arc<Semaphore>,
    queued: Arc<AtomicUsize>,
    /// Moving average of how long a call holds its slot, in milliseconds (for `retry_after`).
    avg_hold_ms: Arc<AtomicU64>,
}

/// A running call's slot. Dropping it frees the slot.
#[derive(Debug)]
pub struct ActivePermit {
    _permit: OwnedSemaphorePermit,
    started: tokio::time::Instant,
    avg_hold_ms: Arc<AtomicU64>,
}

impl Drop for ActivePermit {
    fn drop(&mut self) {
        let held = u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX);
        let _ = self
            .avg_hold_ms
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |avg| {
                Some(if avg == 0 { held } else { (avg * 7 + held) / 8 })
            });
    }
}

/// Decrements the queue count when a queued call gets its slot or is dropped while waiting.
struct QueuedTicket(Arc<AtomicUsize>);

impl Drop for QueuedTicket {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

impl ConcurrencyGuard {
    /// A guard for the action (or group) `name`.
    pub fn new(name: impl Into<String>, limit: ConcurrencyLimit) -> Self {
        ConcurrencyGuard {
            name: name.into(),
            limit,
            slots: Arc::new(Semaphore::new(limit.max_active)),
            queued: Arc::new(AtomicUsize::new(0)),
            avg_hold_ms: Arc::new(AtomicU64::new(0)),
        }
    }

    /// The limits.
    pub fn limit(&self) -> ConcurrencyLimit {
        self.limit
    }

    /// The guard's counters and limits now.
    pub fn state(&self) -> GuardState {
        GuardState {
            active: self.active(),
            queued: self.queued(),
            max_active: self.limit.max_active,
            max_queue: self.limit.max_queue,
        }
    }

    /// Calls running now.
    pub fn active(&self) -> usize {
        self.limit.max_active - self.slots.available_permits().min(self.limit.max_active)
    }

    /// Calls waiting now.
    pub fn queued(&self) -> usize {
        self.queued.load(Ordering::Acquire)
    }

    /// Takes a slot: at once if one is free, after the calls ahead of it if the queue has
    /// room, or `Err(SERVER_BUSY)` at once when both are full. Cancel-safe: dropping the
    /// future while it waits gives its place back.
    pub async fn acquire(&self) -> Result<ActivePermit, ToolError> {
        // The semaphore is fair: while calls wait, a newcomer cannot take a freed slot ahead
        // of them, so try_acquire succeeding means nobody was waiting.
        if let Ok(permit) = Arc::clone(&self.slots).try_acquire_owned() {
            return Ok(self.permit(permit));
        }
        let max_queue = self.limit.max_queue;
        let admitted = self
            .queued
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |q| {
                (q < max_queue).then_some(q + 1)
            });
        if admitted.is_err() {
            return Err(self.busy());
        }
        let ticket = QueuedTicket(Arc::clone(&self.queued));
        let permit = Arc::clone(&self.slots).acquire_owned().await;
        drop(ticket);
        match permit {
            Ok(permit) => Ok(self.permit(permit)),
            // The semaphore is never closed; answer as busy rather than panic if it were.
            Err(_) => Err(self.busy()),
        }
    }

    fn permit(&self, permit: OwnedSemaphorePermit) -> ActivePermit {
        ActivePermit {
            _permit: permit,
            started: tokio::time::Instant::now(),
            avg_hold_ms: Arc::clone(&self.avg_hold_ms),
        }
    }

    /// The `SERVER_BUSY` envelope for the guard's current state.
    pub fn busy(&self) -> ToolError {
        let active = self.active();
        let queued = self.queued();
        let avg_ms = self.avg_hold_ms.load(Ordering::Relaxed).max(1000);
        // Time for the line ahead to drain through the running slots, at least a second.
        let waves = (queued as u64 + 1).div_ceil(self.limit.max_active as u64);
        let retry = Duration::from_millis(avg_ms.saturating_mul(waves));
        error(
            ErrorCode::ServerBusy,
            format!(
                "{} is busy: {active} call{} running and {queued} waiting (limits: {} running, {} waiting). This call was not run.",
                self.name,
                plural(active),
                self.limit.max_active,
                self.limit.max_queue,
            ),
        )
        .recovery(
            "Send fewer calls at once: wait for your running calls to finish, then retry this one after the time below.",
        )
        .details([
            ("active", active.to_string()),
            ("queued", queued.to_string()),
            ("maxActive", self.limit.max_active.to_string()),
            ("maxQueue", self.limit.max_queue.to_string()),
        ])
        .retry_after(retry)
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// A token-bucket rate limit (GCRA, from `governor`), optionally keyed per client or session.
#[derive(Debug)]
pub struct RateLimiterGuard {
    name: String,
    buckets: Buckets,
}

impl RateLimiterGuard {
    /// A rate limit for the action `name`.
    pub fn new(name: impl Into<String>, limit: RateLimit) -> Self {
        RateLimiterGuard {
            name: name.into(),
            buckets: Buckets::new(limit),
        }
    }

    /// Takes one call from `key`'s bucket (`""` for an unkeyed limit), or answers
    /// `RATE_LIMITED` with the limiter's own wait time, in whole seconds rounded up.
    pub fn check(&self, key: &str) -> Result<(), ToolError> {
        match self.wait_for(key) {
            None => Ok(()),
            Some(wait) => Err(rate_limited(&self.name, &self.limit(), wait)),
        }
    }

    /// Takes one call from `key`'s bucket: `None`, or how long until it may be retried.
    pub fn wait_for(&self, key: &str) -> Option<Duration> {
        self.buckets.wait_for(key)
    }

    /// The limit.
    pub fn limit(&self) -> RateLimit {
        self.buckets.limit()
    }

    /// Forgets keys whose buckets are full again (bounded memory for keyed limits).
    pub fn retain_recent(&self) {
        self.buckets.retain_recent();
    }
}

/// The `RATE_LIMITED` envelope of `name`'s `limit`, to retry after `wait`.
pub(crate) fn rate_limited(name: &str, limit: &RateLimit, wait: Duration) -> ToolError {
    let wait = wait.max(Duration::from_nanos(1));
    error(
        ErrorCode::RateLimited,
        format!(
            "{} is rate limited: at most {} call{} per {}{} (bursts of {}). This call was not run.",
            name,
            limit.calls,
            plural(limit.calls as usize),
            describe_period(limit.per),
            if limit.per_client { " per client" } else { "" },
            limit.burst.max(1),
        ),
    )
    .recovery("Wait for the time below, then retry the same call. Do not retry sooner.")
    .retry_after(wait)
}

fn describe_period(d: Duration) -> String {
    let secs = d.as_secs_f64();
    if d == Duration::from_secs(1) {
        "second".to_owned()
    } else if d == Duration::from_secs(60) {
        "minute".to_owned()
    } else if d == Duration::from_secs(3600) {
        "hour".to_owned()
    } else if secs.fract() == 0.0 {
        format!("{} seconds", d.as_secs())
    } else {
        format!("{secs} seconds")
    }
}

/// Runs `fut` for at most `limit`; past it the future is dropped and `TIMEOUT` answered.
pub async fn with_timeout<F: std::future::Future>(
    action: &str,
    limit: Duration,
    fut: F,
) -> Result<F::Output, ToolError> {
    tokio::time::timeout(limit, fut)
        .await
        .map_err(|_| timeout_error(action, limit))
}

/// The `TIMEOUT` envelope for `action` after `limit`.
pub fn timeout_error(action: &str, limit: Duration) -> ToolError {
    let secs = limit.as_secs_f64();
    error(
        ErrorCode::Timeout,
        format!("{action} did not finish within {secs} seconds and was stopped."),
    )
    .recovery("Retry once. If it times out again, ask for less at once (a smaller limit or range).")
    .detail("timeoutSeconds", secs)
}

#[cfg(test)]
mod tests;
