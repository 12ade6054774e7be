use fusion_runtime::{ToolError, tool_action};

/// Answers a ping.
#[tool_action(name = "ping")]
async fn ping() -> Result<String, ToolError> {
    Ok("pong".into())
}

fn main() {}
