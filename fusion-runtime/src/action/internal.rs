//! `?` in a handler that returns `Result<_, ToolError>`: the errors handlers meet most
//! (`std::io::Error`, `serde_json::Error`, `anyhow::Error`) become a [`ToolError`] carrying
//! them, which the pipeline writes as the same `INTERNAL_ERROR` it writes for a handler that
//! returns the error itself ([`failure_from`](super::failure_from)): the error's `Display`
//! message in the envelope (or not, with `ServerBuilder::hide_internal_errors`), its source
//! chain in the log.

use std::error::Error;
use std::sync::Arc;

use crate::envelope::{ToolError, codes};

/// The recovery of every `INTERNAL_ERROR` (the pipeline's own, `server::INTERNAL_RECOVERY`;
/// `tests/tests/no_input_and_question_mark.rs` holds the two equal).
const RECOVERY: &str = "Do not retry this call blindly: the failure is on the server's side. Tell the user what failed, or continue with a different action.";

/// What a converted error's envelope says on its own: no internal text.
const MESSAGE: &str = "The action failed because of an internal error";

/// A non-tool error a `?` carried into a [`ToolError`]: what the pipeline writes and logs.
pub(crate) struct Carried {
    /// The error's `Display` message.
    pub(crate) message: String,
    /// The error and its sources, for the log.
    pub(crate) chain: String,
}

/// The envelope a converted error shows when it is rendered outside the pipeline, or edited by
/// its author (then it goes out as edited).
fn unedited() -> ToolError {
    ToolError::new(codes::INTERNAL_ERROR, MESSAGE)
        .suggest(RECOVERY)
        .critical()
}

/// The error's message and chain, or the tool error found in it.
fn carry(failure: Result<ToolError, Carried>) -> ToolError {
    match failure {
        Ok(t) => t,
        Err(carried) => unedited().attach(Arc::new(carried)),
    }
}

/// The message a converted error carries, when its author left it as `?` made it.
pub(crate) fn carried(t: &ToolError) -> Option<&Carried> {
    let carried = t.attachment()?.downcast_ref::<Carried>()?;
    (*t == unedited()).then_some(carried)
}

/// `e` and its `source()` chain, `: `-separated.
pub(crate) fn chain(e: &(dyn Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        text.push_str(": ");
        text.push_str(&c.to_string());
        cause = c.source();
    }
    text
}

/// `?` on an I/O error in a handler returning `Result<_, ToolError>`: `INTERNAL_ERROR`, as if
/// the handler had returned the `io::Error`.
impl From<std::io::Error> for ToolError {
    fn from(e: std::io::Error) -> Self {
        carry(super::classify(e))
    }
}

/// `?` on a JSON error in a handler returning `Result<_, ToolError>`: `INTERNAL_ERROR`, as if
/// the handler had returned the `serde_json::Error`.
impl From<serde_json::Error> for ToolError {
    fn from(e: serde_json::Error) -> Self {
        carry(super::classify(e))
    }
}

/// `?` on an `anyhow::Error` in a handler returning `Result<_, ToolError>`: the `ToolError`
/// inside it when there is one (sent intact), else `INTERNAL_ERROR` with its message.
impl From<anyhow::Error> for ToolError {
    fn from(e: anyhow::Error) -> Self {
        carry(super::classify(e))
    }
}
