//! One tool over stdio with Fusion: the schema, validation and error envelopes are derived.

use fusion_runtime::{Server, ToolError, ToolInput, tool_action};

/// Add two numbers.
#[derive(serde::Deserialize, ToolInput)]
struct Add {
    /// The first addend.
    a: i64,
    /// The second addend.
    b: i64,
}

/// Add two numbers.
#[tool_action(name = "add", read_only)]
async fn add(input: Add) -> Result<i64, ToolError> {
    Ok(input.a.saturating_add(input.b))
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let server = Server::builder()
        .name("adder")
        .version("0.0.0")
        .action::<AddAction>()
        .build()?;
    fusion_runtime::mcp::serve_stdio(server).await
}
