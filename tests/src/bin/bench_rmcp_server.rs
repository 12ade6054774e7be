//! Bench (5), baseline side: a hand-written `rmcp` `ServerHandler` doing the same work as the
//! Fusion server — deserialize the arguments, check the same rules by hand, answer the same
//! JSON (compact text and structured content) — served over stdio.

#[path = "../../benches/common/mod.rs"]
mod common;

use std::process::ExitCode;

use fusion_runtime::ToolInput;
use fusion_runtime::rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use fusion_runtime::rmcp::service::RequestContext;
use fusion_runtime::rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};

#[derive(Clone)]
struct Bare {
    tool: Tool,
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
        Ok(ListToolsResult::with_all_items(vec![self.tool.clone()]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if request.name != common::TOOL {
            return Ok(CallToolResult::error(vec![ContentBlock::text("unknown tool")]).into());
        }
        let args = serde_json::Value::Object(request.arguments.unwrap_or_default());
        let input: common::Signup = match serde_json::from_value(args) {
            Ok(i) => i,
            Err(e) => {
                return Ok(CallToolResult::error(vec![ContentBlock::text(e.to_string())]).into());
            }
        };
        if let Err(e) = common::check_by_hand(&input) {
            return Ok(CallToolResult::error(vec![ContentBlock::text(e)]).into());
        }
        let value = match serde_json::to_value(common::registered(input)) {
            Ok(v) => v,
            Err(e) => {
                return Ok(CallToolResult::error(vec![ContentBlock::text(e.to_string())]).into());
            }
        };
        let text = value.to_string();
        let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
        result.structured_content = Some(value);
        Ok(result.into())
    }
}

#[tokio::main]
async fn main() -> ExitCode {
    let tool = Tool::new(
        common::TOOL,
        "Register an account.",
        common::Signup::input_schema(),
    );
    let served = async {
        let running = Bare { tool }
            .serve(fusion_runtime::rmcp::transport::stdio())
            .await?;
        running.waiting().await?;
        anyhow::Ok(())
    };
    match served.await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
