//! The experimental tasks of MCP 2025-11-25 over streamable HTTP, for the clients of that
//! version (the TypeScript SDK's `client.experimental.tasks`): a `tools/call` with a `task`
//! parameter (`{"ttl": ms}`) of a task action is answered with `{"task": {…}}`; `tasks/get`
//! reads it, `tasks/result` waits for its end and answers what the call would have
//! (the `CallToolResult`, or the JSON-RPC error of a `failed` task), `tasks/cancel` cancels
//! it. The same tasks, store, owner rules and bounds as the 2026-07-28 extension
//! ([`tasks`](super::tasks)); a question inside such a task is refused (2025 asks it on the
//! `tasks/result` stream, which is not served here).
//!
//! rmcp 3.11 knows only the 2026-07-28 shapes (it drops the `task` parameter and refuses
//! `tasks/*` from a client without the extension), so these requests are answered by the
//! HTTP JSON-RPC step before rmcp, from facts the request steps already worked out (the
//! principal, the client's key); a request naming no session is left to rmcp. The
//! `initialize` answer does not advertise `capabilities.tasks`, nor `tools/list`
//! `execution.taskSupport`: a client asks for a task explicitly.

use std::time::{Duration, Instant};

use axum::http::request::Parts;
use rmcp::ErrorData;
use serde_json::{Value, json};

use super::era::Era;
use super::tasks::{self, Can};
use crate::context::{ClientKey, RequestScope};
use crate::server::Server;
use crate::store::{TaskOutcome, TaskRecord};

/// How often `tasks/result` looks at a running task.
const RESULT_POLL: Duration = Duration::from_millis(200);

/// The JSON-RPC answer (`result` or `error` object, and which) to a 2025-11-25 task request
/// in `message`; `None` for anything else (rmcp answers it).
pub(crate) async fn answer(server: &Server, parts: &Parts, message: &Value) -> Option<Value> {
    if !server.has_tasks() || parts.headers.get("mcp-session-id").is_none() {
        return None;
    }
    let version = parts.headers.get("mcp-protocol-version")?.to_str().ok()?;
    if version != "2025-11-25" {
        return None;
    }
    let method = message.get("method")?.as_str()?;
    let id = message.get("id")?.clone();
    let params = message.get("params").cloned().unwrap_or_else(|| json!({}));
    let principal = parts.extensions.get::<crate::auth::Principal>().cloned();
    let owner = match &principal {
        Some(p) => ClientKey::new(p.client_key()),
        None => super::scope::http_client_key(parts),
    };
    let task_id = || params.get("taskId").and_then(Value::as_str).unwrap_or("");
    let answered = match method {
        "tools/call" => {
            let task = params.get("task").filter(|t| t.is_object())?;
            call(server, &params, task, principal, owner).await
        }
        "tasks/get" => get(server, &owner, task_id()).await,
        "tasks/result" => result(server, &owner, task_id()).await,
        "tasks/cancel" => cancel(server, &owner, task_id()).await,
        _ => return None,
    };
    Some(match answered {
        Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
        Err(error) => json!({"jsonrpc": "2.0", "id": id, "error": error}),
    })
}

/// A task-augmented `tools/call`: `{"task": {…}}`, or `-32601` for a tool that does not run
/// as a task (the spec's word for it).
async fn call(
    server: &Server,
    params: &Value,
    task: &Value,
    principal: Option<crate::auth::Principal>,
    owner: ClientKey,
) -> Result<Value, Value> {
    let name = params.get("name").and_then(Value::as_str).unwrap_or("");
    if !server.task_support(name).allows_task() {
        return Err(json!({
            "code": -32601,
            "message": format!("`{}` does not run as a task: call it without `task`", name.chars().take(64).collect::<String>()),
        }));
    }
    let ttl = task.get("ttl").and_then(Value::as_u64).map_or(
        server.task_store().limits().default_ttl,
        Duration::from_millis,
    );
    let arguments = params.get("arguments").and_then(Value::as_object).cloned();
    let mut scope = RequestScope::detached();
    scope.principal = principal.map(std::sync::Arc::new);
    scope.client = Some(owner);
    match tasks::launch(
        server,
        &Era::Legacy,
        name,
        arguments,
        scope,
        Can::default(),
        ttl,
    )
    .await
    {
        Ok(record) => Ok(json!({ "task": task_json(&record) })),
        // A refused task is answered as the call would be refused: an `isError` result.
        Err(refusal) => Ok(json!({
            "content": [{"type": "text", "text": refusal.render()}],
            "isError": true,
        })),
    }
}

async fn read(server: &Server, owner: &ClientKey, id: &str) -> Result<TaskRecord, Value> {
    match server.task_store().get(&owner.0, id).await {
        Ok(Some(record)) => Ok(record),
        Ok(None) => Err(error(&tasks::not_found(id))),
        Err(e) => Err(error(&tasks::store_error(&e))),
    }
}

async fn get(server: &Server, owner: &ClientKey, id: &str) -> Result<Value, Value> {
    read(server, owner, id).await.map(|r| task_json(&r))
}

/// `tasks/result`: waits (at most the task's TTL and a second) for the task to end, then
/// answers what the call would have: its result, with the related-task `_meta`, or the
/// error of a `failed` or `cancelled` task.
async fn result(server: &Server, owner: &ClientKey, id: &str) -> Result<Value, Value> {
    let first = read(server, owner, id).await?;
    let deadline = Instant::now() + Duration::from_millis(first.ttl_ms) + Duration::from_secs(1);
    let mut record = first;
    while !record.status.is_terminal() {
        if Instant::now() >= deadline {
            return Err(
                json!({"code": -32603, "message": "the task did not end within its time to live"}),
            );
        }
        tokio::time::sleep(RESULT_POLL).await;
        record = read(server, owner, id).await?;
    }
    match record.outcome {
        Some(TaskOutcome::Completed(mut result)) => {
            let meta = result.entry("_meta").or_insert_with(|| json!({}));
            if let Some(meta) = meta.as_object_mut() {
                meta.insert(
                    "io.modelcontextprotocol/related-task".to_owned(),
                    json!({ "taskId": id }),
                );
            }
            Ok(Value::Object(result))
        }
        Some(TaskOutcome::Failed(error)) => Err(Value::Object(error)),
        _ => Err(json!({"code": -32603, "message": "the task was cancelled (tasks/cancel)"})),
    }
}

/// `tasks/cancel`: the task, now `cancelled`; `-32602` for a task that already ended.
async fn cancel(server: &Server, owner: &ClientKey, id: &str) -> Result<Value, Value> {
    let record = read(server, owner, id).await?;
    if record.status.is_terminal() {
        return Err(json!({
            "code": -32602,
            "message": format!("the task already ended ({}): there is nothing to cancel", record.status.as_str()),
        }));
    }
    match server.task_store().cancel(&owner.0, id).await {
        Ok(true) => read(server, owner, id).await.map(|r| task_json(&r)),
        Ok(false) => Err(error(&tasks::not_found(id))),
        Err(e) => Err(error(&tasks::store_error(&e))),
    }
}

/// A 2025-11-25 `Task`: `ttl` and `pollInterval` (not 2026-07-28's `ttlMs`,
/// `pollIntervalMs`).
fn task_json(record: &TaskRecord) -> Value {
    let mut task = json!({
        "taskId": record.id,
        "status": record.status.as_str(),
        "createdAt": tasks::iso8601(record.created_ms),
        "lastUpdatedAt": tasks::iso8601(record.updated_ms),
        "ttl": record.ttl_ms,
        "pollInterval": record.poll_interval_ms,
    });
    if let Some(message) = &record.status_message {
        task["statusMessage"] = json!(message);
    }
    task
}

fn error(e: &ErrorData) -> Value {
    serde_json::to_value(e).unwrap_or_else(|_| json!({"code": -32603, "message": e.message}))
}
