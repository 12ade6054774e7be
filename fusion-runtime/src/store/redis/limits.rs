//! The Redis rate-limit store: one bucket per (action, client) shared by every instance.
//!
//! Each check is one Lua script run in Redis (GCRA, the algorithm `governor` uses in
//! process): it reads the bucket's theoretical arrival time, decides on Redis's own clock
//! (`TIME`, so instances' clocks never disagree), and writes the new time with an expiry —
//! atomically, as Redis runs a script alone. The answer carries the wait, so `retry_after`
//! is what the in-process limiter would say.
//!
//! One multiplexed connection ([`redis::aio::ConnectionManager`]) carries every instance's
//! checks, pipelined, and reconnects by itself. Every check is bounded in time
//! ([`RedisStore::timeout`]); past it, or when Redis cannot be reached, the check fails and the
//! server's [`OnStoreFailure`](crate::guard::OnStoreFailure) decides.

use std::fmt;
use std::time::Duration;

use futures::future::BoxFuture;
use redis::aio::ConnectionManager;
use sha2::{Digest as _, Sha256};

use super::connection::{DEFAULT_REDIS_TIMEOUT, managed_connection};
use crate::store::{RateLimit, RateLimitStore, StoreError, Verdict};

/// GCRA in one step. KEYS[1]: the bucket. ARGV[1]: the emission interval (µs, one call's
/// share of the period); ARGV[2]: the burst. Returns `{1, 0}` to admit, `{0, wait_us}` to
/// refuse. A refused call leaves the bucket as it was, so the wait counts down.
const GCRA: &str = r"
local interval = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or now)
if tat < now then tat = now end
local new_tat = tat + interval
local allow_at = new_tat - interval * burst
if now < allow_at then
  return {0, allow_at - now}
end
redis.call('SET', KEYS[1], string.format('%d', new_tat), 'PX', math.ceil((new_tat - now) / 1000) + 1)
return {1, 0}
";

/// Client keys longer than this are hashed into the Redis key (subjects can be long).
const MAX_KEY_PART: usize = 128;

/// A [`RateLimitStore`] in Redis.
#[derive(Clone)]
pub struct RedisStore {
    connection: ConnectionManager,
    script: redis::Script,
    prefix: String,
    timeout: Duration,
}

impl fmt::Debug for RedisStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisStore")
            .field("prefix", &self.prefix)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl RedisStore {
    /// A store at `url` (`redis://127.0.0.1:6379/0`). Does not connect yet: a server starts
    /// while Redis is down, and its checks fail (as configured) until Redis answers.
    pub fn new(url: &str) -> Result<Self, StoreError> {
        Ok(RedisStore {
            connection: managed_connection(url)?,
            script: redis::Script::new(GCRA),
            prefix: "fusion:rl".into(),
            timeout: DEFAULT_REDIS_TIMEOUT,
        })
    }

    /// The prefix of every key (`fusion:rl`): set one per server when servers share a Redis.
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    /// The bound on one check, connecting included (500 ms by default).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The Redis key of (`action`, `client`)'s bucket.
    pub fn key(&self, action: &str, client: &str) -> String {
        if client.len() <= MAX_KEY_PART {
            format!("{}:{action}:{client}", self.prefix)
        } else {
            let hash = Sha256::digest(client.as_bytes());
            let hex: String = hash.iter().map(|b| format!("{b:02x}")).collect();
            format!("{}:{action}:h:{hex}", self.prefix)
        }
    }

    /// Takes one call from the bucket of (`action`, `client`).
    pub async fn check(
        &self,
        action: &str,
        client: &str,
        limit: &RateLimit,
    ) -> Result<Verdict, StoreError> {
        let calls = limit.calls.max(1);
        let interval_us = u64::try_from((limit.per / calls).as_micros())
            .unwrap_or(u64::MAX)
            .max(1);
        let burst = limit.burst.max(1);
        let mut connection = self.connection.clone();
        let mut invocation = self.script.key(self.key(action, client));
        invocation.arg(interval_us).arg(burst);
        let run = invocation.invoke_async::<(i64, i64)>(&mut connection);
        match tokio::time::timeout(self.timeout, run).await {
            Err(_) => Err(StoreError(format!(
                "no answer from Redis within {} ms",
                self.timeout.as_millis()
            ))),
            Ok(Err(e)) => Err(StoreError(e.to_string())),
            Ok(Ok((1, _))) => Ok(Verdict::Admit),
            Ok(Ok((_, wait_us))) => Ok(Verdict::Wait(Duration::from_micros(
                u64::try_from(wait_us).unwrap_or(0).max(1),
            ))),
        }
    }
}

impl RateLimitStore for RedisStore {
    fn take<'a>(
        &'a self,
        action: &'a str,
        client: &'a str,
        limit: &'a RateLimit,
    ) -> BoxFuture<'a, Result<Verdict, StoreError>> {
        Box::pin(async move {
            let verdict = self.check(action, client, limit).await;
            if verdict.is_err() {
                crate::metrics::store_error("rate_limit");
            }
            verdict
        })
    }

    fn name(&self) -> &'static str {
        "redis"
    }
}
