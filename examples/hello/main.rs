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
async fn main() -> std::process::ExitCode {
    let server = Server::builder().name("hello").action::<GreetAction>();
    fusion_runtime::cli::run(server.build().expect("the server builds")).await
}
