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

mod http_jsonrpc;
pub mod jsonrpc;
mod stdio;

pub use stdio::{DEFAULT_MAX_LINE_BYTES, StdioOptions, serve_io, serve_stdio_with};

use std::net::SocketAddr;
use std::sync::Arc;

#[allow(deprecated)] // MCP logging is deprecated by SEP-2577, still what clients speak.
use rmcp::model::SetLevelRequestParams;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ResourceContents, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use tokio_util::sync::CancellationToken;

use crate::envelope::{Content, ToolResponse};
use crate::server::{LogLevel, LogThreshold, RequestScope, Server};

/// The rmcp `ServerHandler` of a Fusion [`Server`], for one session: it keeps the session's
/// log level. Clones share it; make a new handler per connection.
#[derive(Clone, Debug)]
pub struct McpHandler {
    server: Server,
    log_threshold: LogThreshold,
}

impl McpHandler {
    /// The handler for one session of `server`.
    pub fn new(server: Server) -> Self {
        McpHandler {
            server,
            log_threshold: LogThreshold::default(),
        }
    }

    /// The server behind it.
    pub fn server(&self) -> &Server {
        &self.server
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
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_logging()
            .build();
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
        Ok(ListToolsResult::with_all_items(
            self.server.tools().to_vec(),
        ))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let scope = RequestScope::from_rmcp_in_session(&context, self.log_threshold.clone());
        let response = self
            .server
            .call(&request.name, request.arguments, scope)
            .await;
        Ok(to_call_tool_result(response).into())
    }

    #[allow(deprecated)]
    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let level = LogLevel::from_rmcp(request.level);
        tracing::debug!(%level, "client set the log level");
        self.log_threshold.set(level);
        Ok(())
    }
}

/// Serves `server` over stdio until the client closes stdin (then returns `Ok`, whether
/// the client initialized or not). Nothing but protocol messages goes to stdout.
pub async fn serve_stdio(server: Server) -> anyhow::Result<()> {
    serve_stdio_with(server, StdioOptions::default()).await
}

/// Options of the streamable HTTP transport.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct HttpOptions {
    /// No sessions: every request stands alone, so instances can sit behind any load
    /// balancer. Answers are plain JSON instead of SSE streams.
    pub stateless: bool,
    /// Hosts accepted in the `Host` header (DNS-rebinding protection). Loopback names by
    /// default; add the public host names when serving beyond this machine.
    pub allowed_hosts: Vec<String>,
    /// The path the endpoint is mounted at (`/mcp`).
    pub path: String,
    /// Stops the server when cancelled.
    pub shutdown: CancellationToken,
}

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            stateless: false,
            allowed_hosts: vec!["localhost".into(), "127.0.0.1".into(), "::1".into()],
            path: "/mcp".into(),
            shutdown: CancellationToken::new(),
        }
    }
}

impl HttpOptions {
    /// Stateless or not.
    pub fn stateless(mut self, stateless: bool) -> Self {
        self.stateless = stateless;
        self
    }

    /// Adds accepted host names.
    pub fn allow_hosts(mut self, hosts: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.allowed_hosts.extend(hosts.into_iter().map(Into::into));
        self
    }

    /// A shutdown token.
    pub fn shutdown(mut self, token: CancellationToken) -> Self {
        self.shutdown = token;
        self
    }
}

/// The streamable HTTP endpoint as an axum router (mount it in a larger app, or serve it).
pub fn http_router(server: Server, options: &HttpOptions) -> axum::Router {
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(!options.stateless)
        .with_json_response(options.stateless)
        .with_allowed_hosts(options.allowed_hosts.clone())
        .with_cancellation_token(options.shutdown.child_token())
        .with_max_request_body_bytes(http_jsonrpc::MAX_BODY_BYTES);
    let guard = http_jsonrpc::Guard {
        server: server.clone(),
        allowed_hosts: options.allowed_hosts.clone().into(),
    };
    let service = StreamableHttpService::new(
        move || Ok(McpHandler::new(server.clone())),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    axum::Router::new()
        .nest_service(&options.path, service)
        .layer(axum::middleware::from_fn_with_state(
            guard,
            http_jsonrpc::guard,
        ))
}

/// A running HTTP server.
#[derive(Debug)]
pub struct HttpServer {
    /// The address it listens on (the real port when asked for port 0).
    pub local_addr: SocketAddr,
    /// The endpoint URL (`http://127.0.0.1:PORT/mcp`).
    pub url: String,
    shutdown: CancellationToken,
    task: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl HttpServer {
    /// Stops accepting connections and waits for the server task.
    pub async fn shutdown(self) -> anyhow::Result<()> {
        self.shutdown.cancel();
        self.task.await??;
        Ok(())
    }

    /// Waits until the server stops (on its shutdown token).
    pub async fn wait(self) -> anyhow::Result<()> {
        self.task.await??;
        Ok(())
    }
}

/// Binds `addr` and serves `server` over streamable HTTP in a background task.
pub async fn spawn_http(
    server: Server,
    addr: SocketAddr,
    options: HttpOptions,
) -> anyhow::Result<HttpServer> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let local_addr = listener.local_addr()?;
    let router = http_router(server, &options);
    let shutdown = options.shutdown.clone();
    let stop = shutdown.clone();
    let task = tokio::spawn(async move {
        // The peer address lets per-client rate limits tell stateless callers apart.
        let app = router.into_make_service_with_connect_info::<SocketAddr>();
        axum::serve(listener, app)
            .with_graceful_shutdown(async move { stop.cancelled().await })
            .await
    });
    let host = match local_addr {
        SocketAddr::V6(a) => format!("[{}]", a.ip()),
        SocketAddr::V4(a) => a.ip().to_string(),
    };
    Ok(HttpServer {
        url: format!("http://{host}:{}{}", local_addr.port(), options.path),
        local_addr,
        shutdown,
        task,
    })
}
