//! What outlives a request and must agree across instances, each behind a trait with an
//! in-process default and a Redis implementation (feature `redis`) that several instances
//! share:
//!
//! - one-time ids ([`OnceStore`]): a 2026-07-28 confirmation (`requestState`) answered once
//!   is never run again, and a delegation token's `jti` is accepted once — on this instance
//!   and, with [`RedisOnce`], on every instance that shares the Redis.
//! - change notifications ([`ChangeBus`]): a `resources/updated` or list change sent on one
//!   instance reaches the listeners of every instance — with [`RedisChangeBus`], through
//!   Redis pub/sub; without a bus (the default), the listeners of its own process only.
//!
//! - tasks ([`TaskStore`]): what a task-augmented `tools/call` leaves for `tasks/get` to read
//!   (status, status message, result, expiry, owner), and how `tasks/cancel` reaches the
//!   instance running it; in this process's memory by default ([`MemoryTasks`]).
//!
//! - rate-limit buckets ([`RateLimitStore`]): one token bucket per action and client, in this
//!   process ([`GovernorStore`]) or, with [`RedisStore`], in Redis for every instance; the
//!   guard ([`SharedLimits`](crate::guard::SharedLimits)) decides what a call gets from them.
//!
//! By backend: the traits and what every backend shares are this folder's files; each backend
//! is one folder — `memory/` (the default) and `redis/` (feature `redis`, and [`Redis`], all
//! four from one URL) — and a backend's stores attach to a server as one [`Stores`] bundle.
//!
//! Every Redis store opens the same kind of connection, bounded by [`DEFAULT_REDIS_TIMEOUT`].
//! Every entry is keyed by a digest of what it guards (never the raw id a client sent) and
//! expires with the thing it guards: nothing here grows without a bound.

mod bundle;
mod bus;
mod error;
mod memory;
mod once;
mod rate_limit;
#[cfg(feature = "redis")]
mod redis;
pub(crate) mod tasks;

pub use bus::{Change, ChangeBus, PUBLISH_QUEUE, Remote};
pub use error::StoreError;
pub(crate) use memory::Buckets;
pub use memory::{DEFAULT_ONCE_CAPACITY, GovernorStore, MemoryOnce, MemoryTasks, TokioClock};
pub use once::OnceStore;
pub use rate_limit::{RateLimit, RateLimitStore, Verdict};
// The health check's Redis ping opens the same connection.
pub use bundle::Stores;
#[cfg(all(feature = "redis", feature = "server-http"))]
pub(crate) use redis::managed_connection;
#[cfg(feature = "redis")]
#[cfg_attr(docsrs, doc(cfg(feature = "redis")))]
pub use redis::{
    DEFAULT_REDIS_TIMEOUT, DEFAULT_TASK_LEASE, MAX_MESSAGE_BYTES, MAX_URI_BYTES, Redis,
    RedisChangeBus, RedisOnce, RedisStore, RedisTasks,
};
pub use tasks::{
    DEFAULT_TASK_HOLD, DEFAULT_TASK_MAX_TTL, DEFAULT_TASK_RESULT_BYTES, DEFAULT_TASKS_OVERALL,
    DEFAULT_TASKS_PER_OWNER, MAX_TASKS_PAGE, MIN_TASK_TTL, Running, TaskLimits, TaskOutcome,
    TaskPage, TaskPosition, TaskRecord, TaskRefused, TaskStatus, TaskStore, TaskWatch, share_of,
};
