//! The live 2025 sessions whose plain calls the HTTP side may answer without rmcp's session
//! worker (the [`room`](super)): what a session's call needs of its handler (the log level
//! the client set) and whether rmcp's worker still holds the session.
//!
//! Reads: a session's `initialize` (its id, which the HTTP side's session manager puts in the
//! message's extensions; the capabilities its client declared). Writes: one [`Live`] per
//! session whose client declared neither `elicitation` nor `sampling` (a call of such a
//! session never asks the client anything, so nothing it does needs the worker's routing of
//! a request to the client and its answer back), until the session ends. rmcp answers a
//! session's requests before its `notifications/initialized` too; so does this.
//!
//! rmcp's worker closes a session idle for its keep-alive, counting only what reaches it: a
//! call answered here does not. So a session's calls are answered here only while the worker
//! heard from the session in the last half keep-alive ([`LiveSessions::listing`]); past that,
//! the next request goes through rmcp, which resets the worker's timer
//! ([`Hearing::heard`]). A session kept busy by calls is never closed as idle, and an
//! idle one is closed exactly as before.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

use crate::context::LogThreshold;
use crate::mcp::handlers::LiveList;

/// What is kept of a listed session.
#[derive(Debug)]
struct Live {
    /// The session's log level (shared with its handler: `logging/setLevel` moves both).
    log_threshold: LogThreshold,
    /// Cancelled when the session's handler is gone (its rmcp service ended; rmcp then
    /// closes the session, which takes it off the list).
    end: CancellationToken,
    /// When rmcp's worker last heard from the session (milliseconds since
    /// [`LiveSessions::epoch`]).
    heard: Arc<AtomicU64>,
}

/// A listed session, as a request of it finds it.
#[derive(Debug)]
pub(crate) enum Listing {
    /// Its calls may be answered without rmcp now, at this log level.
    Fresh(LogThreshold),
    /// Listed (calls answered without rmcp may still run), but its next request goes
    /// through rmcp.
    Stale,
}

/// When a request of a listed session was passed to rmcp: recorded with
/// [`Hearing::heard`] once rmcp took it (the worker heard it after this).
#[derive(Debug)]
pub(crate) struct Hearing {
    heard: Arc<AtomicU64>,
    at: u64,
}

impl Hearing {
    /// rmcp's worker heard from the session.
    pub(crate) fn heard(self) {
        self.heard.fetch_max(self.at, Ordering::Relaxed);
    }
}

/// The live sessions of one stateful HTTP endpoint, by id. A session leaves the list when
/// rmcp closes it (`CappedSessions::close_session`, which rmcp also calls when a session's
/// service ends, idle or not).
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

    /// Lists session `id` (initializing: the worker hears from it) with its handler's log
    /// level and `end`.
    pub(crate) fn register(&self, id: &str, log_threshold: LogThreshold, end: CancellationToken) {
        let live = Live {
            log_threshold,
            end,
            heard: Arc::new(AtomicU64::new(self.now())),
        };
        self.sessions().insert(Arc::from(id), live);
    }

    /// Takes session `id` off the list (it was closed).
    pub(crate) fn remove(&self, id: &str) {
        self.sessions().remove(id);
    }

    /// Session `id`, if listed: fresh when its handler is still there and the worker heard
    /// from it in the last half keep-alive. A session whose handler is gone (rmcp is closing
    /// it) leaves the list here.
    pub(crate) fn listing(&self, id: &str) -> Option<Listing> {
        let mut sessions = self.sessions();
        let live = sessions.get(id)?;
        if live.end.is_cancelled() {
            sessions.remove(id);
            return None;
        }
        let since = self
            .now()
            .saturating_sub(live.heard.load(Ordering::Relaxed));
        Some(match Duration::from_millis(since) < self.fresh_for {
            true => Listing::Fresh(live.log_threshold.clone()),
            false => Listing::Stale,
        })
    }

    /// For a request of session `id` passed to rmcp, if the session is listed: the time to
    /// record once rmcp took it.
    pub(crate) fn hearing(&self, id: &str) -> Option<Hearing> {
        let heard = Arc::clone(&self.sessions().get(id)?.heard);
        Some(Hearing {
            heard,
            at: self.now(),
        })
    }

    /// How many sessions are listed.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.sessions().len()
    }
}

impl LiveList for LiveSessions {
    fn register(&self, id: &str, log_threshold: LogThreshold, end: CancellationToken) {
        LiveSessions::register(self, id, log_threshold, end);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fresh(sessions: &LiveSessions, id: &str) -> bool {
        matches!(sessions.listing(id), Some(Listing::Fresh(_)))
    }

    #[tokio::test]
    async fn a_session_is_fresh_for_half_the_keep_alive_after_the_worker_heard_it() {
        let sessions = LiveSessions::new(Duration::from_millis(400));
        let end = CancellationToken::new();
        sessions.register("s1", LogThreshold::default(), end.clone());
        assert!(fresh(&sessions, "s1"), "just initialized");
        assert!(!fresh(&sessions, "s2"), "never listed");
        tokio::time::sleep(Duration::from_millis(250)).await;
        assert!(!fresh(&sessions, "s1"), "past half the keep-alive");
        if let Some(hearing) = sessions.hearing("s1") {
            hearing.heard();
        }
        assert!(fresh(&sessions, "s1"), "the worker heard it again");
        // An older time never moves it back.
        if let Some(mut hearing) = sessions.hearing("s1") {
            hearing.at = 0;
            hearing.heard();
        }
        assert!(fresh(&sessions, "s1"));
    }

    #[tokio::test]
    async fn a_session_leaves_the_list_when_its_handler_goes_or_it_is_closed() {
        let sessions = LiveSessions::new(Duration::from_secs(60));
        let end = CancellationToken::new();
        sessions.register("s1", LogThreshold::default(), end.clone());
        sessions.register("s2", LogThreshold::default(), CancellationToken::new());
        assert_eq!(sessions.len(), 2);
        end.cancel();
        assert!(!fresh(&sessions, "s1"), "its handler is gone");
        assert_eq!(sessions.len(), 1);
        sessions.remove("s2");
        assert_eq!(sessions.len(), 0);
        assert!(!fresh(&sessions, "s2"));
    }
}
