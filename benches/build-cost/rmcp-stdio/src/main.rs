//! One tool over stdio, written by hand on rmcp: schema and checks spelled out.

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Map, Value, json};

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Add {
    a: i64,
    b: i64,
}

#[derive(Clone)]
struct Adder {
    tool: Tool,
}

fn schema() -> Arc<Map<String, Value>> {
    let schema = json!({
        "type": "object",
        "properties": {
            "a": { "type": "integer", "description": "The first addend." },
            "b": { "type": "integer", "description": "The second addend." }
        },
        "required": ["a", "b"],
        "additionalProperties": false
    });
    Arc::new(match schema {
        Value::Object(map) => map,
        _ => Map::new(),
    })
}

impl ServerHandler for Adder {
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
        if request.name != "add" {
            return Ok(CallToolResult::error(vec![ContentBlock::text("unknown tool")]).into());
        }
        let args = Value::Object(request.arguments.unwrap_or_default());
        let input: Add = match serde_json::from_value(args) {
            Ok(input) => input,
            Err(e) => return Ok(CallToolResult::error(vec![ContentBlock::text(e.to_string())]).into()),
        };
        let sum = input.a.saturating_add(input.b);
        Ok(CallToolResult::success(vec![ContentBlock::text(sum.to_string())]).into())
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let adder = Adder {
        tool: Tool::new("add", "Add two numbers.", schema()),
    };
    let running = adder.serve(rmcp::transport::stdio()).await?;
    running.waiting().await?;
    Ok(())
}
