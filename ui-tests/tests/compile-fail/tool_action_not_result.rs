use fusion_runtime::{ToolInput, tool_action};

#[derive(serde::Deserialize, ToolInput)]
struct Ping {
    message: String,
}

/// Answers a ping.
#[tool_action(name = "net.ping")]
async fn ping(input: Ping) -> String {
    input.message
}

fn main() {}
