//! The in-process rate-limit store: `governor`'s keyed token buckets on tokio's clock (so a
//! paused test clock holds them too), one set per action.

use std::fmt;
use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use governor::clock::Clock;
use governor::middleware::NoOpMiddleware;
use governor::nanos::Nanos;
use governor::state::keyed::DefaultKeyedStateStore;
use governor::{Quota, RateLimiter};

use crate::store::{RateLimit, RateLimitStore, StoreError, Verdict};

/// A [`governor`] clock on tokio's time, so rate limits follow a paused test clock.
#[derive(Clone, Debug)]
pub struct TokioClock {
    origin: tokio::time::Instant,
}

impl Default for TokioClock {
    fn default() -> Self {
        TokioClock {
            origin: tokio::time::Instant::now(),
        }
    }
}

impl Clock for TokioClock {
    type Instant = Nanos;

    fn now(&self) -> Nanos {
        Nanos::from(self.origin.elapsed())
    }
}

/// A rate limit as a `governor` quota.
fn quota(limit: &RateLimit) -> Quota {
    let calls = limit.calls.max(1);
    let replenish = (limit.per / calls).max(Duration::from_nanos(1));
    let burst = NonZeroU32::new(limit.burst.max(1)).unwrap_or(NonZeroU32::MIN);
    Quota::with_period(replenish)
        .unwrap_or_else(|| Quota::per_second(NonZeroU32::MIN))
        .allow_burst(burst)
}

type Limiter =
    RateLimiter<String, DefaultKeyedStateStore<String>, TokioClock, NoOpMiddleware<Nanos>>;

/// Keyed token buckets (GCRA, from `governor`) on tokio's clock: the in-process core of a
/// rate limit, which [`GovernorStore`] keeps per action and the guard's
/// [`RateLimiterGuard`](crate::guard::RateLimiterGuard) wraps.
#[derive(Debug)]
pub(crate) struct Buckets {
    limit: RateLimit,
    limiter: Limiter,
    clock: TokioClock,
}

impl Buckets {
    pub(crate) fn new(limit: RateLimit) -> Self {
        let clock = TokioClock::default();
        Buckets {
            limit,
            limiter: RateLimiter::new(
                quota(&limit),
                DefaultKeyedStateStore::default(),
                clock.clone(),
            ),
            clock,
        }
    }

    /// Takes one call from `key`'s bucket: `None`, or how long until it may be retried.
    pub(crate) fn wait_for(&self, key: &str) -> Option<Duration> {
        match self.limiter.check_key(&key.to_owned()) {
            Ok(()) => None,
            Err(not_until) => Some(not_until.wait_time_from(self.clock.now())),
        }
    }

    pub(crate) fn limit(&self) -> RateLimit {
        self.limit
    }

    /// Forgets keys whose buckets are full again.
    pub(crate) fn retain_recent(&self) {
        self.limiter.retain_recent();
    }
}

/// The in-process store: one `governor` limiter per action, as the server uses by default.
/// Useful to run code written against [`RateLimitStore`] without a shared store.
#[derive(Default)]
pub struct GovernorStore {
    limiters: std::sync::RwLock<std::collections::HashMap<String, Arc<Buckets>>>,
}

impl fmt::Debug for GovernorStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GovernorStore").finish_non_exhaustive()
    }
}

impl GovernorStore {
    fn limiter(&self, action: &str, limit: &RateLimit) -> Arc<Buckets> {
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
            .or_insert_with(|| Arc::new(Buckets::new(*limit)));
        if entry.limit() != *limit {
            *entry = Arc::new(Buckets::new(*limit));
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
    }
}
