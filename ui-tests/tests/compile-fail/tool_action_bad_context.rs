use fusion_runtime::{ToolError, ToolInput, tool_action};

#[derive(serde::Deserialize, ToolInput)]
struct Ping {
    message: String,
}

/// Answers a ping.
#[tool_action(name = "net.ping")]
async fn ping(input: Ping, state: std::sync::Arc<String>) -> Result<String, ToolError> {
    Ok(format!("{}{}", input.message, state))
}

fn main() {}
