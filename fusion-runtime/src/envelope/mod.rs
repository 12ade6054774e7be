//! The `<tool_error>` envelope: codes, severities, the fluent builder and its rendering.

mod code;
mod response;
pub mod xml;

pub use code::{ErrorCode, codes};
pub use response::{Content, ToolResponse};

use std::fmt;
use std::fmt::Write as _;
use std::sync::OnceLock;
use std::time::Duration;

/// How bad an error is, and whether the MCP result is flagged `isError`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Severity {
    /// The action failed.
    #[default]
    Error,
    /// The action failed, and must not be retried blindly.
    Critical,
    /// Guidance travelling on the success path: the result is not an error.
    Warning,
}

impl Severity {
    /// The wire spelling: `error`, `critical` or `warning`.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Critical => "critical",
            Severity::Warning => "warning",
        }
    }

    /// Reads a wire spelling; anything else is `None`.
    pub fn parse(s: &str) -> Option<Severity> {
        match s {
            "error" => Some(Severity::Error),
            "critical" => Some(Severity::Critical),
            "warning" => Some(Severity::Warning),
            _ => None,
        }
    }

    /// The `isError` flag of a result carrying this severity: false only for warnings.
    pub fn is_error(self) -> bool {
        !matches!(self, Severity::Warning)
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A `retry_after` value: whole seconds, or a [`Duration`] rounded up to whole seconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RetryAfter(pub Duration);

impl From<Duration> for RetryAfter {
    fn from(d: Duration) -> Self {
        RetryAfter(d)
    }
}

impl From<u64> for RetryAfter {
    fn from(secs: u64) -> Self {
        RetryAfter(Duration::from_secs(secs))
    }
}

impl From<u32> for RetryAfter {
    fn from(secs: u32) -> Self {
        RetryAfter(Duration::from_secs(secs.into()))
    }
}

/// Negative seconds mean "unset", like zero.
impl From<i32> for RetryAfter {
    fn from(secs: i32) -> Self {
        RetryAfter(Duration::from_secs(secs.max(0).unsigned_abs().into()))
    }
}

/// An error written for the language model that reads it: the `<tool_error>` envelope.
///
/// Start one with [`error`] and chain what the model needs to recover. It is a handler's
/// error value as it is (no `.build()`), and renders lazily, once:
///
/// ```
/// use fusion_runtime::{error, ErrorCode};
///
/// let e = error(ErrorCode::NotFound, "No invoice with that ID")
///     .recovery("List invoices first, then retry with a real ID")
///     .available_actions(["billing.list_invoices"])
///     .details([("requestedId", "inv_2026_9999")])
///     .retry_after(30);
/// assert!(e.render().starts_with(r#"<tool_error code="NOT_FOUND" severity="error">"#));
/// assert!(e.is_error());
/// ```
#[derive(Clone)]
pub struct ToolError {
    // Boxed so that `Result<T, ToolError>` stays one pointer wide on the error side.
    inner: Box<Inner>,
}

#[derive(Clone)]
struct Inner {
    code: ErrorCode,
    message: String,
    recovery: Option<String>,
    available_actions: Vec<String>,
    details: Vec<(String, String)>,
    retry_after: Option<Duration>,
    severity: Severity,
    rendered: OnceLock<String>,
    /// What a server renders instead of this envelope, when set: the `<validation_error>`
    /// of a user's form answer (the report travels with the error, opaque to this module).
    attachment: Option<std::sync::Arc<dyn std::any::Any + Send + Sync>>,
}

/// Starts a [`ToolError`] from a code and a message.
pub fn error(code: impl Into<ErrorCode>, message: impl Into<String>) -> ToolError {
    ToolError::new(code, message)
}

impl ToolError {
    /// A new error with severity `error` and no optional section.
    pub fn new(code: impl Into<ErrorCode>, message: impl Into<String>) -> Self {
        ToolError {
            inner: Box::new(Inner {
                code: code.into(),
                message: message.into(),
                recovery: None,
                available_actions: Vec::new(),
                details: Vec::new(),
                retry_after: None,
                severity: Severity::Error,
                rendered: OnceLock::new(),
                attachment: None,
            }),
        }
    }

    fn edit(mut self, f: impl FnOnce(&mut Inner)) -> Self {
        f(&mut self.inner);
        self.inner.rendered = OnceLock::new();
        self
    }

    /// What the model should do next (rendered as `<recovery>`).
    pub fn recovery(self, recovery: impl Into<String>) -> Self {
        self.edit(|e| e.recovery = Some(recovery.into()))
    }

    /// The old name of [`ToolError::recovery`].
    #[deprecated(since = "0.1.0", note = "use `recovery`; removed in 0.2.0")]
    pub fn suggest(self, suggestion: impl Into<String>) -> Self {
        self.recovery(suggestion)
    }

    /// Actions the model can call instead (rendered as `<available_actions>`); appended in
    /// order.
    pub fn available_actions<I, S>(self, actions: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.edit(|e| {
            e.available_actions
                .extend(actions.into_iter().map(Into::into))
        })
    }

    /// The old name of [`ToolError::available_actions`].
    #[deprecated(since = "0.1.0", note = "use `available_actions`; removed in 0.2.0")]
    pub fn actions<I, S>(self, actions: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.available_actions(actions)
    }

    /// One action the model can call instead.
    pub fn action(self, action: impl Into<String>) -> Self {
        self.edit(|e| e.available_actions.push(action.into()))
    }

    /// Renames each available action to what `rename` returns, dropping those it answers
    /// `None` for: what a server does so that every name an envelope shows is one its
    /// clients can call.
    pub fn map_actions(self, mut rename: impl FnMut(&str) -> Option<String>) -> Self {
        self.edit(|e| {
            let actions = std::mem::take(&mut e.available_actions);
            e.available_actions = actions.iter().filter_map(|a| rename(a)).collect();
        })
    }

    /// The same error with `message` instead of its own.
    pub(crate) fn with_message(self, message: String) -> Self {
        self.edit(|e| e.message = message)
    }

    /// Carries `value` for the server to render instead (see [`ToolError::attachment`]).
    pub(crate) fn attach(self, value: std::sync::Arc<dyn std::any::Any + Send + Sync>) -> Self {
        self.edit(|e| e.attachment = Some(value))
    }

    /// What the server renders instead of this envelope, if anything.
    pub(crate) fn attachment(&self) -> Option<&(dyn std::any::Any + Send + Sync)> {
        self.inner.attachment.as_deref()
    }

    /// Key/value details, kept in insertion order; appended to any already set.
    pub fn details<I, K, V>(self, details: I) -> Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<String>,
        V: Into<String>,
    {
        self.edit(|e| {
            e.details
                .extend(details.into_iter().map(|(k, v)| (k.into(), v.into())))
        })
    }

    /// One key/value detail.
    pub fn detail(self, key: impl Into<String>, value: impl fmt::Display) -> Self {
        self.edit(|e| e.details.push((key.into(), value.to_string())))
    }

    /// When to retry: whole seconds or a `Duration` (rounded up). Zero means unset.
    pub fn retry_after(self, after: impl Into<RetryAfter>) -> Self {
        let RetryAfter(d) = after.into();
        self.edit(|e| e.retry_after = (!d.is_zero()).then_some(d))
    }

    /// Sets the severity.
    pub fn severity(self, severity: Severity) -> Self {
        self.edit(|e| e.severity = severity)
    }

    /// Severity `warning`: guidance on the success path, `isError: false`.
    pub fn warning(self) -> Self {
        self.severity(Severity::Warning)
    }

    /// Severity `critical`: failed, and must not be retried blindly.
    pub fn critical(self) -> Self {
        self.severity(Severity::Critical)
    }

    /// The code.
    pub fn code(&self) -> &ErrorCode {
        &self.inner.code
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.inner.message
    }

    /// The recovery text, if set and non-empty.
    #[deprecated(
        since = "0.1.0",
        note = "read `ToolCallError::from_error(tool, &e).recovery` (`client::ToolCallError`); removed in 0.2.0"
    )]
    pub fn suggestion(&self) -> Option<&str> {
        self.recovery_text()
    }

    /// The details, in insertion order.
    #[deprecated(
        since = "0.1.0",
        note = "read `ToolCallError::from_error(tool, &e).details` (`client::ToolCallError`); removed in 0.2.0"
    )]
    pub fn detail_pairs(&self) -> &[(String, String)] {
        self.detail_list()
    }

    /// The recovery text, if set and non-empty.
    pub(crate) fn recovery_text(&self) -> Option<&str> {
        self.inner.recovery.as_deref().filter(|s| !s.is_empty())
    }

    /// The available actions, in order.
    pub(crate) fn action_list(&self) -> &[String] {
        &self.inner.available_actions
    }

    /// The details, in insertion order.
    pub(crate) fn detail_list(&self) -> &[(String, String)] {
        &self.inner.details
    }

    /// The severity.
    pub(crate) fn severity_of(&self) -> Severity {
        self.inner.severity
    }

    /// The value of the first detail with this key.
    pub fn detail_value(&self, key: &str) -> Option<&str> {
        self.inner
            .details
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// `retry_after` as set (before rounding), if any.
    pub fn retry_after_duration(&self) -> Option<Duration> {
        self.inner.retry_after
    }

    /// `retry_after` in whole seconds, rounded up, as rendered; `None` when unset.
    pub fn retry_after_secs(&self) -> Option<u64> {
        self.inner
            .retry_after
            .map(|d| d.as_secs() + u64::from(d.subsec_nanos() > 0))
    }

    /// The severity.
    #[deprecated(
        since = "0.1.0",
        note = "read `ToolCallError::from_error(tool, &e).severity` (`client::ToolCallError`), or `is_error()`; removed in 0.2.0"
    )]
    pub fn severity_level(&self) -> Severity {
        self.inner.severity
    }

    /// The `isError` flag of a result carrying this envelope.
    pub fn is_error(&self) -> bool {
        self.inner.severity.is_error()
    }

    /// The envelope text, rendered on first use and cached.
    pub fn render(&self) -> &str {
        self.inner.rendered.get_or_init(|| self.render_uncached())
    }

    /// The envelope text, taking the cached rendering when there is one.
    pub fn into_rendered(mut self) -> String {
        match self.inner.rendered.take() {
            Some(s) => s,
            None => self.render_uncached(),
        }
    }

    fn estimated_len(&self) -> usize {
        let mut n = 64 + self.inner.code.as_str().len() + self.inner.message.len();
        if let Some(s) = self.recovery_text() {
            n += 24 + s.len();
        }
        if !self.inner.available_actions.is_empty() {
            n += 48
                + self
                    .inner
                    .available_actions
                    .iter()
                    .map(|a| a.len() + 22)
                    .sum::<usize>();
        }
        if !self.inner.details.is_empty() {
            n += 30
                + self
                    .inner
                    .details
                    .iter()
                    .map(|(k, v)| k.len() + v.len() + 30)
                    .sum::<usize>();
        }
        if self.inner.retry_after.is_some() {
            n += 48;
        }
        n + n / 16
    }

    fn render_uncached(&self) -> String {
        let out = self.render_within(&Limits::NONE);
        if out.len() <= MAX_ENVELOPE_BYTES {
            return out;
        }
        self.render_within(&Limits::CAPPED)
    }

    fn render_within(&self, limits: &Limits) -> String {
        let mut out = String::with_capacity(self.estimated_len().min(2 * MAX_ENVELOPE_BYTES));
        out.push_str("<tool_error code=\"");
        limits.attr(&mut out, self.inner.code.as_str(), limits.code);
        out.push_str("\" severity=\"");
        out.push_str(self.inner.severity.as_str());
        out.push_str("\">\n  <message>");
        limits.text(&mut out, &self.inner.message, limits.message);
        out.push_str("</message>");
        if let Some(s) = self.recovery_text() {
            out.push_str("\n  <recovery>");
            limits.text(&mut out, s, limits.recovery);
            out.push_str("</recovery>");
        }
        if !self.inner.available_actions.is_empty() {
            out.push_str("\n  <available_actions>");
            for a in self.inner.available_actions.iter().take(limits.actions) {
                out.push_str("\n    <action>");
                limits.text(&mut out, a, limits.action);
                out.push_str("</action>");
            }
            out.push_str("\n  </available_actions>");
        }
        if !self.inner.details.is_empty() {
            out.push_str("\n  <details>");
            for (k, v) in self.inner.details.iter().take(limits.details) {
                out.push_str("\n    <detail key=\"");
                limits.attr(&mut out, k, limits.detail_key);
                out.push_str("\">");
                limits.text(&mut out, v, limits.detail_value);
                out.push_str("</detail>");
            }
            out.push_str("\n  </details>");
        }
        if let Some(secs) = self.retry_after_secs() {
            out.push_str("\n  <retry_after>");
            // Into the buffer directly: no intermediate `String`.
            let _ = write!(out, "{secs}");
            out.push_str(if secs == 1 { " second" } else { " seconds" });
            out.push_str("</retry_after>");
        }
        out.push_str("\n</tool_error>");
        out
    }
}

/// The most bytes any envelope Fusion renders can have (`<tool_error>` and
/// `<validation_error>`), whatever the client sent and whatever the author wrote.
///
/// Client input is cut where it enters an envelope (a tool name, a key, a value sent, a field
/// path); an envelope that is still longer, from the author's own texts, is rendered again
/// with each part cut to a share of this bound (the message to 4 KiB, the recovery to 2 KiB, at
/// most 20 actions and 16 details, …), each cut text ending with `...`.
pub const MAX_ENVELOPE_BYTES: usize = 16 * 1024;

/// How much of each part of a `<tool_error>` is written, in escaped bytes or items.
struct Limits {
    code: usize,
    message: usize,
    recovery: usize,
    actions: usize,
    action: usize,
    details: usize,
    detail_key: usize,
    detail_value: usize,
}

impl Limits {
    const NONE: Limits = Limits {
        code: usize::MAX,
        message: usize::MAX,
        recovery: usize::MAX,
        actions: usize::MAX,
        action: usize::MAX,
        details: usize::MAX,
        detail_key: usize::MAX,
        detail_value: usize::MAX,
    };

    /// Shares of [`MAX_ENVELOPE_BYTES`]: with the markup, at most 15.3 KiB in all.
    const CAPPED: Limits = Limits {
        code: 64,
        message: 4096,
        recovery: 2048,
        actions: 20,
        action: 128,
        details: 16,
        detail_key: 64,
        detail_value: 256,
    };

    fn text(&self, out: &mut String, s: &str, max: usize) {
        if max == usize::MAX {
            xml::push_text(out, s);
        } else {
            xml::push_text_within(out, s, max);
        }
    }

    fn attr(&self, out: &mut String, s: &str, max: usize) {
        if max == usize::MAX {
            xml::push_attr(out, s);
        } else {
            xml::push_attr_within(out, s, max);
        }
    }
}

/// Two errors are equal when every part of the envelope is; the rendering cache is ignored.
impl PartialEq for ToolError {
    fn eq(&self, other: &Self) -> bool {
        self.inner.code == other.inner.code
            && self.inner.message == other.inner.message
            && self.recovery_text() == other.recovery_text()
            && self.inner.available_actions == other.inner.available_actions
            && self.inner.details == other.inner.details
            && self.inner.retry_after == other.inner.retry_after
            && self.inner.severity == other.inner.severity
    }
}

impl Eq for ToolError {}

impl fmt::Debug for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolError")
            .field("code", &self.inner.code)
            .field("severity", &self.inner.severity)
            .field("message", &self.inner.message)
            .field("recovery", &self.inner.recovery)
            .field("available_actions", &self.inner.available_actions)
            .field("details", &self.inner.details)
            .field("retry_after", &self.inner.retry_after)
            .finish()
    }
}

/// `CODE: message`, the short form for logs and `source()` chains; the model gets [`ToolError::render`].
impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.inner.code, self.inner.message)
    }
}

impl std::error::Error for ToolError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builder_edits_after_render_invalidate_the_cache() {
        let e = error(ErrorCode::NotFound, "m");
        assert!(!e.render().contains("recovery"));
        let e = e.recovery("r");
        assert!(e.render().contains("<recovery>r</recovery>"));
    }

    #[test]
    fn retry_after_rounds_up_and_zero_unsets() {
        assert_eq!(
            error("X", "m")
                .retry_after(Duration::from_millis(1500))
                .retry_after_secs(),
            Some(2)
        );
        assert_eq!(error("X", "m").retry_after(0).retry_after_secs(), None);
        assert_eq!(error("X", "m").retry_after(-3).retry_after_secs(), None);
        assert_eq!(
            error("X", "m").retry_after(7u64).retry_after_secs(),
            Some(7)
        );
    }

    #[test]
    fn severity_decides_is_error() {
        assert!(error("X", "m").is_error());
        assert!(error("X", "m").critical().is_error());
        assert!(!error("X", "m").warning().is_error());
        assert_eq!(Severity::default(), Severity::Error);
    }

    #[test]
    fn an_envelope_of_huge_author_texts_stays_within_the_bound() {
        let huge = "<&\"x".repeat(5_000);
        let e = error(huge.as_str(), huge.as_str())
            .recovery(huge.as_str())
            .available_actions((0..50).map(|_| huge.clone()))
            .details((0..50).map(|_| (huge.clone(), huge.clone())))
            .retry_after(u64::MAX);
        let text = e.render();
        assert!(text.len() <= MAX_ENVELOPE_BYTES, "{}", text.len());
        assert!(text.starts_with("<tool_error code=\"&lt;&amp;&quot;x"));
        assert!(text.ends_with("</retry_after>\n</tool_error>"));
        assert_eq!(text.matches("<action>").count(), 20);
        assert_eq!(text.matches("<detail key=").count(), 16);
        let small = error(ErrorCode::NotFound, "m").recovery("r");
        assert_eq!(
            small.render(),
            "<tool_error code=\"NOT_FOUND\" severity=\"error\">\n  <message>m</message>\n  <recovery>r</recovery>\n</tool_error>"
        );
    }

    #[test]
    fn rendering_capacity_is_enough_for_the_common_case() {
        let e = error(ErrorCode::NotFound, "No invoice with that ID")
            .recovery("List invoices first, then retry with a real ID")
            .available_actions(["billing.list_invoices"])
            .details([("requestedId", "inv_2026_9999")])
            .retry_after(30);
        let estimated = e.estimated_len();
        let text = e.into_rendered();
        assert!(estimated >= text.len(), "{estimated} < {}", text.len());
    }
}
