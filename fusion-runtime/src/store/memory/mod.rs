//! The in-process backend, each server's default: one-time ids, rate-limit buckets and tasks
//! in this process's memory, bounded. Change notifications need no store here (without a bus
//! they reach this process's listeners only).

mod once;
mod rate_limit;
mod tasks;

pub(crate) use rate_limit::Buckets;
pub use {
    once::{DEFAULT_ONCE_CAPACITY, MemoryOnce},
    rate_limit::{GovernorStore, TokioClock},
    tasks::MemoryTasks,
};
