//! Every signature problem is reported at once, each at its own token.
use fusion_runtime::{ToolError, ToolInput, tool_action};

#[derive(serde::Deserialize, ToolInput)]
struct Ping {
    message: String,
}

struct Pinger;

impl Pinger {
    /// Answers a ping.
    #[tool_action(name = "net.ping")]
    async fn ping(&self, input: Ping) -> Result<String, ToolError> {
        Ok(input.message)
    }
}

/// Generic.
#[tool_action(name = "net.echo")]
async fn echo<T>(input: Ping) -> Result<String, ToolError> {
    Ok(input.message)
}

#[tool_action(name = "net.quiet")]
async fn quiet(input: Ping) -> Result<String, ToolError> {
    Ok(input.message)
}

fn main() {}
