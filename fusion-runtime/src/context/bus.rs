//! A [`Notifier`] joined to a [`ChangeBus`]: what is sent here is published for the other
//! instances, what they publish is delivered here (see [`ChangeBus`] for what is lost while
//! the bus is down).

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt as _;
use futures::stream::BoxStream;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::changes::{Notifier, WeakNotifier};
use crate::store::{Change, ChangeBus, PUBLISH_QUEUE, Remote};

/// The bound on one publish, past which the change is given up for the other instances.
const PUBLISH_WITHIN: Duration = Duration::from_secs(2);

impl Notifier {
    /// Joins `bus` to this notifier (see [`ChangeBus`]): from now on its changes are published
    /// and the other instances' delivered here. The two tasks run on the current Tokio runtime,
    /// or on a thread of their own when there is none, and end with the notifier (when the
    /// server is dropped). `Err` with `bus` when the notifier already has one.
    pub fn attach_bus(&self, bus: Arc<dyn ChangeBus>) -> Result<(), Arc<dyn ChangeBus>> {
        let (queue, outgoing) = mpsc::channel(PUBLISH_QUEUE);
        if self.set_outbound(queue).is_err() {
            return Err(bus);
        }
        let run = run(bus, outgoing, self.downgrade());
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn(run);
            }
            Err(_) => {
                let spawned = std::thread::Builder::new()
                    .name("fusion-change-bus".into())
                    .spawn(move || {
                        match tokio::runtime::Builder::new_current_thread()
                            .enable_all()
                            .build()
                        {
                            Ok(runtime) => runtime.block_on(run),
                            Err(e) => tracing::warn!(error = %e, "no runtime for the change bus: changes stay on this instance"),
                        }
                    });
                if let Err(e) = spawned {
                    tracing::warn!(error = %e, "no thread for the change bus: changes stay on this instance");
                }
            }
        }
        Ok(())
    }
}

/// Publishes what the notifier queues and delivers what the bus yields, until the notifier
/// is gone.
async fn run(
    bus: Arc<dyn ChangeBus>,
    mut outgoing: mpsc::Receiver<Change>,
    notifier: WeakNotifier,
) {
    let gone = CancellationToken::new();
    let inbound = tokio::spawn(deliver(bus.subscribe(), notifier, gone.clone()));
    let mut failing = false;
    // `None` once every clone of the notifier (the queue's sender with it) is dropped.
    while let Some(change) = outgoing.recv().await {
        let sent = tokio::time::timeout(PUBLISH_WITHIN, bus.publish(&change)).await;
        match sent {
            Ok(Ok(())) => {
                if failing {
                    tracing::warn!(bus = bus.name(), "change bus: publishing again");
                    failing = false;
                }
            }
            Ok(Err(e)) if !failing => {
                tracing::warn!(bus = bus.name(), error = %e, "change bus: cannot publish; the other instances miss this instance's changes until it can");
                failing = true;
            }
            Err(_) if !failing => {
                tracing::warn!(
                    bus = bus.name(),
                    "change bus: a publish took over {PUBLISH_WITHIN:?}; the other instances miss this instance's changes until it can"
                );
                failing = true;
            }
            Ok(Err(_)) | Err(_) => {}
        }
    }
    gone.cancel();
    let _ = inbound.await;
}

/// Delivers the other instances' changes to this instance's listeners.
async fn deliver(
    mut inbound: BoxStream<'static, Remote>,
    notifier: WeakNotifier,
    gone: CancellationToken,
) {
    loop {
        let remote = tokio::select! {
            () = gone.cancelled() => return,
            remote = inbound.next() => remote,
        };
        let (Some(remote), Some(notifier)) = (remote, notifier.upgrade()) else {
            return;
        };
        match remote {
            Remote::Change(change) => {
                notifier.deliver(change);
            }
            Remote::Resumed => {
                for change in [
                    Change::ToolsListChanged,
                    Change::PromptsListChanged,
                    Change::ResourcesListChanged,
                ] {
                    notifier.deliver(change);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;
    use crate::context::{ListenLimits, Received};
    use crate::store::StoreError;
    use futures::future::BoxFuture;

    /// A bus in memory: records what is published, yields what the test pushes.
    struct Loopback {
        published: Arc<Mutex<Vec<Change>>>,
        inbound: Mutex<Option<mpsc::UnboundedReceiver<Remote>>>,
        hold: Option<Arc<tokio::sync::Notify>>,
    }

    impl ChangeBus for Loopback {
        fn publish<'a>(&'a self, change: &'a Change) -> BoxFuture<'a, Result<(), StoreError>> {
            Box::pin(async move {
                if let Some(hold) = &self.hold {
                    hold.notified().await;
                }
                self.published
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push(change.clone());
                Ok(())
            })
        }

        fn subscribe(&self) -> BoxStream<'static, Remote> {
            let rx = self
                .inbound
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .take();
            match rx {
                Some(rx) => {
                    futures::stream::unfold(
                        rx,
                        |mut rx| async move { rx.recv().await.map(|r| (r, rx)) },
                    )
                    .boxed()
                }
                None => futures::stream::pending().boxed(),
            }
        }

        fn name(&self) -> &'static str {
            "loopback"
        }
    }

    fn loopback(
        hold: Option<Arc<tokio::sync::Notify>>,
    ) -> (
        Arc<Loopback>,
        Arc<Mutex<Vec<Change>>>,
        mpsc::UnboundedSender<Remote>,
    ) {
        let published = Arc::new(Mutex::new(Vec::new()));
        let (tx, rx) = mpsc::unbounded_channel();
        let bus = Arc::new(Loopback {
            published: published.clone(),
            inbound: Mutex::new(Some(rx)),
            hold,
        });
        (bus, published, tx)
    }

    async fn eventually(mut check: impl FnMut() -> bool) {
        for _ in 0..200 {
            if check() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("never happened");
    }

    #[tokio::test]
    async fn local_changes_are_delivered_at_once_and_published_remote_ones_delivered_only() {
        let notifier = Notifier::default();
        let (bus, published, remote) = loopback(None);
        assert!(notifier.attach_bus(bus.clone()).is_ok());
        assert!(notifier.attach_bus(bus).is_err(), "one bus per notifier");
        let mut listener = notifier.watch();
        assert_eq!(notifier.resource_updated("x://1"), 1);
        assert_eq!(
            listener.recv().await,
            Some(Received::Change(Change::ResourceUpdated("x://1".into())))
        );
        eventually(|| published.lock().map(|p| p.len() == 1).unwrap_or(false)).await;
        remote
            .send(Remote::Change(Change::ResourceUpdated("x://2".into())))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            listener.recv().await,
            Some(Received::Change(Change::ResourceUpdated("x://2".into())))
        );
        remote
            .send(Remote::Resumed)
            .unwrap_or_else(|e| panic!("{e}"));
        for change in [
            Change::ToolsListChanged,
            Change::PromptsListChanged,
            Change::ResourcesListChanged,
        ] {
            assert_eq!(listener.recv().await, Some(Received::Change(change)));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert_eq!(
            published.lock().map(|p| p.clone()).unwrap_or_default(),
            [Change::ResourceUpdated("x://1".into())],
            "what came from the bus is not published again"
        );
    }

    #[tokio::test]
    async fn a_stuck_bus_never_blocks_the_sender_and_the_overflow_is_counted() {
        let notifier = Notifier::new(8, ListenLimits::default());
        let hold = Arc::new(tokio::sync::Notify::new());
        let (bus, _published, _remote) = loopback(Some(hold));
        assert!(notifier.attach_bus(bus).is_ok());
        let extra = 10;
        for i in 0..PUBLISH_QUEUE + extra {
            notifier.resource_updated(format!("x://{i}"));
        }
        // One may be in the stuck publish rather than in the queue.
        let dropped = notifier.unpublished();
        assert!(
            (extra as u64 - 1..=extra as u64).contains(&dropped),
            "{dropped}"
        );
    }

    #[test]
    fn without_a_runtime_the_bus_runs_on_a_thread_of_its_own_until_the_notifier_is_gone() {
        let notifier = Notifier::default();
        let (bus, published, remote) = loopback(None);
        assert!(notifier.attach_bus(bus).is_ok());
        notifier.tools_list_changed();
        let published = || published.lock().map(|p| p.clone()).unwrap_or_default();
        for _ in 0..200 {
            if !published().is_empty() {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(published(), [Change::ToolsListChanged]);
        drop(notifier);
        for _ in 0..200 {
            if remote.is_closed() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        panic!("the bus's thread outlived its notifier");
    }

    #[tokio::test]
    async fn the_tasks_end_with_the_notifier() {
        let notifier = Notifier::default();
        let (bus, _published, remote) = loopback(None);
        assert!(notifier.attach_bus(bus).is_ok());
        drop(notifier);
        eventually(|| remote.is_closed()).await;
    }
}
