//! Actions without an input: no parameter at all, or only their context (by any path to
//! `Context` or `CallContext`); and `?` on the errors handlers meet most in a handler that
//! returns `Result<_, ToolError>`. Generated items are documented (`missing_docs`).
#![deny(missing_docs)]

use fusion_runtime::context::CallContext;
use fusion_runtime::{Context, Server, ToolError, tool_action};

/// Shared state.
pub struct Counter(pub u32);

/// Answers a ping.
#[tool_action]
pub async fn ping() -> Result<String, ToolError> {
    Ok("pong".into())
}

/// Reads the shared count.
#[tool_action(name = "counter.read", read_only)]
pub async fn read(counter: Context<Counter>) -> Result<u32, ToolError> {
    Ok(counter.state().0)
}

/// Names the action it runs as.
#[tool_action(name = "whoami")]
pub async fn whoami(cx: fusion_runtime::context::CallContext) -> Result<String, ToolError> {
    Ok(cx.action().to_owned())
}

/// `?` on an `io::Error`, a `serde_json::Error` and an `anyhow::Error`.
#[tool_action(name = "files.read")]
pub async fn read_file(_cx: CallContext) -> Result<String, ToolError> {
    let text = std::fs::read_to_string("/nonexistent")?;
    let _: serde_json::Value = serde_json::from_str(&text)?;
    let n: u32 = text.trim().parse().map_err(anyhow::Error::from)?;
    Ok(n.to_string())
}

fn main() {
    let built = Server::builder()
        .state(Counter(3))
        .action::<PingAction>()
        .action::<ReadAction>()
        .action::<WhoamiAction>()
        .action::<ReadFileAction>()
        .build();
    assert!(built.is_ok());
}
