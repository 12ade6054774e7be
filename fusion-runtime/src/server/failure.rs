//! Failures that are not tool errors, written as `INTERNAL_ERROR` (SPEC §6). Finding a
//! branded `ToolError` inside an error is [`failure_from`](crate::action::failure_from).

use crate::action::HandlerFailure;
use crate::envelope::{ToolError, codes};

/// The recovery of every `INTERNAL_ERROR` the pipeline writes.
pub const INTERNAL_RECOVERY: &str = "Do not retry this call blindly: the failure is on the server's side. Tell the user what failed, or continue with a different action.";

/// How the pipeline writes failures that are not tool errors.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct InternalErrors {
    /// Hide the error's message from the model.
    pub hide_messages: bool,
}

impl InternalErrors {
    pub(crate) fn envelope(self, action: &str, message: &str) -> ToolError {
        let text = if self.hide_messages || message.is_empty() {
            format!("{action} failed because of an internal error")
        } else {
            format!("{action} failed: {message}")
        };
        ToolError::new(codes::INTERNAL_ERROR, text)
            .recovery(INTERNAL_RECOVERY)
            .critical()
    }

    pub(crate) fn panic_envelope(self, action: &str) -> ToolError {
        ToolError::new(
            codes::INTERNAL_ERROR,
            format!("The handler of {action} panicked; the server is still running"),
        )
        .recovery(INTERNAL_RECOVERY)
        .critical()
    }

    pub(crate) fn into_envelope(self, action: &str, failure: HandlerFailure) -> ToolError {
        match failure {
            HandlerFailure::Tool(t) => t,
            HandlerFailure::Internal(message) => self.envelope(action, &message),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::action::failure_from;
    use crate::envelope::error;
    use std::error::Error;
    use std::fmt;

    #[derive(Debug)]
    struct Outer(ToolError);
    impl fmt::Display for Outer {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("outer")
        }
    }
    impl Error for Outer {
        fn source(&self) -> Option<&(dyn Error + 'static)> {
            Some(&self.0)
        }
    }

    fn tool(f: HandlerFailure) -> Option<ToolError> {
        match f {
            HandlerFailure::Tool(t) => Some(t),
            HandlerFailure::Internal(_) => None,
        }
    }

    #[test]
    fn a_tool_error_passes_intact_through_every_wrapper() {
        let t = error(codes::NOT_FOUND, "gone")
            .recovery("list first")
            .warning();
        assert_eq!(tool(failure_from(t.clone())), Some(t.clone()));
        assert_eq!(
            tool(failure_from(anyhow::Error::new(t.clone()))),
            Some(t.clone())
        );
        assert_eq!(
            tool(failure_from(
                anyhow::Error::new(t.clone()).context("while charging")
            )),
            Some(t.clone())
        );
        let boxed: Box<dyn Error + Send + Sync> = Box::new(t.clone());
        assert_eq!(tool(failure_from(boxed)), Some(t.clone()));
        assert_eq!(tool(failure_from(Outer(t.clone()))), Some(t.clone()));
        assert_eq!(
            tool(failure_from(anyhow::Error::new(Outer(t.clone())))),
            Some(t)
        );
    }

    #[test]
    fn other_errors_keep_only_their_display_message() {
        let io = std::io::Error::other("disk on fire");
        match failure_from(io) {
            HandlerFailure::Internal(m) => assert_eq!(m, "disk on fire"),
            other => panic!("{other:?}"),
        }
        match failure_from(anyhow::anyhow!("db down")) {
            HandlerFailure::Internal(m) => assert_eq!(m, "db down"),
            other => panic!("{other:?}"),
        }
        match failure_from(String::from("plain")) {
            HandlerFailure::Internal(m) => assert_eq!(m, "plain"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn internal_envelopes_say_not_to_retry_and_can_hide_the_message() {
        let shown = InternalErrors::default().envelope("a.b", "db down");
        assert!(shown.render().contains("a.b failed: db down"));
        assert!(shown.render().contains("Do not retry this call blindly"));
        let hidden = InternalErrors {
            hide_messages: true,
        }
        .envelope("a.b", "db down");
        assert!(!hidden.render().contains("db down"));
        assert!(
            InternalErrors::default()
                .panic_envelope("a.b")
                .message()
                .contains("panicked")
        );
    }
}
