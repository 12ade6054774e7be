//! The server's tools in rmcp's types, as `tools/list` answers them.

use rmcp::model::{Tool, ToolAnnotations};

use crate::action::Hints;
use crate::server::{Server, ToolSpec};

fn annotations(h: &Hints) -> ToolAnnotations {
    ToolAnnotations::from_raw(None, h.read_only, h.destructive, h.idempotent, h.open_world)
}

/// One tool as MCP writes it.
pub(crate) fn to_rmcp_tool(spec: &ToolSpec) -> Tool {
    let mut tool = Tool::new(
        spec.name.clone(),
        spec.description.clone(),
        spec.input_schema.clone(),
    );
    if let Some(hints) = &spec.hints {
        tool = tool.annotate(annotations(hints));
    }
    if let Some(title) = &spec.title {
        tool = tool.with_title(title.clone());
    }
    if let Some(schema) = &spec.output_schema {
        tool = tool.with_raw_output_schema(schema.clone());
    }
    tool
}

impl Server {
    /// The MCP tools, as `tools/list` answers them (built from [`Server::tool_specs`]).
    pub fn tools(&self) -> Vec<Tool> {
        self.tool_specs().iter().map(to_rmcp_tool).collect()
    }

    /// `tools/list` as JSON: `{"tools": [..]}`.
    pub fn tools_json(&self) -> serde_json::Value {
        serde_json::json!({ "tools": self.tools() })
    }
}
