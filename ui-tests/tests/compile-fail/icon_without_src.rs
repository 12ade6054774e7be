use fusion_runtime::{ToolError, ToolInput, tool_action};

#[derive(serde::Deserialize, ToolInput)]
struct Ping {
    message: String,
}

/// Answers a ping.
#[tool_action(name = "net.ping", icon(mime_type = "image/png"))]
async fn ping(input: Ping) -> Result<String, ToolError> {
    Ok(input.message)
}

fn main() {}
