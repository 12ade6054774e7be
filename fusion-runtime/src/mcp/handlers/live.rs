//! The live 2025 sessions whose plain calls the HTTP side may answer without rmcp's session
//! worker (`http/session_call.rs`): what a session's call needs of its handler (the log level
//! the client set) and whether rmcp's worker still holds the session.
//!
//! Reads: a session's `initialize` (its id, which the HTTP room's session manager puts in the
//! message's extensions; the capabilities its client declared). Writes: one [`Live`] per
//! session whose client declared neither `elicitation` nor `sampling` (a call of such a
//! session never asks the client anything, so nothing it does needs the worker's routing of
//! a request to the client and its answer back), until the session ends. rmcp answers a
//! session's requests before its `notifications/initialized` too; so does this.
//!
//! rmcp's worker closes a session idle for its keep-alive, counting only what reaches it: a
//! call answered here does not. So a session's calls are answered here only while the worker
//! heard from the session in the last half keep-alive ([`LiveSessions::fresh`]); past that,
//! the next request goes through rmcp, which resets the worker's timer
//! ([`LiveSessions::heard`]). A session kept busy by calls is never closed as idle, and an
//! idle one is closed exactly as before.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

use crate::context::LogThreshold;

/// A live session's part of its handler, for a call answered without rmcp.
#[derive(Clone, Debug)]
pub(crate) struct Live {
    /// The session's log level (shared with its handler: `logging/setLevel` moves both).
    pub(crate) log_threshold: LogThreshold,
    /// Cancelled when the session's handler is gone (its rmcp service ended).
    end: CancellationToken,
    /// When rmcp's worker last heard from the session (milliseconds since
    /// [`LiveSessions::epoch`]).
    heard: Arc<AtomicU64>,
}

/// The live sessions of one stateful HTTP endpoint, by id.
#[derive(Debug)]
pub(crate) struct LiveSessions {
    sessions: Mutex<HashMap<Arc<str>, Live>>,
    epoch: Instant,
    /// Half the worker's keep-alive: how long after the worker last heard from a session its
    /// calls are still answered without it.
    fresh_for: Duration,
}

impl LiveSessions {
    /// The sessions of an endpoint whose rmcp worker closes a session idle for `keep_alive`.
    pub(crate) fn new(keep_alive: Duration) -> Arc<Self> {
        Arc::new(LiveSessions {
            sessions: Mutex::default(),
            epoch: Instant::now(),
            fresh_for: keep_alive / 2,
        })
    }

    fn sessions(&self) -> MutexGuard<'_, HashMap<Arc<str>, Live>> {
        self.sessions.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn now(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// Lists session `id` (initializing: the worker hears from it) until its handler's
    /// `end` is cancelled.
    pub(crate) fn register(
        self: &Arc<Self>,
        id: &str,
        log_threshold: LogThreshold,
        end: CancellationToken,
    ) {
        let id: Arc<str> = Arc::from(id);
        let live = Live {
            log_threshold,
            end: end.clone(),
            heard: Arc::new(AtomicU64::new(self.now())),
        };
        self.sessions().insert(Arc::clone(&id), live);
        // Off the list when the handler goes, whether the session was closed or idled out.
        let sessions = Arc::downgrade(self);
        tokio::spawn(async move {
            end.cancelled().await;
            if let Some(sessions) = sessions.upgrade() {
                sessions.remove(&id);
            }
        });
    }

    /// Takes session `id` off the list (it was closed).
    pub(crate) fn remove(&self, id: &str) {
        self.sessions().remove(id);
    }

    /// Session `id`, if its calls may be answered without rmcp now: listed, its handler
    /// still there, and the worker heard from it in the last half keep-alive.
    pub(crate) fn fresh(&self, id: &str) -> Option<Live> {
        let sessions = self.sessions();
        let live = sessions.get(id)?;
        let since = self
            .now()
            .saturating_sub(live.heard.load(Ordering::Relaxed));
        (!live.end.is_cancelled() && Duration::from_millis(since) < self.fresh_for)
            .then(|| live.clone())
    }

    /// Whether session `id` is listed (fresh or not).
    pub(crate) fn listed(&self, id: &str) -> bool {
        self.sessions().contains_key(id)
    }

    /// The time to record, for session `id`, when a request of it is passed to rmcp: taken
    /// before (the worker hears it later), recorded with [`LiveSessions::heard`] once rmcp
    /// took it.
    pub(crate) fn before_rmcp(&self) -> u64 {
        self.now()
    }

    /// rmcp's worker heard from session `id` (at `at`, a [`LiveSessions::before_rmcp`]).
    pub(crate) fn heard(&self, id: &str, at: u64) {
        if let Some(live) = self.sessions().get(id) {
            live.heard.fetch_max(at, Ordering::Relaxed);
        }
    }

    /// How many sessions are listed.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.sessions().len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_session_is_fresh_for_half_the_keep_alive_after_the_worker_heard_it() {
        let sessions = LiveSessions::new(Duration::from_millis(400));
        let end = CancellationToken::new();
        sessions.register("s1", LogThreshold::default(), end.clone());
        assert!(sessions.fresh("s1").is_some(), "just initialized");
        assert!(sessions.fresh("s2").is_none(), "never listed");
        tokio::time::sleep(Duration::from_millis(250)).await;
        assert!(sessions.fresh("s1").is_none(), "past half the keep-alive");
        let at = sessions.before_rmcp();
        sessions.heard("s1", at);
        assert!(sessions.fresh("s1").is_some(), "the worker heard it again");
        // An older time never moves it back.
        sessions.heard("s1", 0);
        assert!(sessions.fresh("s1").is_some());
    }

    #[tokio::test]
    async fn a_session_leaves_the_list_when_its_handler_goes_or_it_is_closed() {
        let sessions = LiveSessions::new(Duration::from_secs(60));
        let end = CancellationToken::new();
        sessions.register("s1", LogThreshold::default(), end.clone());
        sessions.register("s2", LogThreshold::default(), CancellationToken::new());
        assert_eq!(sessions.len(), 2);
        end.cancel();
        assert!(sessions.fresh("s1").is_none(), "its handler is gone");
        // The watcher takes it off the list.
        for _ in 0..100 {
            if sessions.len() == 1 {
                break;
            }
            tokio::task::yield_now().await;
        }
        assert_eq!(sessions.len(), 1);
        sessions.remove("s2");
        assert_eq!(sessions.len(), 0);
        assert!(sessions.fresh("s2").is_none());
    }
}
