//! A server of task actions over stateful streamable HTTP with bearer auth, for the official
//! clients' task tests (`tests/node/tasks.test.mjs`): `confirm_task` asks the user to
//! confirm (`cx.elicit`) inside its task, `nap_task` sleeps; list pages of two. Its tasks
//! are in the Redis at `TASKS_REDIS_URL` when set (the multi-instance tests run three),
//! else in memory. Prints on stderr a bearer token for each of `alice` and `bob`
//! (`token <who>: <jwt>`), then `fusion: serving MCP over streamable HTTP at <url>`, and
//! serves until killed.
//!
//! With `--stdio`, it serves over stdio instead, every call made by `alice` (as an
//! application embedding the server names its user: no token travels over stdio), until
//! its input ends.

use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::Duration;

use fusion_runtime::auth::{AuthMode, Principal};
use fusion_runtime::context::Elicited;
use fusion_runtime::mcp::{HttpOptions, StdioOptions, serve_stdio_with, spawn_http};
use fusion_runtime::{Context, Elicitable, Server, ToolError, ToolInput, tool_action};
use serde::Deserialize;
use serde_json::{Value, json};

use fusion_tests::tasks::{SERVER_ISSUER, SERVER_RESOURCE, SERVER_SECRET, server_token};

/// What to confirm.
#[derive(Deserialize, ToolInput)]
struct Transfer {
    /// Cents to move.
    #[fusion(range(min = 1, max = 1000000))]
    amount_cents: u64,
}

/// The user's confirmation.
#[derive(Deserialize, ToolInput, Elicitable)]
struct Confirm {
    /// Whether to go ahead.
    confirm: bool,
}

/// Asks the user to confirm the transfer, then says what was done.
#[tool_action(name = "confirm_task", task)]
async fn confirm_task(input: Transfer, cx: Context) -> Result<Value, ToolError> {
    let question = format!("Move {} cents?", input.amount_cents);
    let answer = match cx.elicit::<Confirm>(&question).await? {
        Elicited::Accept(c) if c.confirm => "moved",
        Elicited::Accept(_) => "kept",
        Elicited::Decline | Elicited::Cancel => "declined",
    };
    Ok(json!({ "amount_cents": input.amount_cents, "outcome": answer }))
}

/// How long to sleep.
#[derive(Deserialize, ToolInput)]
struct Nap {
    /// Milliseconds.
    #[fusion(range(min = 0, max = 60000))]
    ms: u64,
}

/// Sleeps `ms` milliseconds.
#[tool_action(name = "nap_task", task)]
async fn nap_task(input: Nap) -> Result<Value, ToolError> {
    tokio::time::sleep(Duration::from_millis(input.ms)).await;
    Ok(json!({ "slept_ms": input.ms }))
}

#[tokio::main]
async fn main() -> ExitCode {
    let mut builder = Server::builder()
        .name("tasks-server")
        .action::<ConfirmTaskAction>()
        .action::<NapTaskAction>()
        .page_size(2);
    if let Ok(url) = std::env::var("TASKS_REDIS_URL") {
        match fusion_runtime::store::RedisTasks::new(&url) {
            Ok(store) => builder = builder.task_store(store),
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    let server = match builder.build() {
        Ok(server) => server,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    if std::env::args().any(|a| a == "--stdio") {
        let options = StdioOptions::default().principal(Principal::new("alice"));
        return match serve_stdio_with(server, options).await {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::FAILURE
            }
        };
    }
    let auth = fusion_tests::services::hs256_auth(
        SERVER_SECRET,
        SERVER_RESOURCE,
        SERVER_ISSUER,
        AuthMode::Required,
    );
    let served = spawn_http(
        server,
        SocketAddr::from(([127, 0, 0, 1], 0)),
        HttpOptions::default().auth(auth),
    )
    .await;
    let served = match served {
        Ok(served) => served,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    for who in ["alice", "bob"] {
        eprintln!("token {who}: {}", server_token(who));
    }
    eprintln!("fusion: serving MCP over streamable HTTP at {}", served.url);
    std::future::pending::<()>().await;
    ExitCode::SUCCESS
}
