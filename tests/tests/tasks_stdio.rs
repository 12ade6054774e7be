//! The experimental tasks of MCP 2025-11-25 over stdio, raw JSON-RPC lines to the billing
//! example (and a task that runs until the test ends) served in-process by `serve_io`:
//!
//! - a 2025-11-25 client is told of the tasks (`capabilities.tasks`, each task tool's
//!   `execution.taskSupport`), starts one with a task-augmented `tools/call`, reads it
//!   (`tasks/get`), waits for it on `tasks/result` (the status change, then the result with
//!   the related-task `_meta`) and is refused what it may not (`tasks/list` without a
//!   principal, `tasks/cancel` of an ended task);
//! - the bounds hold on stdio as over HTTP: a client holds at most
//!   [`DEFAULT_TASKS_PER_OWNER`] `tasks/result` reads open, the next is refused at once; and
//!   at most as many tasks; the reads' places are given back when the input ends;
//! - a 2025-06-18 client on stdio is served as before: no tasks advertised, a `task`
//!   parameter ignored (the call answered at once), `tasks/get` not the framework's.
//!
//! The TypeScript SDK drives the same over a spawned process in `tests/node/tasks.test.mjs`.

use std::time::Duration;

use fusion_runtime::mcp::{StdioOptions, serve_io};
use fusion_runtime::store::DEFAULT_TASKS_PER_OWNER;
use fusion_runtime::{Server, ToolError, ToolInput, tool_action};
use fusion_tests::raw_stdio::RawStdio;
use serde::Deserialize;
use serde_json::{Value, json};

/// Nothing.
#[derive(Deserialize, ToolInput)]
struct Nothing {}

/// Runs for ten minutes (until the test ends).
#[tool_action(name = "hang", task)]
async fn hang(_input: Nothing) -> Result<String, ToolError> {
    tokio::time::sleep(Duration::from_secs(600)).await;
    Ok("woke".to_owned())
}

fn server() -> Server {
    examples::billing::builder()
        .action::<HangAction>()
        .build()
        .unwrap_or_else(|e| panic!("{e}"))
}

/// Starts `tool` as a task with `arguments`: its id.
async fn start(raw: &mut RawStdio, id: u64, tool: &str, arguments: Value) -> String {
    let params = json!({"name": tool, "arguments": arguments, "task": {"ttl": 60_000}});
    let (_, created) = raw.request(id, "tools/call", params).await;
    created["result"]["task"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("no task: {created}"))
        .to_owned()
}

#[tokio::test]
async fn a_2025_11_25_client_on_stdio_runs_reads_and_waits_for_a_task() {
    let mut raw = RawStdio::serve(server());
    let init = raw.initialize("2025-11-25", json!({})).await;
    // As over HTTP: no `list` without a principal (clients cannot be told apart).
    assert_eq!(
        init["result"]["capabilities"]["tasks"],
        json!({"cancel": {}, "requests": {"tools": {"call": {}}}}),
        "{init}"
    );
    let (_, listed) = raw.request(1, "tools/list", json!({})).await;
    let tools = listed["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("{listed}"));
    let execution = |name: &str| {
        tools
            .iter()
            .find(|t| t["name"] == name)
            .map(|t| t.get("execution").cloned())
            .unwrap_or_else(|| panic!("no {name}: {listed}"))
    };
    assert_eq!(
        execution("billing_reconcile"),
        Some(json!({"taskSupport": "optional"}))
    );
    assert_eq!(execution("billing_get_invoice"), None);

    let task = start(
        &mut raw,
        2,
        "billing_reconcile",
        json!({"duration_ms": 600}),
    )
    .await;
    let (_, got) = raw.request(3, "tasks/get", json!({"taskId": task})).await;
    assert_eq!(got["result"]["taskId"], json!(task), "{got}");
    assert_eq!(got["result"]["status"], "working", "{got}");
    assert_eq!(got["result"]["ttl"], 60_000, "{got}");

    // Waits on the stdio stream: the status change, then the call's result.
    let (before, result) = raw
        .request(4, "tasks/result", json!({"taskId": task}))
        .await;
    assert!(
        before
            .iter()
            .any(|m| m["method"] == "notifications/tasks/status"
                && m["params"]["taskId"] == json!(task)
                && m["params"]["status"] == "completed"),
        "{before:?}"
    );
    assert_eq!(result["result"]["isError"], false, "{result}");
    assert_eq!(
        result["result"]["structuredContent"]["took_ms"], 600,
        "{result}"
    );
    assert_eq!(
        result["result"]["_meta"]["io.modelcontextprotocol/related-task"]["taskId"],
        json!(task),
        "{result}"
    );

    let (_, listed) = raw.request(5, "tasks/list", json!({})).await;
    assert_eq!(listed["error"]["code"], -32601, "{listed}");
    let (_, cancelled) = raw
        .request(6, "tasks/cancel", json!({"taskId": task}))
        .await;
    assert_eq!(cancelled["error"]["code"], -32602, "{cancelled}");
    assert!(
        cancelled["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("already ended")),
        "{cancelled}"
    );

    // A running task is cancelled, and read so.
    let hung = start(&mut raw, 7, "hang", json!({})).await;
    let (_, cancelled) = raw
        .request(8, "tasks/cancel", json!({"taskId": hung}))
        .await;
    assert_eq!(cancelled["result"]["status"], "cancelled", "{cancelled}");
    let (_, got) = raw.request(9, "tasks/get", json!({"taskId": hung})).await;
    assert_eq!(got["result"]["status"], "cancelled", "{got}");
}

#[tokio::test]
async fn tasks_result_reads_on_stdio_are_bounded_and_given_back_when_the_input_ends() {
    let server = server();
    let mut raw = RawStdio::serve(server.clone());
    raw.initialize("2025-11-25", json!({})).await;
    let task = start(&mut raw, 1, "hang", json!({})).await;
    for k in 0..DEFAULT_TASKS_PER_OWNER as u64 {
        raw.send(
            json!({"jsonrpc": "2.0", "id": 100 + k, "method": "tasks/result",
            "params": {"taskId": task}}),
        )
        .await;
    }
    // Past the bound: refused at once, with what to do instead.
    let (_, refused) = raw
        .request(99, "tasks/result", json!({"taskId": task}))
        .await;
    assert_eq!(refused["error"]["code"], -32000, "{refused}");
    let message = refused["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains(&format!(
            "already has {DEFAULT_TASKS_PER_OWNER} tasks/result streams open"
        )) && message.contains("poll tasks/get"),
        "{refused}"
    );
    // The open reads answered nothing (the task runs).
    assert_eq!(raw.maybe_next(Duration::from_millis(300)).await, None);

    // The task quota: one task is running, so as many more as the bound leaves, then no more.
    for k in 1..DEFAULT_TASKS_PER_OWNER as u64 {
        start(&mut raw, 200 + k, "hang", json!({})).await;
    }
    let params = json!({"name": "hang", "arguments": {}, "task": {"ttl": 60_000}});
    let (_, over) = raw.request(300, "tools/call", params).await;
    assert_eq!(over["result"]["isError"], true, "{over}");
    let text = over["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(text.contains("SERVER_BUSY"), "{over}");

    // The client goes: its reads end, and give their places back (the next connection is
    // the same client, `connection`, and may open as many).
    drop(raw);
    let mut again = RawStdio::serve(server);
    again.initialize("2025-11-25", json!({})).await;
    // Once they are back (the reads notice within a poll), a read is held open again …
    let mut refused_every_time = true;
    for k in 0..50 {
        again
            .send(
                json!({"jsonrpc": "2.0", "id": 1000 + k, "method": "tasks/result",
                "params": {"taskId": task}}),
            )
            .await;
        match again.maybe_next(Duration::from_millis(300)).await {
            None => {
                refused_every_time = false;
                break;
            }
            Some(answer) => assert_eq!(answer["error"]["code"], -32000, "{answer}"),
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(!refused_every_time, "the ended reads kept their places");
    // … and as many as the bound allows.
    for k in 1..DEFAULT_TASKS_PER_OWNER as u64 {
        again
            .send(
                json!({"jsonrpc": "2.0", "id": 2000 + k, "method": "tasks/result",
                "params": {"taskId": task}}),
            )
            .await;
    }
    assert_eq!(again.maybe_next(Duration::from_millis(500)).await, None);
}

#[tokio::test]
async fn a_2025_06_18_client_on_stdio_is_served_as_before() {
    let mut raw = RawStdio::serve(server());
    let init = raw.initialize("2025-06-18", json!({})).await;
    assert!(
        init["result"]["capabilities"].get("tasks").is_none(),
        "{init}"
    );
    let (_, listed) = raw.request(1, "tools/list", json!({})).await;
    let tools = listed["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("{listed}"));
    assert!(
        tools.iter().all(|t| t.get("execution").is_none()),
        "{listed}"
    );
    // `task` is no parameter of 2025-06-18: the call runs and answers.
    let params = json!({"name": "billing_reconcile", "arguments": {"duration_ms": 10},
        "task": {"ttl": 60_000}});
    let (_, called) = raw.request(2, "tools/call", params).await;
    assert_eq!(called["result"]["isError"], false, "{called}");
    assert!(called["result"].get("task").is_none(), "{called}");
    let (_, got) = raw.request(3, "tasks/get", json!({"taskId": "x"})).await;
    assert!(got.get("error").is_some(), "{got}");
}

#[tokio::test]
async fn a_principal_on_stdio_lists_its_tasks() {
    let (server_io, client_io) = tokio::io::duplex(256 * 1024);
    let (read, write) = tokio::io::split(server_io);
    let options = StdioOptions::default().principal(fusion_runtime::auth::Principal::new("alice"));
    tokio::spawn(async move {
        let _ = serve_io(server(), read, write, options).await;
    });
    let (reader, writer) = tokio::io::split(client_io);
    let mut raw = RawStdio::over(reader, writer);
    let init = raw.initialize("2025-11-25", json!({})).await;
    assert_eq!(
        init["result"]["capabilities"]["tasks"],
        json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}),
        "{init}"
    );
    let task = start(&mut raw, 1, "hang", json!({})).await;
    let (_, listed) = raw.request(2, "tasks/list", json!({})).await;
    let ids: Vec<&Value> = listed["result"]["tasks"]
        .as_array()
        .unwrap_or_else(|| panic!("{listed}"))
        .iter()
        .map(|t| &t["taskId"])
        .collect();
    assert_eq!(ids, vec![&json!(task)], "{listed}");
}
