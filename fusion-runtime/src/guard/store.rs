//! Where rate-limit buckets live: in this process (the default, `governor`), or in a store
//! that several instances share ([`RedisStore`](super::RedisStore)).
//!
//! Only rate limits are shared. Concurrency guards stay per instance: they protect this
//! process's own CPU, memory and connections (load shedding is local by nature), a slot is
//! held for the length of a call — a lease a crashed instance would never give back to a
//! shared store — and the balancer in front already spreads calls across instances.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use futures::future::BoxFuture;

use super::{RateLimit, RateLimiterGuard};
use crate::envelope::{ErrorCode, ToolError, error};

/// A store's answer for one call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The call took one token from the bucket.
    Admit,
    /// The bucket is empty: the call may be retried after this long.
    Wait(Duration),
}

/// The store could not decide (unreachable, timed out, answered nonsense).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct StoreError(pub String);

/// Token buckets (GCRA) keyed by action and client. The decision for one call must be atomic
/// in the store, and bounded in time.
pub trait RateLimitStore: Send + Sync + 'static {
    /// Takes one call from the bucket of (`action`, `client`) under `limit`.
    fn take<'a>(
        &'a self,
        action: &'a str,
        client: &'a str,
        limit: &'a RateLimit,
    ) -> BoxFuture<'a, Result<Verdict, StoreError>>;

    /// A name for logs (`redis`, `in-process`).
    fn name(&self) -> &'static str;
}

/// The in-process store: one `governor` limiter per action, as the server uses by default.
/// Useful to run code written against [`RateLimitStore`] without a shared store.
#[derive(Default)]
pub struct GovernorStore {
    limiters: std::sync::RwLock<std::collections::HashMap<String, Arc<RateLimiterGuard>>>,
}

impl fmt::Debug for GovernorStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GovernorStore").finish_non_exhaustive()
    }
}

impl GovernorStore {
    fn limiter(&self, action: &str, limit: &RateLimit) -> Arc<RateLimiterGuard> {
        let read = self
            .limiters
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(l) = read.get(action).filter(|l| l.limit() == *limit) {
            return Arc::clone(l);
        }
        drop(read);
        let mut write = self
            .limiters
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let entry = write
            .entry(action.to_owned())
            .or_insert_with(|| Arc::new(RateLimiterGuard::new(action, *limit)));
        if entry.limit() != *limit {
            *entry = Arc::new(RateLimiterGuard::new(action, *limit));
        }
        Arc::clone(entry)
    }
}

impl RateLimitStore for GovernorStore {
    fn take<'a>(
        &'a self,
        action: &'a str,
        client: &'a str,
        limit: &'a RateLimit,
    ) -> BoxFuture<'a, Result<Verdict, StoreError>> {
        let verdict = match self.limiter(action, limit).wait_for(client) {
            None => Verdict::Admit,
            Some(wait) => Verdict::Wait(wait),
        };
        Box::pin(std::future::ready(Ok(verdict)))
    }

    fn name(&self) -> &'static str {
        "in-process"
    }
}

/// What a call gets when the shared store cannot decide.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OnStoreFailure {
    /// Refuse the call with `RATE_LIMITED` saying the limit could not be checked, and when
    /// to retry: the limit holds, availability suffers (the default).
    #[default]
    Closed,
    /// Admit the call unchecked: availability holds, the limit does not until the store is
    /// back.
    Open,
}

/// When a fail-closed call may be retried.
pub const STORE_RETRY_AFTER: Duration = Duration::from_secs(5);

/// How often a failing store is logged at most (each failure is counted).
const WARN_EVERY: Duration = Duration::from_secs(10);

/// A shared store and what to do when it fails, as the server uses it.
pub struct SharedLimits {
    store: Arc<dyn RateLimitStore>,
    on_failure: OnStoreFailure,
    started: Instant,
    /// Milliseconds since `started` of the last warning, +1 (0: never warned).
    last_warn: AtomicU64,
    failures: AtomicU64,
    failing: AtomicBool,
}

impl fmt::Debug for SharedLimits {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SharedLimits")
            .field("store", &self.store.name())
            .field("on_failure", &self.on_failure)
            .finish_non_exhaustive()
    }
}

impl SharedLimits {
    /// `store`, failing as `on_failure` says.
    pub fn new(store: Arc<dyn RateLimitStore>, on_failure: OnStoreFailure) -> Self {
        SharedLimits {
            store,
            on_failure,
            started: Instant::now(),
            last_warn: AtomicU64::new(0),
            failures: AtomicU64::new(0),
            failing: AtomicBool::new(false),
        }
    }

    /// The failure mode.
    pub fn on_failure(&self) -> OnStoreFailure {
        self.on_failure
    }

    /// Takes one call of `action` from `client`'s bucket: `Ok` to run it, or the envelope
    /// refusing it (`RATE_LIMITED` with the store's wait, or — failing closed — with
    /// [`STORE_RETRY_AFTER`]).
    pub async fn check(
        &self,
        action: &str,
        client: &str,
        limit: &RateLimit,
    ) -> Result<(), ToolError> {
        self.check_as(action, action, client, limit).await
    }

    /// [`SharedLimits::check`], the bucket keyed by `action` (its registered name, the same in
    /// every exposure) and the refusal naming it `shown` (as clients call it).
    pub(crate) async fn check_as(
        &self,
        action: &str,
        shown: &str,
        client: &str,
        limit: &RateLimit,
    ) -> Result<(), ToolError> {
        match self.store.take(action, client, limit).await {
            Ok(verdict) => {
                if self.failing.swap(false, Ordering::Relaxed) {
                    tracing::warn!(
                        store = self.store.name(),
                        failures = self.failures.load(Ordering::Relaxed),
                        "the rate-limit store answers again; limits are shared again"
                    );
                }
                match verdict {
                    Verdict::Admit => Ok(()),
                    Verdict::Wait(wait) => Err(super::rate_limited(shown, limit, wait)),
                }
            }
            Err(e) => {
                self.failing.store(true, Ordering::Relaxed);
                let failures = self.failures.fetch_add(1, Ordering::Relaxed) + 1;
                self.warn(action, &e, failures);
                match self.on_failure {
                    OnStoreFailure::Open => Ok(()),
                    OnStoreFailure::Closed => Err(unchecked(shown)),
                }
            }
        }
    }

    fn warn(&self, action: &str, e: &StoreError, failures: u64) {
        let now = u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX);
        let last = self.last_warn.load(Ordering::Relaxed);
        let due = last == 0 || now.saturating_sub(last - 1) >= WARN_EVERY.as_millis() as u64;
        if due
            && self
                .last_warn
                .compare_exchange(last, now + 1, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
        {
            let mode = match self.on_failure {
                OnStoreFailure::Open => "admitting calls unchecked (fail open)",
                OnStoreFailure::Closed => "refusing rate-limited calls (fail closed)",
            };
            tracing::warn!(
                store = self.store.name(),
                action,
                error = %e,
                failures,
                "the rate-limit store cannot be reached: {mode}"
            );
        }
    }
}

/// The fail-closed answer.
fn unchecked(action: &str) -> ToolError {
    error(
        ErrorCode::RateLimited,
        format!(
            "{action} is rate limited, and its limit could not be checked just now (the shared limit store did not answer). This call was not run."
        ),
    )
    .recovery("Wait for the time below, then retry the same call.")
    .detail("limitStore", "unreachable")
    .retry_after(STORE_RETRY_AFTER)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_governor_store_keeps_one_bucket_per_action_and_client() {
        let store = GovernorStore::default();
        let limit = RateLimit::per_minute(2).per_client();
        let take = |client: &'static str| store.take("a.b", client, &limit);
        assert_eq!(take("x").await, Ok(Verdict::Admit));
        assert_eq!(take("x").await, Ok(Verdict::Admit));
        assert!(matches!(take("x").await, Ok(Verdict::Wait(w)) if w > Duration::from_secs(1)));
        assert_eq!(take("y").await, Ok(Verdict::Admit), "another client");
        let other = store.take("a.c", "x", &limit).await;
        assert_eq!(other, Ok(Verdict::Admit), "another action");
        let shared = SharedLimits::new(Arc::new(store), OnStoreFailure::Closed);
        let refused = shared.check("a.b", "x", &limit).await;
        assert!(matches!(refused, Err(e) if e.code() == &ErrorCode::RateLimited));
    }
}
