//! A task request shows no more than a call (issue 48), over real HTTP on both task paths
//! (2026-07-28's extension, 2025-11-25's `task` parameter on a session):
//!
//! - A disabled task tool answers a task request exactly as it answers a call: the same
//!   `UNKNOWN_ACTION` result, and no task created (the server's task store holds none of
//!   the client's until the enabled tool's), for an optional and a required task tool.
//! - Task support is read on the action a name resolves to: a `task = "required"` action
//!   called by its dotted spelling (`jobs.only`) runs only as a task, as by its tool name.

use std::net::SocketAddr;
use std::time::Duration;

use fusion_runtime::Server;
use fusion_runtime::mcp::{HttpOptions, HttpServer, spawn_http};
use fusion_runtime::server::Item;
use fusion_runtime::{ToolError, ToolInput, tool_action};
use fusion_tests::tasks;
use serde::Deserialize;
use serde_json::{Value, json};

/// Nothing.
#[derive(Deserialize, ToolInput)]
struct Nothing {}

/// Answers "slept" after a moment; as a task or not.
#[tool_action(name = "sleeper", task)]
async fn sleeper(_input: Nothing) -> Result<String, ToolError> {
    tokio::time::sleep(Duration::from_millis(10)).await;
    Ok("slept".to_owned())
}

/// Answers "done"; only as a task.
#[tool_action(name = "jobs.only", task = "required")]
async fn only(_input: Nothing) -> Result<String, ToolError> {
    Ok("done".to_owned())
}

/// Answers "hidden"; only as a task (disabled below).
#[tool_action(name = "jobs.hidden", task = "required")]
async fn hidden(_input: Nothing) -> Result<String, ToolError> {
    Ok("hidden".to_owned())
}

/// The billing example and the actions above, `sleeper` and `jobs_hidden` disabled,
/// stateless or with sessions, no auth: the running server, and the server itself (to read
/// its task store).
async fn serve_with(stateless: bool) -> (HttpServer, Server) {
    let server = examples::billing::builder()
        .action::<SleeperAction>()
        .action::<OnlyAction>()
        .action::<HiddenAction>()
        .disabled(Item::Tool, "sleeper")
        .disabled(Item::Tool, "jobs_hidden")
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let running = spawn_http(
        server.clone(),
        SocketAddr::from(([127, 0, 0, 1], 0)),
        HttpOptions::default().stateless(stateless),
    )
    .await
    .unwrap_or_else(|e| panic!("spawn: {e}"));
    (running, server)
}

async fn serve(stateless: bool) -> HttpServer {
    serve_with(stateless).await.0
}

/// The ids of the tasks the test client (this machine's address, no auth) holds in
/// `server`'s store: what its `tasks/get` would find.
async fn tasks_held(server: &Server) -> Vec<String> {
    let page = server
        .task_store()
        .list("ip:127.0.0.1", None, 100)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    page.tasks.into_iter().map(|t| t.id).collect()
}

/// A 2026-07-28 `tools/call` of `tool`, declaring the tasks extension when `tasks`.
async fn modern(addr: SocketAddr, tool: &str, tasks: bool) -> Value {
    let params = json!({"name": tool, "arguments": {}, "_meta": fusion_tests::tasks::meta(tasks)});
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params});
    let headers = [
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/call"),
        ("mcp-name", tool),
    ];
    fusion_tests::raw_http::request(addr, "POST", "/mcp", &headers, &body.to_string())
        .await
        .unwrap_or_else(|e| panic!("{e}"))
        .message()
}

/// A 2025-11-25 session on `addr`: its id.
async fn session(addr: SocketAddr) -> String {
    tasks::legacy_session(addr, None).await.0
}

async fn legacy_raw(addr: SocketAddr, session: &str, body: &Value) -> Value {
    tasks::legacy_post(addr, None, session, body).await
}

/// A 2025-11-25 `tools/call` of `tool` on `session`, with `"task": {"ttl": 60000}` when
/// `task`.
async fn legacy(addr: SocketAddr, session: &str, tool: &str, task: bool) -> Value {
    let mut params = json!({"name": tool, "arguments": {}});
    if task {
        params["task"] = json!({"ttl": 60_000});
    }
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params});
    legacy_raw(addr, session, &body).await
}

/// The `UNKNOWN_ACTION` text of a call's answer (which must be an `isError` result).
fn unknown_action(answer: &Value) -> &str {
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    let text = answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(
        text.starts_with("<tool_error code=\"UNKNOWN_ACTION\""),
        "{answer}"
    );
    text
}

#[tokio::test]
async fn a_disabled_task_tool_answers_a_2026_task_request_as_a_call() {
    let (server, inner) = serve_with(true).await;
    let addr = server.local_addr;
    for tool in ["sleeper", "jobs_hidden", "jobs.hidden"] {
        let as_task = modern(addr, tool, true).await;
        let as_call = modern(addr, tool, false).await;
        unknown_action(&as_call);
        assert_eq!(as_task, as_call, "{tool}: the task request shows more");
    }
    assert_eq!(
        tasks_held(&inner).await,
        Vec::<String>::new(),
        "no task created"
    );
    // Enabled, the same tool is a task: the server did not just stop running tasks.
    let task = modern(addr, "jobs_only", true).await;
    assert_eq!(task["result"]["resultType"], "task", "{task}");
    assert_eq!(
        tasks_held(&inner).await,
        [task["result"]["taskId"].as_str().unwrap_or_default()]
    );
    server.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}

#[tokio::test]
async fn a_disabled_task_tool_answers_a_2025_task_request_as_a_call() {
    let (server, inner) = serve_with(false).await;
    let addr = server.local_addr;
    let session = session(addr).await;
    for tool in ["sleeper", "jobs_hidden", "jobs.hidden"] {
        let as_task = legacy(addr, &session, tool, true).await;
        let as_call = legacy(addr, &session, tool, false).await;
        unknown_action(&as_call);
        assert_eq!(as_task, as_call, "{tool}: the task request shows more");
    }
    assert_eq!(
        tasks_held(&inner).await,
        Vec::<String>::new(),
        "no task created"
    );
    let task = legacy(addr, &session, "jobs_only", true).await;
    assert_eq!(task["result"]["task"]["status"], "working", "{task}");
    assert_eq!(
        tasks_held(&inner).await,
        [task["result"]["task"]["taskId"]
            .as_str()
            .unwrap_or_default()]
    );
    server.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}

#[tokio::test]
async fn a_required_task_action_runs_only_as_a_task_by_its_dotted_spelling() {
    let server = serve(true).await;
    let addr = server.local_addr;
    for tool in ["jobs_only", "jobs.only"] {
        let refused = modern(addr, tool, false).await;
        assert_eq!(refused["error"]["code"], -32021, "{tool}: {refused}");
        let task = modern(addr, tool, true).await;
        assert_eq!(task["result"]["resultType"], "task", "{tool}: {task}");
    }
    server.shutdown().await.unwrap_or_else(|e| panic!("{e}"));

    let server = serve(false).await;
    let addr = server.local_addr;
    let session = session(addr).await;
    for tool in ["jobs_only", "jobs.only"] {
        let refused = legacy(addr, &session, tool, false).await;
        assert_eq!(refused["error"]["code"], -32601, "{tool}: {refused}");
        let task = legacy(addr, &session, tool, true).await;
        assert_eq!(
            task["result"]["task"]["status"], "working",
            "{tool}: {task}"
        );
    }
    server.shutdown().await.unwrap_or_else(|e| panic!("{e}"));
}
