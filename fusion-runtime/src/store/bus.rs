//! The change bus: the changes a server tells its clients about, fanned out to the other
//! instances. What a change is ([`Change`]) lives here, below the
//! [`Notifier`](crate::Notifier) that sends it, so that a bus needs nothing of the context.

use std::fmt;
use std::sync::Arc;

use futures::future::BoxFuture;
use futures::stream::BoxStream;

use super::StoreError;

/// How many changes may wait to be published before new ones are dropped (for the other
/// instances only).
pub const PUBLISH_QUEUE: usize = 1024;

/// One change the server tells its clients about.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Change {
    /// The resource at this URI changed: `notifications/resources/updated`, to the clients
    /// that subscribed to it.
    ResourceUpdated(Arc<str>),
    /// `notifications/resources/list_changed`.
    ResourcesListChanged,
    /// `notifications/tools/list_changed`.
    ToolsListChanged,
    /// `notifications/prompts/list_changed`.
    PromptsListChanged,
}

/// What a bus yields.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Remote {
    /// Another instance sent this change.
    Change(Change),
    /// The bus was cut off and is back: what the other instances sent meanwhile is lost.
    /// The notifier tells its listeners that every list changed, so that clients read their
    /// lists again.
    Resumed,
}

/// Fans changes out to the other instances of a server (e.g.
/// [`RedisChangeBus`](super::RedisChangeBus)). An implementation skips its own changes when
/// they come back: [`subscribe`](ChangeBus::subscribe) yields only the other instances'.
///
/// Joined to a [`Notifier`](crate::Notifier) ([`Notifier::attach_bus`](crate::Notifier::attach_bus),
/// or [`ServerBuilder::change_bus`](crate::server::ServerBuilder::change_bus)), a change sent
/// on this instance reaches its own listeners at once, as without a bus, and goes into a
/// bounded queue ([`PUBLISH_QUEUE`]) that one task publishes from: the notifier's methods
/// never wait for the bus, and a full queue drops the change for the other instances and
/// counts it ([`Notifier::unpublished`](crate::Notifier::unpublished)). Another task
/// delivers what the bus yields to this instance's listeners only, so each change reaches
/// every listener of every instance once. Without a bus (the default) none of this runs: a
/// change stays in its process.
///
/// While the bus is cut off, changes still reach this instance's listeners; those sent on
/// this instance do not reach the others, and theirs do not reach this one (pub/sub keeps
/// nothing). When it is back ([`Remote::Resumed`]), this instance's listeners are told that
/// the tools, prompts and resources lists changed, so their clients read them again; a
/// `notifications/resources/updated` missed meanwhile is not sent again — a client that must
/// not miss one reads its resources again after a list change.
pub trait ChangeBus: Send + Sync + 'static {
    /// Publishes `change` to the other instances.
    fn publish<'a>(&'a self, change: &'a Change) -> BoxFuture<'a, Result<(), StoreError>>;

    /// What the other instances publish from now on, for as long as the stream is held:
    /// the implementation reconnects by itself and says when it did ([`Remote::Resumed`]).
    fn subscribe(&self) -> BoxStream<'static, Remote>;

    /// A short name for logs (`redis`).
    fn name(&self) -> &'static str;
}

impl fmt::Debug for dyn ChangeBus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ChangeBus({})", self.name())
    }
}
