//! Where a call comes from ([`RequestScope`]), and where its notifications go
//! ([`RequestSink`]): what the code that calls the pipeline (the MCP bridge, the test kit, a
//! gateway, an embedding application) hands it. Handlers never see either.

use std::fmt;
use std::sync::Arc;

use futures::future::BoxFuture;

use tokio_util::sync::CancellationToken;

use super::client::ClientKey;
use super::elicit::Elicitor;
use super::handoff::HandoffSlot;
use super::log::{LogLevel, LogThreshold};
use crate::auth::Principal;
use crate::input::JsonObject;

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
        if let Some(client) = &scope.client {
            return ClientKey::owner(scope.principal.as_deref(), client);
        }
        if let Some(principal) = &scope.principal {
            return ClientKey(principal.client_key());
        }
        if scope.sink.is_some() {
            return ClientKey("connection".to_owned());
        }
        ClientKey("local".to_owned())
    }
}

impl ClientKey {
    /// Who owns what a request makes (its tasks, its calls' cancellation, its state): its
    /// principal's key, else its client's — the one place that order is written.
    pub(crate) fn owner(principal: Option<&Principal>, client: &ClientKey) -> ClientKey {
        match principal {
            Some(principal) => ClientKey(principal.client_key()),
            None => client.clone(),
        }
    }
}

/// Where a call comes from: the transport-level facts of one request.
///
/// The MCP bridge fills it from its request ([`mcp::request_scope`](crate::mcp::request_scope));
/// a call made in-process (the `call` command, tests) uses [`RequestScope::detached`]. It is for
/// the code that calls the pipeline (`Server::call`: the test kit, a gateway, an embedding
/// application), never for a handler: what a handler needs of it, its
/// [`Context`](super::Context) has.
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
    /// Asks the client's user for input ([`CallContext::elicit`](super::CallContext::elicit)). When `None`, the
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
    pub(super) fn any_elicitor(&self) -> Option<Arc<dyn Elicitor>> {
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
