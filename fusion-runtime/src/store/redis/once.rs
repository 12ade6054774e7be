//! The Redis [`OnceStore`]: `SET key 1 NX PX ttl` — Redis decides atomically which of
//! several instances presenting one id is first, and forgets the id when its lifetime ends.

use std::fmt;
use std::time::Duration;

use futures::future::BoxFuture;
use redis::aio::ConnectionManager;

use super::connection::DEFAULT_REDIS_TIMEOUT;
use crate::store::StoreError;
use crate::store::once::{OnceStore, digest};

/// One-time ids in Redis, shared by every instance pointed at it.
///
/// Each check is one `SET NX PX` on one multiplexed connection that reconnects by itself,
/// bounded by [`RedisOnce::timeout`]: past it, or while Redis is down, the check fails and
/// the caller refuses (fail closed) — a confirmation is never run unchecked.
#[derive(Clone)]
pub struct RedisOnce {
    connection: ConnectionManager,
    prefix: String,
    timeout: Duration,
}

impl fmt::Debug for RedisOnce {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisOnce")
            .field("prefix", &self.prefix)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl RedisOnce {
    /// A store at `url` (`redis://127.0.0.1:6379/0`). Does not connect yet: a server starts
    /// while Redis is down, and its one-time checks fail (closed) until Redis answers.
    pub fn new(url: &str) -> Result<Self, StoreError> {
        Ok(RedisOnce {
            connection: super::connection::managed_connection(url)?,
            prefix: "fusion".into(),
            timeout: DEFAULT_REDIS_TIMEOUT,
        })
    }

    /// The prefix of every key (`fusion`, so keys are `fusion:once:<kind>:<digest>`): one
    /// per server when servers share a Redis.
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    /// The bound on one check, connecting included (500 ms by default).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The Redis key of `id` of `kind`.
    pub fn key(&self, kind: &str, id: &[u8]) -> String {
        let hex: String = digest(kind, id)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        format!("{}:once:{kind}:{hex}", self.prefix)
    }

    /// `SET NX PX`, tried a second time when the first fails on the connection (a Redis that
    /// restarted leaves a broken one, which the manager replaces). A retry whose first try
    /// did reach Redis answers "used": the call is asked again, never run twice.
    async fn set_nx(&self, kind: &str, id: &[u8], ttl: Duration) -> Result<bool, StoreError> {
        let ms = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX).max(1);
        let mut cmd = redis::cmd("SET");
        cmd.arg(self.key(kind, id))
            .arg(1)
            .arg("NX")
            .arg("PX")
            .arg(ms);
        let attempts = async {
            let mut connection = self.connection.clone();
            match cmd.query_async::<Option<String>>(&mut connection).await {
                Err(e) if e.is_io_error() || e.is_connection_dropped() => {
                    let mut connection = self.connection.clone();
                    cmd.query_async::<Option<String>>(&mut connection).await
                }
                other => other,
            }
        };
        match tokio::time::timeout(self.timeout, attempts).await {
            Err(_) => Err(StoreError(format!(
                "no answer from Redis within {} ms",
                self.timeout.as_millis()
            ))),
            Ok(Err(e)) => Err(StoreError(e.to_string())),
            Ok(Ok(set)) => Ok(set.is_some()),
        }
    }
}

impl OnceStore for RedisOnce {
    fn first_use<'a>(
        &'a self,
        kind: &'a str,
        id: &'a [u8],
        ttl: Duration,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(async move {
            let first = self.set_nx(kind, id, ttl).await;
            if first.is_err() {
                crate::metrics::store_error("once");
            }
            first
        })
    }

    fn name(&self) -> &'static str {
        "redis"
    }
}
