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

    /// `tools/list` as JSON: `{"tools": [..]}` (the server's own tools).
    pub fn tools_json(&self) -> serde_json::Value {
        serde_json::json!({ "tools": self.tools() })
    }

    /// What the `tools` command prints: [`Server::tools_json`], then each mounted upstream's
    /// tools, each marked with its mount in `_meta` ([`MOUNT_META_KEY`]), and a `mounts`
    /// entry per mount saying what it is and whether it was reached (`reachable`, else
    /// `error`), and which tool names the server's guards or scopes set for it that the
    /// upstream does not list (`unlisted_settings`: a typo, or a tool it dropped). A mount not connected yet is connected; a mount that does not answer is
    /// given up after its first-connection wait (`MountOptions::list_wait`, or sooner when
    /// its connect timeout fails the attempt), so this never hangs. Without mounts: exactly
    /// [`Server::tools_json`].
    pub async fn tools_listing(&self) -> serde_json::Value {
        let mut listing = self.tools_json();
        if self.tool_sources().is_empty() {
            return listing;
        }
        let mut tools: Vec<serde_json::Value> = Vec::new();
        let mut mounts = Vec::new();
        for source in self.tool_sources() {
            let specs = source.stateless_tools().await;
            let mut mount = serde_json::json!({
                "name": source.name(),
                "upstream": source.describe(),
            });
            match source.reachable() {
                Ok(()) => {
                    mount["reachable"] = true.into();
                    mount["tools"] = specs.len().into();
                }
                Err(why) => {
                    mount["reachable"] = false.into();
                    mount["error"] = why.into();
                }
            }
            if let Some(domain) = source.handoff_domain() {
                mount["handoff_domain"] = domain.into();
            }
            let unlisted: Vec<&str> = self
                .mounted_settings()
                .into_iter()
                .filter(|n| source.owns(n) && !specs.iter().any(|s| s.name == *n))
                .collect();
            if !unlisted.is_empty() && source.reachable().is_ok() {
                mount["unlisted_settings"] = unlisted.into();
            }
            mounts.push(mount);
            for spec in &specs {
                let mut tool = serde_json::to_value(to_rmcp_tool(spec)).unwrap_or_default();
                tool["_meta"] = serde_json::json!({ MOUNT_META_KEY: source.name() });
                tools.push(tool);
            }
        }
        if let Some(listed) = listing["tools"].as_array_mut() {
            listed.extend(tools);
        }
        listing["mounts"] = mounts.into();
        listing
    }
}

/// The `_meta` key the `tools` command marks a mounted tool with (its mount's name).
pub const MOUNT_META_KEY: &str = "dev.fusion/mount";
