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
mod handoff;
mod log;

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
pub use handoff::{ActiveHandoff, HandoffSlot};
pub use log::{DEFAULT_LOG_LEVEL, LogLevel, LogThreshold};

use std::any::{Any, TypeId, type_name};
use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, OnceLock};

use futures::future::BoxFuture;
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

/// Where a notification of a call goes: the client's connection. The MCP bridge implements
/// it over its peer (`mcp`); a call made in-process has none.
pub trait RequestSink: Send + Sync + 'static {
    /// Whether the request carried a progress token (progress can be reported at all).
    fn has_progress_token(&self) -> bool;

    /// Sends `notifications/progress` with the request's progress token. `Err` holds why it
    /// was not sent.
    fn progress(
        &self,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    ) -> BoxFuture<'static, Result<(), String>>;

    /// Sends `notifications/message` at `level` from `logger`. `Err` holds why it was not
    /// sent.
    fn log(
        &self,
        level: LogLevel,
        logger: &'static str,
        data: serde_json::Value,
    ) -> BoxFuture<'static, Result<(), String>>;

    /// Asks the client's user over this connection, for a scope whose
    /// [`elicitor`](RequestScope::elicitor) is `None`: the MCP bridge makes a 2025 call's
    /// elicitor here, the first time its handler elicits, so a call that never asks pays
    /// nothing for one. The same elicitor each time (it counts the call's rounds); `None`
    /// (the default) when the connection cannot ask.
    fn elicitor(&self) -> Option<Arc<dyn Elicitor>> {
        None
    }
}

impl ClientKey {
    /// The key of the call in `scope` (see the type's documentation for the order).
    pub fn of(scope: &RequestScope) -> ClientKey {
        if let Some(principal) = &scope.principal {
            return ClientKey(principal.client_key());
        }
        if let Some(key) = &scope.client {
            return key.clone();
        }
        if scope.sink.is_some() {
            return ClientKey("connection".to_owned());
        }
        ClientKey("local".to_owned())
    }
}

/// Where a call comes from: the transport-level facts of one request.
///
/// The MCP bridge fills it from its request ([`mcp::request_scope`](crate::mcp::request_scope));
/// a call made in-process (the `call` command, tests) uses [`RequestScope::detached`].
#[derive(Clone, Default)]
#[non_exhaustive]
pub struct RequestScope {
    /// Cancelled when the client cancels the request or the connection closes; `None` for a
    /// request nobody can cancel (see [`RequestScope::cancellation`]).
    pub(crate) cancellation: Option<CancellationToken>,
    /// Who is calling, when the transport knows (see [`ClientKey`]).
    pub client: Option<ClientKey>,
    /// The client's connection, for notifications (progress, logs). `None` in-process.
    pub sink: Option<Arc<dyn RequestSink>>,
    /// The lowest log level the client's session asked for (`logging/setLevel`).
    pub log_threshold: LogThreshold,
    /// Who is calling, when authenticated: over HTTP the authentication layer sets it from the
    /// bearer token; over stdio only the embedding code does ([`RequestScope::with_principal`]).
    pub principal: Option<Arc<Principal>>,
    /// Asks the client's user for input ([`CallContext::elicit`]). When `None`, the
    /// [`sink`](RequestScope::sink)'s [`RequestSink::elicitor`] is asked; in-process, neither.
    pub elicitor: Option<Arc<dyn Elicitor>>,
    /// The session's handoff slot (2025 sessions of a server with handoff domains); `None`
    /// when there is no session to hand off.
    pub handoff: Option<Arc<HandoffSlot>>,
    /// The request's `_meta` object, when it sent one (the MCP bridge moves it here).
    pub meta: Option<Arc<JsonObject>>,
    /// Whether the call runs as an MCP task: its action's `timeout` gives way to the task's
    /// time to live, which the task's runner enforces.
    pub(crate) as_task: bool,
}

impl RequestScope {
    /// A scope with no connection: for in-process calls. Nothing can cancel it; give it a
    /// token with [`with_cancellation`](RequestScope::with_cancellation) to cancel the call.
    pub fn detached() -> Self {
        RequestScope::default()
    }

    /// The same scope, cancelled when `token` is (the client cancels the request, its
    /// connection closes, or the embedding code gives up on it).
    pub fn with_cancellation(mut self, token: CancellationToken) -> Self {
        self.cancellation = Some(token);
        self
    }

    /// The token that cancels the request; `None` when nothing can (a detached scope made
    /// without [`with_cancellation`](RequestScope::with_cancellation)). A call nobody can
    /// cancel carries no token and pays nothing for one.
    pub fn cancellation(&self) -> Option<&CancellationToken> {
        self.cancellation.as_ref()
    }

    /// Whether the request was cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.cancellation
            .as_ref()
            .is_some_and(CancellationToken::is_cancelled)
    }

    /// Completes when the request is cancelled; never, for a request nobody can cancel.
    pub async fn cancelled(&self) {
        match &self.cancellation {
            Some(token) => token.cancelled().await,
            None => std::future::pending().await,
        }
    }

    /// The same scope, filtering log messages with the session's `threshold`.
    pub fn with_log_threshold(mut self, threshold: LogThreshold) -> Self {
        self.log_threshold = threshold;
        self
    }

    /// The same scope, called by `principal` (for in-process calls and embedding code; over
    /// HTTP the authentication layer sets it from the bearer token).
    pub fn with_principal(mut self, principal: Principal) -> Self {
        self.principal = Some(Arc::new(principal));
        self
    }

    /// Who is calling, when known (see [`auth`](crate::auth)).
    pub fn principal(&self) -> Option<&Principal> {
        self.principal.as_deref()
    }

    /// What asks the client's user: the scope's own elicitor, else the connection's.
    fn any_elicitor(&self) -> Option<Arc<dyn Elicitor>> {
        match &self.elicitor {
            Some(elicitor) => Some(Arc::clone(elicitor)),
            None => self.sink.as_ref()?.elicitor(),
        }
    }
}

impl fmt::Debug for RequestScope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RequestScope")
            .field("cancelled", &self.is_cancelled())
            .field("client", &self.client)
            .field("connected", &self.sink.is_some())
            .field(
                "progress_token",
                &self.sink.as_ref().is_some_and(|n| n.has_progress_token()),
            )
            .field("log_threshold", &self.log_threshold.get())
            .field("principal", &self.principal.as_ref().map(|p| p.subject()))
            .field(
                "meta_keys",
                &self.meta.as_ref().map(|m| m.keys().collect::<Vec<_>>()),
            )
            .finish()
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
/// Cheap to clone. Handlers receive the typed [`Context`] built from it; middleware receives
/// it directly.
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
        note = "use the method on `Context` itself, or `untyped()` for the `CallContext`"
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
