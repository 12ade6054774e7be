//! A shared rate-limit store as the server uses it: what a call gets when the store cannot
//! decide ([`OnStoreFailure`]), and the warnings and counts of a failing store.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::envelope::{ErrorCode, ToolError, error};
use crate::store::{RateLimit, RateLimitStore, StoreError, Verdict};

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
    use crate::store::GovernorStore;

    #[tokio::test]
    async fn a_shared_governor_store_refuses_past_the_limit_with_rate_limited() {
        let limit = RateLimit::per_minute(2).per_client();
        let shared = SharedLimits::new(Arc::new(GovernorStore::default()), OnStoreFailure::Closed);
        assert_eq!(shared.check("a.b", "x", &limit).await, Ok(()));
        assert_eq!(shared.check("a.b", "x", &limit).await, Ok(()));
        let refused = shared.check("a.b", "x", &limit).await;
        assert!(matches!(refused, Err(e) if e.code() == &ErrorCode::RateLimited));
    }
}
