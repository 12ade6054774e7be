//! The Redis backend (feature `redis`): every store several instances share, on one Redis —
//! one-time ids, rate-limit buckets, tasks and change notifications — and [`Redis`], which
//! opens all four from one URL as a [`Stores`](crate::store::Stores) bundle.

mod backend;
mod bus;
mod connection;
mod limits;
mod once;
mod task_scripts;
mod tasks;

// The health check's Redis ping opens the same connection.
#[cfg(feature = "server-http")]
pub(crate) use connection::managed_connection;
pub use {
    backend::Redis,
    bus::{MAX_MESSAGE_BYTES, MAX_URI_BYTES, RedisChangeBus},
    connection::DEFAULT_REDIS_TIMEOUT,
    limits::RedisStore,
    once::RedisOnce,
    tasks::{DEFAULT_TASK_LEASE, RedisTasks},
};
