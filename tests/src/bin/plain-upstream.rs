//! A plain `rmcp` server that is not a Fusion server, as an upstream for the gateway tests:
//! its errors are plain text and JSON-RPC errors, never envelopes. Over stdio, or over
//! streamable HTTP with `--http 127.0.0.1:PORT` (the address it listens on goes to stdout).
//!
//! Tools: `echo {text}` (with `PLAIN_ECHO_SCHEMA=v2`: `echo {text, times}`, refusing a call
//! without `times` with a plain-text error); `fail` (an `isError` text); `reject` (a JSON-RPC error); `slow`
//! (reports progress with its process id, then waits until cancelled — writing the file
//! `$PLAIN_CANCEL_MARKER` — or 60 s pass); `grow`
//! (adds the tool `extra` and sends `notifications/tools/list_changed`).

use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use fusion_runtime::rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ListToolsResult,
    PaginatedRequestParams, ProgressNotificationParam, ServerCapabilities, ServerConfig, Tool,
};
use fusion_runtime::rmcp::service::RequestContext;
use fusion_runtime::rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use fusion_runtime::rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use fusion_runtime::rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::json;

#[derive(Clone, Default)]
struct Plain {
    grown: Arc<AtomicBool>,
}

fn tool(name: &'static str, description: &'static str, schema: serde_json::Value) -> Tool {
    let schema = match schema {
        serde_json::Value::Object(map) => map,
        _ => serde_json::Map::new(),
    };
    Tool::new(name, description, Arc::new(schema))
}

fn empty() -> serde_json::Value {
    json!({"type": "object", "properties": {}})
}

impl ServerHandler for Plain {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .build(),
        )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let mut tools = vec![
            tool(
                "echo",
                "Echo the text back.",
                // `PLAIN_ECHO_SCHEMA=v2`: a changed contract (a new required field).
                if std::env::var("PLAIN_ECHO_SCHEMA").is_ok_and(|v| v == "v2") {
                    json!({"type": "object", "properties": {"text": {"type": "string"}, "times": {"type": "integer"}}, "required": ["text", "times"]})
                } else {
                    json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]})
                },
            ),
            tool("fail", "Always fails with a plain-text error.", empty()),
            tool("reject", "Always answers with a JSON-RPC error.", empty()),
            tool("slow", "Reports progress, then waits.", empty()),
            tool("grow", "Adds the tool extra.", empty()),
        ];
        if self.grown.load(Ordering::SeqCst) {
            tools.push(tool("extra", "Appears after grow.", empty()));
        }
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let text = |t: String| Ok(CallToolResult::success(vec![ContentBlock::text(t)]).into());
        match request.name.as_ref() {
            "echo"
                if std::env::var("PLAIN_ECHO_SCHEMA").is_ok_and(|v| v == "v2")
                    && request
                        .arguments
                        .as_ref()
                        .is_none_or(|a| !a.contains_key("times")) =>
            {
                Ok(
                    CallToolResult::error(vec![ContentBlock::text("missing argument: times")])
                        .into(),
                )
            }
            "echo" => {
                let said = request
                    .arguments
                    .as_ref()
                    .and_then(|a| a.get("text"))
                    .and_then(|t| t.as_str())
                    .unwrap_or_default()
                    .to_owned();
                text(said)
            }
            "fail" => Ok(CallToolResult::error(vec![ContentBlock::text(
                "database exploded: <disk full> at row 42",
            )])
            .into()),
            "reject" => Err(ErrorData::invalid_params(
                "the flux capacitor is not charged",
                None,
            )),
            "slow" => {
                if let Some(token) = context.meta.get_progress_token() {
                    let param = ProgressNotificationParam::new(token, 1.0)
                        .with_total(2.0)
                        .with_message(format!("pid {}", std::process::id()));
                    let _ = context.peer.notify_progress(param).await;
                }
                tokio::select! {
                    () = context.ct.cancelled() => {
                        // The tests learn that the cancellation arrived from this file.
                        if let Ok(path) = std::env::var("PLAIN_CANCEL_MARKER") {
                            let _ = std::fs::write(path, "cancelled");
                        }
                        text("cancelled".to_owned())
                    }
                    () = tokio::time::sleep(std::time::Duration::from_secs(60)) => text("done".to_owned()),
                }
            }
            "grow" => {
                self.grown.store(true, Ordering::SeqCst);
                let _ = context.peer.notify_tool_list_changed().await;
                text("grown".to_owned())
            }
            "extra" if self.grown.load(Ordering::SeqCst) => text("extra".to_owned()),
            _ => Err(ErrorData::invalid_params("tool not found", None)),
        }
    }
}

async fn serve_http(plain: Plain, addr: &str) -> anyhow::Result<()> {
    let service = StreamableHttpService::new(
        move || Ok(plain.clone()),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    );
    let listener = tokio::net::TcpListener::bind(addr).await?;
    println!("{}", listener.local_addr()?);
    let router = axum::Router::new().nest_service("/mcp", service);
    axum::serve(listener, router).await?;
    Ok(())
}

#[tokio::main]
async fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let http = args
        .iter()
        .position(|a| a == "--http")
        .and_then(|i| args.get(i + 1));
    let plain = Plain::default();
    let served = match http {
        Some(addr) => serve_http(plain, addr).await,
        None => {
            async {
                plain
                    .serve(fusion_runtime::rmcp::transport::stdio())
                    .await?
                    .waiting()
                    .await?;
                Ok(())
            }
            .await
        }
    };
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
