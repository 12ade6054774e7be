//! The MCP tasks this process runs, counted: a function runtime (AWS Lambda freezes a process
//! once its invocation ends) keeps the invocation open after its answer until they end.
//!
//! Reads: nothing. Writes: the count, raised by the task runner for as long as a task's work
//! runs.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::Notify;

/// How many tasks run in this process now.
#[derive(Debug, Default)]
pub(crate) struct Running {
    count: AtomicUsize,
    idle: Notify,
}

/// One running task; dropping it ends its count.
#[derive(Debug)]
pub(crate) struct RunningTask(Arc<Running>);

impl Running {
    /// Counts a task until the returned guard is dropped.
    pub(crate) fn enter(self: &Arc<Self>) -> RunningTask {
        self.count.fetch_add(1, Ordering::AcqRel);
        RunningTask(Arc::clone(self))
    }

    /// How many run now.
    #[cfg_attr(not(feature = "lambda"), allow(dead_code))]
    pub(crate) fn count(&self) -> usize {
        self.count.load(Ordering::Acquire)
    }

    /// Resolves once none runs (at once when none does).
    #[cfg_attr(not(feature = "lambda"), allow(dead_code))]
    pub(crate) async fn idle(&self) {
        loop {
            let notified = self.idle.notified();
            let mut notified = std::pin::pin!(notified);
            notified.as_mut().enable();
            if self.count() == 0 {
                return;
            }
            notified.await;
        }
    }
}

impl Drop for RunningTask {
    fn drop(&mut self) {
        if self.0.count.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.0.idle.notify_waiters();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(flavor = "current_thread")]
    async fn idle_waits_for_the_last_task() {
        let running = Arc::new(Running::default());
        running.idle().await;
        let (a, b) = (running.enter(), running.enter());
        assert_eq!(running.count(), 2);
        let waiter = tokio::spawn({
            let running = Arc::clone(&running);
            async move { running.idle().await }
        });
        drop(a);
        tokio::task::yield_now().await;
        assert!(!waiter.is_finished(), "one task still runs");
        drop(b);
        tokio::time::timeout(std::time::Duration::from_secs(5), waiter)
            .await
            .map_err(|_| "idle never resolved")
            .and_then(|joined| joined.map_err(|_| "the waiter panicked"))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(running.count(), 0);
    }
}
