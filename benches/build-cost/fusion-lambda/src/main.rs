//! The README's first tool as a Lambda function.

use fusion_runtime::{Server, ToolError, ToolInput, tool_action};

/// Who to greet.
#[derive(serde::Deserialize, ToolInput)]
struct Greet {
    /// The name to greet, e.g. `Ada`.
    #[fusion(length(min = 1, max = 64))]
    name: String,
}

/// Greets someone by name.
#[tool_action(read_only)]
async fn greet(input: Greet) -> Result<String, ToolError> {
    Ok(format!("Hello, {}!", input.name))
}

#[tokio::main]
async fn main() -> Result<(), fusion_runtime::lambda::Error> {
    let server = Server::builder().name("hello").action::<GreetAction>().build()?;
    fusion_runtime::lambda::run(server).await
}
