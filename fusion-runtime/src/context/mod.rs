//! What a call carries, below both the actions that run and the server that routes them:
//! shared state, who is calling ([`ClientKey`]), the request's cancellation, and the sinks a
//! handler reports progress and log messages to ([`RequestSink`], which the MCP bridge
//! implements over its connection), and the [`Notifier`] application code tells clients
//! what changed with (resources, lists).
//!
//! Progress and log messages are best effort. A call made in-process has no client to tell; a
//! client that sent no progress token gets no progress; a log message below the level the
//! client set with `logging/setLevel` ([`DEFAULT_LOG_LEVEL`] until it sets one) is dropped.
//! None of this is an error for the handler: each method returns whether a notification went
//! out.

mod bus;
mod changes;
mod client;
mod elicit;
mod handler_context;
mod handoff;
mod log;
mod scope;

pub use crate::store::Change;
pub use changes::{
    Changes, DEFAULT_CHANGE_CAPACITY, DEFAULT_MAX_LISTENS, DEFAULT_MAX_LISTENS_PER_CLIENT,
    ListenLimits, ListenRefused, Notifier, Received,
};
pub use client::ClientKey;
#[allow(deprecated)]
pub use elicit::ELICITATION_UNSUPPORTED;
pub use elicit::{
    __private, ElicitAnswer, ElicitFailure, ElicitRequest, Elicitable, Elicited, Elicitor,
    elicitation_schema, form_schema,
};
pub use handler_context::{Context, FromCallContext};
pub use handoff::{ActiveHandoff, HandoffSlot};
pub use log::{DEFAULT_LOG_LEVEL, LogLevel, LogThreshold};
pub use scope::{RequestScope, RequestSink};

use std::any::{Any, TypeId, type_name};
use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, OnceLock};

/// The token that cancels a request ([`RequestScope::with_cancellation`]), re-exported from
/// `tokio-util` so that embedding code needs no matching version of it.
pub use tokio_util::sync::CancellationToken;

use crate::auth::{Delegation, Principal};
use crate::envelope::{ToolError, codes};
use crate::input::JsonObject;

/// The shared states registered with [`ServerBuilder::state`](crate::server::ServerBuilder::state),
/// one value per type.
#[derive(Clone, Default)]
pub(crate) struct States {
    map: HashMap<TypeId, Arc<dyn Any + Send + Sync>>,
    /// The server's change notifier, which every call can reach.
    pub(crate) changes: Notifier,
}

impl States {
    pub(crate) fn insert<S: Send + Sync + 'static>(&mut self, state: Arc<S>) {
        self.map.insert(TypeId::of::<S>(), state);
    }

    pub(crate) fn contains(&self, id: TypeId) -> bool {
        id == TypeId::of::<()>() || self.map.contains_key(&id)
    }

    fn get<S: Send + Sync + 'static>(&self) -> Option<Arc<S>> {
        if TypeId::of::<S>() == TypeId::of::<()>() {
            // `Context<()>` needs no registration.
            let unit: Arc<dyn Any + Send + Sync> = Arc::new(());
            return unit.downcast::<S>().ok();
        }
        self.map
            .get(&TypeId::of::<S>())?
            .clone()
            .downcast::<S>()
            .ok()
    }
}

/// A state type a handler needs; the server refuses to build when it is not registered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StateRequirement {
    /// The state's type id.
    pub type_id: TypeId,
    /// The state's type name, for the error message.
    pub type_name: &'static str,
}

impl StateRequirement {
    /// The requirement for state type `S`.
    pub fn of<S: 'static>() -> Self {
        StateRequirement {
            type_id: TypeId::of::<S>(),
            type_name: type_name::<S>(),
        }
    }
}

struct CallInner {
    action: &'static str,
    /// Whether the call is forwarded to a mounted source (`action` is then its name).
    mounted: bool,
    tool: Arc<str>,
    states: Arc<States>,
    scope: RequestScope,
    delegation: OnceLock<Delegation>,
    /// The token handed to a handler whose scope has none, made when it first asks.
    never_cancelled: OnceLock<CancellationToken>,
}

/// One call, untyped: the action being run, the registered states and the request scope.
///
/// Cheap to clone. Handlers receive the typed [`Context`] built from it (and reach this one, if
/// ever, with [`Context::untyped`]); middleware receives it directly.
#[derive(Clone)]
pub struct CallContext {
    inner: Arc<CallInner>,
}

impl CallContext {
    pub(crate) fn new(
        action: &'static str,
        tool: Arc<str>,
        states: Arc<States>,
        scope: RequestScope,
    ) -> Self {
        Self::made(action, false, tool, states, scope)
    }

    /// The context of a call forwarded to the [`ToolSource`](crate::server::ToolSource)
    /// named `source` (a mounted upstream).
    pub(crate) fn forwarded(
        source: &'static str,
        tool: Arc<str>,
        states: Arc<States>,
        scope: RequestScope,
    ) -> Self {
        Self::made(source, true, tool, states, scope)
    }

    fn made(
        action: &'static str,
        mounted: bool,
        tool: Arc<str>,
        states: Arc<States>,
        scope: RequestScope,
    ) -> Self {
        CallContext {
            inner: Arc::new(CallInner {
                action,
                mounted,
                tool,
                states,
                scope,
                delegation: OnceLock::new(),
                never_cancelled: OnceLock::new(),
            }),
        }
    }

    /// The action's name (`billing.get_invoice`); for a call of a mounted upstream's tool, the
    /// mount's name (`finance`, see [`CallContext::mount`]).
    pub fn action(&self) -> &'static str {
        self.inner.action
    }

    /// For a call of a mounted upstream's tool (forwarded, not run here): the mount's name.
    /// Such a call has no action and no typed input; [`CallContext::tool`] is the tool
    /// called (`finance_get_invoice`), and middleware sees its arguments as sent.
    pub fn mount(&self) -> Option<&'static str> {
        self.inner.mounted.then_some(self.inner.action)
    }

    /// The MCP tool name the client called (`billing_get_invoice`, or the group's tool).
    pub fn tool(&self) -> &str {
        &self.inner.tool
    }

    /// The registered state of type `S`, if any.
    pub fn state<S: Send + Sync + 'static>(&self) -> Option<Arc<S>> {
        self.inner.states.get::<S>()
    }

    /// The request scope: cancellation, peer, progress token, transport extensions.
    pub fn scope(&self) -> &RequestScope {
        &self.inner.scope
    }

    /// The request's cancellation token. A call nobody can cancel (see
    /// [`RequestScope::cancellation`]) gets one made when first asked for, which only the
    /// handler itself can cancel.
    pub fn cancellation_token(&self) -> &CancellationToken {
        match self.inner.scope.cancellation() {
            Some(token) => token,
            None => self
                .inner
                .never_cancelled
                .get_or_init(CancellationToken::new),
        }
    }

    /// The token the pipeline watches: the request's, or the one a handler was handed.
    pub(crate) fn watched_token(&self) -> Option<&CancellationToken> {
        self.inner
            .scope
            .cancellation()
            .or_else(|| self.inner.never_cancelled.get())
    }

    /// Who is calling: the principal of the request's bearer token, or one the embedding
    /// code set; `None` for anonymous calls (see [`auth`](crate::auth)).
    pub fn principal(&self) -> Option<&Principal> {
        self.inner.scope.principal()
    }

    /// The server's change notifier: tell clients a resource or a list changed.
    pub fn notifier(&self) -> &Notifier {
        &self.inner.states.changes
    }

    /// The request's `_meta` object, when it sent one: the keys a client or gateway put
    /// there beside the protocol's own (`progressToken`, `io.modelcontextprotocol/…`).
    pub fn meta(&self) -> Option<&JsonObject> {
        self.inner.scope.meta.as_deref()
    }

    /// The verified delegation the call came with, once
    /// [`DelegationVerifier::middleware`](crate::auth::DelegationVerifier::middleware) accepted
    /// it; `None` without that middleware.
    pub fn delegation(&self) -> Option<&Delegation> {
        self.inner.delegation.get()
    }

    /// Records the call's verified delegation (the first one set stays).
    pub(crate) fn set_delegation(&self, delegation: Delegation) {
        let _ = self.inner.delegation.set(delegation);
    }
}

impl CallContext {
    /// Asks the user to fill in a form of `T`'s fields and waits for the answer: a
    /// server-to-client `elicitation/create` for 2025 clients, a multi-round-trip
    /// `input_required` answer for 2026-07-28 ones (the handler then runs again from the
    /// start when the client retries, and this returns the answer at once: keep side
    /// effects after the last `elicit`).
    ///
    /// The answer is checked like tool arguments; an invalid one is a `VALIDATION_ERROR`
    /// with the same `<field>` lines. A client that cannot show a form (no `elicitation`
    /// capability, a stateless 2025 HTTP request, an in-process call) gets an
    /// [`ELICITATION_UNSUPPORTED`](crate::codes::ELICITATION_UNSUPPORTED) error whose recovery says to ask in conversation.
    ///
    /// `T` must be a flat object of strings, numbers, booleans and enums: derive
    /// [`Elicitable`](derive@crate::Elicitable) next to `ToolInput`, which checks it at compile
    /// time.
    pub async fn elicit<T: Elicitable>(
        &self,
        message: impl Into<String>,
    ) -> Result<Elicited<T>, ToolError> {
        let schema = elicit::cached_schema::<T>()
            .map_err(|why| elicit::not_a_form(type_name::<T>(), &why))?;
        let answer = self
            .elicit_with_schema(message, schema.as_ref().clone())
            .await?;
        Ok(match answer {
            Elicited::Accept(content) => match T::from_arguments(&content) {
                Ok(value) => Elicited::Accept(value),
                Err(report) => {
                    // The server answers the call with the report's own `<validation_error>`
                    // (the form's fields as its `<field>` lines), named as the call was.
                    let fields: Vec<String> =
                        report.issues().iter().map(|i| i.field_name()).collect();
                    return Err(ToolError::new(
                        codes::VALIDATION_ERROR,
                        format!(
                            "The user's answer to the form did not validate (fields: {})",
                            fields.join(", ")
                        ),
                    )
                    .recovery("Call the tool again so the user is asked again")
                    .attach(Arc::new(report)));
                }
            },
            Elicited::Decline => Elicited::Decline,
            Elicited::Cancel => Elicited::Cancel,
        })
    }

    /// [`elicit`](CallContext::elicit) with a hand-written form schema (a flat
    /// `{"type":"object","properties":…}`): the accepted content comes back as JSON,
    /// unchecked.
    pub async fn elicit_with_schema(
        &self,
        message: impl Into<String>,
        requested_schema: crate::input::JsonObject,
    ) -> Result<Elicited<serde_json::Value>, ToolError> {
        let Some(elicitor) = self.scope().any_elicitor() else {
            return Err(elicit::unsupported("the call is in-process"));
        };
        let request = ElicitRequest {
            message: message.into(),
            requested_schema,
        };
        match elicitor.elicit(request).await {
            Ok(ElicitAnswer::Accept(content)) => Ok(Elicited::Accept(content)),
            Ok(ElicitAnswer::Decline) => Ok(Elicited::Decline),
            Ok(ElicitAnswer::Cancel) => Ok(Elicited::Cancel),
            Err(ElicitFailure::Unsupported(why)) => Err(elicit::unsupported(&why)),
            Err(ElicitFailure::Failed(why)) => Err(elicit::failed(&why)),
        }
    }

    /// Asks the client's model for a completion: `sampling/createMessage` with `params`
    /// (`{"messages": [...], "maxTokens": n, ...}`), by the same mechanism as
    /// [`elicit`](CallContext::elicit) on each protocol generation; returns the client's
    /// `CreateMessageResult` as JSON. A client without the `sampling` capability gets an
    /// [`ELICITATION_UNSUPPORTED`](crate::codes::ELICITATION_UNSUPPORTED) error.
    ///
    /// Sampling is deprecated by the MCP specification (SEP-2577) and may leave a later
    /// revision: prefer returning what the model needs in the tool's result.
    pub async fn sample(&self, params: serde_json::Value) -> Result<serde_json::Value, ToolError> {
        let Some(elicitor) = self.scope().any_elicitor() else {
            return Err(elicit::unsupported("the call is in-process"));
        };
        match elicitor.sample(params).await {
            Ok(result) => Ok(result),
            Err(ElicitFailure::Unsupported(why)) => Err(elicit::unsupported(&why)),
            Err(ElicitFailure::Failed(why)) => Err(elicit::failed(&why)),
        }
    }

    /// Reports progress to the client: a `notifications/progress` carrying the request's
    /// progress token. `progress` should grow with every call; `total` is the value it will
    /// reach, when known.
    ///
    /// Returns `true` when the notification was sent; `false` when the client sent no
    /// progress token, the call is in-process, or the connection is gone.
    pub async fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) -> bool {
        let Some(sink) = &self.scope().sink else {
            return false;
        };
        if !sink.has_progress_token() {
            return false;
        }
        match sink
            .progress(progress, total, message.map(str::to_owned))
            .await
        {
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
        scope.sink.is_some() && scope.log_threshold.allows(level)
    }

    /// Sends a log message to the client (`notifications/message`), with the action's name
    /// as the logger. `data` is any JSON: a string, or an object with details.
    ///
    /// Returns `true` when it was sent; `false` when it is below the session's level (see
    /// [`DEFAULT_LOG_LEVEL`]), the call is in-process, or the connection is gone.
    pub async fn log(&self, level: LogLevel, data: impl Into<serde_json::Value>) -> bool {
        if !self.log_enabled(level) {
            return false;
        }
        let Some(sink) = &self.scope().sink else {
            return false;
        };
        match sink.log(level, self.action(), data.into()).await {
            Ok(()) => true,
            Err(e) => {
                tracing::debug!(action = self.action(), error = %e, "log message not sent");
                false
            }
        }
    }
}

impl fmt::Debug for CallContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallContext")
            .field("action", &self.inner.action)
            .field("tool", &self.inner.tool)
            .field("scope", &self.inner.scope)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Store(u32);

    fn call_with(states: States) -> CallContext {
        CallContext::new(
            "a.b",
            "a_b".into(),
            Arc::new(states),
            RequestScope::detached(),
        )
    }

    #[test]
    fn unit_context_needs_no_state() {
        let cx = call_with(States::default());
        assert!(Context::<()>::from_call_context(&cx).is_ok());
        assert_eq!(<Context<()> as FromCallContext>::requirement(), None);
    }

    #[test]
    fn registered_state_is_found_and_missing_state_is_an_internal_error() {
        let mut states = States::default();
        states.insert(Arc::new(Store(7)));
        let cx = call_with(states);
        let ctx = Context::<Store>::from_call_context(&cx).map(|c| c.state().0);
        assert_eq!(ctx.ok(), Some(7));
        let missing = Context::<String>::from_call_context(&cx);
        assert!(matches!(missing, Err(e) if e.code() == &codes::INTERNAL_ERROR));
        assert_eq!(
            <Context<Store> as FromCallContext>::requirement().map(|r| r.type_id),
            Some(TypeId::of::<Store>())
        );
    }

    #[tokio::test]
    async fn in_process_calls_send_nothing() {
        let cx = CallContext::new(
            "a.b",
            "a_b".into(),
            Default::default(),
            RequestScope::detached(),
        );
        assert!(!cx.progress(1.0, Some(2.0), None).await);
        assert!(!cx.log_enabled(LogLevel::Emergency));
        assert!(!cx.log(LogLevel::Emergency, "x").await);
    }
}
