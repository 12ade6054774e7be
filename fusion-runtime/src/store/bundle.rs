//! A backend's stores as one bundle: what [`ServerBuilder::stores`](crate::ServerBuilder::stores)
//! and [`Server::attach_stores`](crate::Server::attach_stores) take, so a backend is attached
//! in one call, not four.

use std::fmt;
use std::sync::Arc;

use super::bus::ChangeBus;
use super::once::OnceStore;
use super::rate_limit::RateLimitStore;
use super::tasks::TaskStore;

/// The stores of one backend, each optional: what is left out stays the server's own (in
/// this process's memory, and change notifications within it). The Redis backend's:
/// [`Redis::stores`](crate::store::Redis::stores) (feature `redis`).
#[derive(Clone, Default)]
pub struct Stores {
    pub(crate) rate_limits: Option<Arc<dyn RateLimitStore>>,
    pub(crate) once: Option<Arc<dyn OnceStore>>,
    pub(crate) tasks: Option<Arc<dyn TaskStore>>,
    pub(crate) change_bus: Option<Arc<dyn ChangeBus>>,
}

impl Stores {
    /// No store: a server attached to it keeps its own.
    pub fn new() -> Self {
        Stores::default()
    }

    /// Rate-limit buckets (see [`ServerBuilder::rate_limit_store`](crate::ServerBuilder::rate_limit_store)).
    pub fn rate_limits(mut self, store: impl RateLimitStore) -> Self {
        self.rate_limits = Some(Arc::new(store));
        self
    }

    /// One-time ids (see [`ServerBuilder::once_store`](crate::ServerBuilder::once_store)).
    pub fn once(mut self, store: impl OnceStore) -> Self {
        self.once = Some(Arc::new(store));
        self
    }

    /// MCP tasks (see [`ServerBuilder::task_store`](crate::ServerBuilder::task_store)).
    pub fn tasks(mut self, store: impl TaskStore) -> Self {
        self.tasks = Some(Arc::new(store));
        self
    }

    /// Change notifications across instances (see
    /// [`ServerBuilder::change_bus`](crate::ServerBuilder::change_bus)).
    pub fn change_bus(mut self, bus: impl ChangeBus) -> Self {
        self.change_bus = Some(Arc::new(bus));
        self
    }
}

impl fmt::Debug for Stores {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Stores")
            .field("rate_limits", &self.rate_limits.as_ref().map(|s| s.name()))
            .field("once", &self.once.as_ref().map(|s| s.name()))
            .field("tasks", &self.tasks.as_ref().map(|s| s.name()))
            .field("change_bus", &self.change_bus.is_some())
            .finish()
    }
}
