//! Where rate-limit buckets live: in this process (the default, `governor`), or in a store
//! that several instances share ([`RedisStore`](super::RedisStore)). What a call gets when
//! the store cannot answer, and the `RATE_LIMITED` envelope, are the guard's
//! ([`SharedLimits`](crate::guard::SharedLimits)).
//!
//! Only rate limits are shared. Concurrency guards stay per instance: they protect this
//! process's own CPU, memory and connections (load shedding is local by nature), a slot is
//! held for the length of a call — a lease a crashed instance would never give back to a
//! shared store — and the balancer in front already spreads calls across instances.
//!
//! The limit and the trait; the backends are `memory/rate_limit.rs` (`governor`) and
//! `redis/limits.rs`.

use std::time::Duration;

use futures::future::BoxFuture;

use super::StoreError;

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
