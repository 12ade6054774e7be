//! Notifications a handler sends while it runs: progress (`notifications/progress`) and log
//! messages (`notifications/message`).
//!
//! Both are best effort. A call made in-process has no client to tell; a client that sent no
//! progress token gets no progress; a log message below the level the client set with
//! `logging/setLevel` ([`DEFAULT_LOG_LEVEL`] until it sets one) is dropped. None of this is an
//! error for the handler: each method returns whether a notification went out.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

use rmcp::model::ProgressNotificationParam;
#[allow(deprecated)] // MCP logging is deprecated by SEP-2577, still what clients speak.
use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam};

use super::context::CallContext;

/// The severity of a log message, as MCP (and syslog, RFC 5424) orders them: `Debug` is the
/// lowest, `Emergency` the highest.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LogLevel {
    /// Detailed debugging information.
    Debug,
    /// General information.
    Info,
    /// Normal but significant events.
    Notice,
    /// Warning conditions.
    Warning,
    /// Error conditions.
    Error,
    /// Critical conditions.
    Critical,
    /// Action must be taken immediately.
    Alert,
    /// The system is unusable.
    Emergency,
}

/// The level a session starts at: `info` and above are sent until the client calls
/// `logging/setLevel`.
pub const DEFAULT_LOG_LEVEL: LogLevel = LogLevel::Info;

const LEVELS: [LogLevel; 8] = [
    LogLevel::Debug,
    LogLevel::Info,
    LogLevel::Notice,
    LogLevel::Warning,
    LogLevel::Error,
    LogLevel::Critical,
    LogLevel::Alert,
    LogLevel::Emergency,
];

impl LogLevel {
    /// The MCP name (`debug`, `info`, …, `emergency`).
    pub fn as_str(self) -> &'static str {
        match self {
            LogLevel::Debug => "debug",
            LogLevel::Info => "info",
            LogLevel::Notice => "notice",
            LogLevel::Warning => "warning",
            LogLevel::Error => "error",
            LogLevel::Critical => "critical",
            LogLevel::Alert => "alert",
            LogLevel::Emergency => "emergency",
        }
    }

    fn from_index(i: u8) -> LogLevel {
        LEVELS
            .get(usize::from(i))
            .copied()
            .unwrap_or(DEFAULT_LOG_LEVEL)
    }

    /// The rmcp level.
    #[allow(deprecated)]
    pub fn to_rmcp(self) -> LoggingLevel {
        match self {
            LogLevel::Debug => LoggingLevel::Debug,
            LogLevel::Info => LoggingLevel::Info,
            LogLevel::Notice => LoggingLevel::Notice,
            LogLevel::Warning => LoggingLevel::Warning,
            LogLevel::Error => LoggingLevel::Error,
            LogLevel::Critical => LoggingLevel::Critical,
            LogLevel::Alert => LoggingLevel::Alert,
            LogLevel::Emergency => LoggingLevel::Emergency,
        }
    }

    /// From the rmcp level.
    #[allow(deprecated)]
    pub fn from_rmcp(level: LoggingLevel) -> LogLevel {
        match level {
            LoggingLevel::Debug => LogLevel::Debug,
            LoggingLevel::Info => LogLevel::Info,
            LoggingLevel::Notice => LogLevel::Notice,
            LoggingLevel::Warning => LogLevel::Warning,
            LoggingLevel::Error => LogLevel::Error,
            LoggingLevel::Critical => LogLevel::Critical,
            LoggingLevel::Alert => LogLevel::Alert,
            LoggingLevel::Emergency => LogLevel::Emergency,
        }
    }
}

impl fmt::Display for LogLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for LogLevel {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        LEVELS
            .iter()
            .copied()
            .find(|l| l.as_str().eq_ignore_ascii_case(s))
            .ok_or_else(|| format!("unknown log level `{s}`"))
    }
}

/// The lowest level a client wants to receive, shared by every call of one MCP session
/// (one stdio connection, one streamable HTTP session). Cheap to clone; clones share the
/// value.
#[derive(Clone)]
pub struct LogThreshold(Arc<AtomicU8>);

impl LogThreshold {
    /// A threshold starting at `level`.
    pub fn new(level: LogLevel) -> Self {
        LogThreshold(Arc::new(AtomicU8::new(level as u8)))
    }

    /// The current level.
    pub fn get(&self) -> LogLevel {
        LogLevel::from_index(self.0.load(Ordering::Relaxed))
    }

    /// Sets the level (what `logging/setLevel` does).
    pub fn set(&self, level: LogLevel) {
        self.0.store(level as u8, Ordering::Relaxed);
    }

    /// Whether a message at `level` is sent.
    pub fn allows(&self, level: LogLevel) -> bool {
        level >= self.get()
    }
}

impl Default for LogThreshold {
    fn default() -> Self {
        LogThreshold::new(DEFAULT_LOG_LEVEL)
    }
}

impl fmt::Debug for LogThreshold {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("LogThreshold").field(&self.get()).finish()
    }
}

impl CallContext {
    /// Reports progress to the client: a `notifications/progress` carrying the request's
    /// progress token. `progress` should grow with every call; `total` is the value it will
    /// reach, when known.
    ///
    /// Returns `true` when the notification was sent; `false` when the client sent no
    /// progress token, the call is in-process, or the connection is gone.
    pub async fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) -> bool {
        let scope = self.scope();
        let (Some(peer), Some(token)) = (&scope.peer, &scope.progress_token) else {
            return false;
        };
        let mut param = ProgressNotificationParam::new(token.clone(), progress);
        if let Some(total) = total {
            param = param.with_total(total);
        }
        if let Some(message) = message {
            param = param.with_message(message);
        }
        match peer.notify_progress(param).await {
            Ok(()) => true,
            Err(e) => {
                tracing::debug!(action = self.action(), error = %e, "progress not sent");
                false
            }
        }
    }

    /// Whether a log message at `level` would be sent: there is a client, and it asked for
    /// this level or a lower one.
    pub fn log_enabled(&self, level: LogLevel) -> bool {
        let scope = self.scope();
        scope.peer.is_some() && scope.log_threshold.allows(level)
    }

    /// Sends a log message to the client (`notifications/message`), with the action's name
    /// as the logger. `data` is any JSON: a string, or an object with details.
    ///
    /// Returns `true` when it was sent; `false` when it is below the session's level (see
    /// [`DEFAULT_LOG_LEVEL`]), the call is in-process, or the connection is gone.
    #[allow(deprecated)]
    pub async fn log(&self, level: LogLevel, data: impl Into<serde_json::Value>) -> bool {
        if !self.log_enabled(level) {
            return false;
        }
        let Some(peer) = &self.scope().peer else {
            return false;
        };
        let param = LoggingMessageNotificationParam::new(level.to_rmcp(), data.into())
            .with_logger(self.action());
        match peer.notify_logging_message(param).await {
            Ok(()) => true,
            Err(e) => {
                tracing::debug!(action = self.action(), error = %e, "log message not sent");
                false
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_are_ordered_and_round_trip_through_names_and_rmcp() {
        for pair in LEVELS.windows(2) {
            assert!(pair[0] < pair[1]);
        }
        for level in LEVELS {
            assert_eq!(level.as_str().parse::<LogLevel>(), Ok(level));
            assert_eq!(LogLevel::from_rmcp(level.to_rmcp()), level);
        }
        assert!("verbose".parse::<LogLevel>().is_err());
    }

    #[test]
    fn threshold_filters_below_the_level_and_is_shared_by_clones() {
        let t = LogThreshold::default();
        assert!(!t.allows(LogLevel::Debug));
        assert!(t.allows(LogLevel::Info));
        let shared = t.clone();
        shared.set(LogLevel::Error);
        assert_eq!(t.get(), LogLevel::Error);
        assert!(!t.allows(LogLevel::Warning));
        assert!(t.allows(LogLevel::Emergency));
        t.set(LogLevel::Debug);
        assert!(shared.allows(LogLevel::Debug));
    }

    #[tokio::test]
    async fn in_process_calls_send_nothing() {
        let cx = CallContext::new(
            "a.b",
            "a_b".into(),
            Default::default(),
            super::super::RequestScope::detached(),
        );
        assert!(!cx.progress(1.0, Some(2.0), None).await);
        assert!(!cx.log_enabled(LogLevel::Emergency));
        assert!(!cx.log(LogLevel::Emergency, "x").await);
    }
}
