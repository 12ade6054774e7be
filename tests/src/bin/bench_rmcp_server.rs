//! Bench (5), baseline side: a hand-written `rmcp` `ServerHandler` doing the same work as the
//! Fusion server — deserialize the arguments, check the same rules by hand, answer the same
//! JSON (compact text and structured content), for `accounts_register` and `orders_place` — served over stdio, or over streamable HTTP with
//! `--http 127.0.0.1:PORT [--stateless]` (rmcp's own service in axum, configured as Fusion
//! configures it: stateless is JSON responses without sessions, stateful is sessions and SSE).

#[path = "../../benches/common/mod.rs"]
mod common;

use std::process::ExitCode;
use std::sync::Arc;

use axum::serve::ListenerExt;

use fusion_runtime::ToolInput;
use fusion_runtime::rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use fusion_runtime::rmcp::service::RequestContext;
use fusion_runtime::rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use fusion_runtime::rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use fusion_runtime::rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};

#[derive(Clone)]
struct Bare {
    tools: Vec<Tool>,
}

impl ServerHandler for Bare {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools.clone()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = serde_json::Value::Object(request.arguments.unwrap_or_default());
        let value = match request.name.as_ref() {
            common::TOOL => answer(args, common::check_by_hand, common::registered),
            common::ORDERS_TOOL => answer(args, common::check_order_by_hand, common::placed),
            _ => Err("unknown tool".to_owned()),
        };
        let value = match value {
            Ok(v) => v,
            Err(e) => return Ok(CallToolResult::error(vec![ContentBlock::text(e)]).into()),
        };
        let text = value.to_string();
        let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
        result.structured_content = Some(value);
        Ok(result.into())
    }
}

/// One tool's work: serde, the rules by hand, the handler; `Err` is the error result's text.
fn answer<I: serde::de::DeserializeOwned, O: serde::Serialize>(
    args: serde_json::Value,
    check: fn(&I) -> Result<(), String>,
    handle: fn(I) -> O,
) -> Result<serde_json::Value, String> {
    let input: I = serde_json::from_value(args).map_err(|e| e.to_string())?;
    check(&input)?;
    serde_json::to_value(handle(input)).map_err(|e| e.to_string())
}

async fn serve_stdio(bare: Bare) -> anyhow::Result<()> {
    let running = bare.serve(fusion_runtime::rmcp::transport::stdio()).await?;
    running.waiting().await?;
    Ok(())
}

async fn serve_http(bare: Bare, addr: &str, stateless: bool) -> anyhow::Result<()> {
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(!stateless)
        .with_json_response(stateless);
    let service = StreamableHttpService::new(
        move || Ok(bare.clone()),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let listener = tokio::net::TcpListener::bind(addr).await?;
    eprintln!(
        "bare rmcp: serving MCP over streamable HTTP at http://{}/mcp",
        listener.local_addr()?
    );
    let router = axum::Router::new().nest_service("/mcp", service);
    // As Fusion's accept loop does: without it, an SSE answer's second write waits for the
    // client's delayed ACK (40 ms).
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    axum::serve(listener, router).await?;
    Ok(())
}

#[tokio::main]
async fn main() -> ExitCode {
    let tools = vec![
        Tool::new(
            common::TOOL,
            "Register an account.",
            common::Signup::input_schema(),
        ),
        Tool::new(
            common::ORDERS_TOOL,
            "Place an order.",
            common::PlaceOrder::input_schema(),
        ),
    ];
    let bare = Bare { tools };
    let args: Vec<String> = std::env::args().skip(1).collect();
    let stateless = args.iter().any(|a| a == "--stateless");
    let http = args
        .iter()
        .position(|a| a == "--http")
        .and_then(|i| args.get(i + 1));
    let served = match http {
        Some(addr) => serve_http(bare, addr, stateless).await,
        None => serve_stdio(bare).await,
    };
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
