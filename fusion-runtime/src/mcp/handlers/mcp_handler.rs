//! [`McpHandler`]: what one session (a stdio connection, an HTTP session, or one stateless
//! HTTP request) keeps — the server, its log level, its resource subscriptions, the principal
//! stdio was given, its handoff — and the pieces every answer uses: [`to_call_tool_result`],
//! and [`McpHandler::elicitable`] for a request that may ask the user.
//!
//! Reads: nothing of the request but what each caller passes. Writes: nothing; the
//! `ServerHandler` methods are in `methods.rs`, `tools/call` in `call.rs`.

use rmcp::model::{CallToolResult, ContentBlock, InputRequiredResult, ResourceContents};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};

use super::elicit;
use super::era::Era;
use super::notify;
use super::request_state;
use super::subscriptions::Subscriptions;
use crate::auth::Principal;
use crate::context::{LogLevel, LogThreshold};
use crate::envelope::{Content, ToolResponse};
use crate::server::Server;

/// The rmcp `ServerHandler` of a Fusion [`Server`], for one session: it keeps the session's
/// log level and resource subscriptions, and passes the server's change notifications on to
/// the session once its client is initialized. Clones share it; make a new handler per
/// connection.
#[derive(Clone, Debug)]
pub struct McpHandler {
    pub(crate) server: Server,
    pub(crate) log_threshold: LogThreshold,
    pub(crate) subscriptions: Subscriptions,
    pub(crate) principal: Option<std::sync::Arc<Principal>>,
    /// The session's handoff (see [`gateway`](crate::gateway)).
    pub(crate) handoff: std::sync::Arc<crate::context::HandoffSlot>,
    pub(crate) sessionless: bool,
    pub(crate) session: std::sync::Arc<SessionEnd>,
    pub(crate) pending_listens: notify::Pending,
    pub(crate) closing: tokio_util::sync::CancellationToken,
    /// What `get_info` answers, made on its first call and shared by the handlers
    /// [`McpHandler::per_request`] makes (rmcp asks for it on every stateless request; it is
    /// a function of the server alone, which does not change once built).
    pub(crate) info: std::sync::Arc<std::sync::OnceLock<rmcp::model::ServerConfig>>,
    /// How a `tools/call` rmcp's parse could not read is answered: the JSON-RPC check's answer,
    /// from the HTTP side that left the body to rmcp's parse (a 2026-07-28 request's call, a
    /// session's). `None`:
    /// rmcp's `Method not found`, as for any custom method.
    pub(crate) unusable_calls: Option<UnusableCalls>,
    /// Where a stateful HTTP session lists itself once initialized, so that its plain calls
    /// may be answered without rmcp's session worker (see [`live`](super::live)).
    #[cfg(feature = "server-http")]
    pub(crate) live: Option<std::sync::Arc<dyn LiveList>>,
}

/// Answers a `tools/call` rmcp read as a custom request: its id and raw params.
pub(crate) type UnusableCalls = fn(
    &rmcp::model::RequestId,
    Option<&serde_json::Value>,
    &Server,
) -> Option<Result<rmcp::model::CustomResult, rmcp::ErrorData>>;

/// Ends the session's change forwarding when the last clone of its handler is dropped.
#[derive(Debug, Default)]
pub(crate) struct SessionEnd {
    pub(crate) token: tokio_util::sync::CancellationToken,
    pub(crate) forwarding: std::sync::atomic::AtomicBool,
}

impl Drop for SessionEnd {
    fn drop(&mut self) {
        self.token.cancel();
    }
}

impl McpHandler {
    /// The handler for one session of `server`.
    pub fn new(server: Server) -> Self {
        McpHandler {
            server,
            log_threshold: LogThreshold::default(),
            subscriptions: Subscriptions::default(),
            principal: None,
            sessionless: false,
            session: Default::default(),
            pending_listens: Default::default(),
            handoff: std::sync::Arc::default(),
            closing: Default::default(),
            info: Default::default(),
            unusable_calls: None,
            #[cfg(feature = "server-http")]
            live: None,
        }
    }

    /// A `tools/call` rmcp's parse could not read is answered by `answer` (see
    /// [`UnusableCalls`]).
    #[cfg(feature = "server-http")]
    pub(crate) fn answering_unusable_calls(mut self, answer: UnusableCalls) -> Self {
        self.unusable_calls = Some(answer);
        self
    }

    /// The handler for one stateless HTTP request, made from this one (the template the
    /// router keeps): fresh what a request may write — its log level, subscriptions and
    /// pending listens — and shared what a sessionless handler never writes: the session's
    /// end (no change is forwarded without a session), the handoff slot (a stateless call
    /// gets a slot of its own), the closing token, the principal and the cached `get_info`.
    /// Four allocations fewer per request than [`McpHandler::new`].
    #[cfg(feature = "server-http")]
    pub(crate) fn per_request(&self) -> Self {
        debug_assert!(self.sessionless, "only a sessionless handler is shared");
        McpHandler {
            server: self.server.clone(),
            log_threshold: LogThreshold::default(),
            subscriptions: Subscriptions::default(),
            principal: self.principal.clone(),
            handoff: std::sync::Arc::clone(&self.handoff),
            sessionless: self.sessionless,
            session: std::sync::Arc::clone(&self.session),
            pending_listens: Default::default(),
            closing: self.closing.clone(),
            info: std::sync::Arc::clone(&self.info),
            unusable_calls: self.unusable_calls,
            live: None,
        }
    }

    /// Once initialized, the session lists itself in `live` when its client can be asked
    /// nothing (see [`live`](super::live)).
    #[cfg(feature = "server-http")]
    pub(crate) fn listed_in(mut self, live: std::sync::Arc<dyn LiveList>) -> Self {
        self.live = Some(live);
        self
    }

    /// Cancelled when the server shuts down: each open `subscriptions/listen` is then answered
    /// with its closing result (2026-07-28: a server that ends a subscription says so) before
    /// its stream closes.
    pub fn closing(mut self, token: tokio_util::sync::CancellationToken) -> Self {
        self.closing = token;
        self
    }

    /// A handler for stateless HTTP, where a 2025 client has no session to be sent change
    /// notifications on: it advertises no `subscribe` / `listChanged` to 2025 clients and
    /// refuses `resources/subscribe` (2026-07-28 clients still use `subscriptions/listen`).
    pub fn sessionless(mut self, sessionless: bool) -> Self {
        self.sessionless = sessionless;
        self
    }

    /// Every call of this session is made by `principal` (for stdio, where no token
    /// travels: the embedding code says who the user is).
    pub fn with_principal(mut self, principal: Option<Principal>) -> Self {
        self.principal = principal.map(std::sync::Arc::new);
        self
    }

    /// The server behind it.
    pub fn server(&self) -> &Server {
        &self.server
    }

    /// The resources the session subscribed to with `resources/subscribe`.
    pub fn subscriptions(&self) -> &Subscriptions {
        &self.subscriptions
    }

    /// The session's log level, as the client last set it.
    pub fn log_level(&self) -> LogLevel {
        self.log_threshold.get()
    }
}

/// A response as rmcp's `CallToolResult`.
pub fn to_call_tool_result(response: ToolResponse) -> CallToolResult {
    let content = response.content.into_iter().map(to_block).collect();
    let mut result = if response.is_error {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    };
    result.structured_content = response.structured_content;
    result
}

pub(crate) fn to_block(c: Content) -> ContentBlock {
    match c {
        Content::Text(t) => ContentBlock::text(t),
        Content::Image { data, mime_type } => ContentBlock::image(data, mime_type),
        Content::Audio { data, mime_type } => ContentBlock::audio(data, mime_type),
        Content::Resource {
            uri,
            mime_type,
            text,
        } => ContentBlock::resource(ResourceContents::TextResourceContents {
            uri,
            mime_type,
            text,
            meta: None,
        }),
        Content::ResourceBlob {
            uri,
            mime_type,
            blob,
        } => ContentBlock::resource(ResourceContents::BlobResourceContents {
            uri,
            mime_type,
            blob,
            meta: None,
        }),
    }
}

/// How a request that may ask the user ended.
pub(crate) enum Asked<T> {
    /// It ran to its end.
    Done(T),
    /// 2026-07-28: it asked what the retry must answer.
    InputRequired(InputRequiredResult),
}

/// What a 2026-07-28 retry brings back: the `requestState` (bound to `bound_to`: a name and
/// the arguments) and the `inputResponses`.
pub(crate) struct Retry<'a> {
    pub(crate) bound_to: (&'a str, Option<&'a rmcp::model::JsonObject>),
    pub(crate) state: Option<&'a str>,
    pub(crate) responses: Option<&'a rmcp::model::InputResponses>,
}

impl McpHandler {
    /// Runs `work` with the request's elicitor (see [`CallContext::elicit`](crate::context::CallContext::elicit)):
    /// `elicitation/create` for a 2025 request; for a 2026-07-28 one the answers so far
    /// (`retry`'s `requestState` and `inputResponses`), and `input_required`
    /// as soon as `work` asks what they do not answer.
    pub(crate) async fn elicitable<T, F: std::future::Future<Output = T>>(
        &self,
        context: &RequestContext<RoleServer>,
        era: &Era,
        mut scope: crate::server::RequestScope,
        retry: Retry<'_>,
        work: impl FnOnce(crate::server::RequestScope) -> F,
    ) -> Result<Asked<T>, ErrorData> {
        if scope.principal.is_none() {
            scope.principal = self.principal.clone();
        }
        if !era.is_modern() {
            scope.elicitor = Some(std::sync::Arc::new(elicit::LegacyElicitor::new(context)));
            return Ok(Asked::Done(work(scope).await));
        }
        let owner = crate::context::ClientKey::of(&scope);
        let binding = request_state::Binding::of(retry.bound_to.0, retry.bound_to.1, &owner.0)
            .signed_with(self.server.request_state_key());
        let once = self.server.once_store().as_ref();
        let answers =
            match request_state::answers(retry.state, retry.responses, &binding, once).await {
                Ok(answers) => answers,
                Err(request_state::Refused::Invalid(e)) => return Err(e),
                Err(request_state::Refused::Unchecked(why)) => {
                    return Err(ErrorData::internal_error(why, None));
                }
            };
        let elicitor = std::sync::Arc::new(elicit::ModernElicitor::new(
            answers,
            context.client_capabilities().as_ref(),
        ));
        scope.elicitor = Some(std::sync::Arc::new(elicitor.clone()));
        tokio::select! {
            done = work(scope) => Ok(Asked::Done(done)),
            () = elicitor.input_needed() => {
                let (requests, state) = elicitor
                    .input_required(&binding)
                    .map_err(|e| ErrorData::internal_error(e, None))?;
                Ok(Asked::InputRequired(InputRequiredResult::new(Some(requests), Some(state))))
            }
        }
    }
}

/// An `input_required` result with the server named in its `_meta` (modern requests only
/// ever get one).
pub(crate) fn stamp_input(
    era: &Era,
    mut r: InputRequiredResult,
    server: &Server,
) -> InputRequiredResult {
    era.stamp(&mut r.meta, server);
    r
}

/// Where a stateful HTTP session is listed as it answers its `initialize`, when its calls may
/// be answered without rmcp's worker (the HTTP side's live sessions).
#[cfg(feature = "server-http")]
pub(crate) trait LiveList: Send + Sync + std::fmt::Debug {
    /// Lists the session `id`, at `log_threshold`, until `end` is cancelled.
    fn register(
        &self,
        id: &str,
        log_threshold: LogThreshold,
        end: tokio_util::sync::CancellationToken,
    );
}
