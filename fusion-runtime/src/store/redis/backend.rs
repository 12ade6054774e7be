//! One Redis URL, every store: what `serve --redis-url` attaches, and what a server built in
//! code attaches with [`ServerBuilder::stores`](crate::ServerBuilder::stores).

use std::time::Duration;

use super::bus::RedisChangeBus;
use super::limits::RedisStore;
use super::once::RedisOnce;
use super::tasks::RedisTasks;
use crate::store::{StoreError, Stores};

/// The Redis backend's settings, shared by its four stores: the URL, each check's bound, the
/// key prefix (instances of one deployment share it; two deployments on one Redis do not),
/// and the lease of a running task.
///
/// ```no_run
/// use fusion_runtime::{Server, guard::OnStoreFailure, store::Redis};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let stores = Redis::new("redis://127.0.0.1:6379/0").prefix("billing").stores()?;
/// let server = Server::builder().name("billing").stores(stores, OnStoreFailure::Closed);
/// # let _ = server; Ok(()) }
/// ```
#[derive(Clone, Debug)]
pub struct Redis {
    url: String,
    timeout: Option<Duration>,
    prefix: Option<String>,
    task_lease: Option<Duration>,
}

impl Redis {
    /// The backend on the Redis at `url` (`redis://host:port/db`), each store with its own
    /// defaults until set below. Nothing connects until a store is first used.
    pub fn new(url: impl Into<String>) -> Self {
        Redis {
            url: url.into(),
            timeout: None,
            prefix: None,
            task_lease: None,
        }
    }

    /// Bounds each store's checks, connecting included (default
    /// [`DEFAULT_REDIS_TIMEOUT`](super::DEFAULT_REDIS_TIMEOUT)).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Starts every key (and the bus's channel) with `prefix`.
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = Some(prefix.into());
        self
    }

    /// How long a running task's instance holds it between renewals (default
    /// [`DEFAULT_TASK_LEASE`](super::DEFAULT_TASK_LEASE)).
    pub fn task_lease(mut self, lease: Duration) -> Self {
        self.task_lease = Some(lease);
        self
    }

    /// The four stores: rate limits ([`RedisStore`]), one-time ids ([`RedisOnce`]), tasks
    /// ([`RedisTasks`]) and change notifications ([`RedisChangeBus`]). `Err` when the URL is
    /// not one Redis reads.
    pub fn stores(&self) -> Result<Stores, StoreError> {
        let (timeout, prefix) = (self.timeout, self.prefix.as_deref());
        let mut limits = RedisStore::new(&self.url)?;
        let mut once = RedisOnce::new(&self.url)?;
        let mut tasks = RedisTasks::new(&self.url)?;
        let mut bus = RedisChangeBus::new(&self.url)?;
        if let Some(t) = timeout {
            (limits, once, tasks, bus) = (
                limits.timeout(t),
                once.timeout(t),
                tasks.timeout(t),
                bus.timeout(t),
            );
        }
        if let Some(p) = prefix {
            (limits, once, tasks, bus) = (
                limits.prefix(p),
                once.prefix(p),
                tasks.prefix(p),
                bus.prefix(p),
            );
        }
        if let Some(lease) = self.task_lease {
            tasks = tasks.lease(lease);
        }
        Ok(Stores::new()
            .rate_limits(limits)
            .once(once)
            .tasks(tasks)
            .change_bus(bus))
    }
}
