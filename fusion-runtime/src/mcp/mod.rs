//! The bridge to MCP through `rmcp`: a hand-written `ServerHandler` (tools/list, tools/call
//! through the pipeline), and the stdio and streamable HTTP transports.
//!
//! Tool-level failures — bad arguments, an unknown tool — are always a `CallToolResult` with
//! `isError` and an envelope, never a JSON-RPC error the model cannot read.
//!
//! The server advertises the `logging` capability. What filters the messages handlers send
//! with [`Context::log`](crate::Context::log) depends on the request's protocol generation
//! ([`era`]):
//!
//! - 2025-x: the level the session set with `logging/setLevel` (one [`McpHandler`] per stdio
//!   connection or HTTP session), [`DEFAULT_LOG_LEVEL`](crate::server::DEFAULT_LOG_LEVEL)
//!   until it sets one. A stateless 2025 request is its own session.
//! - 2026-07-28: the level in the request's `_meta` (`io.modelcontextprotocol/logLevel`);
//!   without one nothing is sent, an unknown one is `-32602`, and `logging/setLevel` is
//!   `Method not found`.
//!
//! Progress and log messages travel on the request's own response stream in every mode:
//! stdio's one stream; over HTTP the call's SSE answer (a stateless answer is plain JSON
//! unless the call sends something first, then SSE). rmcp sends a 2025 session's logs to the
//! GET stream; the cancellation layer (`mcp/cancel.rs`) puts them on the call's POST stream.
//!
//! 2026-07-28 results also carry `serverInfo` in `_meta`, and the lists the builder's
//! `ttlMs` / `cacheScope` ([`ServerBuilder::list_cache`](crate::ServerBuilder::list_cache)).
//!
//! Change notifications from application code ([`Notifier`](crate::Notifier)) reach a 2025
//! session through `resources/subscribe` and the list-changed notifications, and a
//! 2026-07-28 client through `subscriptions/listen` (`mcp/notify.rs`).
//!
//! Between the bytes and rmcp sits a check ([`jsonrpc`]) that answers what rmcp would drop
//! or answer unreadably: over stdio ([`serve_io`]) and HTTP ([`http_router`]) alike, a
//! message that is not JSON gets `-32700`, one that is not a JSON-RPC request (or a batch)
//! `-32600` (over HTTP with status 400), and a `tools/call` with an unusable `name` or
//! `arguments` an `isError` result with its envelope.

#[cfg(feature = "server-http")]
mod http_jsonrpc;
pub mod jsonrpc;
#[cfg(feature = "server-stdio")]
mod stdio;

#[cfg(feature = "server-stdio")]
#[cfg_attr(docsrs, doc(cfg(feature = "server-stdio")))]
pub use stdio::{DEFAULT_MAX_LINE_BYTES, StdioOptions, serve_io, serve_stdio_with};

#[cfg(feature = "server-http")]
mod cancel;
mod catalog;
pub mod elicit;
pub mod era;
mod listing;
mod notify;
mod scope;
mod tasks;
#[cfg(feature = "server-http")]
mod tasks_2025;
mod tools;
mod trace;
#[cfg(feature = "gateway")]
mod upstream;

pub use catalog::{MAX_SUBSCRIPTIONS, Subscriptions};
pub use listing::MAX_CURSOR_BYTES;
pub use scope::request_scope;
pub use tools::MOUNT_META_KEY;

#[allow(deprecated)] // MCP logging is deprecated by SEP-2577, still what clients speak.
use rmcp::model::SetLevelRequestParams;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CompleteRequestParams, CompleteResult,
    ContentBlock, GetPromptRequestParams, GetPromptResponse, Implementation, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ResourceContents, ServerCapabilities,
    ServerConfig, SubscribeRequestParams, UnsubscribeRequestParams,
};
use rmcp::model::{
    DiscoverResult, ErrorCode, InitializeRequestParams, InitializeResult, InputRequiredResult,
    SubscriptionFilter,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};

use era::Era;

#[cfg(feature = "server-http")]
#[cfg_attr(docsrs, doc(cfg(feature = "server-http")))]
pub use cancel::{MAX_TRACKED, MAX_TRACKED_PER_CLIENT};

use crate::auth::Principal;
use crate::context::{LogLevel, LogThreshold};
use crate::envelope::{Content, ToolResponse};
use crate::server::Server;

#[cfg(feature = "server-http")]
mod auth;
#[cfg(feature = "server-http")]
mod http;
#[cfg(feature = "server-http")]
mod identity;
#[cfg(feature = "server-http")]
mod sessions;

#[cfg(feature = "server-http")]
#[cfg_attr(docsrs, doc(cfg(feature = "server-http")))]
pub use http::{ForwardedHeader, HttpOptions, HttpServer, ReadyCheck, http_router, spawn_http};
#[cfg(all(feature = "server-http", feature = "metrics"))]
#[cfg_attr(docsrs, doc(cfg(all(feature = "server-http", feature = "metrics"))))]
pub use http::{MetricsServer, spawn_metrics};

/// The rmcp `ServerHandler` of a Fusion [`Server`], for one session: it keeps the session's
/// log level and resource subscriptions, and passes the server's change notifications on to
/// the session once its client is initialized. Clones share it; make a new handler per
/// connection.
#[derive(Clone, Debug)]
pub struct McpHandler {
    server: Server,
    log_threshold: LogThreshold,
    subscriptions: Subscriptions,
    principal: Option<std::sync::Arc<Principal>>,
    /// The session's handoff (see [`gateway`](crate::gateway)).
    handoff: std::sync::Arc<crate::context::HandoffSlot>,
    sessionless: bool,
    session: std::sync::Arc<SessionEnd>,
    pending_listens: notify::Pending,
    closing: tokio_util::sync::CancellationToken,
}

/// Ends the session's change forwarding when the last clone of its handler is dropped.
#[derive(Debug, Default)]
struct SessionEnd {
    token: tokio_util::sync::CancellationToken,
    forwarding: std::sync::atomic::AtomicBool,
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
        }
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

fn to_block(c: Content) -> ContentBlock {
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

impl McpHandler {
    /// A `tools/call`, for either generation of the protocol.
    async fn answer_call(
        &self,
        request: CallToolRequestParams,
        mut context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let era = Era::of(&context)?;
        let threshold = era.threshold(&self.log_threshold);
        if !era.is_modern() {
            // The elicitor is made when the handler first asks (`RequestSink::elicitor`).
            let mut scope = scope::legacy_call_scope(&context, threshold);
            if scope.principal.is_none() {
                scope.principal = self.principal.clone();
            }
            scope.meta = scope::take_meta(&mut context);
            let handing_off = !self.server.tool_sources().is_empty();
            let generation = self.handoff.generation();
            if handing_off {
                // Stateless HTTP keeps no session to hand off: the handle form, as 2026-07-28.
                scope.handoff = Some(match self.sessionless {
                    true => std::sync::Arc::new(crate::context::HandoffSlot::stateless()),
                    false => self.handoff.clone(),
                });
            }
            let call = std::pin::pin!(self.server.call(&request.name, request.arguments, scope));
            #[cfg(feature = "server-http")]
            let call = cancel::watched(&context, self.principal.as_deref(), call);
            let response = call.await;
            if handing_off && self.handoff.generation() != generation {
                // Handed off or back: this session's tools changed.
                let _ = context.peer.notify_tool_list_changed().await;
            }
            return Ok(to_call_tool_result(response).into());
        }
        // 2026-07-28: the handler may end the call with `input_required` (MRTR).
        let mut scope = scope::request_scope_in_session(&context, threshold);
        if scope.principal.is_none() {
            scope.principal = self.principal.clone();
        }
        let support = self.server.task_support(&request.name);
        if support.allows_task() && request.request_state.is_none() {
            if tasks::declared(&context) {
                let can = tasks::Can::of(&context);
                scope.meta = scope::take_meta(&mut context);
                return tasks::start(&self.server, &era, request, scope, can).await;
            }
            if support == crate::TaskSupport::Required {
                return Err(tasks::required_error());
            }
        }
        let owner = crate::context::ClientKey::of(&scope);
        let binding = elicit::Binding::of(&request.name, request.arguments.as_ref(), &owner.0)
            .signed_with(self.server.request_state_key());
        let answers = match elicit::answers(
            request.request_state.as_deref(),
            request.input_responses.as_ref(),
            &binding,
            self.server.once_store().as_ref(),
        )
        .await
        {
            Ok(answers) => answers,
            Err(elicit::Refused::Invalid(e)) => return Err(e),
            Err(elicit::Refused::Unchecked(why)) => {
                let refusal = crate::envelope::error(crate::envelope::ErrorCode::ServerBusy, why)
                    .suggest("Wait for the time below, then send the same request again.")
                    .detail("oneTimeStore", "unreachable")
                    .retry_after(crate::guard::STORE_RETRY_AFTER);
                let mut result = to_call_tool_result(ToolResponse::from(refusal));
                era.stamp(&mut result.meta, &self.server);
                return Ok(result.into());
            }
        };
        let elicitor = std::sync::Arc::new(elicit::ModernElicitor::new(answers, &context));
        if !self.server.tool_sources().is_empty() {
            scope.handoff = Some(std::sync::Arc::new(crate::context::HandoffSlot::stateless()));
        }
        scope.elicitor = Some(std::sync::Arc::new(elicitor.clone()));
        scope.meta = scope::take_meta(&mut context);
        let call = std::pin::pin!(self.server.call(&request.name, request.arguments, scope));
        #[cfg(feature = "server-http")]
        let call = cancel::watched(&context, self.principal.as_deref(), call);
        let response = tokio::select! {
            response = call => response,
            () = elicitor.input_needed() => {
                let (requests, state) = elicitor
                    .input_required(&binding)
                    .map_err(|e| ErrorData::internal_error(e, None))?;
                let result = InputRequiredResult::new(Some(requests), Some(state));
                return Ok(stamp_input(&era, result, &self.server).into());
            }
        };
        let mut result = to_call_tool_result(response);
        era.stamp(&mut result.meta, &self.server);
        Ok(result.into())
    }
}

impl ServerHandler for McpHandler {
    // MCP logging is deprecated by SEP-2577 but still what clients speak.
    #[allow(deprecated)]
    fn get_info(&self) -> ServerConfig {
        let mut capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .enable_logging()
            .build();
        catalog::add_capabilities(&self.server, &mut capabilities, true);
        tasks::advertise(&self.server, &mut capabilities);
        let info = ServerConfig::new(capabilities).with_server_info(Implementation::new(
            self.server.name(),
            self.server.version(),
        ));
        match self.server.instructions() {
            Some(i) => info.with_instructions(i),
            None => info,
        }
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        context.peer.set_peer_info(request.clone());
        let mut result = self.negotiate_initialize(&request)?;
        if self.sessionless {
            // No session, no way to send a change: advertise none.
            let caps = &mut result.capabilities;
            if let Some(tools) = caps.tools.as_mut() {
                tools.list_changed = None;
            }
            catalog::add_capabilities(&self.server, caps, false);
        }
        Ok(result)
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        use std::sync::atomic::Ordering;
        if self.sessionless || self.session.forwarding.swap(true, Ordering::AcqRel) {
            return;
        }
        notify::forward_to_session(
            &self.server,
            context.peer,
            self.subscriptions.clone(),
            self.session.token.clone(),
        );
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        // Listening starts now, before rmcp acknowledges: nothing sent after the
        // acknowledgment is missed.
        self.pending_listens.push(self.server.notifier().watch());
        Some(notify::accepted_filter(&self.server, requested))
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let request = context.request_context();
        let mut scope = scope::request_scope_in_session(request, LogThreshold::off());
        if scope.principal.is_none() {
            scope.principal = self.principal.clone();
        }
        let client = crate::context::ClientKey::of(&scope);
        #[cfg(feature = "server-http")]
        let _watch = cancel::watch(request, self.principal.as_deref());
        let changes = self.pending_listens.take(&self.server);
        notify::listen(&self.server, &client, changes, context, &self.closing).await
    }

    async fn discover(
        &self,
        context: RequestContext<RoleServer>,
    ) -> Result<DiscoverResult, ErrorData> {
        Era::of(&context)?;
        let cache = self.server.list_cache();
        let mut result = DiscoverResult::from_server_info(
            self.supported_protocol_versions().into_owned(),
            self.get_info(),
        );
        result.ttl_ms = era::ttl_ms(cache);
        result.cache_scope = era::to_rmcp_scope(cache.scope);
        // `from_server_info` puts `serverInfo` in `_meta` already.
        Ok(result)
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Box::pin(listing::list_tools(self, request, context)).await
    }

    fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<CallToolResponse, ErrorData>> + Send + '_ {
        // Boxed: rmcp moves the future it spawns for a request (into the task, into its
        // cell, through its stages), and a call's state is ~4 KB — inline it was copied
        // over and over, ~80 k instructions of `memcpy` per HTTP request.
        // The request span (disabled, and free, when nothing listens); the stages' are its
        // children.
        let span = trace::call_span(&context);
        Box::pin(tracing::Instrument::instrument(
            self.answer_call(request, context),
            span,
        ))
    }

    async fn get_task(
        &self,
        request: rmcp::model::GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::GetTaskResult, ErrorData> {
        tasks::get(self, request, context).await
    }

    async fn update_task(
        &self,
        request: rmcp::model::UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        tasks::update(self, request, context).await
    }

    async fn cancel_task(
        &self,
        request: rmcp::model::CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        tasks::cancel(self, request, context).await
    }

    async fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        Box::pin(listing::list_prompts(self, request, context)).await
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let era = Era::of(&context)?;
        let target = Some(request.name.clone());
        let method = crate::server::Method::GetPrompt;
        let response = listing::guarded(self, &context, &era, method, target, |h, cx, era, _| {
            Box::pin(async move { catalog::get_prompt(&h, request, cx, &era).await })
        });
        let response = Box::pin(response).await?;
        Ok(match response {
            GetPromptResponse::Complete(mut r) => {
                era.stamp(&mut r.meta, &self.server);
                GetPromptResponse::Complete(r)
            }
            GetPromptResponse::InputRequired(r) => {
                GetPromptResponse::InputRequired(stamp_input(&era, r, &self.server))
            }
            other => other,
        })
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Box::pin(listing::list_resources(self, request, context)).await
    }

    async fn list_resource_templates(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Box::pin(listing::list_resource_templates(self, request, context)).await
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let era = Era::of(&context)?;
        let target = Some(request.uri.clone());
        let method = crate::server::Method::ReadResource;
        let response = listing::guarded(self, &context, &era, method, target, |h, cx, era, _| {
            Box::pin(async move { catalog::read_resource(&h, request, cx, &era).await })
        });
        let response = Box::pin(response).await?;
        Ok(match response {
            ReadResourceResponse::Complete(mut r) => {
                era.stamp(&mut r.meta, &self.server);
                ReadResourceResponse::Complete(r)
            }
            ReadResourceResponse::InputRequired(r) => {
                ReadResourceResponse::InputRequired(stamp_input(&era, r, &self.server))
            }
            other => other,
        })
    }

    #[allow(deprecated)] // resources/subscribe is what 2025 clients speak.
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        catalog::subscribe(self, request.uri)
    }

    #[allow(deprecated)]
    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        catalog::unsubscribe(self, &request.uri)
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let era = Era::of(&context)?;
        let target = (request.r#ref.as_prompt_name())
            .or(request.r#ref.as_resource_uri())
            .map(str::to_owned);
        let method = crate::server::Method::Complete;
        let result = listing::guarded(self, &context, &era, method, target, |h, cx, era, _| {
            Box::pin(async move { catalog::complete(&h, request, cx, &era).await })
        });
        let mut result = Box::pin(result).await?;
        era.stamp(&mut result.meta, &self.server);
        Ok(result)
    }

    #[allow(deprecated)]
    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        // 2026-07-28 removed `logging/setLevel`: the level comes with each request.
        if Era::of(&context)?.is_modern() {
            return Err(ErrorData::new(
                ErrorCode::METHOD_NOT_FOUND,
                "Method not found: logging/setLevel is not part of MCP 2026-07-28; send io.modelcontextprotocol/logLevel in each request's _meta",
                None,
            ));
        }
        let level = scope::from_rmcp(request.level);
        tracing::debug!(%level, "client set the log level");
        self.log_threshold.set(level);
        Ok(())
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
        let binding = elicit::Binding::of(retry.bound_to.0, retry.bound_to.1, &owner.0)
            .signed_with(self.server.request_state_key());
        let once = self.server.once_store().as_ref();
        let answers = match elicit::answers(retry.state, retry.responses, &binding, once).await {
            Ok(answers) => answers,
            Err(elicit::Refused::Invalid(e)) => return Err(e),
            Err(elicit::Refused::Unchecked(why)) => {
                return Err(ErrorData::internal_error(why, None));
            }
        };
        let elicitor = std::sync::Arc::new(elicit::ModernElicitor::new(answers, context));
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
fn stamp_input(era: &Era, mut r: InputRequiredResult, server: &Server) -> InputRequiredResult {
    era.stamp(&mut r.meta, server);
    r
}

/// Serves `server` over stdio until the client closes stdin (then returns `Ok`, whether
/// the client initialized or not). Nothing but protocol messages goes to stdout.
#[cfg(feature = "server-stdio")]
#[cfg_attr(docsrs, doc(cfg(feature = "server-stdio")))]
pub async fn serve_stdio(server: Server) -> anyhow::Result<()> {
    serve_stdio_with(server, StdioOptions::default()).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn size<'a, P, Fut>(_: fn(&'a McpHandler, P, RequestContext<RoleServer>) -> Fut) -> usize {
        std::mem::size_of::<Fut>()
    }

    /// rmcp spawns one task per request whose future holds the largest of the handler's
    /// futures, and moves it several times (into the task, its cell, its stages): a call's
    /// state inline (4.4 KB) cost ~80 k instructions of `memcpy` per HTTP request.
    #[test]
    fn no_handler_future_holds_a_calls_state_inline() {
        type H = McpHandler;
        let sizes = [
            ("call_tool", size(<H as ServerHandler>::call_tool)),
            ("get_prompt", size(<H as ServerHandler>::get_prompt)),
            ("read_resource", size(<H as ServerHandler>::read_resource)),
            ("complete", size(<H as ServerHandler>::complete)),
            ("list_tools", size(<H as ServerHandler>::list_tools)),
            ("initialize", size(<H as ServerHandler>::initialize)),
        ];
        for (method, bytes) in sizes {
            assert!(bytes <= 1024, "{method}'s future is {bytes} bytes");
        }
    }
}
