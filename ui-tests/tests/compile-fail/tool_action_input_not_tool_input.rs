use fusion_runtime::{ToolError, tool_action};

#[derive(serde::Deserialize)]
struct Ping {
    message: String,
}

/// Answers a ping.
#[tool_action(name = "ping")]
async fn ping(input: Ping) -> Result<String, ToolError> {
    Ok(input.message)
}

fn main() {}
