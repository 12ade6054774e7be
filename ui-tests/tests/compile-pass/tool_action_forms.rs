//! The forms `#[tool_action]` accepts; generated items are documented (`missing_docs`).
#![deny(missing_docs)]

use fusion_runtime::{
    Context, Server, ToolError, ToolInput, ToolResponse, WithWarnings, tool_action,
};

/// Input.
#[derive(serde::Deserialize, ToolInput)]
pub struct Ping {
    /// The message.
    pub message: String,
}

/// Shared state.
pub struct Counter;

/// A plain action: name from the function, description from the doc comment.
#[tool_action]
pub async fn ping(input: Ping) -> Result<String, ToolError> {
    Ok(input.message)
}

/// Echo (the attribute's `description` wins over this doc comment).
#[tool_action(
    name = "net.echo",
    title = "Echo",
    description = "Echoes.",
    read_only,
    destructive = false,
    idempotent,
    open_world = false,
    deprecated = "use ping instead",
    max_result_bytes = 65536
)]
pub async fn echo(input: Ping, _cx: Context<Counter>) -> anyhow::Result<WithWarnings<String>> {
    Ok(WithWarnings::new(input.message))
}

/// Ready responses and boxed errors.
#[tool_action(name = "net.raw")]
pub async fn raw(input: Ping) -> Result<ToolResponse, Box<dyn std::error::Error + Send + Sync>> {
    Ok(ToolResponse::text(input.message))
}

fn main() {
    // Accepted by the macros is not enough: the builder must take every form too.
    let server = Server::builder()
        .state(Counter)
        .action::<PingAction>()
        .action::<EchoAction>()
        .action::<RawAction>()
        .build()
        .unwrap_or_else(|e| panic!("the builder refuses a form the macros accept: {e}"));
    let names: Vec<&str> = server.actions().iter().map(|a| a.info.name).collect();
    assert_eq!(names, ["ping", "net.echo", "net.raw"]);
}
