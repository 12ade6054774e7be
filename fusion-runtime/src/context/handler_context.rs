//! A handler's context parameter, [`Context<S>`]: the shared state and the call, typed.

use std::any::{TypeId, type_name};
use std::fmt;
use std::sync::Arc;

use super::{
    CallContext, CancellationToken, Elicitable, Elicited, LogLevel, Notifier, StateRequirement,
};
use crate::auth::{Delegation, Principal};
use crate::envelope::{ToolError, codes};
use crate::input::JsonObject;

/// A handler's context parameter: the shared state `S` and everything about the call a
/// handler uses (cancellation, the caller, progress and log messages, forms, the notifier).
///
/// Take it as the second parameter of a `#[tool_action]` function (or the only one, for a tool
/// with no input); register the state with
/// [`ServerBuilder::state`](crate::server::ServerBuilder::state). `Context` (that is,
/// `Context<()>`) needs no state. The state is reached with [`Context::state`], so its methods
/// never collide with the context's own:
///
/// ```text
/// #[tool_action(name = "billing.get_invoice")]
/// async fn get_invoice(input: GetInvoice, cx: Context<Store>) -> Result<Invoice, ToolError> {
///     if cx.is_cancelled() { /* … */ }
///     cx.state().find(&input.id).ok_or_else(|| error(NOT_FOUND, "No invoice with that ID"))
/// }
/// ```
pub struct Context<S = ()> {
    state: Arc<S>,
    call: CallContext,
}

impl<S> Context<S> {
    /// The shared state.
    pub fn state(&self) -> &S {
        &self.state
    }

    /// The shared state, as the `Arc` it is kept in.
    pub fn state_arc(&self) -> &Arc<S> {
        &self.state
    }

    /// The same call, untyped: what middleware sees, for code shared with it and for the
    /// other registered states ([`CallContext::state`]). A handler needs it for nothing else.
    pub fn untyped(&self) -> &CallContext {
        &self.call
    }

    /// The old name of [`Context::untyped`].
    #[deprecated(
        since = "0.1.0",
        note = "use the method on `Context` itself, or `untyped()` for the `CallContext`; removed in 0.2.0"
    )]
    pub fn call(&self) -> &CallContext {
        &self.call
    }

    /// The action's name.
    pub fn action(&self) -> &'static str {
        self.call.action()
    }

    /// The MCP tool name the client called (`billing_get_invoice`, or the group's tool).
    pub fn tool(&self) -> &str {
        self.call.tool()
    }

    /// The request's `_meta` object, when it sent one; see [`CallContext::meta`].
    pub fn meta(&self) -> Option<&JsonObject> {
        self.call.meta()
    }

    /// Hands the caller's session off to `domain`; see [`CallContext::handoff`]. Return the
    /// response from the handler.
    #[cfg(feature = "gateway")]
    #[cfg_attr(docsrs, doc(cfg(feature = "gateway")))]
    pub fn handoff(
        &self,
        domain: &str,
        reason: impl Into<String>,
        carry: serde_json::Value,
    ) -> crate::envelope::ToolResponse {
        self.call.handoff(domain, reason, carry)
    }

    /// Cancelled when the client cancels the request; long handlers should watch it.
    pub fn cancellation_token(&self) -> &CancellationToken {
        self.call.cancellation_token()
    }

    /// Who is calling: the principal of the request's bearer token, or one the embedding
    /// code set; `None` for anonymous calls (see [`auth`](crate::auth)).
    pub fn principal(&self) -> Option<&Principal> {
        self.call.principal()
    }

    /// The server's change notifier: `cx.notifier().resource_updated(uri)` after changing
    /// what a resource shows (see [`Notifier`]).
    pub fn notifier(&self) -> &Notifier {
        self.call.notifier()
    }

    /// The verified delegation the call came with (its `carry`, on whose behalf, from which
    /// gateway); see [`CallContext::delegation`].
    pub fn delegation(&self) -> Option<&Delegation> {
        self.call.delegation()
    }

    /// Whether the client cancelled the request.
    pub fn is_cancelled(&self) -> bool {
        self.call
            .watched_token()
            .is_some_and(CancellationToken::is_cancelled)
    }

    /// Whether the client asked for progress (sent a progress token); `false` in-process.
    pub fn wants_progress(&self) -> bool {
        self.call
            .scope()
            .sink
            .as_ref()
            .is_some_and(|n| n.has_progress_token())
    }

    /// Reports progress (`notifications/progress` with the request's progress token), so
    /// clients can draw a progress bar: `ctx.progress(50.0, Some(100.0), Some("halfway"))`.
    /// Returns whether it was sent: not when the client sent no progress token, nor
    /// in-process. See [`CallContext::progress`].
    pub async fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) -> bool {
        self.call.progress(progress, total, message).await
    }

    /// Sends a log message (`notifications/message`) if the client's session asked for
    /// `level` or lower (`info` until it calls `logging/setLevel`):
    /// `ctx.log(LogLevel::Info, "fetched 3 pages")`. Returns whether it was sent. See
    /// [`CallContext::log`].
    pub async fn log(&self, level: LogLevel, data: impl Into<serde_json::Value>) -> bool {
        self.call.log(level, data).await
    }

    /// Whether a log message at `level` would be sent; check it before building an
    /// expensive message.
    pub fn log_enabled(&self, level: LogLevel) -> bool {
        self.call.log_enabled(level)
    }

    /// Asks the user to fill in a form of `T`'s fields; see [`CallContext::elicit`] (and
    /// keep side effects after the last `elicit`: on 2026-07-28 the handler runs again).
    pub async fn elicit<T: Elicitable>(
        &self,
        message: impl Into<String>,
    ) -> Result<Elicited<T>, ToolError> {
        self.call.elicit(message).await
    }

    /// A completion from the client's model (deprecated by MCP); see [`CallContext::sample`].
    pub async fn sample(&self, params: serde_json::Value) -> Result<serde_json::Value, ToolError> {
        self.call.sample(params).await
    }

    /// A form with a hand-written schema; see [`CallContext::elicit_with_schema`].
    pub async fn elicit_with_schema(
        &self,
        message: impl Into<String>,
        requested_schema: crate::input::JsonObject,
    ) -> Result<Elicited<serde_json::Value>, ToolError> {
        self.call
            .elicit_with_schema(message, requested_schema)
            .await
    }
}

impl<S> Clone for Context<S> {
    fn clone(&self) -> Self {
        Context {
            state: self.state.clone(),
            call: self.call.clone(),
        }
    }
}

impl<S> fmt::Debug for Context<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Context")
            .field("state", &type_name::<S>())
            .field("call", &self.call)
            .finish()
    }
}

/// A value a handler can take as its context parameter, built from the call.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a `#[tool_action]` context parameter",
    label = "the parameter after the input must be `fusion_runtime::Context<S>`"
)]
pub trait FromCallContext: Sized + Send + 'static {
    /// The shared state this parameter needs, checked when the server is built.
    fn requirement() -> Option<StateRequirement>;

    /// Builds the parameter. An `Err` is sent to the model as it is.
    fn from_call_context(cx: &CallContext) -> Result<Self, ToolError>;
}

impl<S: Send + Sync + 'static> FromCallContext for Context<S> {
    fn requirement() -> Option<StateRequirement> {
        (TypeId::of::<S>() != TypeId::of::<()>()).then(StateRequirement::of::<S>)
    }

    fn from_call_context(cx: &CallContext) -> Result<Self, ToolError> {
        match cx.state::<S>() {
            Some(state) => Ok(Context {
                state,
                call: cx.clone(),
            }),
            None => Err(ToolError::new(
                codes::INTERNAL_ERROR,
                format!(
                    "The server is misconfigured: action {} needs state {} that was not registered",
                    cx.action(),
                    type_name::<S>()
                ),
            )
            .recovery("Do not retry; report this to the server's operator")
            .critical()),
        }
    }
}

impl FromCallContext for CallContext {
    fn requirement() -> Option<StateRequirement> {
        None
    }

    fn from_call_context(cx: &CallContext) -> Result<Self, ToolError> {
        Ok(cx.clone())
    }
}
