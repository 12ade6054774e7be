//! Log levels and the per-session threshold a client sets with `logging/setLevel`.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

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

/// The stored value of an [`LogThreshold::off`] threshold: above every level.
const OFF: u8 = LEVELS.len() as u8;

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

    /// A threshold that sends nothing: what a 2026-07-28 request without
    /// `io.modelcontextprotocol/logLevel` in its `_meta` gets (the spec forbids
    /// `notifications/message` for it).
    pub fn off() -> Self {
        LogThreshold(Arc::new(AtomicU8::new(OFF)))
    }

    /// Whether this threshold sends nothing (see [`LogThreshold::off`]).
    pub fn is_off(&self) -> bool {
        self.0.load(Ordering::Relaxed) == OFF
    }

    /// The current level (for an [`off`](LogThreshold::off) threshold, [`DEFAULT_LOG_LEVEL`];
    /// ask [`is_off`](LogThreshold::is_off) first).
    pub fn get(&self) -> LogLevel {
        LogLevel::from_index(self.0.load(Ordering::Relaxed))
    }

    /// Sets the level (what `logging/setLevel` does).
    pub fn set(&self, level: LogLevel) {
        self.0.store(level as u8, Ordering::Relaxed);
    }

    /// Whether a message at `level` is sent.
    pub fn allows(&self, level: LogLevel) -> bool {
        level as u8 >= self.0.load(Ordering::Relaxed)
    }
}

impl Default for LogThreshold {
    fn default() -> Self {
        LogThreshold::new(DEFAULT_LOG_LEVEL)
    }
}

impl fmt::Debug for LogThreshold {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_off() {
            return f.write_str("LogThreshold(off)");
        }
        f.debug_tuple("LogThreshold").field(&self.get()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_are_ordered_and_round_trip_through_names() {
        for pair in LEVELS.windows(2) {
            assert!(pair[0] < pair[1]);
        }
        for level in LEVELS {
            assert_eq!(level.as_str().parse::<LogLevel>(), Ok(level));
        }
        assert!("verbose".parse::<LogLevel>().is_err());
    }

    #[test]
    fn an_off_threshold_sends_nothing() {
        let t = LogThreshold::off();
        assert!(t.is_off());
        assert!(LEVELS.iter().all(|l| !t.allows(*l)));
        assert!(!LogThreshold::new(LogLevel::Emergency).is_off());
        assert_eq!(format!("{t:?}"), "LogThreshold(off)");
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
}
