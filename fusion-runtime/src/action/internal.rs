//! `?` in a handler that returns `Result<_, ToolError>`: the errors handlers meet most
//! (`std::io::Error`, `serde_json::Error`, `anyhow::Error`) become a [`ToolError`] carrying
//! them, which the pipeline writes as the same `INTERNAL_ERROR` it writes for a handler that
//! returns the error itself ([`failure_from`](super::failure_from)): the error's `Display`
//! message in the envelope (or not, with `ServerBuilder::hide_internal_errors`), its source
//! chain in the log.

use std::any::Any;
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
        .recovery(RECOVERY)
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
fn chain(e: &(dyn Error + 'static)) -> String {
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
        carry(classify(e))
    }
}

/// `?` on a JSON error in a handler returning `Result<_, ToolError>`: `INTERNAL_ERROR`, as if
/// the handler had returned the `serde_json::Error`.
impl From<serde_json::Error> for ToolError {
    fn from(e: serde_json::Error) -> Self {
        carry(classify(e))
    }
}

/// `?` on an `anyhow::Error` in a handler returning `Result<_, ToolError>`: the `ToolError`
/// inside it when there is one (sent intact), else `INTERNAL_ERROR` with its message.
impl From<anyhow::Error> for ToolError {
    fn from(e: anyhow::Error) -> Self {
        carry(classify(e))
    }
}

/// The branded `ToolError` in `e`, or `e`'s message and source chain.
pub(crate) fn classify<E>(e: E) -> Result<ToolError, Carried>
where
    E: Into<Box<dyn Error + Send + Sync>> + 'static,
{
    let mut slot = Some(e);
    if let Some(any) = (&mut slot as &mut dyn Any).downcast_mut::<Option<anyhow::Error>>()
        && let Some(a) = any.take()
    {
        return from_anyhow(a);
    }
    match slot {
        Some(e) => from_boxed(e.into()),
        None => Err(Carried {
            message: String::from("unknown error"),
            chain: String::from("unknown error"),
        }),
    }
}

fn from_anyhow(a: anyhow::Error) -> Result<ToolError, Carried> {
    match a.downcast::<ToolError>() {
        Ok(t) => Ok(t),
        Err(a) => {
            for cause in a.chain() {
                if let Some(t) = find_in(cause) {
                    return Ok(t);
                }
            }
            Err(Carried {
                message: a.to_string(),
                chain: format!("{a:#}"),
            })
        }
    }
}

fn from_boxed(b: Box<dyn Error + Send + Sync>) -> Result<ToolError, Carried> {
    match b.downcast::<ToolError>() {
        Ok(t) => Ok(*t),
        Err(b) => {
            let mut cause: Option<&(dyn Error + 'static)> = Some(b.as_ref());
            while let Some(c) = cause {
                if let Some(t) = find_in(c) {
                    return Ok(t);
                }
                cause = c.source();
            }
            Err(Carried {
                message: b.to_string(),
                chain: chain(b.as_ref()),
            })
        }
    }
}

fn find_in(e: &(dyn Error + 'static)) -> Option<ToolError> {
    e.downcast_ref::<ToolError>().cloned()
}
