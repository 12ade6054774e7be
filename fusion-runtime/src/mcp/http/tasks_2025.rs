//! The experimental tasks of MCP 2025-11-25 over streamable HTTP, for the clients of that
//! version (the TypeScript SDK's `client.experimental.tasks`): a `tools/call` with a `task`
//! parameter (`{"ttl": ms}`) of a task action is answered with `{"task": {…}}`; `tasks/get`
//! reads it, `tasks/result` waits for its end and answers what the call would have
//! (the `CallToolResult`, or the JSON-RPC error of a `failed` task), `tasks/cancel` cancels
//! it. The same tasks, store, owner rules and bounds as the 2026-07-28 extension
//! (`handlers/tasks.rs`); a question inside such a task is refused (2025 asks it on the
//! `tasks/result` stream, which is not served here).
//!
//! rmcp 3.11 knows only the 2026-07-28 shapes (it drops the `task` parameter and refuses
//! `tasks/*` from a client without the extension), so these requests are answered by the
//! HTTP JSON-RPC step before rmcp, behind the door, from facts the request steps already
//! worked out (the principal, the client's key, the session the door found live and the
//! caller's); a request in no session is left to rmcp. For the same
//! reason the session's `initialize` and `tools/list` answers are edited on their way out
//! ([`Advertise`]): `capabilities.tasks` and each task tool's `execution.taskSupport`.

use std::time::{Duration, Instant};

use axum::http::request::Parts;
use rmcp::ErrorData;
use serde_json::{Value, json};

use super::body::mentions;
use super::door::Cleared;
use crate::context::{ClientKey, RequestScope};
use crate::mcp::facts::RequestFacts;
use crate::mcp::handlers::era::Era;
use crate::mcp::handlers::tasks::{self, Can};
use crate::server::Server;
use crate::store::{TaskOutcome, TaskRecord};

/// How often `tasks/result` looks at a running task.
const RESULT_POLL: Duration = Duration::from_millis(200);

/// The JSON-RPC answer (`result` or `error` object, and which) to a 2025-11-25 task request
/// in `message`, in the session the door `cleared` (live, and the caller's own); `None` for
/// anything else, and for a request in no session (rmcp answers it).
pub(crate) async fn answer(
    server: &Server,
    cleared: &Cleared,
    parts: &Parts,
    message: &Value,
) -> Option<Value> {
    if !server.has_tasks() {
        return None;
    }
    cleared.session()?;
    let facts = RequestFacts::of_parts(parts);
    let version = parts.headers.get("mcp-protocol-version")?.to_str().ok()?;
    if version != "2025-11-25" {
        return None;
    }
    let method = message.get("method")?.as_str()?;
    let id = message.get("id")?.clone();
    let params = message.get("params").cloned().unwrap_or_else(|| json!({}));
    let principal = facts.principal.as_deref().cloned();
    let owner = match &principal {
        Some(p) => ClientKey::new(p.client_key()),
        None => facts.client.clone(),
    };
    let task_id = || params.get("taskId").and_then(Value::as_str).unwrap_or("");
    let answered = match method {
        "tools/call" => match params.get("task").filter(|t| t.is_object()) {
            Some(task) => call(server, &params, task, principal, owner).await,
            None => {
                let name = params.get("name").and_then(Value::as_str)?;
                if server.task_support(name) != crate::TaskSupport::Required {
                    return None;
                }
                // The spec's answer to a tool that runs only as a task, called without one.
                Err(json!({
                    "code": -32601,
                    "message": format!("`{}` runs only as a task: call it with `task`", name.chars().take(64).collect::<String>()),
                }))
            }
        },
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
/// as a task (the spec's word for it). A name no call reaches (unknown, or a disabled tool)
/// is answered as its call: the `UNKNOWN_ACTION` result, so a task request shows no more
/// than a call does.
async fn call(
    server: &Server,
    params: &Value,
    task: &Value,
    principal: Option<crate::auth::Principal>,
    owner: ClientKey,
) -> Result<Value, Value> {
    let name = params.get("name").and_then(Value::as_str).unwrap_or("");
    if !server.leads_somewhere(name) {
        return Ok(unreached(server, name, params, principal, owner).await);
    }
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

/// The answer to a call of `name`, a tool no call reaches: the pipeline's own refusal
/// (`UNKNOWN_ACTION`, its closest enabled name suggested), written as a 2025-11-25
/// `tools/call` result.
async fn unreached(
    server: &Server,
    name: &str,
    params: &Value,
    principal: Option<crate::auth::Principal>,
    owner: ClientKey,
) -> Value {
    let arguments = params.get("arguments").and_then(Value::as_object).cloned();
    let mut scope = RequestScope::detached();
    scope.principal = principal.map(std::sync::Arc::new);
    scope.client = Some(owner);
    let response = server.call(name, arguments, scope).await;
    let result = crate::mcp::handlers::to_call_tool_result(response);
    match serde_json::to_value(result) {
        Ok(Value::Object(mut object)) => {
            // rmcp writes `resultType` for 2026-07-28 peers only.
            object.remove("resultType");
            Value::Object(object)
        }
        _ => json!({"content": [], "isError": true}),
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
/// error of a `failed` or `cancelled` task. The task's place in the bounds is freed.
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
    // Not freed now (Redis unreachable): the hold frees it.
    let _ = server.task_store().release(&owner.0, id).await;
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

/// The longest answer [`Advertise`] reads whole (an SSE event, or a plain JSON answer);
/// past it the answer passes unchanged.
const MAX_ADVERTISED_BYTES: usize = 8 << 20;

/// What a 2025-11-25 session's `initialize` and `tools/list` answers gain on a server with
/// task actions: `capabilities.tasks` (`tools/call` as a task, `tasks/cancel`), and each
/// task tool's `execution.taskSupport`. rmcp's types have neither field, so the answer is
/// edited on its way out, event by event.
pub(crate) struct Advertise {
    server: Server,
    tools_list: bool,
}

/// The edit `bytes` (a request body the check passed) calls for, if any.
pub(crate) fn advertising(
    server: &Server,
    headers: &axum::http::HeaderMap,
    bytes: &[u8],
) -> Option<Advertise> {
    if !server.has_tasks() {
        return None;
    }
    // Parsed again only when it may be one of the two.
    let wanted: &[u8] = match headers.get("mcp-protocol-version") {
        None => b"\"initialize\"",
        Some(v) if v == "2025-11-25" => b"\"tools/list\"",
        Some(_) => return None,
    };
    if !mentions(bytes, wanted) {
        return None;
    }
    let message: Value = serde_json::from_slice(bytes).ok()?;
    let tools_list = match message.get("method")?.as_str()? {
        "initialize" if message["params"]["protocolVersion"] == "2025-11-25" => false,
        "tools/list" if headers.get("mcp-protocol-version")? == "2025-11-25" => true,
        _ => return None,
    };
    Some(Advertise {
        server: server.clone(),
        tools_list,
    })
}

impl Advertise {
    /// Edits one JSON-RPC answer.
    fn edit(&self, message: &mut Value) {
        let Some(result) = message.get_mut("result").and_then(Value::as_object_mut) else {
            return;
        };
        if !self.tools_list {
            if result.get("protocolVersion").and_then(Value::as_str) != Some("2025-11-25") {
                return;
            }
            if let Some(caps) = result
                .get_mut("capabilities")
                .and_then(Value::as_object_mut)
            {
                caps.insert(
                    "tasks".to_owned(),
                    json!({"cancel": {}, "requests": {"tools": {"call": {}}}}),
                );
            }
            return;
        }
        let Some(tools) = result.get_mut("tools").and_then(Value::as_array_mut) else {
            return;
        };
        for tool in tools {
            let support = tool
                .get("name")
                .and_then(Value::as_str)
                .map(|name| self.server.task_support(name))
                .filter(|s| s.allows_task());
            if let (Some(support), Some(tool)) = (support, tool.as_object_mut()) {
                tool.insert(
                    "execution".to_owned(),
                    json!({ "taskSupport": support.as_str() }),
                );
            }
        }
    }

    /// `unit` (one SSE event, or a whole JSON answer) with its answer edited.
    fn edit_unit(&self, unit: &[u8], sse: bool) -> axum::body::Bytes {
        let Ok(text) = std::str::from_utf8(unit) else {
            return axum::body::Bytes::copy_from_slice(unit);
        };
        if !sse {
            return match serde_json::from_str::<Value>(text) {
                Ok(mut message) => {
                    self.edit(&mut message);
                    axum::body::Bytes::from(message.to_string())
                }
                Err(_) => axum::body::Bytes::copy_from_slice(unit),
            };
        }
        let lines: Vec<String> = text
            .split('\n')
            .map(|line| {
                let Some(data) = line.strip_prefix("data:") else {
                    return line.to_owned();
                };
                match serde_json::from_str::<Value>(data.trim()) {
                    Ok(mut message) if message.get("result").is_some() => {
                        self.edit(&mut message);
                        format!("data: {message}")
                    }
                    _ => line.to_owned(),
                }
            })
            .collect();
        axum::body::Bytes::from(lines.join("\n"))
    }

    /// `response` with its answer edited (a success only; anything else passes as it is).
    pub(crate) fn apply(self, response: axum::response::Response) -> axum::response::Response {
        use futures::StreamExt as _;
        if !response.status().is_success() {
            return response;
        }
        let (mut parts, body) = response.into_parts();
        parts.headers.remove(axum::http::header::CONTENT_LENGTH);
        let sse = parts
            .headers
            .get(axum::http::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        let state = (body.into_data_stream(), Vec::<u8>::new(), self, false);
        let edited =
            futures::stream::unfold(state, move |(mut stream, mut buf, me, done)| async move {
                if done {
                    return None;
                }
                loop {
                    if sse && let Some(end) = buf.windows(2).position(|w| w == b"\n\n") {
                        let unit: Vec<u8> = buf.drain(..end + 2).collect();
                        let out = me.edit_unit(&unit, true);
                        return Some((Ok(out), (stream, buf, me, false)));
                    }
                    match stream.next().await {
                        Some(Ok(chunk)) => {
                            buf.extend_from_slice(&chunk);
                            if buf.len() > MAX_ADVERTISED_BYTES {
                                let out = axum::body::Bytes::from(std::mem::take(&mut buf));
                                return Some((Ok(out), (stream, buf, me, false)));
                            }
                        }
                        Some(Err(e)) => return Some((Err(e), (stream, buf, me, true))),
                        None if buf.is_empty() => return None,
                        None => {
                            let out = me.edit_unit(&buf, sse);
                            return Some((Ok(out), (stream, Vec::new(), me, true)));
                        }
                    }
                }
            });
        axum::response::Response::from_parts(parts, axum::body::Body::from_stream(edited.boxed()))
    }
}
