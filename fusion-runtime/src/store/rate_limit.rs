//! Where rate-limit buckets live: in this process (the default, `governor`), or in a store
//! that several instances share ([`RedisStore`](super::RedisStore)). What a call gets when
//! the store cannot answer, and the `RATE_LIMITED` envelope, are the guard's
//! ([`SharedLimits`](crate::guard::SharedLimits)).
//!
//! Only rate limits are shared. Concurrency guards stay per instance: they protect this
//! process's own CPU, memory and connections (load shedding is local by nature), a slot is
//! held for the length of a call — a lease a crashed instance would never give back to a
//! shared store — and the balancer in front already spreads calls across instances.

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

use super::StoreError;

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

/// How many calls a rate limit allows: `calls` per `per`, bursts up to `burst`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RateLimit {
    /// Calls replenished per period (at least 1).
    pub calls: u32,
    /// The period.
    pub per: Duration,
    /// Calls allowed at once from a full bucket (at least 1; defaults to `calls`).
    pub burst: u32,
    /// One bucket per client (MCP session) instead of one bucket shared by every caller.
    pub per_client: bool,
}

impl RateLimit {
    /// `calls` per `per`, with a burst of `calls`.
    pub fn new(calls: u32, per: Duration) -> Self {
        RateLimit {
            calls,
            per,
            burst: calls,
            per_client: false,
        }
    }

    /// `calls` per second.
    pub fn per_second(calls: u32) -> Self {
        RateLimit::new(calls, Duration::from_secs(1))
    }

    /// `calls` per minute.
    pub fn per_minute(calls: u32) -> Self {
        RateLimit::new(calls, Duration::from_secs(60))
    }

    /// Sets the burst size.
    pub fn burst(mut self, burst: u32) -> Self {
        self.burst = burst;
        self
    }

    /// One bucket per client (per MCP session) instead of one shared bucket: see
    /// [`ClientKey`](crate::context::ClientKey) for how a client is told apart.
    pub fn per_client(mut self) -> Self {
        self.per_client = true;
        self
    }

    fn quota(&self) -> Quota {
        let calls = self.calls.max(1);
        let replenish = (self.per / calls).max(Duration::from_nanos(1));
        let burst = NonZeroU32::new(self.burst.max(1)).unwrap_or(NonZeroU32::MIN);
        Quota::with_period(replenish)
            .unwrap_or_else(|| Quota::per_second(NonZeroU32::MIN))
            .allow_burst(burst)
    }
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
                limit.quota(),
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

/// A store's answer for one call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The call took one token from the bucket.
    Admit,
    /// The bucket is empty: the call may be retried after this long.
    Wait(Duration),
}

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
