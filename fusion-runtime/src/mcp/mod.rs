//! The bridge to MCP through `rmcp`: a hand-written `ServerHandler` (tools/list, tools/call
//! through the pipeline), and the stdio and streamable HTTP transports.
//!
//! Tool-level failures — bad arguments, an unknown tool — are always a `CallToolResult` with
//! `isError` and an envelope, never a JSON-RPC error the model cannot read.
//!
//! The server advertises the `logging` capability and answers `logging/setLevel`; the level
//! is kept per session (one [`McpHandler`] per stdio connection or HTTP session) and filters
//! what handlers send with [`Context::log`](crate::Context::log). Until a client sets one,
//! [`DEFAULT_LOG_LEVEL`](crate::server::DEFAULT_LOG_LEVEL) applies. In stateless HTTP mode
//! every request is its own session: a level set in one request does not carry over, and
//! answers are plain JSON, so notifications cannot be sent at all.
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
mod scope;
mod tools;

pub use catalog::{MAX_SUBSCRIPTIONS, Subscriptions};
pub use scope::request_scope;

#[allow(deprecated)] // MCP logging is deprecated by SEP-2577, still what clients speak.
use rmcp::model::SetLevelRequestParams;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CompleteRequestParams, CompleteResult,
    ContentBlock, GetPromptRequestParams, GetPromptResponse, Implementation, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ResourceContents, ServerCapabilities,
    ServerConfig, SubscribeRequestParams, UnsubscribeRequestParams,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};

#[cfg(feature = "server-http")]
#[cfg_attr(docsrs, doc(cfg(feature = "server-http")))]
pub use cancel::{MAX_TRACKED, MAX_TRACKED_PER_CLIENT};

use crate::context::{LogLevel, LogThreshold};
use crate::envelope::{Content, ToolResponse};
use crate::server::Server;

#[cfg(feature = "server-http")]
mod http;
#[cfg(feature = "server-http")]
mod identity;
#[cfg(feature = "server-http")]
mod sessions;

#[cfg(feature = "server-http")]
#[cfg_attr(docsrs, doc(cfg(feature = "server-http")))]
pub use http::{ForwardedHeader, HttpOptions, HttpServer, http_router, spawn_http};

/// The rmcp `ServerHandler` of a Fusion [`Server`], for one session: it keeps the session's
/// log level. Clones share it; make a new handler per connection.
#[derive(Clone, Debug)]
pub struct McpHandler {
    server: Server,
    log_threshold: LogThreshold,
    subscriptions: Subscriptions,
}

impl McpHandler {
    /// The handler for one session of `server`.
    pub fn new(server: Server) -> Self {
        McpHandler {
            server,
            log_threshold: LogThreshold::default(),
            subscriptions: Subscriptions::default(),
        }
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

impl ServerHandler for McpHandler {
    // MCP logging is deprecated by SEP-2577 but still what clients speak.
    #[allow(deprecated)]
    fn get_info(&self) -> ServerConfig {
        let mut capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_logging()
            .build();
        catalog::add_capabilities(&self.server, &mut capabilities);
        let info = ServerConfig::new(capabilities).with_server_info(Implementation::new(
            self.server.name(),
            self.server.version(),
        ));
        match self.server.instructions() {
            Some(i) => info.with_instructions(i),
            None => info,
        }
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.server.tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let scope = scope::request_scope_in_session(&context, self.log_threshold.clone());
        #[cfg(feature = "server-http")]
        let _watch = cancel::watch(&context, &scope);
        let response = self
            .server
            .call(&request.name, request.arguments, scope)
            .await;
        Ok(to_call_tool_result(response).into())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        catalog::list_prompts(&self.server)
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        catalog::get_prompt(self, request, context).await
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        catalog::list_resources(&self.server)
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        catalog::list_resource_templates(&self.server)
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        catalog::read_resource(self, request, context).await
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
        catalog::complete(self, request, context).await
    }

    #[allow(deprecated)]
    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let level = scope::from_rmcp(request.level);
        tracing::debug!(%level, "client set the log level");
        self.log_threshold.set(level);
        Ok(())
    }
}

/// Serves `server` over stdio until the client closes stdin (then returns `Ok`, whether
/// the client initialized or not). Nothing but protocol messages goes to stdout.
#[cfg(feature = "server-stdio")]
#[cfg_attr(docsrs, doc(cfg(feature = "server-stdio")))]
pub async fn serve_stdio(server: Server) -> anyhow::Result<()> {
    serve_stdio_with(server, StdioOptions::default()).await
}
