//! Change notifications from application code: a [`Notifier`] says that a resource changed
//! or that a list (tools, prompts, resources) did, and every connected client that asked
//! hears of it — a 2025 session through `resources/subscribe` and the list-changed
//! notifications, a 2026-07-28 client through `subscriptions/listen`.
//!
//! Behind it is one `tokio::sync::broadcast` channel of bounded capacity. A listener that
//! falls more than that many changes behind loses the oldest ones and is told so
//! ([`Received::Lagged`]): it sends the list-changed notifications it may instead, so the
//! client reads the lists again. Memory never grows with a slow client.
//!
//! The number of listeners a client can open (`subscriptions/listen` streams) is bounded
//! per client and overall ([`ListenLimits`]).
//!
//! Several instances behind a load balancer share their changes through a change bus
//! ([`ChangeBus`](crate::store::ChangeBus), e.g. Redis pub/sub): each change is delivered here at once and
//! also handed, without waiting, to a bounded queue the bus publishes from; what other
//! instances publish is delivered here as if sent here. Without a bus nothing leaves the
//! process.

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError, Weak};

use tokio::sync::{broadcast, mpsc};

use super::ClientKey;
use crate::store::Change;

/// How many changes a listener may fall behind before it loses the oldest ones.
pub const DEFAULT_CHANGE_CAPACITY: usize = 256;

/// At most this many `subscriptions/listen` streams open per client, by default.
pub const DEFAULT_MAX_LISTENS_PER_CLIENT: usize = 16;

/// At most this many `subscriptions/listen` streams open, all clients together, by default.
pub const DEFAULT_MAX_LISTENS: usize = 4096;

/// Bounds on open `subscriptions/listen` streams (see
/// [`ServerBuilder::listen_limits`](crate::server::ServerBuilder::listen_limits)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ListenLimits {
    /// Per client ([`ClientKey`]).
    pub per_client: usize,
    /// All clients together.
    pub total: usize,
}

impl Default for ListenLimits {
    fn default() -> Self {
        ListenLimits {
            per_client: DEFAULT_MAX_LISTENS_PER_CLIENT,
            total: DEFAULT_MAX_LISTENS,
        }
    }
}

/// Why a listen was refused: which bound it met.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ListenRefused {
    /// The client holds its maximum of open listens.
    ClientFull(usize),
    /// The server holds its maximum of open listens.
    ServerFull(usize),
}

impl fmt::Display for ListenRefused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ListenRefused::ClientFull(n) => write!(
                f,
                "This client already has {n} subscriptions/listen streams open (the limit): cancel one before opening another"
            ),
            ListenRefused::ServerFull(n) => write!(
                f,
                "The server already has {n} subscriptions/listen streams open (the limit): try again later"
            ),
        }
    }
}

#[derive(Default)]
struct Slots {
    per_client: HashMap<ClientKey, usize>,
    total: usize,
}

struct Inner {
    sender: broadcast::Sender<Change>,
    capacity: usize,
    limits: ListenLimits,
    slots: Mutex<Slots>,
    /// The change bus's queue, once one is attached.
    outbound: OnceLock<mpsc::Sender<Change>>,
    /// Changes the bus's full queue could not take.
    unpublished: AtomicU64,
}

/// Tells connected clients what changed: a cheap handle to clone and keep anywhere (a
/// background task, a file watcher). Get it from [`Server::notifier`](crate::Server::notifier)
/// or, in a handler, [`Context::notifier`](crate::Context::notifier).
///
/// ```text
/// store.update(id, ...);
/// cx.notifier().resource_updated(format!("billing://invoices/{id}"));
/// ```
///
/// Each method returns how many listeners (2025 sessions and 2026-07-28
/// `subscriptions/listen` streams) received the change; each one passes it on only when
/// its client asked for it. Nobody listening is not an error.
#[derive(Clone)]
pub struct Notifier {
    inner: Arc<Inner>,
}

impl Default for Notifier {
    fn default() -> Self {
        Notifier::new(DEFAULT_CHANGE_CAPACITY, ListenLimits::default())
    }
}

impl fmt::Debug for Notifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Notifier")
            .field("capacity", &self.inner.capacity)
            .field("listeners", &self.inner.sender.receiver_count())
            .field("limits", &self.inner.limits)
            .finish()
    }
}

impl Notifier {
    /// A notifier whose listeners may fall `capacity` changes behind (at least 1), with
    /// these bounds on open listens.
    pub fn new(capacity: usize, limits: ListenLimits) -> Self {
        let capacity = capacity.max(1);
        let (sender, _) = broadcast::channel(capacity);
        Notifier {
            inner: Arc::new(Inner {
                sender,
                capacity,
                limits,
                slots: Mutex::new(Slots::default()),
                outbound: OnceLock::new(),
                unpublished: AtomicU64::new(0),
            }),
        }
    }

    /// Sends `change` to every listener; returns how many there are (here: the listeners of
    /// other instances are not counted). With a change bus attached, the change is also
    /// queued for the other instances, never waiting: a full queue drops it and counts it
    /// ([`unpublished`](Notifier::unpublished)).
    pub fn send(&self, change: Change) -> usize {
        if let Some(queue) = self.inner.outbound.get()
            && let Err(mpsc::error::TrySendError::Full(_)) = queue.try_send(change.clone())
        {
            self.inner.unpublished.fetch_add(1, Ordering::Relaxed);
        }
        self.deliver(change)
    }

    /// Sends `change` to this instance's listeners only: what another instance published.
    pub(crate) fn deliver(&self, change: Change) -> usize {
        self.inner.sender.send(change).unwrap_or(0)
    }

    /// Hands every change sent from now on to `queue` as well (the change bus's);
    /// `Err` with `queue` when one is already set.
    pub(crate) fn set_outbound(
        &self,
        queue: mpsc::Sender<Change>,
    ) -> Result<(), mpsc::Sender<Change>> {
        self.inner.outbound.set(queue)
    }

    /// Whether a change bus is attached.
    pub fn has_bus(&self) -> bool {
        self.inner.outbound.get().is_some()
    }

    /// How many changes were not handed to the change bus because its queue was full (they
    /// reached this instance's listeners, not the other instances').
    pub fn unpublished(&self) -> u64 {
        self.inner.unpublished.load(Ordering::Relaxed)
    }

    /// A handle that does not keep the notifier alive (held by the change bus's tasks, which
    /// end when the server is gone).
    pub(crate) fn downgrade(&self) -> WeakNotifier {
        WeakNotifier(Arc::downgrade(&self.inner))
    }

    /// The resource at `uri` changed: `notifications/resources/updated` to every client
    /// that subscribed to that exact URI.
    pub fn resource_updated(&self, uri: impl Into<String>) -> usize {
        self.send(Change::ResourceUpdated(uri.into().into()))
    }

    /// Resources were added or removed: `notifications/resources/list_changed`.
    pub fn resources_list_changed(&self) -> usize {
        self.send(Change::ResourcesListChanged)
    }

    /// Tools were added, removed or changed: `notifications/tools/list_changed`.
    pub fn tools_list_changed(&self) -> usize {
        self.send(Change::ToolsListChanged)
    }

    /// Prompts were added, removed or changed: `notifications/prompts/list_changed`.
    pub fn prompts_list_changed(&self) -> usize {
        self.send(Change::PromptsListChanged)
    }

    /// How many changes a listener may fall behind.
    pub fn capacity(&self) -> usize {
        self.inner.capacity
    }

    /// The bounds on open listens.
    pub fn listen_limits(&self) -> ListenLimits {
        self.inner.limits
    }

    /// How many listeners there are now.
    pub fn listeners(&self) -> usize {
        self.inner.sender.receiver_count()
    }

    /// A listener for a session (bounded by the transport's own session limits).
    pub fn watch(&self) -> Changes {
        Changes {
            receiver: self.inner.sender.subscribe(),
            _slot: None,
        }
    }

    /// A listener counted against the listen bounds for `client`, held until it is dropped;
    /// `Err` when `client` or the server holds its maximum.
    pub fn listen(&self, client: &ClientKey) -> Result<Changes, ListenRefused> {
        self.count(client, self.watch())
    }

    /// `changes` (a [`watch`](Notifier::watch) taken earlier, so that nothing sent since is
    /// missed), now counted against the listen bounds for `client`.
    pub fn count(&self, client: &ClientKey, changes: Changes) -> Result<Changes, ListenRefused> {
        let limits = self.inner.limits;
        {
            let mut slots = self.lock();
            if slots.total >= limits.total {
                return Err(ListenRefused::ServerFull(limits.total));
            }
            let held = slots.per_client.get(client).copied().unwrap_or(0);
            if held >= limits.per_client {
                return Err(ListenRefused::ClientFull(limits.per_client));
            }
            slots.total += 1;
            *slots.per_client.entry(client.clone()).or_insert(0) += 1;
        }
        Ok(Changes {
            receiver: changes.receiver,
            _slot: Some(Slot {
                inner: self.inner.clone(),
                client: client.clone(),
            }),
        })
    }

    /// Open listens now: of `client`, and overall.
    pub fn open_listens(&self, client: &ClientKey) -> (usize, usize) {
        let slots = self.lock();
        (
            slots.per_client.get(client).copied().unwrap_or(0),
            slots.total,
        )
    }

    /// Open listens now, of every client.
    #[cfg(feature = "server-http")]
    pub(crate) fn listening(&self) -> usize {
        self.lock().total
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Slots> {
        lock(&self.inner)
    }
}

/// A [`Notifier`] that may be gone.
#[derive(Clone)]
pub(crate) struct WeakNotifier(Weak<Inner>);

impl WeakNotifier {
    /// The notifier, while its server is alive.
    pub(crate) fn upgrade(&self) -> Option<Notifier> {
        self.0.upgrade().map(|inner| Notifier { inner })
    }
}

fn lock(inner: &Inner) -> std::sync::MutexGuard<'_, Slots> {
    inner.slots.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A place among the open listens, given back when dropped.
struct Slot {
    inner: Arc<Inner>,
    client: ClientKey,
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut slots = lock(&self.inner);
        slots.total = slots.total.saturating_sub(1);
        if let Some(n) = slots.per_client.get_mut(&self.client) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                slots.per_client.remove(&self.client);
            }
        }
    }
}

/// What a listener receives next.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Received {
    /// The next change.
    Change(Change),
    /// The listener fell behind and this many changes were lost: tell the client to read
    /// again what it may have missed.
    Lagged(u64),
}

/// One listener's end of the [`Notifier`].
pub struct Changes {
    receiver: broadcast::Receiver<Change>,
    _slot: Option<Slot>,
}

impl Changes {
    /// The next change, or `None` when the notifier is gone (the server was dropped).
    pub async fn recv(&mut self) -> Option<Received> {
        match self.receiver.recv().await {
            Ok(change) => Some(Received::Change(change)),
            Err(broadcast::error::RecvError::Lagged(n)) => Some(Received::Lagged(n)),
            Err(broadcast::error::RecvError::Closed) => None,
        }
    }
}

impl fmt::Debug for Changes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Changes")
            .field("pending", &self.receiver.len())
            .field("counted", &self._slot.is_some())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn every_listener_gets_every_change_in_order() {
        let notifier = Notifier::default();
        assert_eq!(notifier.tools_list_changed(), 0, "nobody listens yet");
        let mut a = notifier.watch();
        let mut b = notifier.watch();
        assert_eq!(notifier.resource_updated("x://1"), 2);
        assert_eq!(notifier.prompts_list_changed(), 2);
        for listener in [&mut a, &mut b] {
            assert_eq!(
                listener.recv().await,
                Some(Received::Change(Change::ResourceUpdated("x://1".into())))
            );
            assert_eq!(
                listener.recv().await,
                Some(Received::Change(Change::PromptsListChanged))
            );
        }
    }

    #[tokio::test]
    async fn a_listener_past_the_capacity_is_told_it_lagged_and_memory_stays_bounded() {
        let notifier = Notifier::new(4, ListenLimits::default());
        let mut slow = notifier.watch();
        for i in 0..10 {
            notifier.resource_updated(format!("x://{i}"));
        }
        assert_eq!(slow.recv().await, Some(Received::Lagged(6)));
        // Then the 4 newest, which the channel kept.
        assert_eq!(
            slow.recv().await,
            Some(Received::Change(Change::ResourceUpdated("x://6".into())))
        );
    }

    #[test]
    fn listens_are_bounded_per_client_and_overall_and_given_back_when_dropped() {
        let notifier = Notifier::new(
            8,
            ListenLimits {
                per_client: 2,
                total: 3,
            },
        );
        let (a, b, c) = (
            ClientKey::new("a"),
            ClientKey::new("b"),
            ClientKey::new("c"),
        );
        let a1 = notifier.listen(&a);
        let a2 = notifier.listen(&a);
        assert!(a1.is_ok() && a2.is_ok());
        assert_eq!(
            notifier.listen(&a).err(),
            Some(ListenRefused::ClientFull(2))
        );
        let b1 = notifier.listen(&b);
        assert!(b1.is_ok());
        assert_eq!(
            notifier.listen(&c).err(),
            Some(ListenRefused::ServerFull(3))
        );
        assert_eq!(notifier.open_listens(&a), (2, 3));
        drop(a1);
        assert!(
            notifier.listen(&c).is_ok(),
            "a closed listen gives its place back"
        );
        drop((a2, b1));
        assert_eq!(notifier.open_listens(&a), (0, 0));
        assert!(notifier.lock().per_client.is_empty(), "no empty entry left");
        // Sessions' listeners are not counted.
        let _w = notifier.watch();
        assert_eq!(notifier.open_listens(&a), (0, 0));
    }
}
