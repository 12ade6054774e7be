//! The rmcp `ServerHandler` of [`McpHandler`]: each MCP method to the file that answers it
//! (`call.rs`, `listing.rs`, `catalog.rs`, `tasks.rs`, `notify.rs`).
//!
//! Reads: the request rmcp parsed and its [`RequestContext`]. Writes: rmcp's result types.

#[allow(deprecated)] // MCP logging is deprecated by SEP-2577, still what clients speak.
use rmcp::model::SetLevelRequestParams;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CompleteRequestParams, CompleteResult,
    GetPromptRequestParams, GetPromptResponse, Implementation, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ServerCapabilities, ServerConfig,
    SubscribeRequestParams, UnsubscribeRequestParams,
};
use rmcp::model::{CustomRequest, CustomResult};
use rmcp::model::{
    DiscoverResult, ErrorCode, InitializeRequestParams, InitializeResult, SubscriptionFilter,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};

use super::era::Era;
use super::mcp_handler::{McpHandler, stamp_input};
use super::{catalog, era, listing, notify, scope, tasks, trace};
use crate::context::LogThreshold;

/// The methods the [`ServerHandler`] below answers, by name: beside the methods themselves, so
/// a new one is written in this file and the one that answers it. stdio's check
/// (`jsonrpc/check.rs`) reads it: a served method whose params rmcp cannot read is answered
/// `Invalid params`, any other unreadable method is rmcp's (`Method not found`). The task
/// methods are not in it (as before the list moved here): stdio hands a 2025-11-25 session's
/// task messages to `tasks_2025.rs` after this check, whatever rmcp makes of them.
#[cfg(feature = "server-stdio")]
pub(crate) const SERVED_METHODS: &[&str] = &[
    "initialize",
    "ping",
    "server/discover",
    "tools/list",
    "tools/call",
    "logging/setLevel",
    "prompts/list",
    "prompts/get",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "completion/complete",
    "subscriptions/listen",
];

impl McpHandler {
    /// `get_info`'s answer, made anew: the capabilities the server's catalog and tasks call
    /// for, its name, version and instructions.
    // MCP logging is deprecated by SEP-2577 but still what clients speak.
    #[allow(deprecated)]
    fn make_info(&self) -> ServerConfig {
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
}

impl ServerHandler for McpHandler {
    // MCP logging is deprecated by SEP-2577 but still what clients speak.
    #[allow(deprecated)]
    fn get_info(&self) -> ServerConfig {
        self.info.get_or_init(|| self.make_info()).clone()
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        context.peer.set_peer_info(request.clone());
        let mut result = self.negotiate_initialize(&request)?;
        #[cfg(feature = "server-http")]
        self.list_if_live(&request, &context);
        #[cfg(feature = "server-http")]
        self.note_session_asks(&request, &context);
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
        let _watch = crate::mcp::facts::watch(request, self.principal.as_deref());
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
        let span = trace::rmcp_call_span(&context);
        Box::pin(tracing::Instrument::instrument(
            self.answer_call(request, context),
            span,
        ))
    }

    /// A `tools/call` rmcp's parse could not read (a name that is not a string, arguments
    /// that are not an object, a retry's unusable state) gets the answer of the side that
    /// left the body to rmcp: the handler's `UnusableCalls`, over HTTP (a 2026-07-28
    /// request's call, a session's) the JSON-RPC check's own answer. Any other custom
    /// method, and any handler without `UnusableCalls`, gets rmcp's `Method not found`. Over
    /// stdio nothing gets here: its line reader answers such a call first.
    fn on_custom_request(
        &self,
        request: CustomRequest,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<CustomResult, ErrorData>> + Send + '_ {
        let answer = match (request.method.as_str(), self.unusable_calls) {
            ("tools/call", Some(answer)) => {
                // rmcp keeps the request's `_meta` apart from its params: the answer reads
                // the params as they came (a 2026-07-28 request's version is in `_meta`).
                let mut params = request.params;
                if let Some(serde_json::Value::Object(params)) = &mut params
                    && !context.meta.is_empty()
                {
                    let meta = serde_json::Value::Object(context.meta.0.0.clone());
                    params.insert("_meta".to_owned(), meta);
                }
                answer(&context.id, params.as_ref(), &self.server)
            }
            _ => None,
        };
        std::future::ready(answer.unwrap_or_else(|| {
            Err(ErrorData::new(
                ErrorCode::METHOD_NOT_FOUND,
                request.method,
                None,
            ))
        }))
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

#[cfg(feature = "server-http")]
impl McpHandler {
    /// Lists this (stateful HTTP) session in its endpoint's
    /// live sessions ([`LiveList`](super::mcp_handler::LiveList)) as it answers its `initialize` (`request`,
    /// whose extensions name the session), when its client declared neither `elicitation`
    /// nor `sampling`. Listed before the answer is sent, the session's first call finds it.
    /// Records what this (stateful HTTP) session's client can answer (`request`'s
    /// capabilities), on a server with task actions: what a 2025-11-25 task it starts may
    /// ask it on its `tasks/result` stream.
    fn note_session_asks(
        &self,
        request: &InitializeRequestParams,
        context: &RequestContext<RoleServer>,
    ) {
        if !self.server.has_tasks() {
            return;
        }
        let Some(opened) = context.extensions.get::<crate::mcp::facts::OpenedSession>() else {
            return;
        };
        let can = crate::store::tasks::SessionCan {
            elicit: request.capabilities.elicitation.is_some(),
            sample: request.capabilities.sampling.is_some(),
        };
        self.server.session_asks().note(&opened.0, can);
    }

    fn list_if_live(
        &self,
        request: &InitializeRequestParams,
        context: &RequestContext<RoleServer>,
    ) {
        let Some(live) = &self.live else {
            return;
        };
        let Some(opened) = context.extensions.get::<crate::mcp::facts::OpenedSession>() else {
            return;
        };
        let caps = &request.capabilities;
        if caps.elicitation.is_none() && caps.sampling.is_none() {
            live.register(
                &opened.0,
                self.log_threshold.clone(),
                self.session.token.clone(),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn size<'a, P, Fut>(_: fn(&'a McpHandler, P, RequestContext<RoleServer>) -> Fut) -> usize {
        std::mem::size_of::<Fut>()
    }

    fn size1<'a, Fut>(_: fn(&'a McpHandler, RequestContext<RoleServer>) -> Fut) -> usize {
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
            ("discover", size1(<H as ServerHandler>::discover)),
            ("get_task", size(<H as ServerHandler>::get_task)),
            ("update_task", size(<H as ServerHandler>::update_task)),
            ("cancel_task", size(<H as ServerHandler>::cancel_task)),
            ("list_prompts", size(<H as ServerHandler>::list_prompts)),
            ("list_resources", size(<H as ServerHandler>::list_resources)),
            ("set_level", size(<H as ServerHandler>::set_level)),
        ];
        for (method, bytes) in sizes {
            assert!(bytes <= 1024, "{method}'s future is {bytes} bytes");
        }
    }
}
